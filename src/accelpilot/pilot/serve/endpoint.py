"""Endpoint mode: drive an OpenAI-compatible server (vLLM, vLLM-Neuron, ...) over HTTP with streaming.

Measured the way vLLM's ``bench serve`` does: TTFT (first streamed token), TPOT = (E2E - TTFT) / (output tokens
- 1), inter-token latencies, end-to-end latency; goodput = requests meeting every SLO given, per second.
Load is Poisson or fixed-rate arrivals at ``request_rate``, a closed loop of ``concurrency`` clients, a sweep
of either (one result, one point per load, the operating point picked from them), or a replayed trace.
Runtime failures (refused connections, HTTP errors, garbage, timeouts) are counted in the result, never raised.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse, urlsplit, urlunparse

import httpx
import numpy as np
from httpx_sse import SSEError, aconnect_sse

from accelpilot.errors import ConfigError
from accelpilot.figures import Figure, measured
from accelpilot.pilot.result import PilotResult, Platform, ServingSummary, WorkloadInfo
from accelpilot.pilot.serve.base import ServeConfig, sample_sentences
from accelpilot.pilot.serve.requests import (
    LengthDist,
    Lengths,
    RequestSet,
    RequestSpec,
    parse_length,
    read_request_file,
    read_trace,
    sample_requests,
    synthetic_requests,
)
from accelpilot.pilot.stats import Samples
from accelpilot.redact import MASK, is_secret_name, redact_text, redact_url

SOURCE = "accelpilot run serve --endpoint (streaming, client-side timestamps)"
# Response headers that name the serving software and its version, recorded as platform facts when present.
VERSION_HEADERS = ("server", "x-vllm-version", "x-served-by", "openai-version", "x-request-version")


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


def _payload(api: str, model: str, spec: RequestSpec, output_control: str) -> dict[str, Any]:
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
        base["messages"] = spec.messages or [{"role": "user", "content": spec.prompt or ""}]
    else:
        base["prompt"] = spec.prompt
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


def _auth_headers(cfg: ServeConfig) -> dict[str, str]:
    """``Authorization: Bearer`` for servers started with an API key (vLLM ``--api-key``); never recorded."""
    return {"Authorization": f"Bearer {cfg.api_key}"} if cfg.api_key else {}


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


def _completion_tokens(obj: dict[str, Any]) -> int | None:
    """``usage.completion_tokens`` when the server sends it; anything but a non-negative count is a bad response."""
    usage = obj.get("usage")
    return _count(usage, "completion_tokens") if isinstance(usage, dict) else None


async def _stream(
    client: httpx.AsyncClient, url: str, api: str, payload: dict[str, Any], rec: RequestRecord, t0: float
) -> None:
    """One streamed request, filling ``rec`` as it goes (so a deadline that cancels it keeps what was seen)."""
    last: float | None = None
    events = 0
    done = False
    try:
        async with aconnect_sse(client, "POST", url, json=payload) as source:
            resp = source.response
            rec.status = resp.status_code
            rec.headers = {k: resp.headers[k] for k in VERSION_HEADERS if k in resp.headers}
            if resp.status_code != 200:
                body = (await resp.aread())[:200].decode("utf-8", "replace")
                rec.error = f"HTTP {resp.status_code}: {body.strip()[:120]}"
                return
            # httpx-sse parses the event-stream grammar (event:, id:, retry:, comments, multi-line data)
            async for sse in source.aiter_sse():
                if sse.event not in ("message", ""):
                    continue  # named events carry no completion chunks
                data = sse.data.strip()
                if not data:
                    continue
                events += 1
                if data == "[DONE]":
                    done = True
                    break
                obj = json.loads(data)
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
    except httpx.TimeoutException as exc:
        rec.error = f"timeout ({exc.__class__.__name__})"
        return
    except SSEError as exc:  # a TransportError subclass: the answer is not an event stream
        rec.error = f"bad response: {str(exc)[:120]}"
        return
    except httpx.HTTPError as exc:
        rec.error = f"{exc.__class__.__name__}: {str(exc)[:120]}"
        return
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        # ValueError covers JSONDecodeError; RecursionError: a deeply nested event
        rec.error = f"bad response: {exc.__class__.__name__}: {str(exc)[:120]}"
        return
    rec.e2e_s = time.perf_counter() - t0
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


async def _one(
    client: httpx.AsyncClient, url: str, api: str, payload: dict[str, Any], deadline_s: float, prompt_chars: int = 0
) -> RequestRecord:
    """One request under a whole-request deadline: httpx's timeouts bound each read, not a slow endless stream."""
    rec = RequestRecord(prompt_chars=prompt_chars, asked_tokens=int(payload.get("max_tokens") or 0))
    t0 = time.perf_counter()
    try:
        await asyncio.wait_for(_stream(client, url, api, payload, rec, t0), timeout=deadline_s)
    except asyncio.TimeoutError:
        rec.ok = False
        rec.e2e_s = None
        rec.error = f"timeout (deadline {deadline_s:g} s)"
    return rec


