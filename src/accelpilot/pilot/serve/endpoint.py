"""Endpoint mode: drive an OpenAI-compatible server (vLLM, vLLM-Neuron, ...) over HTTP with streaming.

Measured the way vLLM's ``bench serve`` does: TTFT (first streamed token), TPOT = (E2E - TTFT) / (output tokens
- 1), inter-token latencies, end-to-end latency; goodput = requests meeting every SLO given, per second.
Load is Poisson arrivals at ``request_rate`` or a closed loop of ``concurrency`` clients. Runtime failures
(refused connections, HTTP errors, garbage, timeouts) are counted in the result, never raised.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse, urlsplit, urlunparse

import httpx
import numpy as np
from httpx_sse import SSEError, aconnect_sse

from accelpilot.figures import Figure, measured
from accelpilot.pilot.result import PilotResult, Platform, ServingSummary, WorkloadInfo
from accelpilot.pilot.serve.base import ServeConfig, sample_sentences
from accelpilot.pilot.stats import Samples
from accelpilot.redact import MASK, is_secret_name, redact_text, redact_url

SOURCE = "accelpilot run serve --endpoint (streaming, client-side timestamps)"


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

    @property
    def tpot_s(self) -> float | None:
        if not self.ok or self.ttft_s is None or self.e2e_s is None or self.output_tokens < 2:
            return None
        return (self.e2e_s - self.ttft_s) / (self.output_tokens - 1)


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


def _payload(api: str, model: str, prompt: str, max_tokens: int) -> dict[str, Any]:
    base: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0.0,
        "ignore_eos": True,
    }
    if api == "chat":
        base["messages"] = [{"role": "user", "content": prompt}]
    else:
        base["prompt"] = prompt
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


def _completion_tokens(obj: dict[str, Any]) -> int | None:
    """``usage.completion_tokens`` when the server sends it; anything but a non-negative count is a bad response."""
    usage = obj.get("usage")
    if not isinstance(usage, dict):
        return None
    n = usage.get("completion_tokens")
    if n is None:
        return None
    if isinstance(n, float) and math.isfinite(n) and n.is_integer():
        n = int(n)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"usage.completion_tokens is not a token count: {str(n)[:40]!r}")
    return n


async def _stream(
    client: httpx.AsyncClient, url: str, api: str, model: str, prompt: str, max_tokens: int, rec: RequestRecord
) -> None:
    """One streamed request, filling ``rec`` as it goes (so a deadline that cancels it keeps what was seen)."""
    t0 = time.perf_counter()
    last: float | None = None
    usage_tokens: int | None = None
    chunks = 0
    events = 0
    done = False
    try:
        async with aconnect_sse(client, "POST", url, json=_payload(api, model, prompt, max_tokens)) as source:
            resp = source.response
            rec.status = resp.status_code
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
                n = _completion_tokens(obj)
                if n is not None:
                    usage_tokens = n
                text = _chunk_text(api, obj)
                if text:
                    now = time.perf_counter()
                    if last is None:
                        rec.ttft_s = now - t0
                    else:
                        rec.itl_s.append(now - last)
                    last = now
                    chunks += 1
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
    if chunks == 0:
        rec.error = "no tokens streamed"
        return
    if not done:
        rec.error = "stream ended without [DONE]"
        return
    rec.output_tokens = usage_tokens if usage_tokens is not None else chunks
    rec.ok = True


async def _one(
    client: httpx.AsyncClient, url: str, api: str, model: str, prompt: str, max_tokens: int, deadline_s: float
) -> RequestRecord:
    """One request under a whole-request deadline: httpx's timeouts bound each read, not a slow endless stream."""
    rec = RequestRecord(prompt_chars=len(prompt))
    try:
        await asyncio.wait_for(_stream(client, url, api, model, prompt, max_tokens, rec), timeout=deadline_s)
    except asyncio.TimeoutError:
        rec.ok = False
        rec.e2e_s = None
        rec.error = f"timeout (deadline {deadline_s:g} s)"
    return rec


async def _drive(
    cfg: ServeConfig,
    url: str,
    api: str,
    model: str,
    prompts: list[str],
    transport: httpx.AsyncBaseTransport | None = None,
) -> tuple[list[RequestRecord], float]:
    limits = httpx.Limits(max_connections=max(100, cfg.concurrency or 0), max_keepalive_connections=100)
    timeout = httpx.Timeout(cfg.request_timeout_s, connect=min(10.0, cfg.request_timeout_s))
    deadline = cfg.request_timeout_s
    records: list[RequestRecord | None] = [None] * len(prompts)
    async with httpx.AsyncClient(
        timeout=timeout, limits=limits, transport=transport, headers=_auth_headers(cfg)
    ) as client:
        t0 = time.perf_counter()
        if cfg.request_rate is not None:
            rng = random.Random(cfg.seed)
            tasks = []

            async def fire(i: int) -> None:
                records[i] = await _one(client, url, api, model, prompts[i], cfg.max_tokens, deadline)

            for i in range(len(prompts)):
                tasks.append(asyncio.create_task(fire(i)))
                if i + 1 < len(prompts):
                    await asyncio.sleep(rng.expovariate(cfg.request_rate))
            await asyncio.gather(*tasks)
        else:
            nxt = 0

            async def worker() -> None:
                nonlocal nxt
                while nxt < len(prompts):
                    i = nxt
                    nxt += 1
                    records[i] = await _one(client, url, api, model, prompts[i], cfg.max_tokens, deadline)

            await asyncio.gather(*(worker() for _ in range(min(cfg.concurrency or 1, len(prompts)))))
        wall = time.perf_counter() - t0
    return [r if r is not None else RequestRecord(error="not sent") for r in records], wall


