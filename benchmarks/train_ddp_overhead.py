"""Harness overhead of the distributed training pilot: its DDP rank loop at world size 2 vs a bare torchrun loop.

Both are launched by torchrun (--standalone, gloo, 1 thread per rank), same tiny GPT, same per-rank batch, same
steps; launches are interleaved (pilot, bare, bare, pilot, ...) so machine noise hits both alike. Prints the
throughput ratio pilot/bare (target >= 0.97) and the pilot's measured weak-scaling efficiency 1 -> 2 on this
machine (no target: on a shared 2-core machine it says more about the machine than the pilot).

    PYTHONPATH=src python3 benchmarks/train_ddp_overhead.py [--repeats 2] [--steps 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from accelpilot.pilot.train.config import TrainConfig
from accelpilot.pilot.train.rank import RankConfig
from accelpilot.pilot.train.scaling import world_stats
from accelpilot.pilot.train.torchrun import launch

HERE = Path(__file__).resolve().parent


def pilot_tokens_per_s(work: Path, tag: str, world: int, bs: int, sl: int, warmup: int, steps: int) -> float:
    rank_cfg = RankConfig(
        workload="accelpilot.pilot.workloads.gpt:factory",
        workload_options={"size": "tiny"},
        batch_per_rank=bs,
        seq_len=sl,
        total_steps=warmup + steps,
        warmup=warmup,
        comm_pairs=0,
        run_dir=str(work / tag),
    )
    run = launch(TrainConfig(), rank_cfg, work / tag, nproc=world)
    return world_stats(run, warmup, bs).tokens_per_s


def bare_tokens_per_s(work: Path, tag: str, world: int, bs: int, sl: int, warmup: int, steps: int) -> float:
    out = work / f"{tag}.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={world}"]
    cmd += [str(HERE / "ddp_bare_rank.py"), str(out), str(bs), str(sl), str(warmup), str(steps)]
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return float(json.loads(out.read_text())["tokens_per_s"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=64)
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ddp-overhead-"))
    pilot: list[float] = []
    bare: list[float] = []
    for r in range(a.repeats):
        order = ("pilot", "bare") if r % 2 == 0 else ("bare", "pilot")
        for which in order:
            tag = f"{which}-{r}"
            if which == "pilot":
                pilot.append(pilot_tokens_per_s(work, tag, 2, a.batch, a.seq, a.warmup, a.steps))
            else:
                bare.append(bare_tokens_per_s(work, tag, 2, a.batch, a.seq, a.warmup, a.steps))
    one = pilot_tokens_per_s(work, "pilot-world1", 1, a.batch, a.seq, a.warmup, a.steps)
    two = statistics.median(pilot)
    summary = {
        "pilot_tokens_per_s_world2": pilot,
        "bare_tokens_per_s_world2": bare,
        "ratio_pilot_over_bare": statistics.median(pilot) / statistics.median(bare),
        "pilot_tokens_per_s_world1": one,
        "weak_scaling_efficiency_1_to_2": two / (2 * one),
        "config": vars(a),
    }
    print(json.dumps(summary, indent=1))
    print(
        f"DDP world 2: pilot {two:,.0f} tokens/s vs bare torchrun {statistics.median(bare):,.0f} tokens/s -> "
        f"ratio {summary['ratio_pilot_over_bare']:.3f} (target >= 0.97); weak-scaling efficiency 1 -> 2: "
        f"{summary['weak_scaling_efficiency_1_to_2']:.3f} (2 shared cores, no target)"
    )


if __name__ == "__main__":
    main()