@dataclass(slots=True, frozen=True)
class LoadPoint:
    """One load of a run: a closed loop of ``concurrency`` clients, arrivals at ``rate``, or a trace replay."""

    concurrency: int | None = None
    rate: float | None = None
    arrival: str = "poisson"  # poisson or fixed, for a rate
    trace: bool = False

    def label(self) -> str:
        if self.trace:
            return "trace replay"
        if self.rate is not None:
            return f"{'Poisson' if self.arrival == 'poisson' else 'fixed-rate'} {self.rate:g} req/s"
        return f"concurrency {self.concurrency or 1}"


def load_points(cfg: ServeConfig) -> list[LoadPoint]:
    """The loads to run, lowest first: a sweep gives several, anything else one."""
    if cfg.trace:
        return [LoadPoint(trace=True)]
    if cfg.request_rate is not None:
        rates = cfg.request_rate if isinstance(cfg.request_rate, tuple) else (cfg.request_rate,)
        return [LoadPoint(rate=r, arrival=cfg.arrival) for r in sorted(rates)]
    cons = cfg.concurrency if isinstance(cfg.concurrency, tuple) else (cfg.concurrency or 1,)
    return [LoadPoint(concurrency=c) for c in sorted(cons)]


async def _drive(
    cfg: ServeConfig,
    url: str,
    api: str,
    model: str,
    specs: list[RequestSpec] | list[str],
    transport: httpx.AsyncBaseTransport | None = None,
    point: LoadPoint | None = None,
) -> tuple[list[RequestRecord], float]:
    point = point or load_points(cfg)[0]
    reqs = [s if isinstance(s, RequestSpec) else RequestSpec(prompt=s, max_tokens=cfg.max_tokens) for s in specs]
    payloads = [_payload(api, model, s, cfg.output_control) for s in reqs]
    chars = [s.chars() for s in reqs]
    conc = point.concurrency or 1
    limits = httpx.Limits(max_connections=max(100, conc), max_keepalive_connections=100)
    timeout = httpx.Timeout(cfg.request_timeout_s, connect=min(10.0, cfg.request_timeout_s))
    deadline = cfg.request_timeout_s
    records: list[RequestRecord | None] = [None] * len(reqs)
    async with httpx.AsyncClient(
        timeout=timeout, limits=limits, transport=transport, headers=_auth_headers(cfg)
    ) as client:

        async def fire(i: int) -> None:
            records[i] = await _one(client, url, api, payloads[i], deadline, chars[i])

        t0 = time.perf_counter()
        if point.trace or point.rate is not None:
            rng = random.Random(cfg.seed)
            tasks = []
            for i, spec in enumerate(reqs):
                if point.trace:
                    delay = (spec.at_s or 0.0) - (time.perf_counter() - t0)
                    if delay > 0:
                        await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(fire(i)))
                if not point.trace and i + 1 < len(reqs) and point.rate is not None:
                    gap = rng.expovariate(point.rate) if point.arrival == "poisson" else 1.0 / point.rate
                    await asyncio.sleep(gap)
            await asyncio.gather(*tasks)
        else:
            nxt = 0

            async def worker() -> None:
                nonlocal nxt
                while nxt < len(reqs):
                    i = nxt
                    nxt += 1
                    await fire(i)

            await asyncio.gather(*(worker() for _ in range(min(conc, len(reqs)))))
        wall = time.perf_counter() - t0
    return [r if r is not None else RequestRecord(error="not sent") for r in records], wall