async def _model_name(cfg: ServeConfig, url: str, transport: httpx.AsyncBaseTransport | None = None) -> str:
    """``--model-name``, else the first id of GET /v1/models, else ``default``."""
    if cfg.model_name:
        return cfg.model_name

    p = urlparse(url)
    root = p.path.split("/v1")[0] if "/v1" in p.path else ""
    models = urlunparse(p._replace(path=root + "/v1/models", query=""))
    try:
        async with httpx.AsyncClient(
            timeout=min(5.0, cfg.request_timeout_s), transport=transport, headers=_auth_headers(cfg)
        ) as c:
            r = await c.get(models)
            data = r.json().get("data") if r.status_code == 200 else None
            if isinstance(data, list) and data and isinstance(data[0], dict) and data[0].get("id"):
                return str(data[0]["id"])
    except Exception:
        pass
    return "default"


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


def run_endpoint(
    cfg: ServeConfig, log: Any = None, *, transport: httpx.AsyncBaseTransport | None = None
) -> PilotResult:
    """Drive the endpoint; ``transport`` replaces the network (tests pass ``httpx.MockTransport``)."""
    import platform as _platform

    url, api = resolve_url(cfg.endpoint or "")
    shown_url = redact_url(url)  # what is logged and recorded; the request itself uses the real URL
    secrets = _secret_values(url, cfg.api_key)
    prompts = sample_sentences(cfg.num_requests, cfg.seed)
    model = asyncio.run(_model_name(cfg, url, transport))
    load = (
        f"Poisson {cfg.request_rate:g} req/s" if cfg.request_rate is not None else f"concurrency {cfg.concurrency or 1}"
    )
    if log:
        log(f"{cfg.num_requests} streaming requests to {shown_url} ({api}, model {model!r}), {load}")
    records, wall = asyncio.run(_drive(cfg, url, api, model, prompts, transport))
    for r in records:  # a server or httpx may echo the URL or the key into an error message
        r.error = _scrub(r.error, secrets)

    ok = [r for r in records if r.ok]
    n_err = len(records) - len(ok)
    timeouts = sum(1 for r in records if r.error.startswith("timeout"))
    good = sum(1 for r in records if meets(r, cfg))
    ttft = Samples([r.ttft_s for r in ok if r.ttft_s is not None])
    tpot = Samples([t for r in ok if (t := r.tpot_s) is not None])
    itl = Samples([x for r in ok for x in r.itl_s])
    e2e = Samples([r.e2e_s for r in ok if r.e2e_s is not None])
    out_tokens = sum(r.output_tokens for r in ok)

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
    summary = ServingSummary(
        scenario="endpoint-poisson" if cfg.request_rate is not None else "endpoint-concurrency",
        slo_ms=cfg.slo_ms,
        peak_qps_under_slo=good / wall,  # requests meeting the SLOs per second at this offered load
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
    return PilotResult(
        kind="serving",
        command=cfg.command,
        platform=platform,
        workload=WorkloadInfo(name=model, factory="endpoint", config={"api": api, "max_tokens": cfg.max_tokens}),
        config={
            "endpoint": shown_url,
            "api": api,
            "model": model,
            "request_rate": cfg.request_rate,
            "concurrency": cfg.concurrency if cfg.request_rate is None else None,
            "num_requests": cfg.num_requests,
            "max_tokens": cfg.max_tokens,
            "slo_ms": cfg.slo_ms,
            "slo_ttft_ms": cfg.slo_ttft_ms,
            "slo_tpot_ms": cfg.slo_tpot_ms,
            "request_timeout_s": cfg.request_timeout_s,
            "seed": cfg.seed,
        },
        figures=figures,
        samples={
            "endpoint.ttft_s": list(ttft.values),
            "endpoint.tpot_s": list(tpot.values),
            "endpoint.itl_s": list(itl.values),
            "endpoint.e2e_s": list(e2e.values),
        },
        serving=summary,
        accepted=bool(ok) and n_err == 0,
        details={
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
        },
        errors=[f"{n_err} of {len(records)} requests failed"] if n_err else [],
    )
