"""Profiler coverage: which operators explain the step time, and how long it takes to find the slowest.

Uses every activity torch.profiler supports here (CPU, plus CUDA/XPU... where present), so no device branch.
On an accelerator the device self time is ranked; on the CPU the CPU self time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch

# Annotation rows (not operators) the profiler reports alongside ops.
_SKIP_PREFIXES = ("ProfilerStep", "## ", "[memory]", "Torch-Compiled Region", "CompiledFunction", "autograd::engine")


def _self_time_us(evt: Any, use_device: bool) -> float:
    if use_device:
        for attr in ("self_device_time_total", "self_cuda_time_total"):
            v = getattr(evt, attr, None)
            if v is not None:
                return float(v)
        return 0.0
    return float(getattr(evt, "self_cpu_time_total", 0.0))


def profile_steps(
    step: Callable[[], None], sync: Callable[[], None], n_steps: int = 3, top_k: int = 10
) -> dict[str, Any]:
    """Profile ``n_steps`` calls of ``step``; top operators by self time and the share they explain."""
    from torch.profiler import ProfilerActivity, profile

    activities = list(torch.profiler.supported_activities())
    t_begin = time.perf_counter()
    with profile(activities=activities) as prof:
        sync()
        t0 = time.perf_counter()
        for _ in range(n_steps):
            step()
        sync()
        wall_s = time.perf_counter() - t0
    averages = prof.key_averages()
    on_device = any(a != ProfilerActivity.CPU for a in activities) and any(_self_time_us(e, True) > 0 for e in averages)
    rows = []
    for e in averages:
        if e.key.startswith(_SKIP_PREFIXES):
            continue
        t = _self_time_us(e, on_device)
        if t > 0:
            rows.append({"op": e.key, "self_s": t / 1e6, "calls": int(e.count)})
    rows.sort(key=lambda r: -r["self_s"])
    total_ops_s = sum(r["self_s"] for r in rows)
    top = rows[:top_k]
    top_s = sum(r["self_s"] for r in top)
    for r in top:
        r["share_of_step"] = r["self_s"] / wall_s if wall_s > 0 else None
    elapsed = time.perf_counter() - t_begin  # profiling plus analysis: time to name the slowest op
    return {
        "time_basis": "device self time" if on_device else "cpu self time",
        "activities": [str(a).split(".")[-1] for a in activities],
        "steps": n_steps,
        "wall_s": wall_s,
        "top_ops": top,
        "top_k": top_k,
        "top_share_of_step": top_s / wall_s if wall_s > 0 else None,
        "all_ops_share_of_step": total_ops_s / wall_s if wall_s > 0 else None,
        "slowest_op": top[0]["op"] if top else None,
        "time_to_identify_s": elapsed,
    }