async def _server_facts(
    cfg: ServeConfig, url: str, transport: httpx.AsyncBaseTransport | None = None
) -> tuple[str, dict[str, Any]]:
    """The model id to send (``--model-name``, else the first id of GET /v1/models, else ``default``) and what the
    server said about itself: the /v1/models answer and its version headers."""
    p = urlparse(url)
    root = p.path.split("/v1")[0] if "/v1" in p.path else ""
    models = urlunparse(p._replace(path=root + "/v1/models", query=""))
    facts: dict[str, Any] = {}
    first_id: str | None = None
    try:
        async with httpx.AsyncClient(
            timeout=min(5.0, cfg.request_timeout_s), transport=transport, headers=_auth_headers(cfg)
        ) as c:
            r = await c.get(models)
            facts["v1_models_status"] = r.status_code
            facts["headers"] = {k: r.headers[k] for k in VERSION_HEADERS if k in r.headers}
            if r.status_code == 200 and len(r.content) < 1_000_000:
                body = r.json()
                data = body.get("data") if isinstance(body, dict) else None
                if isinstance(data, list):
                    facts["v1_models"] = [
                        {k: d.get(k) for k in ("id", "owned_by", "root", "max_model_len", "created") if k in d}
                        for d in data[:20]
                        if isinstance(d, dict)
                    ]
                    if data and isinstance(data[0], dict) and data[0].get("id"):
                        first_id = str(data[0]["id"])
    except Exception as exc:  # a server without /v1/models is still driven; the fact says why none was read
        facts["v1_models_error"] = redact_text(f"{exc.__class__.__name__}: {str(exc)[:80]}")
    return cfg.model_name or first_id or "default", facts


async def _model_name(cfg: ServeConfig, url: str, transport: httpx.AsyncBaseTransport | None = None) -> str:
    return (await _server_facts(cfg, url, transport))[0]


def _secret_values(url: str, api_key: str | None) -> list[str]:
    """The literal secrets of this run (userinfo, secret query values, the API key), longest first."""
    p = urlsplit(url)
    found = [p.username or "", p.password or "", api_key or ""]
    for item in p.query.split("&"):
        name, _, value = item.partition("=")
        if is_secret_name(name):
            found.append(value)
    return sorted({v for v in found if len(v) >= 3}, key=len, reverse=True)


def _scrub(text: str, secrets: list[str]) -> str:
    text = redact_text(text)
    for v in secrets:
        text = text.replace(v, MASK)
    return text


def meets(rec: RequestRecord, cfg: ServeConfig) -> bool:
    """vLLM's goodput: a successful request that meets every SLO given."""
    if not rec.ok:
        return False
    if cfg.slo_ttft_ms is not None and (rec.ttft_s is None or rec.ttft_s * 1e3 > cfg.slo_ttft_ms):
        return False
    if cfg.slo_tpot_ms is not None:
        tpot = rec.tpot_s
        if tpot is not None and tpot * 1e3 > cfg.slo_tpot_ms:
            return False
    return not (cfg.slo_ms is not None and (rec.e2e_s is None or rec.e2e_s * 1e3 > cfg.slo_ms))


