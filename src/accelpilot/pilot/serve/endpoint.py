"""Endpoint mode: drive an OpenAI-compatible server (vLLM, vLLM-Neuron, llama.cpp, ...) over HTTP with streaming.

Measured the way vLLM's ``bench serve`` does: TTFT (first streamed token), TPOT = (E2E - TTFT) / (output tokens
- 1), inter-token latencies, end-to-end latency; goodput = requests meeting every SLO given, per second.
Load is Poisson or fixed-rate arrivals at ``request_rate``, a closed loop of ``concurrency`` clients, a sweep
of either (one result, one point per load, the operating point picked from them), or a replayed trace. Each
measured point sends requests no cache has seen in this run (endpoint_load.py). Runtime failures (refused
connections, HTTP errors, garbage, timeouts, oversized bodies) are counted in the result, never raised; whatever
the server said is scrubbed of this run's credentials before it is stored.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import socket
from typing import Any
from urllib.parse import urlparse

import httpx
import numpy as np

from accelpilot.figures import Figure, measured
from accelpilot.pilot.result import PilotResult, Platform, ServingSummary, WorkloadInfo
from accelpilot.pilot.serve.base import ServeConfig
from accelpilot.pilot.serve.endpoint_http import RequestRecord, resolve_url, server_facts
from accelpilot.pilot.serve.endpoint_load import (
    LoadPoint,
    cache_facts,
    drive,
    load_points,
    point_salt,
    run_nonce,
    warmup_count,
    warmup_salt,
)
from accelpilot.pilot.serve.endpoint_parity import parity, read_compare
from accelpilot.pilot.serve.endpoint_points import (
    PointResult,
    build_requests,
    count_tokens,
    operating_point,
    point_result,
    sample_note,
)
from accelpilot.pilot.serve.requests import Lengths, RequestSpec
from accelpilot.redact import redact_url, scrub, scrub_tree, secret_values

__all__ = ["LoadPoint", "build_requests", "load_points", "resolve_url", "run_endpoint"]
SOURCE = "accelpilot run serve --endpoint (streaming, client-side timestamps)"


def _client_facts(url: str, cfg: ServeConfig) -> dict[str, Any]:
    host = urlparse(url).hostname or ""
    loopback = host in ("localhost", "::1") or host.startswith("127.")
    return {
        "measured_over_network": not loopback,
        "client_host_hash": hashlib.sha256(socket.gethostname().encode()).hexdigest()[:12],
        "declared_platform": cfg.platform_note,
    }


def _warmup_specs(specs: list[RequestSpec], n: int) -> list[RequestSpec]:
    """``n`` warm-up requests shaped like the measured ones (cycled when there are fewer)."""
    return [specs[i % len(specs)] for i in range(n)] if specs else []


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


def run_endpoint(
    cfg: ServeConfig, log: Any = None, *, transport: httpx.AsyncBaseTransport | None = None
) -> PilotResult:
    """Drive the endpoint; ``transport`` replaces the network (tests pass ``httpx.MockTransport``)."""
    import platform as _platform

    from accelpilot.termtext import cell

    url, api = resolve_url(cfg.endpoint or "")
    shown_url = redact_url(url)  # what is logged and recorded; the request itself uses the real URL
    secrets = secret_values(url, cfg.api_key)
    reqset = build_requests(cfg, api)
    lengths = Lengths(cfg.tokenizer) if cfg.tokenizer else None
    shas = {_prompt_sha(s) for s in reqset.specs}
    # every file is read before the first request is sent, so a bad path costs nothing
    compare = read_compare(cfg.compare_to, shas) if cfg.compare_to else None
    baseline = read_compare(cfg.parity_baseline, shas) if cfg.parity_baseline else None
    model, server = asyncio.run(
        server_facts(url, cfg.model_name, cfg.api_key, cfg.request_timeout_s, transport=transport)
    )
    nonce = run_nonce(cfg, compare.nonce if compare else None)
    points = load_points(cfg)
    results: list[PointResult] = []
    say = log or (lambda _m: None)
    if cfg.cache == "warm":  # the warm cache on purpose: every request once, unmeasured, with the points' salt
        salt = point_salt(nonce, 0, "warm")
        say(f"warm-up: {len(reqset.specs)} requests (unmeasured) so every point measures the warm cache")
        drive(cfg, url, api, model, reqset.specs, points[-1], salt, transport)
    for k, point in enumerate(points):
        salt = point_salt(nonce, k, cfg.cache)
        n_warm = warmup_count(cfg, point) if cfg.cache == "cold" else 0
        specs = reqset.for_point(k)
        warm = _warmup_specs(specs, n_warm)
        say(
            f"{len(specs)} streaming requests to {cell(shown_url)} ({api}, "
            f"model {cell(scrub(model, secrets))}), {point.label()}"
            + (f", after {len(warm)} unmeasured warm-up request(s)" if warm else "")
        )
        d = drive(cfg, url, api, model, specs, point, salt, transport, warm, warmup_salt(nonce, k))
        for r in d.records:  # a server or httpx may echo the URL or the key into an error message
            r.error = scrub(r.error, secrets)
        count_tokens(d.records, lengths)
        results.append(point_result(point, d, cfg, salt, len(warm)))
    floor_pair = None
    if compare is not None and baseline is not None:
        floor_pair = (compare.outputs, baseline.outputs, f"{compare.path} against {baseline.path}")
    elif compare is not None:  # this platform answers its own first point again, at the run's highest load
        say("parity floor: the first point's requests once more (unmeasured), to measure self-agreement")
        again = drive(cfg, url, api, model, reqset.specs, points[-1], point_salt(nonce, 0, cfg.cache), transport)
        count_tokens(again.records, lengths)
        floor_pair = (
            _outputs(reqset.specs, results[0].records),
            _outputs(reqset.specs, again.records),
            f"this platform answering the same requests twice ({points[0].label()}, then {points[-1].label()})",
        )

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
    few = f" (from {len(ok)} requests, fewer than 100)" if sample_note(len(ok)) else ""
    for name, s in (("ttft", ttft), ("tpot", tpot), ("itl", itl), ("e2e", e2e)):
        for q, v in s.percentiles().items():
            figures[f"endpoint.{name}_{q}_ms"] = measured(v * 1e3, "ms", SOURCE, f"{name.upper()} {q}{few}")
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
    shown_model = scrub(model, secrets)[:512]
    platform = Platform(
        device=f"endpoint:{p.scheme}://{p.hostname}:{p.port or (443 if p.scheme == 'https' else 80)}",
        device_type="endpoint",
        device_name=cfg.platform_note or shown_model,  # --platform tells two servers of one model apart
        python=_platform.python_version(),
    )
    facts = _client_facts(url, cfg)
    platform.hostname_hash = facts["client_host_hash"]
    headers: dict[str, str] = dict(server.get("headers") or {})
    for r in records:
        for hk, hv in r.headers.items():
            headers.setdefault(hk, hv)
    platform.tool_output = scrub_tree(  # type: ignore[assignment]  # whatever the server said, minus our secrets
        {"server": {**server, "headers": headers}, "client": facts}, secrets
    )
    config: dict[str, Any] = {
        "endpoint": shown_url,
        "api": api,
        "model": shown_model,
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
    config.update({"cache": cfg.cache, "cache_salt": nonce, "warmup_requests": cfg.warmup_requests, "http": cfg.http})

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
        "cache": {**cache_facts(cfg, nonce, points, bool(reqset.per_point)), "nonce": nonce},
        "client": {
            "connections": main.connections,
            "connections_per_stream": "one pool per point, sized to its concurrency, kept alive",
            **main.pool,  # opened vs streams: whether the server kept them alive, measured
            "http_version": sorted({r.http_version for r in records if r.http_version}),
            "client_cpu_ms_per_request": main.cpu_s * 1e3 / len(records),
            "stale_connection_retries": sum(1 for r in records if r.stale_retry),
        },
        "sample_note": sample_note(len(ok)),
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
        details["parity"] = parity(cfg, outputs, compare, lengths, floor_pair)
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
        workload=WorkloadInfo(name=shown_model, factory="endpoint", config={"api": api, "max_tokens": cfg.max_tokens}),
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
        details=scrub_tree(details, secrets),
        errors=[scrub(e, secrets) for e in errors],
    )
