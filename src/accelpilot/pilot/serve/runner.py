"""The serving pilot: build the engine, drive it with LoadGen (or drive an HTTP endpoint), write one result.

In-process: load the workload, build every shape bucket once (timed), tokenise the request set (timed),
calibrate capacity with a short burst of full batches, run the requested LoadGen scenarios, optionally search
the peak Server rate whose p99 stays under the SLO, and fill ``ServingSummary`` for the bill.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from accelpilot.errors import ConfigError
from accelpilot.figures import Figure, measured
from accelpilot.pilot.result import PilotResult, ServingSummary, WorkloadInfo
from accelpilot.pilot.serve.base import ServeConfig
from accelpilot.pilot.serve.loadgen_runner import SCENARIO_NAMES, ScenarioResult, run_scenario

Log = Callable[[str], None]
BUILTIN = {
    "minilm": "minilm",
    "builtin:minilm": "minilm",
    "all-minilm-l6-v2": "minilm",
    "null": "null",
    "builtin:null": "null",
}
SOURCE = "accelpilot run serve"
# ServeConfig fields that mean nothing in-process: left out of an in-process result's config
ENDPOINT_ONLY = (
    "arrival",
    "requests_file",
    "input_len",
    "output_len",
    "tokenizer",
    "output_control",
    "trace",
    "min_goodput_share",
    "compare_to",
    "parity_tokens",
    "parity_threshold",
    "platform_note",
    "store_outputs",
)


def _noop(_: str) -> None:
    return None


def load_workload(spec: str) -> Any:
    """Built-in name or ``module:factory``; the object must satisfy ServingWorkload."""
    from accelpilot.pilot.workloads.base import ServingWorkload, load_factory

    key = BUILTIN.get(spec.strip().lower())
    if key == "minilm":
        from accelpilot.pilot.serve.minilm import MiniLMWorkload

        return MiniLMWorkload()
    if key == "null":
        from accelpilot.pilot.serve.fake import NullWorkload

        return NullWorkload()
    wl = load_factory(spec)
    if not isinstance(wl, ServingWorkload):
        missing = [m for m in ("name", "build_model", "tokenize", "forward", "sample_requests") if not hasattr(wl, m)]
        raise ConfigError(
            f"{spec!r} did not return a ServingWorkload (missing: {', '.join(missing) or 'methods'})",
            field="--workload",
            fix="see accelpilot.pilot.workloads.base.ServingWorkload",
        )
    return wl


@dataclass(slots=True)
class Capacity:
    qps: float  # requests/s at full batches
    single_s: float  # one request alone


def calibrate(engine: Any, tokens: Sequence[np.ndarray], max_batch: int, budget_s: float) -> Capacity:
    """Short burst of full batches, bucketed like the batcher does: an estimate for the rates to try."""
    from accelpilot.pilot.serve.buckets import bucket_for

    t0 = time.perf_counter()
    engine.run([tokens[0]], bucket_for(len(tokens[0]), engine.buckets) or engine.buckets[-1])
    single = time.perf_counter() - t0
    fits = [t for t in tokens if bucket_for(len(t), engine.buckets) is not None]
    if not fits:
        return Capacity(qps=1.0 / max(single, 1e-6), single_s=single)
    done = 0
    i = 0
    t0 = time.perf_counter()
    while True:
        chunk = [fits[(i + k) % len(fits)] for k in range(max_batch)]
        i += max_batch
        by: dict[int, list[np.ndarray]] = {}
        for t in chunk:
            by.setdefault(bucket_for(len(t), engine.buckets) or 0, []).append(t)
        for seq, group in by.items():
            engine.run(group, seq)
        done += len(chunk)
        el = time.perf_counter() - t0
        if el >= budget_s and done >= max_batch:
            break
    return Capacity(qps=done / el, single_s=single)


def passes(run: ScenarioResult, slo_s: float) -> bool:
    """A rate is sustained when p99 <= SLO without errors (LoadGen issues on schedule: a backlog shows as latency)."""
    if not run.latencies_s or run.errors:
        return False
    return float(np.percentile(np.asarray(run.latencies_s), 99)) <= slo_s


def find_peak(
    engine: Any,
    tokens: Sequence[np.ndarray],
    *,
    slo_s: float,
    capacity_qps: float,
    steps: int,
    duration_s: float,
    max_batch: int,
    max_wait_s: float,
    seed: int = 0,
    log: Log = _noop,
) -> tuple[float | None, ScenarioResult | None, list[dict[str, Any]]]:
    """Bounded bisection over Server rates in (0, 1.25 x capacity]: highest rate that passes, its run, the trail."""
    trail: list[dict[str, Any]] = []
    best_rate: float | None = None
    best_run: ScenarioResult | None = None

    def trial(rate: float) -> bool:
        # enough queries for a p99 to mean something, within 1x-3x the step duration
        secs = min(3 * duration_s, max(duration_s, 32 / rate))
        run = run_scenario(
            engine,
            tokens,
            "server",
            duration_s=secs,
            max_batch=max_batch,
            max_wait_s=max_wait_s,
            target_qps=rate,
            slo_s=slo_s,
            seed=seed,
        )
        ok = passes(run, slo_s)
        p = run.percentiles_ms()
        trail.append(
            {
                "target_qps": rate,
                "achieved_qps": run.throughput_qps,
                "queries": run.completed,
                "p99_ms": p.get("p99"),
                "passed": ok,
                "loadgen_valid": run.valid,
            }
        )
        log(f"find-peak: {rate:,.1f} q/s -> p99 {p.get('p99', float('nan')):.1f} ms {'ok' if ok else 'too slow'}")
        nonlocal best_rate, best_run
        if ok and (best_rate is None or rate > best_rate):
            best_rate, best_run = rate, run
        return ok

    # Bisection in (0, 1.25 x capacity]; a rate that passes raises the floor, one that fails lowers the ceiling.
    lo, hi = 0.0, 1.25 * capacity_qps
    for _ in range(max(1, steps)):
        if lo > 0 and hi - lo <= 0.02 * hi:
            break
        mid = (lo + hi) / 2
        if trial(mid):
            lo = mid
        else:
            hi = mid
    if best_rate is None:  # nothing passed: one last try at a low rate before saying "no rate meets the SLO"
        trial(max(hi / 4, 1.0 / max(duration_s, 1e-3)))
    return best_rate, best_run, trail


def _scenario_figures(prefix: str, run: ScenarioResult, slo_s: float | None, name: str) -> dict[str, Figure]:
    src = f"{SOURCE} (MLPerf LoadGen {SCENARIO_NAMES[run.scenario]}, host timestamps per query)"
    out: dict[str, Figure] = {}
    for k, v in run.percentiles_ms().items():
        out[f"{prefix}.latency_{k}_ms"] = measured(v, "ms", src, f"{name} latency {k}")
    out[f"{prefix}.throughput_qps"] = measured(
        run.throughput_qps, "req/s", src, f"{name} completed requests per second"
    )
    out[f"{prefix}.goodput_qps"] = measured(
        run.goodput_qps(slo_s), "req/s", src, f"{name} requests within SLO per second"
    )
    share = run.goodput_share(slo_s)
    if share is not None:
        out[f"{prefix}.goodput_share"] = measured(share, "", src, f"{name} share of requests within SLO")
    if run.idle_fraction is not None:
        out[f"{prefix}.idle_fraction"] = measured(run.idle_fraction, "", src, f"{name} idle share of provisioned time")
    eff = run.padding.get("padding_efficiency")
    if eff is not None:
        out[f"{prefix}.padding_efficiency"] = measured(eff, "", src, f"{name} real tokens / padded tokens")
    return out


def _scenario_detail(run: ScenarioResult, slo_s: float | None) -> dict[str, Any]:
    return {
        "scenario": SCENARIO_NAMES[run.scenario],
        "target_qps": run.target_qps,
        "duration_s": run.duration_s,
        "issued": run.issued,
        "completed": run.completed,
        "rejected": run.rejected,
        "errors": run.errors,
        "span_s": run.span_s,
        "throughput_qps": run.throughput_qps,
        "latency_ms": run.percentiles_ms(),
        "goodput_qps": run.goodput_qps(slo_s),
        "goodput_share": run.goodput_share(slo_s),
        "idle_fraction": run.idle_fraction,
        "busy_s": run.busy_s,
        "tokens_per_request": run.input_tokens / run.completed if run.completed else None,
        "padding": run.padding,
        "loadgen_valid": run.valid,
        "loadgen_summary": run.loadgen,
        "failures": run.failures[:20],
    }


def run_serve(cfg: ServeConfig, log: Log = _noop) -> PilotResult:
    """Validate, run, and return the result (the caller writes it)."""
    cfg.validate()
    if cfg.endpoint is not None:
        from accelpilot.pilot.serve.endpoint import run_endpoint

        return run_endpoint(cfg, log)
    return _run_in_process(cfg, log)


def _run_in_process(cfg: ServeConfig, log: Log) -> PilotResult:
    from accelpilot.pilot.device import fingerprint, resolve_device
    from accelpilot.pilot.serve.engine import Engine
    from accelpilot.pilot.serve.loadgen_runner import _lg

    _lg()  # a missing LoadGen is a one-line error before any model loads
    device = resolve_device(cfg.device)
    log(f"loading workload {cfg.workload}")
    t0 = time.perf_counter()
    wl = load_workload(cfg.workload)
    engine = Engine(wl, device, buckets=cfg.buckets, max_batch=cfg.max_batch, precision=cfg.precision)
    load_s = time.perf_counter() - t0
    log(f"building {len(engine.buckets)} bucket(s) on {device} ({engine.mode}, {engine.precision})")
    t0 = time.perf_counter()
    engine.warmup(lambda k: log(f"building shape {k}"))
    warm_s = time.perf_counter() - t0

    texts = wl.sample_requests(cfg.num_samples, cfg.seed)
    t0 = time.perf_counter()
    token_lists = wl.tokenize(texts)
    tok_s = time.perf_counter() - t0
    tokens = [np.asarray(t, dtype=np.int64) for t in token_lists]
    too_long = sum(1 for t in tokens if len(t) > engine.buckets[-1])

    slo_s = cfg.slo_ms / 1e3 if cfg.slo_ms is not None else None
    max_wait_s = cfg.max_wait_ms / 1e3
    need_cal = cfg.find_peak or "offline" in cfg.scenarios or ("server" in cfg.scenarios and cfg.target_qps is None)
    cap: Capacity | None = None
    if need_cal:
        log("calibrating capacity with full batches")
        cap = calibrate(engine, tokens, cfg.max_batch, budget_s=min(2.0, max(0.5, cfg.duration_s / 4)))
        log(f"capacity about {cap.qps:,.1f} requests/s at batch {cfg.max_batch}")

    runs: dict[str, ScenarioResult] = {}
    for sc in cfg.scenarios:
        target = None
        if sc == "server":
            target = cfg.target_qps if cfg.target_qps is not None else 0.5 * (cap.qps if cap else 1.0)
        log(
            f"LoadGen {SCENARIO_NAMES[sc]}"
            + (f" at {target:,.1f} q/s" if target else "")
            + f" for {cfg.duration_s:g} s"
        )
        runs[sc] = run_scenario(
            engine,
            tokens,
            sc,
            duration_s=cfg.duration_s,
            max_batch=cfg.max_batch,
            max_wait_s=max_wait_s,
            target_qps=target,
            slo_s=slo_s,
            expected_qps=cap.qps if cap else None,
            expected_latency_s=cap.single_s if cap else None,
            seed=cfg.seed,
        )

    peak: float | None = None
    peak_run: ScenarioResult | None = None
    trail: list[dict[str, Any]] = []
    if cfg.find_peak:
        assert slo_s is not None and cap is not None
        log(f"find-peak: bisection over Server rates, p99 <= {cfg.slo_ms:g} ms")
        peak, peak_run, trail = find_peak(
            engine,
            tokens,
            slo_s=slo_s,
            capacity_qps=cap.qps,
            steps=cfg.peak_steps,
            duration_s=cfg.peak_duration_s,
            max_batch=cfg.max_batch,
            max_wait_s=max_wait_s,
            seed=cfg.seed,
            log=log,
        )

    # --- the summary the bill reads --------------------------------------------------------------
    primary_name = (
        "peak"
        if peak_run is not None
        else next((s for s in ("server", "offline", "singlestream") if s in runs), cfg.scenarios[0])
    )
    primary = peak_run if peak_run is not None else runs[primary_name]
    ok = passes(primary, slo_s) if slo_s is not None else True
    if peak is not None:
        peak_qps: float | None = peak
        peak_basis = "find-peak: highest Server rate whose p99 met the SLO"
    elif ok:
        peak_qps = primary.throughput_qps
        peak_basis = f"measured {SCENARIO_NAMES[primary.scenario]} rate (p99 met the SLO; not a peak search)"
    else:
        peak_qps = primary.goodput_qps(slo_s)
        peak_basis = f"{SCENARIO_NAMES[primary.scenario]} goodput (p99 missed the SLO; not a peak search)"
    summary = ServingSummary(
        scenario=SCENARIO_NAMES[primary.scenario] + (" (find-peak)" if peak_run is not None else ""),
        slo_ms=cfg.slo_ms,
        peak_qps_under_slo=peak_qps,
        goodput_qps=primary.goodput_qps(slo_s),
        goodput_share=primary.goodput_share(slo_s),
        tokens_per_request=primary.input_tokens / primary.completed if primary.completed else None,
        idle_fraction=primary.idle_fraction,
        errors=sum(r.errors for r in runs.values()) + (peak_run.errors if peak_run else 0),
        rejected=sum(r.rejected for r in runs.values()) + (peak_run.rejected if peak_run else 0),
    )

    figures: dict[str, Figure] = {}
    samples: dict[str, list[float]] = {}
    details: dict[str, Any] = {"scenarios": {}}
    for sc, run in runs.items():
        figures.update(_scenario_figures(sc, run, slo_s, SCENARIO_NAMES[sc]))
        samples[f"{sc}.latency_s"] = list(run.latencies_s)
        details["scenarios"][sc] = _scenario_detail(run, slo_s)
    if peak_run is not None:
        figures.update(_scenario_figures("peak", peak_run, slo_s, "Server at peak"))
        samples["peak.latency_s"] = list(peak_run.latencies_s)
        details["scenarios"]["peak"] = _scenario_detail(peak_run, slo_s)
    if peak_qps is not None:
        figures["peak_qps_under_slo"] = measured(peak_qps, "req/s", SOURCE, "peak rate under SLO", note=peak_basis)
    figures["tokenize_us_per_request"] = measured(tok_s / len(texts) * 1e6, "us", SOURCE, "tokenisation per request")
    figures["compile_s_total"] = measured(warm_s, "s", SOURCE, "building all shape buckets (compile/capture/warm-up)")
    for key, info in engine.shapes.items():
        figures[f"bucket.{key}.build_s"] = measured(info.warmup_s, "s", SOURCE, f"shape {key} ({info.path})")
    if cap is not None:
        figures["capacity_qps"] = measured(cap.qps, "req/s", SOURCE, f"full batches of {cfg.max_batch}, no arrivals")
    details.update(
        {
            "engine": engine.describe(),
            "compiles": engine.compiles,
            "load_s": load_s,
            "tokenize_s": tok_s,
            "requests_longer_than_largest_bucket": too_long,
            "peak_basis": peak_basis,
            "find_peak": trail,
            "capacity": {"qps": cap.qps, "single_s": cap.single_s} if cap else None,
        }
    )
    errors = [f"{sc}: {f}" for sc, r in runs.items() for f in r.failures[:5]] + list(engine.compile_errors)

    platform = fingerprint(device, engine.compile_backend if engine.compiles else "eager", engine.precision)
    params = sum(p.numel() for p in engine.model.parameters()) if hasattr(engine.model, "parameters") else None
    return PilotResult(
        kind="serving",
        command=cfg.command,
        platform=platform,
        workload=WorkloadInfo(
            name=wl.name,
            factory=getattr(wl, "factory", cfg.workload),
            params=params,
            config=wl.config() if hasattr(wl, "config") else {},
        ),
        config=_config_dict(cfg),
        figures=figures,
        samples=samples,
        serving=summary,
        accepted=ok,
        details=details,
        errors=errors,
    )


def _config_dict(cfg: ServeConfig) -> dict[str, Any]:
    from dataclasses import asdict

    d = asdict(cfg)
    d.pop("command", None)
    d.pop("extra", None)
    d.pop("api_key", None)  # a credential is never recorded
    for key in ENDPOINT_ONLY:
        d.pop(key, None)
    d["scenarios"] = list(cfg.scenarios)
    d["buckets"] = list(cfg.buckets)
    return d