def build_requests(cfg: ServeConfig, api: str) -> RequestSet:
    """Gather every request before the first is sent: a file, synthetic lengths, a trace, or built-in sentences."""
    lengths = Lengths(cfg.tokenizer)
    if cfg.trace:
        specs = read_trace(cfg.trace, cfg.max_tokens, lengths)
        rs = RequestSet(specs, f"trace {cfg.trace}", lengths.unit, {"duration_s": specs[-1].at_s})
    elif cfg.requests_file:
        pool = read_request_file(cfg.requests_file, cfg.max_tokens)
        specs = sample_requests(pool, cfg.num_requests, cfg.seed)
        if cfg.output_len:  # a stated output length overrides the file's
            file_len = parse_length(cfg.output_len, "--output-len")
            rng = random.Random(cfg.seed + 1)
            specs = [RequestSpec(prompt=s.prompt, messages=s.messages, max_tokens=file_len.sample(rng)) for s in specs]
        rs = RequestSet(specs, f"file {cfg.requests_file}", lengths.unit, {"distinct_in_file": len(pool)})
    elif cfg.input_len or cfg.output_len:
        in_len = parse_length(cfg.input_len or "64", "--input-len")
        out_len: LengthDist | None = parse_length(cfg.output_len, "--output-len") if cfg.output_len else None
        specs = synthetic_requests(cfg.num_requests, cfg.seed, in_len, out_len, cfg.max_tokens, lengths)
        rs = RequestSet(
            specs,
            "synthetic (shipped text)",
            lengths.unit,
            {"input_len": in_len.spec, "output_len": out_len.spec if out_len else str(cfg.max_tokens)},
        )
    else:
        specs = [RequestSpec(prompt=p, max_tokens=cfg.max_tokens) for p in sample_sentences(cfg.num_requests, cfg.seed)]
        rs = RequestSet(specs, "built-in sentences", lengths.unit)
    if api != "chat" and any(s.messages for s in specs):
        raise ConfigError(
            "the request file holds chat messages but the endpoint is a completions URL",
            field="--endpoint",
            fix="point --endpoint at .../v1/chat/completions",
        )
    return rs


def _count_tokens(records: list[RequestRecord], lengths: Lengths | None) -> dict[str, int]:
    """Output tokens per request: the server's usage, else the user's tokenizer, else streamed chunks."""
    sources: dict[str, int] = {}
    for r in records:
        if not r.ok:
            continue
        if r.usage_tokens is not None:
            r.output_tokens, r.token_source = r.usage_tokens, "usage"
        elif lengths is not None and lengths.tokenizer is not None:
            r.output_tokens, r.token_source = lengths.count(r.text), "tokenizer"
        else:
            r.output_tokens, r.token_source = r.chunks, "chunks"
        sources[r.token_source] = sources.get(r.token_source, 0) + 1
    return sources


def _ms(s: Samples) -> dict[str, float]:
    out = {k: v * 1e3 for k, v in s.percentiles().items()}
    if len(s):
        out["mean"] = s.mean() * 1e3
    return out


@dataclass(slots=True)
class PointResult:
    point: LoadPoint
    records: list[RequestRecord]
    wall: float
    ok: list[RequestRecord]
    good: int
    ttft: Samples
    tpot: Samples
    itl: Samples
    e2e: Samples
    out_tokens: int

    @property
    def errors(self) -> int:
        return len(self.records) - len(self.ok)

    @property
    def goodput_share(self) -> float:
        return self.good / len(self.records)

    def summary(self) -> dict[str, Any]:
        return {
            "load": self.point.label(),
            "concurrency": self.point.concurrency,
            "request_rate": self.point.rate,
            "arrival": self.point.arrival if self.point.rate is not None else None,
            "requests": len(self.records),
            "succeeded": len(self.ok),
            "errors": self.errors,
            "good": self.good,
            "goodput_share": self.goodput_share,
            "goodput_qps": self.good / self.wall,
            "request_throughput": len(self.ok) / self.wall,
            "output_token_throughput": self.out_tokens / self.wall,
            "wall_s": self.wall,
            "ttft_ms": _ms(self.ttft),
            "tpot_ms": _ms(self.tpot),
            "itl_ms": _ms(self.itl),
            "e2e_ms": _ms(self.e2e),
        }


def _point_result(point: LoadPoint, records: list[RequestRecord], wall: float, cfg: ServeConfig) -> PointResult:
    ok = [r for r in records if r.ok]
    return PointResult(
        point=point,
        records=records,
        wall=wall,
        ok=ok,
        good=sum(1 for r in records if meets(r, cfg)),
        ttft=Samples([r.ttft_s for r in ok if r.ttft_s is not None]),
        tpot=Samples([t for r in ok if (t := r.tpot_s) is not None]),
        itl=Samples([x for r in ok for x in r.itl_s]),
        e2e=Samples([r.e2e_s for r in ok if r.e2e_s is not None]),
        out_tokens=sum(r.output_tokens for r in ok),
    )


