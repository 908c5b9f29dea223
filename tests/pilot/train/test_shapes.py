"""Shapes and recompilation: counted from dynamo's counters, or reported as not measured, never a 0."""

from __future__ import annotations

import sys

import pytest

from accelpilot.pilot.train.loop import Trainer
from accelpilot.pilot.train.record import Context, Measurements
from accelpilot.pilot.train.shapes import MainShape, new_graphs, read_counters, run_shapes


def _run(ctx: Context) -> Measurements:
    trainer = Trainer(ctx.workload, ctx.device, "fp32", "eager", 1e-3, 0)
    m = Measurements()
    run_shapes(ctx, m, trainer, MainShape(first_call_s=0.1, step_s=0.01, new_graphs=0, compile_s=0.09))
    return m


def test_recompilations_counted_when_counters_exist(tiny_ctx: Context) -> None:
    assert read_counters() is not None
    m = _run(tiny_ctx)
    assert float(m.figures["recompilations"].value) == 0  # eager: nothing compiles, and that was counted
    assert "recompilations" not in m.unavailable
    assert m.details["shapes"]["per_shape"]["8"]["new_graphs"] == 0
    assert set(m.figures) >= {"shape_16_step_s", "shape_8_first_call_s", "padding_cost_ratio"}


def test_recompilations_not_measured_without_counters(tiny_ctx: Context, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch._dynamo.utils", None)  # importing it now raises ImportError
    assert read_counters() is None
    m = _run(tiny_ctx)
    assert "recompilations" not in m.figures
    assert "not measured" in m.unavailable["recompilations"]
    assert m.details["shapes"]["per_shape"]["8"]["new_graphs"] is None
    assert "shape_8_step_s" in m.figures  # the timings are still measured


def test_new_graphs_needs_both_readings() -> None:
    c = read_counters()
    assert c is not None
    assert new_graphs(c, c) == 0
    assert new_graphs(None, c) is None and new_graphs(c, None) is None
