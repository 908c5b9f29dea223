"""The report's scaling chart: throughput, efficiency and communication share against world size."""

from __future__ import annotations

import pytest

from accelpilot.figures import measured
from accelpilot.pilot.result import PilotResult, Platform, WorkloadInfo
from accelpilot.report.build import pilot_view, scaling_charts


def _dist_result(worlds: dict[int, float], comm: dict[int, float]) -> PilotResult:
    figs = {f"tokens_per_s_world{w}": measured(t, "token/s", "test", label="throughput") for w, t in worlds.items()}
    for w in worlds:
        if w != 1:
            figs[f"scaling_efficiency_world{w}"] = figs[f"tokens_per_s_world{w}"] / (figs["tokens_per_s_world1"] * w)
    figs |= {f"comm_share_world{w}": measured(c, "", "test", label="comm") for w, c in comm.items()}
    return PilotResult(
        kind="training",
        platform=Platform(device="cpu", device_type="cpu"),
        workload=WorkloadInfo(name="gpt-tiny"),
        figures=figs,
    )


def test_scaling_charts_plot_the_measured_figures() -> None:
    res = _dist_result({1: 1000.0, 2: 1500.0, 4: 2000.0}, {2: 0.3, 4: 0.5})
    thr, eff = scaling_charts("r.json", res)
    measured_s, linear = thr.series
    assert measured_s.x == [1.0, 2.0, 4.0] and measured_s.y == [1000.0, 1500.0, 2000.0]
    assert linear.y == [1000.0, 2000.0, 4000.0] and linear.style == "--"
    e, c = eff.series
    assert e.x == [1.0, 2.0, 4.0] and e.y == pytest.approx([1.0, 0.75, 0.5])  # 1500 / (2 x 1000), 2000 / (4 x 1000)
    assert c.y == [0.3, 0.5]
    view = pilot_view("r.json", res, [], False)
    assert [ch.id for ch in view.charts][-2:] == ["scaling-throughput", "scaling-efficiency"]


def test_no_scaling_chart_for_one_world_size() -> None:
    assert scaling_charts("r.json", _dist_result({1: 1000.0}, {})) == []


def test_the_report_says_what_a_training_throughput_counts() -> None:
    from accelpilot.pilot.result import Topology
    from accelpilot.report.build import throughput_basis

    res = _dist_result({1: 1000.0}, {})
    old = throughput_basis(res)  # no topology: read from the config, world size 1
    assert "all 1 rank(s)" in old and "before topology" in old
    res = res.model_copy(
        update={
            "topology": Topology(world_size=8, nnodes=2, nproc_per_node=4, devices_per_accelerator=2, accelerators=4)
        }
    )
    line = pilot_view("r.json", res, [], False).throughput_basis
    assert "all 8 rank(s) (2 node(s) x 4 per node) on 4 accelerator(s), 2 device(s) per accelerator" in line
