"""The training pilot on a CUDA GPU: GPT-2 124M at batch 16 x 1024, bf16, torch.compile (inductor).

Runs the pilot exactly as `accelpilot run train --device cuda --size gpt2-124m` would, plus one extra
sequence length (512) to measure the recompilation cost, writes the result JSON to $OUT (or
pilot-results/), and prints tokens/s beside the reference loop's (../shared/bench/gpu_reference.py writes
$OUT/anchors.json when run first in the same call; otherwise the 486k tokens/s measured on an H200 on
2026-11-30 is shown for orientation). Budget: about 3 minutes on an H200.

    PYTHONPATH=src python3 benchmarks/gpu_train.py
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# A cold compile, as a first-time user sees it: fresh inductor and triton caches (the reference loop that
# runs just before in the same call compiles a near-identical graph and would otherwise warm them).
if os.environ.get("ACCELPILOT_WARM_CACHE") != "1":
    _cache = tempfile.mkdtemp(prefix="accelpilot-compile-cache-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(_cache, "inductor")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(_cache, "triton")

from accelpilot.pilot.train.config import TrainConfig
from accelpilot.pilot.train.pilot import TrainingPilot
from accelpilot.pilot.train.record import Reporter

REFERENCE_TOKENS_PER_S_H200 = 486_000.0  # gpu_reference.py compiled loop, H200, 2026-11-30 (orientation only)


class PrintReporter(Reporter):
    """Phase names with elapsed seconds on stderr, so a log tail shows where the time went."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()

    def phase(self, name: str, total: int | None = None) -> Callable[[int], None]:
        print(f"[{time.perf_counter() - self.t0:7.1f} s] {name}", file=sys.stderr, flush=True)

        def advance(n: int = 1) -> None:
            return None

        return advance

    def end_phase(self) -> None:
        print(f"[{time.perf_counter() - self.t0:7.1f} s] done", file=sys.stderr, flush=True)


def main() -> int:
    import torch

    if not torch.cuda.is_available():
        print("gpu_train.py: no CUDA device here; nothing to do", file=sys.stderr)
        return 0
    out = Path(os.environ.get("OUT") or "pilot-results")
    ckpt_dir = tempfile.mkdtemp(prefix="accelpilot-ckpt-")
    cmd = "PYTHONPATH=src python3 benchmarks/gpu_train.py"
    cfg = TrainConfig(
        device="cuda",
        size="gpt2-124m",
        compile="inductor",
        precision="bf16",
        batch_size=16,
        seq_len=1024,
        steps=30,
        warmup=3,
        shapes=[1024, 512],
        runs=3,
        max_steps=200,
        interrupt_at=0,
        checkpoint_dir=ckpt_dir,
        out=str(out),
        command=cmd + "  # = accelpilot run train --device cuda --size gpt2-124m --batch-size 16 --seq-len 1024 "
        "--steps 30 --shapes 1024,512 --runs 3 --max-steps 200 --interrupt-at 0",
    )
    t0 = time.perf_counter()
    pilot = TrainingPilot(cfg, PrintReporter())
    try:
        res = pilot.run()
    finally:
        shutil.rmtree(ckpt_dir, ignore_errors=True)
    wall = time.perf_counter() - t0
    f = res.figures

    def val(key: str) -> float | None:
        return float(f[key].value) if key in f else None

    tok_s = val("tokens_per_s") or 0.0
    p50 = val("step_time_p50_s")
    tok_s_median = 16 * 1024 / p50 if p50 else None
    ref = REFERENCE_TOKENS_PER_S_H200
    ref_src = "gpu_reference.py on an H200, 2026-11-30 (not this call)"
    anchors = out / "anchors.json"
    if anchors.is_file():
        with open(anchors, encoding="utf-8") as fh:
            ref = float(json.load(fh)["gpt2_124m_compiled"]["tokens_per_s"])
        ref_src = f"{anchors} (same call)"
    summary = {
        "result_file": str(pilot.written),
        "wall_s": wall,
        "tokens_per_s": tok_s,
        "tokens_per_s_at_median_step": tok_s_median,
        "reference_tokens_per_s": ref,
        "reference_source": ref_src,
        "ratio_vs_reference": tok_s / ref,
        "ratio_vs_reference_median_step": (tok_s_median / ref) if tok_s_median else None,
        "mfu": val("mfu"),
        "peak_device_memory_gib": (val("peak_device_memory_bytes") or 0) / 2**30,
        "time_to_first_correct_run_s": val("time_to_first_correct_run_s"),
        "compile_time_s": val("compile_time_s"),
        "compile_time_eval_s": val("compile_time_eval_s"),
        "shape_512_first_call_s": val("shape_512_first_call_s"),
        "recompilations": val("recompilations"),
        "recompile_time_s": val("recompile_time_s"),
        "padding_cost_ratio": val("padding_cost_ratio"),
        "time_to_target_s": val("time_to_target_s"),
        "accepted_runs": res.training.accepted_runs if res.training else None,
        "checkpoint_write_s": val("checkpoint_write_s"),
        "checkpoint_restore_s": val("checkpoint_restore_s"),
        "slowest_op": res.details.get("profile", {}).get("slowest_op"),
        "errors": res.errors,
        "torch": torch.__version__,
        "compile_cache": "warm (ACCELPILOT_WARM_CACHE=1)" if os.environ.get("ACCELPILOT_WARM_CACHE") == "1" else "cold",
        "device_name": res.platform.device_name,
    }
    print(json.dumps(summary, indent=1))
    with open(out / "gpu_train_summary.json", "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=1)
    print(
        f"accelpilot GPT-2 124M bf16 compiled: {tok_s:,.0f} tokens/s (median step: {tok_s_median or 0:,.0f}); "
        f"reference {ref:,.0f} tokens/s -> ratio {tok_s / ref:.3f}; "
        f"new shape 512: first call {summary['shape_512_first_call_s']} s, recompilations {summary['recompilations']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
