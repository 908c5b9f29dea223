"""The endpoint pilot's requests and per-load figures: what is sent, what counts as good, the operating point.

TTFT, TPOT, ITL and E2E follow vLLM's ``benchmark_serving`` definitions; goodput = requests meeting every SLO given,
per second. A percentile of fewer than 100 requests carries a note saying so (a p99 of 12 requests is their max).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from accelpilot.errors import ConfigError
from accelpilot.pilot.serve.base import ServeConfig, sample_sentences
from accelpilot.pilot.serve.endpoint_http import RequestRecord
from accelpilot.pilot.serve.endpoint_load import Drive, LoadPoint, load_points, pool_size
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

FEW_SAMPLES = 100  # below this many requests, a tail percentile is noted as such


def sample_note(n: int) -> str | None:
    """The note a percentile of ``n`` requests carries, or None from FEW_SAMPLES on."""
    if n >= FEW_SAMPLES:
        return None
    return f"from {n} request{'s' if n != 1 else ''} (fewer than {FEW_SAMPLES}: p90 and above are near the maximum)"


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
        n_points = len(load_points(cfg))
        # enough distinct rows for every measured point: each point its own sample, none resent (issue 30)
        own = n_points > 1 and cfg.cache == "cold" and len({_key(s) for s in pool}) >= cfg.num_requests * n_points
        specs = sample_requests(_distinct(pool) if own else pool, cfg.num_requests * (n_points if own else 1), cfg.seed)
        if cfg.output_len:  # a stated output length overrides the file's
            file_len = parse_length(cfg.output_len, "--output-len")
            rng = random.Random(cfg.seed + 1)
            specs = [RequestSpec(prompt=s.prompt, messages=s.messages, max_tokens=file_len.sample(rng)) for s in specs]
        n = cfg.num_requests
        per_point = [specs[k * n : (k + 1) * n] for k in range(n_points)] if own else []
        info = {"distinct_in_file": len(pool), "distinct_samples_per_point": own}
        rs = RequestSet(specs[:n], f"file {cfg.requests_file}", lengths.unit, info, per_point)
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


def _key(s: RequestSpec) -> str:
    return repr((s.prompt, s.messages))


def _distinct(pool: list[RequestSpec]) -> list[RequestSpec]:
    """The file's rows, a repeated prompt once (two points sharing one prompt would share its cache)."""
    seen: dict[str, RequestSpec] = {}
    for s in pool:
        seen.setdefault(_key(s), s)
    return list(seen.values())


def count_tokens(records: list[RequestRecord], lengths: Lengths | None) -> dict[str, int]:
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


def ms(s: Samples) -> dict[str, float]:
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
    cpu_s: float = 0.0
    connections: int = 0
    pool: dict[str, Any] = field(default_factory=dict)  # Drive.pool_use: connections opened against streams
    salt: str = ""
    warmup: int = 0

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
            "ttft_ms": ms(self.ttft),
            "tpot_ms": ms(self.tpot),
            "itl_ms": ms(self.itl),
            "e2e_ms": ms(self.e2e),
            "sample_note": sample_note(len(self.ok)),
            "salt": self.salt or None,
            "warmup_requests": self.warmup,
            "connections": self.connections,
            **self.pool,
            "http_version": sorted({r.http_version for r in self.records if r.http_version}),
            "client_cpu_ms_per_request": self.cpu_s * 1e3 / len(self.records),
        }


def point_result(point: LoadPoint, d: Drive, cfg: ServeConfig, salt: str = "", warmup: int = 0) -> PointResult:
    records, wall = d.records, d.wall_s
    ok = [r for r in records if r.ok]
    return PointResult(
        point=point,
        records=records,
        wall=wall,
        cpu_s=d.cpu_s,
        connections=d.connections,
        pool=d.pool_use(pool_size(point), closed_loop=point.rate is None and not point.trace),
        salt=salt.strip(),
        warmup=warmup,
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
