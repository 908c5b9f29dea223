"""What naming operators in core ATen costs the op inventory, measured in one run on one model.

Times, best of --repeat warm runs in one process: the whole ``inventory()`` (export, core ATen decomposition,
dynamo explain), and inside it ``torch.export.export`` alone and ``run_decompositions()`` alone on the same model,
then the share of the inventory the decomposition takes and the inventory time without it (an estimate of the
inventory before op sets were stated). The fallback trace (forced) is timed too.

    .venv/bin/python benchmarks/op_inventory.py [--model accelpilot.pilot.serve.minilm:make_workload] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import torch

import accelpilot.porting.ops as ops


def _best(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm: imports, dynamo caches, weights in memory
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="accelpilot.pilot.serve.minilm:make_workload")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    workload = ops.load_factory(args.model, announce=lambda _: None)
    model = workload.build_model().eval()
    inputs = tuple(workload.example_inputs())

    def quiet(fn: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            with ops._quiet_torch():
                return fn()

        return run

    whole = _best(lambda: ops.inventory(workload, announce=lambda _: None), args.repeat)
    export = _best(quiet(lambda: torch.export.export(model, inputs, strict=False)), args.repeat)
    ep = torch.export.export(model, inputs, strict=False)
    decomp = _best(quiet(lambda: ep.run_decompositions()), args.repeat)

    def forced() -> Any:
        real = ops._capture_export

        def refuse(*a: Any, **k: Any) -> None:
            raise RuntimeError("forced fallback")

        ops._capture_export = refuse
        try:
            return ops.inventory(workload, announce=lambda _: None)
        finally:
            ops._capture_export = real

    fallback = _best(forced, args.repeat)
    print(f"model {args.model}; torch {torch.__version__}; load average {os.getloadavg()[0]:.2f}")
    print(f"inventory (export path, core ATen)   {whole:7.2f} s")
    print(f"  torch.export.export alone          {export:7.2f} s")
    print(f"  run_decompositions alone           {decomp:7.2f} s  ({100 * decomp / whole:.0f}% of the inventory)")
    print(f"  inventory without the decomposition (estimate) {whole - decomp:7.2f} s")
    print(f"ratio with / without decomposition   {whole / (whole - decomp):7.2f}x")
    print(f"inventory (fallback trace, forced)   {fallback:7.2f} s  ({fallback / whole:.2f}x the export path)")


if __name__ == "__main__":
    main()
