"""A multi-instance option priced from the scaling efficiency a distributed training pilot measured."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.figures import Kind, measured
from accelpilot.pilot.result import PilotResult, Platform, TrainingSummary, WorkloadInfo, write_result

CAT = load_catalog()


def _result(tmp_path: Path) -> Path:
    tok1 = measured(1000.0, "token/s", "accelpilot run train", label="training throughput, all ranks")
    tok2 = measured(1500.0, "token/s", "accelpilot run train", label="training throughput, all ranks")
    eff = (tok2 / (tok1 * 2)).with_label("scaling efficiency 1 -> 2")  # 0.75, derived from the two throughputs
    res = PilotResult(
        kind="training",
        platform=Platform(device="cpu", device_type="cpu", device_name="test cpu"),
        workload=WorkloadInfo(name="gpt-tiny"),
        figures={"tokens_per_s_world1": tok1, "tokens_per_s_world2": tok2, "scaling_efficiency_world2": eff},
        training=TrainingSummary(tokens_per_s=1000.0),
    )
    return write_result(res, tmp_path / "dist.json")


def _option(path: Path, **kw: Any) -> dict[str, Any]:
    return {
        "name": "m",
        "instance": "trn1.2xlarge",
        "pricing": "on_demand",
        "result": str(path),
        "tokens_per_run": 7_200_000,
        **kw,
    }


def test_two_instances_priced_from_the_measured_efficiency(tmp_path: Path) -> None:
    path = _result(tmp_path)
    bill = make_bill(parse_scenario({"options": [_option(path, instances=2)]}), CAT)
    o = bill.options[0]
    assert o.hours_per_run is not None
    # by hand: 7.2M tokens / (1000 token/s x 2 instances x 0.75) = 4800 s = 4/3 h
    assert o.hours_per_run.value == Decimal(7_200_000) / (Decimal(1000) * 2 * Decimal("0.75")) / 3600
    leaves = o.hours_per_run.leaves()
    assert not any(leaf.kind is Kind.ASSUMPTION and "scaling" in leaf.label for leaf in leaves)  # none typed in
    assert {float(leaf.value) for leaf in leaves if leaf.kind is Kind.MEASURED} >= {1000.0, 1500.0}
    assert any("measured at world size 2" in n for n in o.notes)


def test_extrapolation_beyond_the_measured_world_is_said(tmp_path: Path) -> None:
    path = _result(tmp_path)
    o = make_bill(parse_scenario({"options": [_option(path, instances=4)]}), CAT).options[0]
    assert o.hours_per_run is not None
    assert o.hours_per_run.value == Decimal(7_200_000) / (Decimal(1000) * 4 * Decimal("0.75")) / 3600
    assert any("extrapolated beyond the largest world size measured (2)" in n for n in o.notes)


def test_one_instance_and_a_typed_efficiency_are_unchanged(tmp_path: Path) -> None:
    path = _result(tmp_path)
    one = make_bill(parse_scenario({"options": [_option(path)]}), CAT).options[0]
    assert one.hours_per_run is not None
    assert one.hours_per_run.value == Decimal(2)  # 7.2M / 1000 token/s = 7200 s
    typed = make_bill(parse_scenario({"options": [_option(path, instances=2, scaling_efficiency=0.5)]}), CAT)
    typed_hours = typed.options[0].hours_per_run
    assert typed_hours is not None
    assert typed_hours.value == Decimal(7_200_000) / (Decimal(1000) * 2 * Decimal("0.5")) / 3600
