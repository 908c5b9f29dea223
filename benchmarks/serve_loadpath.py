"""Is the load path the bottleneck? accelpilot's serving pipeline with a do-nothing model vs LoadGen's null SUT.

Both run in this process, one after the other, under LoadGen's Server scenario at the same target rate
(default 50,000 queries/s, the rate the shared reference reaches on a 2-core machine). The reference SUT
completes each query inside issue_query; ours goes through the real path: bucketing, the dynamic batcher's
queue and worker thread, padding, a model call, completion per batch. Target: ours >= 0.8x the reference.

    PYTHONPATH=src python3 benchmarks/serve_loadpath.py [--qps 50000] [--seconds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import mlperf_loadgen as lg
import numpy as np
import torch

from accelpilot.pilot.serve.engine import Engine
from accelpilot.pilot.serve.fake import NullWorkload
from accelpilot.pilot.serve.loadgen_runner import parse_summary, run_scenario, stdout_to_stderr


def null_sut(qps: float, secs: float) -> dict[str, object]:
    """The shared reference's do-nothing SUT (../shared/bench/loadgen_null_sut.py), re-implemented inline."""
    n = 0

    def issue(samples: list) -> None:  # type: ignore[type-arg]
        nonlocal n
        n += len(samples)
        lg.QuerySamplesComplete([lg.QuerySampleResponse(s.id, 0, 0) for s in samples])

    sut = lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(1024, 1024, lambda s: None, lambda s: None)
    ts = lg.TestSettings()
    ts.scenario = lg.TestScenario.Server
    ts.mode = lg.TestMode.PerformanceOnly
    ts.min_duration_ms = int(secs * 1000)
    ts.min_query_count = 1
    ts.server_target_qps = qps
    with tempfile.TemporaryDirectory() as tmp:
        ls = lg.LogSettings()
        ls.log_output.outdir = tmp
        ls.enable_trace = False
        t0 = time.perf_counter()
        with stdout_to_stderr():
            lg.StartTestWithLogSettings(sut, qsl, ts, ls)
        dt = time.perf_counter() - t0
        with open(os.path.join(tmp, "mlperf_log_summary.txt")) as fh:
            summ = parse_summary(fh.read())
    lg.DestroyQSL(qsl)
    lg.DestroySUT(sut)
    return {
        "queries": n,
        "seconds": dt,
        "rate": n / dt,
        "valid": summ.get("Result is"),
        "loadgen_qps": summ.get("Completed samples per second") or summ.get("Scheduled samples per second"),
        "p99_ns": summ.get("99.00 percentile latency (ns)"),
    }


def ours(qps: float, secs: float, max_batch: int, max_wait_ms: float) -> dict[str, object]:
    wl = NullWorkload()
    eng = Engine(wl, torch.device("cpu"), buckets=(32, 64, 128), max_batch=max_batch)
    eng.warmup()
    tokens = [np.asarray(t, dtype=np.int64) for t in wl.tokenize(wl.sample_requests(1024, 0))]
    t0 = time.perf_counter()
    r = run_scenario(
        eng,
        tokens,
        "server",
        duration_s=secs,
        max_batch=max_batch,
        max_wait_s=max_wait_ms / 1e3,
        target_qps=qps,
        slo_s=None,
    )
    dt = time.perf_counter() - t0
    return {
        "queries": r.completed,
        "seconds": dt,
        "rate": r.completed / dt,
        "valid": r.loadgen.get("Result is"),
        "loadgen_qps": r.loadgen.get("Completed samples per second"),
        "p99_ms": r.percentiles_ms().get("p99"),
        "mean_batch": r.padding.get("mean_batch"),
        "rejected": r.rejected,
        "errors": r.errors,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--qps", type=float, default=50000.0)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--max-batch", type=int, default=256)
    ap.add_argument("--max-wait-ms", type=float, default=1.0)
    a = ap.parse_args()
    ref = null_sut(a.qps, a.seconds)
    mine = ours(a.qps, a.seconds, a.max_batch, a.max_wait_ms)
    # Sustained, not just completed: at 0.8x the reference rate LoadGen must call our run VALID.
    at80 = ours(0.8 * a.qps, a.seconds, a.max_batch, a.max_wait_ms)
    ratio = float(mine["rate"]) / float(ref["rate"])  # type: ignore[arg-type]
    print(
        f"LoadGen null SUT  Server @ {a.qps:,.0f}: {ref['rate']:,.0f} q/s over {ref['seconds']:.1f} s, "
        f"LoadGen: {ref['valid']}, p99 {ref['p99_ns']} ns"
    )
    print(
        f"accelpilot null   Server @ {a.qps:,.0f}: {mine['rate']:,.0f} q/s over {mine['seconds']:.1f} s, "
        f"LoadGen: {mine['valid']}, p99 {mine['p99_ms']:.2f} ms, mean batch {mine['mean_batch']:.1f}"
    )
    print(
        f"accelpilot null   Server @ {0.8 * a.qps:,.0f}: {at80['rate']:,.0f} q/s, LoadGen: {at80['valid']}, "
        f"p99 {at80['p99_ms']:.2f} ms, mean batch {at80['mean_batch']:.1f}"
    )
    ok = ratio >= 0.8 and at80["valid"] == "VALID"
    print(
        f"ratio (accelpilot / null SUT completed rate): {ratio:.3f}; VALID at 0.8x the rate: {at80['valid']}  "
        f"(target: ratio >= 0.8 and VALID at 0.8x)  {'PASS' if ok else 'FAIL'}"
    )
    print(
        json.dumps(
            {
                "reference": ref,
                "accelpilot": mine,
                "accelpilot_at_0.8x": at80,
                "ratio": ratio,
                "cpu_count": os.cpu_count(),
            },
            default=str,
        )
    )


if __name__ == "__main__":
    main()
