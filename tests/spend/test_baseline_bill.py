"""A generated CUR becomes the "current deployment" option, and the bill prices it from the measured spend."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("duckdb", reason="the spend extra (DuckDB) is not installed")
pytest.importorskip("pyarrow", reason="pyarrow writes the Parquet test exports")

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import load_scenario
from accelpilot.catalog import load_catalog
from accelpilot.errors import ConfigError
from accelpilot.figures import Kind
from accelpilot.spend.baseline import baseline_option, write_baseline
from accelpilot.spend.cur import summarise

SCENARIO = """
name = "serving bill"
workload = "{workload}"
baseline = "current deployment"

[volumes]
runs_per_month = 4
requests_per_month = 50000000
months = 12

[[options]]
name = "trn1"
pricing = "on_demand"
instance = "trn1.32xlarge"
region = "us-east-1"
hours_per_run = 10
peak_qps = 100
"""


def _scenario(cur: Any, tmp_path: Path, workload: str = "training") -> Path:
    s, _ = summarise([cur.parquet(tmp_path / "cur.parquet", cur.rows())], instance_types=["p5.48xlarge"])
    sc = tmp_path / "scenario.toml"
    sc.write_text(SCENARIO.format(workload=workload))
    write_baseline(sc, baseline_option(s, ["p5.48xlarge"]))
    return sc


def test_training_baseline_bill_matches_the_hand_computation(cur: Any, tmp_path: Path) -> None:
    bill = make_bill(load_scenario(_scenario(cur, tmp_path)), load_catalog([]))
    base = bill.option("current deployment")
    # CUR by hand: September p5 = 67250.88 + 22000.00 - 1000.00 = 88250.88; October = 69492.58;
    # per month (88250.88 + 69492.58) / 2 = 78871.73
    assert base.monthly_cost.value == Decimal("78871.73")
    assert base.monthly_cost.kind is Kind.MEASURED and "2026-09..2026-10" in base.monthly_cost.source
    # per run: 78871.73 / 4 runs = 19717.9325; every run accepted
    assert base.cost_per_run is not None and base.cost_per_run.value == Decimal("19717.9325")
    assert base.cost_per_accepted_run is not None and base.cost_per_accepted_run.value == Decimal("19717.9325")
    # over 12 months, no porting and no maintenance: 78871.73 x 12 = 946460.76
    assert base.total_months.value == Decimal("946460.76")
    # instance-hours: (1080 + 744) / 2 = 912 per month; per run of 2 instances: 912 / 4 / 2 = 114
    assert base.hours_per_run is not None and base.hours_per_run.value == Decimal("114")
    assert bill.baseline == "current deployment"


def test_serving_baseline_bill(cur: Any, tmp_path: Path) -> None:
    bill = make_bill(load_scenario(_scenario(cur, tmp_path, "serving")), load_catalog([]))
    base = bill.option("current deployment")
    # 78871.73 / 50,000,000 requests x 1000 = 1.57743460 per 1,000 accepted requests
    assert base.cost_per_1k_accepted_requests is not None
    assert base.cost_per_1k_accepted_requests.value == Decimal("1.5774346")


def test_currency_mismatch_is_refused(cur: Any, tmp_path: Path) -> None:
    sc = _scenario(cur, tmp_path)
    sc.write_text(sc.read_text().replace('currency = "USD"', 'currency = "EUR"'))
    with pytest.raises(ConfigError, match="measured spend is in EUR"):
        make_bill(load_scenario(sc), load_catalog([]))


def test_measured_spend_needs_its_table(tmp_path: Path) -> None:
    sc = tmp_path / "s.toml"
    sc.write_text('[[options]]\nname = "x"\npricing = "measured_spend"\ninstance = "p5.48xlarge"\n')
    with pytest.raises(ConfigError, match=r"options\.spend"):
        load_scenario(sc)
