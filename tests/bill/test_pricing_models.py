"""Issue 10 section 3: serverless GPU, spot, Capacity Blocks, transfer and tax. Money by hand in each test."""

from __future__ import annotations

from decimal import Decimal as D
from pathlib import Path
from typing import Any

import pytest

from accelpilot.bill.compute import make_bill
from accelpilot.bill.model import bill_to_json
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.errors import ConfigError, InputFileError, UnknownNameError
from accelpilot.figures import measured
from accelpilot.pilot.result import PilotResult, Platform, ServingSummary, TrainingSummary, WorkloadInfo, write_result

CAT = load_catalog()

SERVERLESS_ROW = """
[[price]]
instance = "L4@Example-serverless"
accelerator = "L4"
accelerator_count = 1
pricing = "serverless"
price_per_second = "0.00019"
billing_increment_s = "{inc}"
provider = "Example"
as_of = 2026-11-01
source = "example provider's serverless price page (test row)"
"""


def _serverless_bill(tmp_path: Path, inc: int = 1, result: str | None = None, **sv: Any) -> Any:
    f = tmp_path / "sl.toml"
    f.write_text(SERVERLESS_ROW.format(inc=inc))
    terms = {"scale_ups_per_month": 300, "idle_timeout_s": 5, **sv}
    opt: dict[str, Any] = {
        "name": "sl",
        "instance": "L4@Example-serverless",
        "pricing": "serverless",
        "serverless": terms,
    }
    if result:
        opt["result"] = result
    else:
        opt["peak_qps"] = 10
    sc = parse_scenario({"workload": "serving", "volumes": {"requests_per_month": 100_000}, "options": [opt]})
    return make_bill(sc, load_catalog([f])).options[0]


def test_serverless_bills_worker_lifetimes_rounded_up(tmp_path: Path) -> None:
    """100,000 requests at 10/s = 10,000 busy s over 300 scale-ups: 20 + 33.33 + 5 = 58.33 s -> 59 s each."""
    o = _serverless_bill(tmp_path, cold_start_s=20)
    assert o.monthly_cost.value == 300 * 59 * D("0.00019")  # 3.363
    assert o.cost_per_1k_accepted_requests.value == 300 * 59 * D("0.00019") / 100
    sources = {leaf.source for li in o.line_items for leaf in li.figure.leaves()}
    assert "example provider's serverless price page (test row)" in sources
    o10 = _serverless_bill(tmp_path, inc=10, cold_start_s=20)
    assert o10.monthly_cost.value == 300 * 60 * D("0.00019")  # rounded up to 60 s


def test_serverless_always_on_minimum(tmp_path: Path) -> None:
    """One always-on worker serves 10/s x 2,628,000 s, all the traffic: it is billed every second."""
    o = _serverless_bill(tmp_path, cold_start_s=20, min_workers=1)
    assert o.monthly_cost.value == 730 * 3600 * D("0.00019")  # 499.32
    assert o.monthly_cost.value == D("499.32")


def test_serverless_cold_start_measured_from_bucket_builds(tmp_path: Path) -> None:
    res = PilotResult(
        kind="serving",
        platform=Platform(device="cpu", device_type="cpu", device_name="test cpu"),
        workload=WorkloadInfo(name="minilm"),
        serving=ServingSummary(peak_qps_under_slo=10.0),
        figures={
            "bucket.1x32.build_s": measured(1.5, "s", "test", "shape 1x32"),
            "bucket.8x64.build_s": measured(2.5, "s", "test", "shape 8x64"),
        },
    )
    path = write_result(res, tmp_path / "s.json")
    o = _serverless_bill(tmp_path, result=str(path))
    # cold 1.5 + 2.5 = 4 s; 4 + 33.33 + 5 = 42.33 -> 43 s per scale-up
    assert o.monthly_cost.value == 300 * 43 * D("0.00019")


def test_serverless_prices_come_only_from_user_rows() -> None:
    sc = parse_scenario(
        {
            "workload": "serving",
            "volumes": {"requests_per_month": 1000},
            "options": [
                {
                    "name": "sl",
                    "instance": "L4@RunPod",
                    "pricing": "serverless",
                    "peak_qps": 10,
                    "serverless": {"scale_ups_per_month": 1, "idle_timeout_s": 5, "cold_start_s": 1},
                }
            ],
        }
    )
    with pytest.raises(UnknownNameError, match="no serverless price for L4@RunPod"):
        make_bill(sc, CAT)


def _training_result(tmp_path: Path, with_interrupt: bool = True) -> Path:
    figs = (
        {
            "interrupt_steps_lost": measured(50, "step", "test", "steps lost"),
            "step_time_mean_s": measured(2.0, "s", "test", "step time"),
            "restart_s": measured(30, "s", "test", "restart"),
        }
        if with_interrupt
        else {}
    )
    res = PilotResult(
        kind="training",
        platform=Platform(device="cpu", device_type="cpu", device_name="test cpu"),
        workload=WorkloadInfo(name="gpt-tiny"),
        training=TrainingSummary(tokens_per_s=1000.0),
        figures=figs,
    )
    return write_result(res, tmp_path / "t.json")


