"""A multi-node result priced with the one-node ``--scaling`` result joined to it (``scaling_result``, issue 25)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.errors import ConfigError
from accelpilot.figures import measured
from accelpilot.pilot.result import PilotResult, Platform, Topology, TrainingSummary, WorkloadInfo, write_result

CAT = load_catalog()
TOKENS = 100_000_000


def _result(path: Path, tps: float, topology: Topology, figures: dict[str, Any] | None = None) -> Path:
    res = PilotResult(
        kind="training",
        platform=Platform(device="cpu", device_type="cpu", device_name="test cpu"),
        workload=WorkloadInfo(name="gpt-tiny"),
        training=TrainingSummary(tokens_per_s=tps),
        topology=topology,
        figures=figures or {},
    )
    return write_result(res, path)


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    # two nodes x one rank: 10,000 token/s over both ranks
    multi = _result(tmp_path / "multi.json", 10_000.0, Topology(world_size=2, nnodes=2, accelerators=2))
    src = "accelpilot run train --scaling 1,2,4"
    scaling = _result(
        tmp_path / "scaling.json",
        6_000.0,
        Topology(world_size=1, accelerators=1),
        {
            "tokens_per_s_world1": measured(6_000.0, "token/s", src, label="throughput at world 1"),
            "scaling_efficiency_world2": measured(0.8, "", src, label="scaling efficiency 1 -> 2"),
            "scaling_efficiency_world4": measured(0.7, "", src, label="scaling efficiency 1 -> 4"),
        },
    )
    return multi, scaling


def _bill(multi: Path, scaling: Path | None, instances: int) -> Any:
    option: dict[str, Any] = {
        "name": "m",
        "instance": "trn1.2xlarge",  # one Trainium chip per instance
        "pricing": "on_demand",
        "result": str(multi),
        "tokens_per_run": TOKENS,
        "instances": instances,
    }
    if scaling is not None:
        option["scaling_result"] = str(scaling)
    return make_bill(parse_scenario({"options": [option]}), CAT).options[0]  # reads both files itself


def _close(a: Decimal, b: Decimal) -> bool:
    return abs(a - b) < Decimal("1e-12")


def test_the_devices_measured_need_no_efficiency(pair: tuple[Path, Path]) -> None:
    o = _bill(*pair, instances=2)
    # by hand: 2 chips priced / 2 measured; 1e8 / 10,000 token/s = 10,000 s
    assert _close(o.hours_per_run.value, Decimal(10_000) / Decimal(3600))
    assert any("scaling_result" in n and "world sizes [1, 2, 4]" in n for n in o.notes), o.notes


def test_one_chip_is_priced_at_world_1_of_the_scaling_result(pair: tuple[Path, Path]) -> None:
    o = _bill(*pair, instances=1)
    # by hand: efficiency over the two nodes = 10,000 / (2 x 6,000) = 0.83333; nearest world size to 1 chip is 1
    # (efficiency 1): 1/2 x 1/0.83333 = 0.6 of 10,000 = 6,000 token/s; 1e8 / 6,000 = 16,666.67 s
    assert _close(o.hours_per_run.value, Decimal(TOKENS) / Decimal(6_000) / Decimal(3600))
    assert any("efficiency at the measured world size 2 over 2 node(s): 0.833" in n for n in o.notes), o.notes


def test_four_chips_take_the_one_node_efficiency_at_4_and_say_so(pair: tuple[Path, Path]) -> None:
    o = _bill(*pair, instances=4)
    # by hand: 4/2 x (0.7 / 0.83333) = 2 x 0.84 = 1.68 x 10,000 = 16,800 token/s
    assert _close(o.hours_per_run.value, Decimal(TOKENS) / Decimal(16_800) / Decimal(3600))
    assert any("measured on one node, the option spans 4 instances" in n for n in o.notes), o.notes
    o8 = _bill(*pair, instances=8)
    # by hand: 8/2 x (0.7 / 0.83333) = 3.36 x 10,000 = 33,600 token/s; beyond the largest world size (4)
    assert _close(o8.hours_per_run.value, Decimal(TOKENS) / Decimal(33_600) / Decimal(3600))
    assert any("extrapolated beyond the largest world size measured (4)" in n for n in o8.notes), o8.notes


def test_without_the_join_one_chip_is_half_of_two(pair: tuple[Path, Path]) -> None:
    o = _bill(pair[0], None, instances=1)
    # by hand: 1/2 of 10,000 token/s = 5,000 token/s: no efficiency is known, the rate is split linearly
    assert _close(o.hours_per_run.value, Decimal(TOKENS) / Decimal(5_000) / Decimal(3600))


def test_scaling_result_without_result_is_refused(pair: tuple[Path, Path]) -> None:
    option = {"name": "m", "instance": "trn1.2xlarge", "pricing": "on_demand", "hours_per_run": 2}
    with pytest.raises(ConfigError, match="scaling_result scales a measured result"):
        parse_scenario({"options": [{**option, "scaling_result": str(pair[1])}]})


def test_a_time_to_target_says_the_scaling_result_is_not_used(tmp_path: Path, pair: tuple[Path, Path]) -> None:
    res = PilotResult(
        kind="training",
        platform=Platform(device="cpu", device_type="cpu", device_name="test cpu"),
        workload=WorkloadInfo(name="gpt-tiny"),
        training=TrainingSummary(tokens_per_s=10_000.0, time_to_target_s=7_200.0),
        topology=Topology(world_size=2, nnodes=2, accelerators=2),
    )
    path = write_result(res, tmp_path / "ttt.json")
    option = {"name": "m", "instance": "trn1.2xlarge", "pricing": "on_demand", "instances": 2}
    o = make_bill(
        parse_scenario({"options": [{**option, "result": str(path), "scaling_result": str(pair[1])}]}), CAT
    ).options[0]
    assert o.hours_per_run is not None and o.hours_per_run.value == Decimal(
        2
    )  # 7,200 s / 3,600: the measured time, unscaled
    assert any("not used: a measured time to target is not scaled" in n for n in o.notes), o.notes
