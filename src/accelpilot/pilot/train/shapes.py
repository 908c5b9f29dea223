"""Shapes and recompilation: compile counters, and what a change of sequence length costs.

Runs last, so dynamic graphs compiled for other shapes never time the main shape. Recompilations come from
dynamo's counters; where those cannot be read they are "not measured", never a measured 0.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from accelpilot.figures import Figure, Kind
from accelpilot.pilot import device as dev
from accelpilot.pilot.stats import Samples
from accelpilot.pilot.train.loop import Trainer, timed_steps
from accelpilot.pilot.train.record import Context, Measurements, fig


@dataclass(frozen=True, slots=True)
class CompileCounters:
    """Dynamo's compile counters (unique graphs, frames) and inductor's FX-graph cache hits/misses."""

    graphs: int
    frames: int
    cache_hits: int
    cache_misses: int


def read_counters() -> CompileCounters | None:
    """The counters now, or None when this torch does not expose them (then nothing is counted)."""
    try:
        from torch._dynamo.utils import counters
    except Exception:
        return None
    return CompileCounters(
        graphs=int(counters["stats"].get("unique_graphs", 0)),
        frames=int(counters["frames"].get("ok", 0)),
        cache_hits=int(counters["inductor"].get("fxgraph_cache_hit", 0)),
        cache_misses=int(counters["inductor"].get("fxgraph_cache_miss", 0)),
    )


def new_graphs(before: CompileCounters | None, after: CompileCounters | None) -> int | None:
    """Graphs compiled between two readings; None when either reading is missing."""
    if before is None or after is None:
        return None
    return after.graphs - before.graphs


def dynamic_shapes_setting() -> bool | None:
    with contextlib.suppress(Exception):
        import torch._dynamo.config as dcfg

        return bool(dcfg.automatic_dynamic_shapes)
    return None


@dataclass(frozen=True, slots=True)
class MainShape:
    """What earlier phases measured at the main shape, so it is not run again."""

    first_call_s: float
    step_s: float
    new_graphs: int | None
    compile_s: float


def run_shapes(ctx: Context, m: Measurements, trainer: Trainer, main: MainShape) -> None:
    """First call and steady step time per sequence length, new graphs, and the cost of padding instead."""
    s_ = ctx.settings
    shapes = s_.shapes
    advance = ctx.reporter.phase(f"shapes {','.join(map(str, shapes))}", len(shapes))
    per: dict[int, dict[str, Any]] = {
        s_.seq_len: {
            "first_call_s": main.first_call_s,
            "step_s": main.step_s,
            "new_graphs": main.new_graphs,
            "compile_s": main.compile_s,
        }
    }
    for s in shapes:
        if s in per:
            advance(1)
            continue
        batches = iter(ctx.workload.batches("train", s_.batch_size, s, ctx.cfg.seed + 1000 + s))
        batch = trainer.to_device(next(batches))
        c0 = read_counters()
        with dev.timed_region(ctx.device) as first:
            trainer.step(batch)
        c1 = read_counters()
        times = timed_steps(trainer, batches, ctx.cfg.shape_steps)
        steady = Samples(times.step_s).percentile(50.0)
        per[s] = {
            "first_call_s": first.seconds,
            "step_s": steady,
            "new_graphs": new_graphs(c0, c1),
            "compile_s": max(0.0, first.seconds - steady),
        }
        m.samples[f"shape_{s}_step_s"] = list(times.step_s)
        advance(1)
    extra = [s for s in shapes if s != s_.seq_len]
    counts = [per[s]["new_graphs"] for s in extra]
    recompile_s = sum(per[s]["compile_s"] for s in extra)
    for s in shapes:
        m.figures[f"shape_{s}_first_call_s"] = fig(per[s]["first_call_s"], "s", f"first step at seq len {s}")
        m.figures[f"shape_{s}_step_s"] = fig(per[s]["step_s"], "s", f"median step at seq len {s}")
    if all(c is not None for c in counts):
        m.figures["recompilations"] = fig(
            sum(c for c in counts if c is not None),
            "",
            "new compiled graphs when the sequence length changes",
            note="dynamo unique_graphs counter",
        )
    else:
        m.unavailable["recompilations"] = "not measured: this torch exposes no dynamo compile counters"
    m.figures["recompile_time_s"] = fig(recompile_s, "s", "compile time spent on new shapes")
    # padding/bucketing alternative: pad every shape to the largest (one compiled graph, more work per step)
    largest = max(shapes)
    t_pad = m.figures[f"shape_{largest}_step_s"]
    mix = [m.figures[f"shape_{s}_step_s"] for s in shapes]
    t_mix = sum(mix[1:], mix[0]) if len(mix) > 1 else mix[0]
    n = Figure(value=len(shapes), unit="", kind=Kind.DERIVED, label="shapes in the mix")
    m.figures["padding_cost_ratio"] = ((t_pad * n) / t_mix).with_label(
        "padding cost: step time of an equal shape mix padded to the largest / unpadded",
        note="derived from measured step times; 1.0 means padding is free",
    )
    waste_per_mix = (t_pad * n) - t_mix  # seconds lost per round of the mix by padding
    if recompile_s > 0 and float(waste_per_mix.value) > 0:
        m.figures["padding_break_even_rounds"] = (m.figures["recompile_time_s"] / waste_per_mix).with_label(
            "rounds of the shape mix after which compiling each shape beats padding",
            note="recompile time / (padded - unpadded time per round)",
        )
    m.details["shapes"] = {
        "main": s_.seq_len,
        "per_shape": {str(k): v for k, v in per.items()},
        "automatic_dynamic_shapes": dynamic_shapes_setting(),
        "alternative": f"pad every batch to {largest} tokens: one compiled graph",
    }