def _spot_catalog(tmp_path: Path) -> Any:
    f = tmp_path / "spot.csv"
    f.write_text(
        "instance,accelerator,accelerator_count,pricing,price_per_hour,region,as_of,source\n"
        "trn1.32xlarge,Trainium,16,spot,6.45,us-east-1,2026-11-01,test spot quote\n"
    )
    return load_catalog([f])


def test_spot_interruptions_times_the_measured_restart_cost(tmp_path: Path) -> None:
    """q = 0.05 interruptions/h x (50 steps x 2.0 s + 30 s = 130 s) / 3,600 = 13/7,200 h lost per hour; geometric
    re-work 20 h x q / (1 - q) = 260 / 7,187 = 0.03618 h (linear: 20 x q = 0.03611 h)."""
    path = _training_result(tmp_path)
    sc = parse_scenario(
        {
            "options": [
                {
                    "name": "spot",
                    "instance": "trn1.32xlarge",
                    "pricing": "spot",
                    "hours_per_run": 20,
                    "spot": {"interruptions_per_hour": 0.05, "restart_result": str(path)},
                }
            ]
        }
    )
    o: Any = make_bill(sc, _spot_catalog(tmp_path)).options[0]
    assert abs(o.cost_per_run.value - (D("6.45") * 20 + D("6.45") * D(260) / D(7187))) < D("1e-20")
    kinds = {leaf.kind.value for li in o.line_items for leaf in li.figure.leaves()}
    assert "measured" in kinds and "assumption" in kinds


def test_spot_without_a_spot_table_says_interruptions_are_unpriced(tmp_path: Path) -> None:
    sc = parse_scenario(
        {"options": [{"name": "spot", "instance": "trn1.32xlarge", "pricing": "spot", "hours_per_run": 20}]}
    )
    o = make_bill(sc, _spot_catalog(tmp_path)).options[0]
    assert o.cost_per_run.value == D("6.45") * 20  # type: ignore[union-attr]
    assert any("spot interruptions are not priced" in n for n in o.notes)


def test_spot_without_interrupt_figures_says_how_to_measure_them(tmp_path: Path) -> None:
    path = _training_result(tmp_path, with_interrupt=False)
    sc = parse_scenario(
        {
            "options": [
                {
                    "name": "spot",
                    "instance": "trn1.32xlarge",
                    "pricing": "spot",
                    "hours_per_run": 20,
                    "spot": {"interruptions_per_hour": 0.05, "restart_result": str(path)},
                }
            ]
        }
    )
    with pytest.raises(InputFileError, match="--interrupt-at"):
        make_bill(sc, _spot_catalog(tmp_path))


def _block(hours: float, instances: int = 1, cat: Any = CAT) -> Any:
    sc = parse_scenario(
        {
            "options": [
                {
                    "name": "cb",
                    "instance": "trn2.48xlarge",
                    "pricing": "capacity_block",
                    "hours_per_run": hours,
                    "instances": instances,
                }
            ]
        }
    )
    return make_bill(sc, cat).options[0]


def test_capacity_blocks_are_billed_in_whole_blocks() -> None:
    assert _block(30).cost_per_run.value == 48 * D("35.7608")  # 2 days
    assert _block(20 * 24).cost_per_run.value == 21 * 24 * D("35.7608")  # 20 days -> 3 weeks
    assert _block(30).paid_capacity_share.value == D(30) / D(48)
    with pytest.raises(ConfigError, match="longest Capacity Block"):
        _block(200 * 24)
    with pytest.raises(ConfigError, match="exceed the 64"):
        _block(30, instances=65)


def test_capacity_block_duration_rule_is_catalog_data(tmp_path: Path) -> None:
    f = tmp_path / "rule.toml"
    f.write_text(
        '[[default]]\nid = "capacity_block_day_steps_max_days"\nvalue = "7"\nunit = "day"\n'
        'as_of = 2027-01-01\nsource = "a changed rule (test)"\n'
    )
    assert _block(10 * 24).cost_per_run.value == 10 * 24 * D("35.7608")
    assert _block(10 * 24, cat=load_catalog([f])).cost_per_run.value == 14 * 24 * D("35.7608")


def _od(**extras: Any) -> Any:
    sc = parse_scenario(
        {
            "options": [{"name": "t", "instance": "trn1.32xlarge", "pricing": "on_demand", "hours_per_run": 10}],
            "extras": extras,
        }
    )
    return make_bill(sc, CAT)


def test_free_egress_allowance_and_inter_region_transfer() -> None:
    assert _od(data_transfer_out_gb=50).options[0].cost_per_run.value == 215  # within AWS's free 100 GB
    assert _od(data_transfer_out_gb=1100).options[0].cost_per_run.value == 215 + 1000 * D("0.09")
    assert _od(inter_region_transfer_gb=500).options[0].cost_per_run.value == 215 + 500 * D("0.02")


def test_tax_percent_and_the_statement_that_list_prices_exclude_tax() -> None:
    b = _od(tax_percent=10)
    assert b.options[0].cost_per_run.value == D("215") + D("21.50")
    assert "AWS list prices exclude taxes and duties" in bill_to_json(b)["statements"][0]
    assert "tax_percent 10% is added" in b.statements[0]
    assert "no tax is added" in _od().statements[0]
