"""The endpoint pilot's HTTP client: one streamed request, read the way vLLM's ``bench serve`` reads it.

A pool like the field's clients (aiohttp in vLLM's benchmark, httpx in AIPerf's): connections sized to the
concurrency and kept alive (the stream is read to its end so the connection goes back to the pool), HTTP/2 where the
server offers it. Every read from the server is bounded in time (a whole-request deadline) and in size (bytes after
decompression, so a gzip bomb stops at the bound instead of at the machine's memory).
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import ssl
import sys
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse, urlunparse

import httpx
import orjson

from accelpilot.pilot.serve.requests import RequestSpec

# Response headers that name the serving software and its version, recorded as platform facts when present.
VERSION_HEADERS = ("server", "x-vllm-version", "x-served-by", "openai-version", "x-request-version")
# One streamed answer, decompressed: 32 MiB is ~100x the longest answer a 32k-token completion streams.
MAX_STREAM_BYTES = 32 * 1024 * 1024
MAX_LINE_BYTES = 1024 * 1024  # one SSE line; a longer one is not a completion chunk
MAX_MODELS_BYTES = 1024 * 1024  # GET /v1/models: a list of ids, never megabytes


STALE = "RemoteProtocolError: Server disconnected without sending a response"


class BodyTooLarge(Exception):
    """The server sent more than the size bound allows (after decompression)."""


@dataclass(slots=True)
class RequestRecord:
    ok: bool = False
    error: str = ""
    status: int | None = None
    ttft_s: float | None = None
    e2e_s: float | None = None
    output_tokens: int = 0
    itl_s: list[float] = field(default_factory=list)
    prompt_chars: int = 0
    pieces: list[str] = field(default_factory=list)  # streamed text, joined once after the run
    chunks: int = 0
    usage_tokens: int | None = None  # usage.completion_tokens when the server sent it
    prompt_tokens: int | None = None  # usage.prompt_tokens when the server sent it
    asked_tokens: int = 0
    token_source: str = ""  # "usage", "tokenizer" or "chunks"
    headers: dict[str, str] = field(default_factory=dict)
    http_version: str = ""
    connection: str = ""  # the client's local address: one per TCP connection used
    stale_retry: bool = False  # sent again after a kept-alive connection turned out closed (never reached the server)
    new_connection: bool = False  # the pool opened a TCP connection for this request (httpcore's trace event)

    @property
    def tpot_s(self) -> float | None:
        if not self.ok or self.ttft_s is None or self.e2e_s is None or self.output_tokens < 2:
            return None
        return (self.e2e_s - self.ttft_s) / (self.output_tokens - 1)

    @property
    def text(self) -> str:
        return "".join(self.pieces)


def resolve_url(url: str) -> tuple[str, str]:
    """(request URL, api kind); a bare host or ``/v1`` means ``/v1/completions``."""
    p = urlparse(url)
    path = p.path.rstrip("/")
    if path.endswith("/chat/completions"):
        return url, "chat"
    if path.endswith("/completions"):
        return url, "completions"
    path = (path if path.endswith("/v1") else path + "/v1") + "/completions"
    return urlunparse(p._replace(path=path)), "completions"


def payload(api: str, model: str, spec: RequestSpec, output_control: str, salt: str = "") -> dict[str, Any]:
    """The request body; ``salt`` is put before the prompt (or the first message) so no cache has seen it."""
    base: dict[str, Any] = {
        "model": model,
        "max_tokens": spec.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0.0,
    }
    # How the output length is enforced where the server accepts it (vLLM takes both); what came back is recorded.
    if output_control == "ignore_eos":
        base["ignore_eos"] = True
    elif output_control == "min_tokens":
        base["min_tokens"] = spec.max_tokens
    if api == "chat":
        msgs = [dict(m) for m in (spec.messages or [{"role": "user", "content": spec.prompt or ""}])]
        if salt and msgs:
            msgs[0]["content"] = salt + str(msgs[0].get("content", ""))
        base["messages"] = msgs
    else:
        base["prompt"] = salt + (spec.prompt or "")
    return base


def _chunk_text(api: str, obj: dict[str, Any]) -> str | None:
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices:
        return None
    c = choices[0]
    if not isinstance(c, dict):
        raise ValueError("choice is not an object")
    if api == "chat":
        delta = c.get("delta") or {}
        text = delta.get("content") if isinstance(delta, dict) else None
    else:
        text = c.get("text")
    return text if isinstance(text, str) else None


def auth_headers(api_key: str | None) -> dict[str, str]:
    """``Authorization: Bearer`` for servers started with an API key (vLLM ``--api-key``); never recorded."""
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _count(usage: dict[str, Any], key: str) -> int | None:
    """A usage count when present; anything but a non-negative integer is a bad response."""
    n = usage.get(key)
    if n is None:
        return None
    if isinstance(n, float) and math.isfinite(n) and n.is_integer():
        n = int(n)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"usage.{key} is not a token count: {str(n)[:40]!r}")
    return n


def h2_available() -> bool:
    try:
        import h2  # noqa: F401
    except ImportError:
        return False
    return True


@functools.lru_cache(maxsize=1)
def _ssl_context() -> ssl.SSLContext:
    """One verifying TLS context for every client of the process: httpx would build one per client (loading the
    CA bundle, ~20 ms of CPU each), and a closed loop makes a client per concurrent stream."""
    return httpx.create_ssl_context()


def make_client(
    *,
    connections: int,
    timeout_s: float,
    api_key: str | None,
    http: str = "auto",
    transport: httpx.AsyncBaseTransport | None = None,
) -> httpx.AsyncClient:
    """A pool of ``connections`` kept-alive connections; HTTP/2 offered over TLS (ALPN) when ``h2`` is installed,
    spoken outright (prior knowledge, for cleartext h2c servers) with ``http="2"``."""
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections, keepalive_expiry=60)
    timeout = httpx.Timeout(timeout_s, connect=min(10.0, timeout_s), pool=None)
    h2 = http in ("auto", "2") and h2_available()
    return httpx.AsyncClient(
        verify=_ssl_context(),
        timeout=timeout,
        limits=limits,
        transport=transport,
        headers=auth_headers(api_key),
        http1=http != "2",
        http2=h2,
    )


class _Events:
    """Server-sent events from decoded body chunks, per the event-stream grammar (``event:``, ``id:``, ``retry:``,
    comments, multi-line data joined with newlines), with at most ``limit`` bytes after decompression in all and
    one line at most MAX_LINE_BYTES. Fed chunk by chunk from one loop: no generator per layer (issue 30's client
    overhead)."""

    __slots__ = ("buf", "data", "event", "limit", "seen")

    def __init__(self, limit: int = MAX_STREAM_BYTES) -> None:
        self.buf = b""
        self.data: list[str] = []
        self.event = ""
        self.limit = limit
        self.seen = 0

    def feed(self, chunk: bytes, final: bool = False) -> list[str]:
        """The data of each complete unnamed (``message``) event in ``chunk`` (and the rest, when ``final``)."""
        self.seen += len(chunk)
        if self.seen > self.limit:
            raise BodyTooLarge(f"more than {self.limit // (1024 * 1024)} MiB after decompression")
        buf = self.buf + chunk
        lines = buf.split(b"\n")
        self.buf = b"" if final else lines.pop()
        if len(self.buf) > MAX_LINE_BYTES:
            raise BodyTooLarge(f"one line longer than {MAX_LINE_BYTES // 1024} KiB")
        out: list[str] = []
        for raw in lines:
            line = raw.rstrip(b"\r").decode("utf-8")
            if not line:
                if self.data and self.event in ("", "message"):
                    out.append("\n".join(self.data))
                self.data, self.event = [], ""
                continue
            if line[0] == ":":
                continue
            name, _, value = line.partition(":")
            if value[:1] == " ":
                value = value[1:]
            if name == "data":
                self.data.append(value)
            elif name == "event":
                self.event = value
        if final and self.data and self.event in ("", "message"):
            out.append("\n".join(self.data))
        return out


async def _error_text(resp: httpx.Response, limit: int = 64 * 1024) -> str:
    body = b""
    async for chunk in resp.aiter_bytes():
        body += chunk
        if len(body) > limit:
            break
    return body[:200].decode("utf-8", "replace")


def _connection_of(resp: httpx.Response) -> str:
    stream = resp.extensions.get("network_stream")
    try:
        addr = stream.get_extra_info("client_addr") if stream is not None else None
    except Exception:  # a transport without sockets (tests' MockTransport)
        addr = None
    return f"{addr[0]}:{addr[1]}" if isinstance(addr, tuple) and len(addr) >= 2 else ""


async def _stream(
    client: httpx.AsyncClient, url: str, api: str, body: dict[str, Any], rec: RequestRecord, t0: float
) -> None:
    """One streamed request, filling ``rec`` as it goes (so a deadline that cancels it keeps what was seen)."""
    last: float | None = None
    t_done: float | None = None
    events = 0
    done = False

    async def trace(event: str, _info: dict[str, Any]) -> None:  # connections opened, counted where they open
        if event == "connection.connect_tcp.complete":
            rec.new_connection = True

    try:
        # orjson: the body encoded and each event decoded ~5-10x faster than the standard library (client overhead)
        content = orjson.dumps(body)
        headers = {"content-type": "application/json"}
        async with client.stream("POST", url, content=content, headers=headers, extensions={"trace": trace}) as resp:
            rec.status = resp.status_code
            rec.http_version = resp.http_version
            rec.connection = _connection_of(resp)
            rec.headers = {k: resp.headers[k] for k in VERSION_HEADERS if k in resp.headers}
            if resp.status_code != 200:
                rec.error = f"HTTP {resp.status_code}: {' '.join((await _error_text(resp)).split())[:120]}"
                return
            ctype = resp.headers.get("content-type", "").partition(";")[0].strip().lower()
            if ctype != "text/event-stream":
                rec.error = f"bad response: Content-Type is {ctype[:60]!r}, not 'text/event-stream'"
                return
            sse = _Events()
            chunks = resp.aiter_bytes()
            while True:
                chunk = await anext(chunks, None)
                datas = sse.feed(chunk or b"", final=chunk is None)
                for data in datas:
                    data = data.strip()
                    if not data:
                        continue
                    events += 1
                    if data == "[DONE]":
                        done, t_done = True, time.perf_counter()
                        continue  # read on to the end of the body, so the connection returns to the pool
                    if done:
                        continue
                    obj = orjson.loads(data)
                    if not isinstance(obj, dict):
                        raise ValueError("event data is not a JSON object")
                    usage = obj.get("usage")
                    if isinstance(usage, dict):
                        n = _count(usage, "completion_tokens")
                        if n is not None:
                            rec.usage_tokens = n
                        p = _count(usage, "prompt_tokens")
                        if p is not None:
                            rec.prompt_tokens = p
                    text = _chunk_text(api, obj)
                    if text:
                        now = time.perf_counter()
                        if last is None:
                            rec.ttft_s = now - t0
                        else:
                            rec.itl_s.append(now - last)
                        last = now
                        rec.chunks += 1
                        rec.pieces.append(text)
                if chunk is None:
                    break
    except httpx.TimeoutException as exc:
        rec.error = f"timeout ({exc.__class__.__name__})"
        return
    except BodyTooLarge as exc:
        rec.error = f"bad response: {exc}"
        return
    except httpx.HTTPError as exc:
        rec.error = f"{exc.__class__.__name__}: {str(exc)[:120]}"
        return
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        # ValueError covers JSONDecodeError; RecursionError: a deeply nested event
        rec.error = f"bad response: {exc.__class__.__name__}: {str(exc)[:120]}"
        return
    rec.e2e_s = (t_done or time.perf_counter()) - t0
    if events == 0:
        rec.error = "bad response: no server-sent event with data"
        return
    if rec.chunks == 0:
        rec.error = "no tokens streamed"
        return
    if not done:
        rec.error = "stream ended without [DONE]"
        return
    rec.ok = True


async def one_request(
    client: httpx.AsyncClient, url: str, api: str, body: dict[str, Any], deadline_s: float, prompt_chars: int = 0
) -> RequestRecord:
    """One request under a whole-request deadline: httpx's timeouts bound each read, not a slow endless stream.

    A kept-alive connection the server closed just after its last answer (llama.cpp's server does) fails the next
    request before a byte comes back; that request never reached the server, so it is sent once more, on a fresh
    connection, and timed from then (``rec.stale_retry``), as browsers and aiohttp do.
    """
    for attempt in (0, 1):
        rec = RequestRecord(prompt_chars=prompt_chars, asked_tokens=int(body.get("max_tokens") or 0))
        rec.stale_retry = attempt == 1
        t0 = time.perf_counter()
        try:
            if sys.version_info >= (3, 11):
                async with asyncio.timeout(deadline_s):  # no task per request, unlike wait_for
                    await _stream(client, url, api, body, rec, t0)
            else:
                await asyncio.wait_for(_stream(client, url, api, body, rec, t0), timeout=deadline_s)
        except asyncio.TimeoutError:
            rec.ok = False
            rec.e2e_s = None
            rec.error = f"timeout (deadline {deadline_s:g} s)"
        if not (rec.status is None and rec.error.startswith(STALE)):
            break
    return rec


def models_url(url: str) -> str:
    p = urlparse(url)
    root = p.path.split("/v1")[0] if "/v1" in p.path else ""
    return urlunparse(p._replace(path=root + "/v1/models", query=""))


async def _read_models(client: httpx.AsyncClient, url: str, facts: dict[str, Any]) -> Any:
    async with client.stream("GET", url) as r:
        facts["v1_models_status"] = r.status_code
        facts["headers"] = {k: r.headers[k] for k in VERSION_HEADERS if k in r.headers}
        if r.status_code != 200:
            return None
        body = b""
        async for chunk in r.aiter_bytes():
            body += chunk
            if len(body) > MAX_MODELS_BYTES:
                raise BodyTooLarge(f"GET /v1/models sent more than {MAX_MODELS_BYTES // 1024} KiB")
        return json.loads(body)


async def server_facts(
    url: str,
    model_name: str | None,
    api_key: str | None,
    timeout_s: float,
    transport: httpx.AsyncBaseTransport | None = None,
) -> tuple[str, dict[str, Any]]:
    """The model id to send (``--model-name``, else the first id of GET /v1/models, else ``default``) and what the
    server said about itself. The listing has a whole-request deadline and a size bound (an endless body or a slow
    loris costs at most ``min(5, timeout_s)`` seconds and 1 MiB)."""
    from accelpilot.redact import redact_text

    facts: dict[str, Any] = {}
    first_id: str | None = None
    deadline = min(5.0, timeout_s)
    try:
        async with httpx.AsyncClient(timeout=deadline, transport=transport, headers=auth_headers(api_key)) as c:
            body = await asyncio.wait_for(_read_models(c, models_url(url), facts), timeout=deadline)
        data = body.get("data") if isinstance(body, dict) else None
        if isinstance(data, list):
            facts["v1_models"] = [
                {k: d.get(k) for k in ("id", "owned_by", "root", "max_model_len", "created") if k in d}
                for d in data[:20]
                if isinstance(d, dict)
            ]
            if data and isinstance(data[0], dict) and data[0].get("id"):
                first_id = str(data[0]["id"])[:512]
    except asyncio.TimeoutError:
        facts["v1_models_error"] = f"timeout (deadline {deadline:g} s)"
    except Exception as exc:  # a server without /v1/models is still driven; the fact says why none was read
        facts["v1_models_error"] = redact_text(f"{exc.__class__.__name__}: {str(exc)[:80]}")
    return model_name or first_id or "default", facts
