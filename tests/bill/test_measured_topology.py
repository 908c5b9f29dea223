"""A result is priced by the accelerators it was measured on (issue 25): its throughput is the sum over its ranks."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.figures import measured
from accelpilot.pilot.result import PilotResult, Platform, Topology, TrainingSummary, WorkloadInfo, write_result

CAT = load_catalog()
T = 10_000.0  # token/s summed over the two ranks the pilot ran
TOKENS = 100_000_000


def _write(tmp_path: Path, **kw: Any) -> Path:
    res = PilotResult(
        kind="training",
        platform=Platform(device="cpu", device_type="cpu", device_name="test cpu"),
        workload=WorkloadInfo(name="gpt-tiny"),
        training=TrainingSummary(tokens_per_s=T),
        **kw,
    )
    return write_result(res, tmp_path / "two-ranks.json")


def _bill(path: Path, instances: int) -> Any:
    option = {
        "name": "m",
        "instance": "trn1.2xlarge",  # one Trainium chip per instance
        "pricing": "on_demand",
        "result": str(path),
        "tokens_per_run": TOKENS,
        "instances": instances,
    }
    return make_bill(parse_scenario({"options": [option]}), CAT).options[0]


def _close(a: Decimal, b: Decimal) -> bool:
    return abs(a - b) < Decimal("1e-20")


def test_two_ranks_priced_on_two_one_chip_instances(tmp_path: Path) -> None:
    path = _write(tmp_path, topology=Topology(world_size=2, nproc_per_node=2, accelerators=2))
    o = _bill(path, instances=2)
    # by hand: 2 accelerators priced / 2 measured = 1; 1e8 token / 10,000 token/s = 10,000 s = 2.7778 h
    assert _close(o.hours_per_run.value, Decimal(10_000) / Decimal(3600))
    # money: 1.34 USD/h x 2 instances x 10,000/3,600 h = 26,800 / 3,600 = 7.4444 USD a run
    assert _close(o.cost_per_run.value, Decimal("26800") / Decimal(3600))
    assert any("measured on 2 accelerator(s) (2 rank(s) over 1 node(s))" in n for n in o.notes)


def test_an_older_result_reads_its_ranks_from_config(tmp_path: Path) -> None:
    path = _write(tmp_path, config={"nproc_per_node": 2})  # written before topology existed
    o = _bill(path, instances=2)
    assert _close(o.hours_per_run.value, Decimal(10_000) / Decimal(3600))  # the same 2.7778 h as above


def test_one_chip_priced_from_two_measured_is_half_the_rate(tmp_path: Path) -> None:
    path = _write(tmp_path, topology=Topology(world_size=2, nproc_per_node=2, accelerators=2))
    o = _bill(path, instances=1)
    # by hand: 1 / 2 of 10,000 token/s = 5,000 token/s; 1e8 / 5,000 = 20,000 s = 5.5556 h
    assert _close(o.hours_per_run.value, Decimal(20_000) / Decimal(3600))


def test_scaling_past_the_measurement_uses_the_efficiency_relative_to_the_measured(tmp_path: Path) -> None:
    e2 = measured(0.75, "", "accelpilot run train", label="scaling efficiency 1 -> 2")
    e4 = measured(0.6, "", "accelpilot run train", label="scaling efficiency 1 -> 4")
    path = _write(
        tmp_path,
        topology=Topology(world_size=2, nproc_per_node=2, accelerators=2),
        figures={"scaling_efficiency_world2": e2, "scaling_efficiency_world4": e4},
    )
    o = _bill(path, instances=4)
    # by hand: 4 / 2 x (0.6 / 0.75) = 1.6; 1e8 / (10,000 x 1.6) = 6,250 s
    assert _close(o.hours_per_run.value, Decimal(6_250) / Decimal(3600))
    assert any("relative to 0.75 at the measured world size 2" in n for n in o.notes)
    o8 = _bill(path, instances=8)
    # by hand: 8 / 2 x (0.6 / 0.75) = 3.2 (nearest measured world size 4); 1e8 / 32,000 = 3,125 s
    assert _close(o8.hours_per_run.value, Decimal(3_125) / Decimal(3600))
    assert any("extrapolated beyond the largest world size measured (4)" in n for n in o8.notes)
