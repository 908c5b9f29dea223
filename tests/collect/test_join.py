"""The one-node --scaling result launched beside a multi-node one is joined as scaling_result, never priced as a run."""

from __future__ import annotations

from pathlib import Path

from accelpilot.collect.join import split_scaling
from accelpilot.collect.match import Assignment
from accelpilot.collect.read import Collected
from accelpilot.figures import measured
from accelpilot.pilot.result import PilotResult, Platform, Topology, TrainingSummary, WorkloadInfo


def _run(name: str, topology: Topology, scaling: bool) -> Collected:
    figs = {}
    if scaling:
        figs = {
            "tokens_per_s_world1": measured(6_000.0, "token/s", "t", label="world 1"),
            "scaling_efficiency_world2": measured(0.8, "", "t", label="1 -> 2"),
        }
    res = PilotResult(
        kind="training",
        platform=Platform(device="cpu", device_type="cpu"),
        workload=WorkloadInfo(name="gpt-tiny"),
        training=TrainingSummary(tokens_per_s=10_000.0),
        topology=topology,
        figures=figs,
    )
    return Collected(Path(name), name, res, "verified")


SCALING = _run("scaling.json", Topology(world_size=1), scaling=True)
MULTI = _run("multi.json", Topology(world_size=2, nnodes=2, accelerators=2), scaling=False)


def test_the_scaling_run_is_taken_out_and_joined() -> None:
    # the scaling run ranks first (newer): without the join it would be the option's result
    runs, joined = split_scaling(Assignment("o", [SCALING, MULTI], "launched for it"))
    assert joined is SCALING and runs.results == [MULTI]


def test_without_a_multi_node_run_the_scaling_run_stays_the_result() -> None:
    runs, joined = split_scaling(Assignment("o", [SCALING], "launched for it"))
    assert joined is None and runs.results == [SCALING]
    one = _run("one.json", Topology(world_size=1), scaling=False)  # a plain one-device run is not a scaling run
    runs, joined = split_scaling(Assignment("o", [one, MULTI], "launched for it"))
    assert joined is None and runs.results == [one, MULTI]
