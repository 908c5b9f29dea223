"""Issue 26 item 3: money that cannot be right is refused with one line naming the file and field, and a fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.errors import ConfigError, InputFileError, UserError

CAT = load_catalog()
TRN = {"name": "trn", "instance": "trn1.32xlarge", "pricing": "on_demand", "hours_per_run": 26}


@pytest.mark.parametrize(
    ("field", "value"), [("support_percent", 150), ("support_percent", 1000), ("tax_percent", 250)]
)
def test_a_share_above_the_whole_bill_is_refused(field: str, value: int) -> None:
    with pytest.raises(UserError, match=f"{field} is a percentage from 0 to 100 .15 means 15%.; {value} is out"):
        parse_scenario({"options": [TRN], "extras": {field: value}})


def test_a_hundred_percent_is_still_a_share() -> None:
    parse_scenario({"options": [TRN], "extras": {"support_percent": 100, "tax_percent": 100}})


def test_committing_no_instances_is_refused() -> None:
    ri = {**TRN, "pricing": "reserved_1y", "commitment_instances": 0}
    with pytest.raises(UserError, match="commits nothing: set it to at least 1"):
        parse_scenario({"options": [ri]})


def _spot(tmp_path: Path, rate: float, restart_s: float) -> Any:
    f = tmp_path / "spot.csv"
    f.write_text(
        "instance,accelerator,accelerator_count,pricing,price_per_hour,region,as_of,source\n"
        "trn1.32xlarge,Trainium,16,spot,6.45,us-east-1,2026-11-01,test spot quote\n"
    )
    spot = {**TRN, "pricing": "spot", "spot": {"interruptions_per_hour": rate, "restart_s": restart_s}}
    return make_bill(parse_scenario({"options": [spot]}), load_catalog([f]))


def test_spot_that_loses_an_hour_an_hour_never_finishes(tmp_path: Path) -> None:
    # 2 interruptions an hour x 1,800 s lost each = 3,600 s of re-work per hour: refused
    with pytest.raises(ConfigError) as e:
        _spot(tmp_path, 2, 1800)
    assert e.value.field is not None and e.value.field.endswith(".spot.interruptions_per_hour")
    assert "under 1,800 s" in str(e.value)  # 3,600 / 2
    # just under: 2 x 1,799 s = 3,598 s per hour is re-work, but the run does finish
    assert _spot(tmp_path, 2, 1799).options[0].cost_per_run.value > 0


def test_a_serverless_billing_step_of_zero_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "sl.toml"
    f.write_text(
        '[[price]]\ninstance = "L4@Example-serverless"\naccelerator = "L4"\naccelerator_count = 1\n'
        'pricing = "serverless"\nprice_per_second = "0.00019"\nbilling_increment_s = "0"\nprovider = "Example"\n'
        'as_of = 2026-11-01\nsource = "test row"\n'
    )
    opt = {
        "name": "sl",
        "instance": "L4@Example-serverless",
        "pricing": "serverless",
        "peak_qps": 10,
        "serverless": {"scale_ups_per_month": 300, "idle_timeout_s": 5, "cold_start_s": 20},
    }
    sc = parse_scenario({"workload": "serving", "volumes": {"requests_per_month": 100_000}, "options": [opt]})
    with pytest.raises(InputFileError, match="bills in steps of 0 s") as e:
        make_bill(sc, load_catalog([f]))
    assert e.value.field == "price L4@Example-serverless serverless.billing_increment_s"


def test_a_run_longer_than_any_capacity_block_suggests_only_fixes_that_exist() -> None:
    # trn2.48xlarge is sold only in Capacity Blocks (the catalog has no on_demand row): 183 days is past 182
    cb = {"name": "cb", "instance": "trn2.48xlarge", "pricing": "capacity_block", "hours_per_run": 183 * 24}
    with pytest.raises(ConfigError) as e:
        make_bill(parse_scenario({"options": [cb]}), CAT)
    assert e.value.field is not None and e.value.field.endswith(".hours_per_run")
    assert "at most 182 days" in str(e.value) and "on_demand" not in str(e.value)