def operating_point(points: list[PointResult], min_share: float) -> PointResult | None:
    """The highest load whose goodput share (requests meeting every SLO / requests) is at least ``min_share``."""
    fit = [p for p in points if p.goodput_share >= min_share]
    if not fit:
        return None
    return max(fit, key=lambda p: (p.point.rate or 0.0, p.point.concurrency or 0))


def _client_facts(url: str, cfg: ServeConfig) -> dict[str, Any]:
    host = urlparse(url).hostname or ""
    loopback = host in ("localhost", "::1") or host.startswith("127.")
    return {
        "measured_over_network": not loopback,
        "client_host_hash": hashlib.sha256(socket.gethostname().encode()).hexdigest()[:12],
        "declared_platform": cfg.platform_note,
    }


def _prompt_sha(spec: RequestSpec) -> str:
    return hashlib.sha256(
        json.dumps([spec.prompt, spec.messages, spec.max_tokens], sort_keys=True).encode()
    ).hexdigest()[:16]


def _outputs(specs: list[RequestSpec], records: list[RequestRecord]) -> list[dict[str, Any]]:
    return [
        {
            "i": i,
            "prompt_sha": _prompt_sha(s),
            "ok": r.ok,
            "text": r.text if r.ok else None,
            "tokens": r.output_tokens if r.ok else None,
        }
        for i, (s, r) in enumerate(zip(specs, records, strict=True))
    ]


@dataclass(slots=True)
class _Compare:
    path: str
    outputs: list[dict[str, Any]]
    platform: str
    model: str


def _read_compare(cfg: ServeConfig, specs: list[RequestSpec]) -> _Compare:
    """Read the other result before any request is sent, and check it answered the same requests."""
    from accelpilot.errors import InputFileError
    from accelpilot.pilot.result import read_result
    from accelpilot.pilot.serve.parity import outputs_of

    path = cfg.compare_to or ""
    other = read_result(path)
    outs = outputs_of(other, path)
    mine = {_prompt_sha(s) for s in specs}
    if not any(o.get("prompt_sha") in mine for o in outs if isinstance(o, dict)):
        raise InputFileError(
            "its answers are to different requests than this run's",
            file=path,
            field="details.outputs",
            fix="use the same --requests file (or synthetic lengths), --num-requests and --seed as that run",
        )
    return _Compare(path, outs, other.platform.device_name or other.platform.device, other.workload.name)


def _parity(
    cfg: ServeConfig, outputs: list[dict[str, Any]], other: _Compare, lengths: Lengths | None
) -> dict[str, Any]:
    from accelpilot.pilot.serve.parity import compare_outputs

    embed = None
    note = None
    try:
        from accelpilot.pilot.serve.minilm import embed_texts

        embed = embed_texts
    except Exception as exc:  # torch or the MiniLM weights missing: exact and token parity still measured
        note = f"semantic similarity not measured ({exc.__class__.__name__}: {str(exc)[:80]})"
    tok: Callable[[str], list[int]] | None = None
    unit = "whitespace words"
    if lengths is not None and lengths.tokenizer is not None:
        t = lengths.tokenizer
        unit = lengths.unit
        tok = lambda text: list(t.encode(text, add_special_tokens=False).ids)  # noqa: E731

    par = compare_outputs(
        outputs, other.outputs, first_n=cfg.parity_tokens, threshold=cfg.parity_threshold, embed=embed, tokenize=tok
    )
    par.update(
        {
            "compared_to": other.path,
            "other_platform": other.platform,
            "other_model": other.model,
            "tokens": unit,
            "similarity_model": "all-MiniLM-L6-v2" if embed else None,
        }
    )
    if note:
        par["note"] = note
    return par


