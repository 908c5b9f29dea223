"""Stability of the DDP communication share: identical runs at world size 2 (gloo, CPU, tiny GPT), then world 1.

Each run is one torchrun launch of the pilot's rank loop with ``--comm-samples`` interleaved samples. From the
same samples it prints both ways of measuring the share, so machine load hits them alike:

- pairs (before issue 25's fix): median over samples of (synchronised - no_sync) / synchronised, two passes
  timed apart;
- hook (now): median of all-reduce / (compute + all-reduce) within one pass, the all-reduce timed in DDP's
  comm hook (``pilot/train/comm_timer.py``).

Per run: the median share and its interquartile range (IQR); across runs: the range of the medians. World 1
exchanges nothing: the pilot reports "not measured" there; its hook share is printed as the floor.

    uptime; PYTHONPATH=src python3 benchmarks/comm_share_stability.py [--runs 5] [--samples 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

from accelpilot.pilot.train.config import TrainConfig
from accelpilot.pilot.train.rank import RankConfig
from accelpilot.pilot.train.scaling import comm_samples, comm_share
from accelpilot.pilot.train.torchrun import launch


def _iqr(xs: list[float]) -> float:
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[2] - q[0]


def one_run(work: Path, tag: str, world: int, samples: int) -> dict[str, float]:
    cfg = RankConfig(
        workload="accelpilot.pilot.workloads.gpt:factory",
        workload_options={"size": "tiny"},
        batch_per_rank=4,
        seq_len=32,
        total_steps=3,
        warmup=2,
        comm_pairs=samples,
        run_dir=str(work / tag),
    )
    run = launch(TrainConfig(), cfg, work / tag, nproc=world)
    rows = comm_samples(run.of("comm_pair"))
    pairs = [(r["sync_s"] - r["nosync_s"]) / r["sync_s"] for r in rows]
    c = comm_share(rows)
    assert c is not None
    return {
        "pairs_share": statistics.median(pairs),
        "pairs_iqr": _iqr(pairs),
        "hook_share": c.share,
        "hook_iqr": c.spread,
        "hook_allreduce_ms": 1e3 * statistics.median(c.allreduce_s),
        "hook_busy_ms": 1e3 * statistics.median(c.busy_s),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--samples", type=int, default=20)
    a = ap.parse_args()
    print("load before:", os.getloadavg())
    work = Path(tempfile.mkdtemp(prefix="comm-share-"))
    two = [one_run(work, f"w2-{i}", 2, a.samples) for i in range(a.runs)]
    one = one_run(work, "w1", 1, a.samples)
    for i, r in enumerate(two):
        print(
            f"world 2 run {i}: pairs {r['pairs_share']:+.3f} (IQR {r['pairs_iqr']:.3f})   "
            f"hook {r['hook_share']:.3f} (IQR {r['hook_iqr']:.3f}; all-reduce {r['hook_allreduce_ms']:.2f} ms of "
            f"{r['hook_busy_ms']:.2f} ms)"
        )
    print(f"world 1:       pairs {one['pairs_share']:+.3f} (IQR {one['pairs_iqr']:.3f})   hook {one['hook_share']:.3f}")
    for way in ("pairs", "hook"):
        meds = [r[f"{way}_share"] for r in two]
        print(
            f"{way}: medians over {a.runs} runs {min(meds):+.3f} .. {max(meds):+.3f} (range {max(meds) - min(meds):.3f});"
            f" median of the runs' IQRs {statistics.median(r[f'{way}_iqr'] for r in two):.3f}"
        )
    print("load after:", os.getloadavg())
    print(json.dumps({"world2": two, "world1": one, "config": vars(a)}))


if __name__ == "__main__":
    main()