def run_endpoint(
    cfg: ServeConfig, log: Any = None, *, transport: httpx.AsyncBaseTransport | None = None
) -> PilotResult:
    """Drive the endpoint; ``transport`` replaces the network (tests pass ``httpx.MockTransport``)."""
    import platform as _platform

    url, api = resolve_url(cfg.endpoint or "")
    shown_url = redact_url(url)  # what is logged and recorded; the request itself uses the real URL
    secrets = _secret_values(url, cfg.api_key)
    reqset = build_requests(cfg, api)
    lengths = Lengths(cfg.tokenizer) if cfg.tokenizer else None
    compare = _read_compare(cfg, reqset.specs) if cfg.compare_to else None
    model, server = asyncio.run(_server_facts(cfg, url, transport))
    points = load_points(cfg)
    results: list[PointResult] = []
    for point in points:
        if log:
            log(f"{len(reqset.specs)} streaming requests to {shown_url} ({api}, model {model!r}), {point.label()}")
        records, wall = asyncio.run(_drive(cfg, url, api, model, reqset.specs, transport, point))
        for r in records:  # a server or httpx may echo the URL or the key into an error message
            r.error = _scrub(r.error, secrets)
        _count_tokens(records, lengths)
        results.append(_point_result(point, records, wall, cfg))

    op = operating_point(results, cfg.min_goodput_share)
    sweep = len(results) > 1
    # The headline figures are the operating point's (a sweep), or the one load's; the sweep keeps every point.
    main = op if (sweep and op is not None) else results[0]
    records, wall, ok = main.records, main.wall, main.ok
    n_err = main.errors
    timeouts = sum(1 for r in records if r.error.startswith("timeout"))
    good = main.good
    ttft, tpot, itl, e2e, out_tokens = main.ttft, main.tpot, main.itl, main.e2e, main.out_tokens

    figures: dict[str, Figure] = {}
    for name, s in (("ttft", ttft), ("tpot", tpot), ("itl", itl), ("e2e", e2e)):
        for k, v in s.percentiles().items():
            figures[f"endpoint.{name}_{k}_ms"] = measured(v * 1e3, "ms", SOURCE, f"{name.upper()} {k}")
        if len(s):
            figures[f"endpoint.{name}_mean_ms"] = measured(s.mean() * 1e3, "ms", SOURCE, f"{name.upper()} mean")
    figures["endpoint.request_throughput"] = measured(len(ok) / wall, "req/s", SOURCE, "successful requests per second")
    figures["endpoint.output_token_throughput"] = measured(
        out_tokens / wall, "token/s", SOURCE, "output tokens per second"
    )
    figures["endpoint.goodput_qps"] = measured(good / wall, "req/s", SOURCE, "requests meeting every SLO per second")
    figures["endpoint.error_rate"] = measured(n_err / len(records), "", SOURCE, "failed requests / requests")

    errors_by_kind: dict[str, int] = {}
    for r in records:
        if not r.ok:
            kind = r.error.split(":")[0].split(" (")[0] or "error"
            errors_by_kind[kind] = errors_by_kind.get(kind, 0) + 1
    first = points[0]
    if first.trace:
        scenario = "endpoint-trace"
    elif first.rate is not None:
        scenario = "endpoint-poisson" if first.arrival == "poisson" else "endpoint-fixed-rate"
    else:
        scenario = "endpoint-concurrency"
    if sweep:
        scenario += "-sweep"
    # a sweep: goodput at the operating point (None when no load met the share); else at this offered load
    peak = (None if op is None else op.good / op.wall) if sweep else good / wall
    summary = ServingSummary(
        scenario=scenario,
        slo_ms=cfg.slo_ms,
        peak_qps_under_slo=peak,
        goodput_qps=good / wall,
        goodput_share=good / len(records),
        tokens_per_request=out_tokens / len(ok) if ok else None,
        idle_fraction=None,  # the server's busy time is not visible from the client
        errors=n_err,
        rejected=0,
    )
    p = urlparse(url)
    platform = Platform(
        device=f"endpoint:{p.scheme}://{p.hostname}:{p.port or (443 if p.scheme == 'https' else 80)}",
        device_type="endpoint",
        device_name=model,
        python=_platform.python_version(),
    )
    facts = _client_facts(url, cfg)
    platform.hostname_hash = facts["client_host_hash"]
    headers: dict[str, str] = dict(server.get("headers") or {})
    for r in records:
        for hk, hv in r.headers.items():
            headers.setdefault(hk, hv)
    platform.tool_output = {
        "server": {**server, "headers": headers},
        "client": facts,
    }
    config: dict[str, Any] = {
        "endpoint": shown_url,
        "api": api,
        "model": model,
        "request_rate": cfg.request_rate if not isinstance(cfg.request_rate, tuple) else list(cfg.request_rate),
        "concurrency": (list(cfg.concurrency) if isinstance(cfg.concurrency, tuple) else cfg.concurrency)
        if cfg.request_rate is None
        else None,
        "num_requests": cfg.num_requests,
        "max_tokens": cfg.max_tokens,
        "slo_ms": cfg.slo_ms,
        "slo_ttft_ms": cfg.slo_ttft_ms,
        "slo_tpot_ms": cfg.slo_tpot_ms,
        "request_timeout_s": cfg.request_timeout_s,
        "seed": cfg.seed,
    }
    # newer options are recorded only when used, so a plain run's config keeps its shape
    for key in ("requests_file", "input_len", "output_len", "tokenizer", "trace", "platform_note"):
        if getattr(cfg, key):
            config[key] = getattr(cfg, key)
    if cfg.arrival != "poisson":
        config["arrival"] = cfg.arrival
    if cfg.output_control != "ignore_eos":
        config["output_control"] = cfg.output_control

    token_sources: dict[str, int] = {}
    for r in ok:
        token_sources[r.token_source] = token_sources.get(r.token_source, 0) + 1
    asked = [r.asked_tokens for r in ok]
    produced = [r.output_tokens for r in ok]
    details: dict[str, Any] = {
        "requests": len(records),
        "succeeded": len(ok),
        "errors": n_err,
        "timeouts": timeouts,
        "errors_by_kind": errors_by_kind,
        "good": good,
        "wall_s": wall,
        "output_tokens": out_tokens,
        "http_status": {str(s): sum(1 for r in records if r.status == s) for s in {r.status for r in records}},
        "first_errors": [r.error for r in records if not r.ok][:10],
        "output_tokens_p50": float(np.median([r.output_tokens for r in ok])) if ok else None,
        "requests_source": reqset.source,
        "length_unit": reqset.length_unit,
        "token_count_source": token_sources,
        "output_length": {
            "asked_mean": float(np.mean(asked)) if asked else None,
            "produced_mean": float(np.mean(produced)) if produced else None,
            "share_exact": sum(1 for a, b in zip(asked, produced, strict=True) if a == b) / len(ok) if ok else None,
            "share_over": sum(1 for a, b in zip(asked, produced, strict=True) if b > a) / len(ok) if ok else None,
            "control": cfg.output_control,
        },
        "operating_point": None if op is None else {**op.summary(), "min_goodput_share": cfg.min_goodput_share},
    }
    if reqset.info:
        details["requests_info"] = reqset.info
    prompt_tokens = [r.prompt_tokens for r in ok if r.prompt_tokens is not None]
    if prompt_tokens:
        details["prompt_tokens_mean"] = float(np.mean(prompt_tokens))
    if sweep:
        details["sweep"] = [pr.summary() for pr in results]
    outputs = _outputs(reqset.specs, results[0].records)
    if cfg.store_outputs:
        details["outputs"] = outputs  # the answers of the first load, in request order, for --compare-to
    if compare is not None:
        details["parity"] = _parity(cfg, outputs, compare, lengths)
        summary.parity_accepted_share = details["parity"].get("accepted_share")  # type: ignore[attr-defined]
    errors = [f"{n_err} of {len(records)} requests failed"] if n_err else []
    if sweep and op is None:
        errors.append(
            f"no load met a goodput share of {cfg.min_goodput_share:.0%}: no operating point "
            f"(lowest load: {results[0].goodput_share:.1%})"
        )
    return PilotResult(
        kind="serving",
        command=cfg.command,
        platform=platform,
        workload=WorkloadInfo(name=model, factory="endpoint", config={"api": api, "max_tokens": cfg.max_tokens}),
        config=config,
        figures=figures,
        samples={
            "endpoint.ttft_s": list(ttft.values),
            "endpoint.tpot_s": list(tpot.values),
            "endpoint.itl_s": list(itl.values),
            "endpoint.e2e_s": list(e2e.values),
        },
        serving=summary,
        accepted=bool(ok) and n_err == 0 and (op is not None or not sweep),
        details=details,
        errors=errors,
    )
