"""Issue 10 section 1: what is committed is billed. Every expected amount is hand arithmetic in the test."""

from __future__ import annotations

from decimal import Decimal as D
from pathlib import Path
from typing import Any

import pytest

from accelpilot.bill.compute import make_bill
from accelpilot.bill.model import bill_to_json
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.errors import ConfigError

CAT = load_catalog()
HPM = 730  # hours a month (catalog default, infracost convention)


def bill_of(options: list[dict[str, Any]], **extra: Any) -> Any:
    return make_bill(parse_scenario({"options": options, **extra}), CAT)


def test_reservation_bills_the_term_for_committed_instances() -> None:
    """Issue: 2 x trn1.32xlarge 3-year running 240 h a month is 2 x 8.20 x 730 = 11,972.00, not 4,630.59."""
    b = bill_of(
        [{"name": "ri", "instance": "trn1.32xlarge", "pricing": "reserved_3y", "instances": 2, "hours_per_run": 240}]
    )
    o = b.options[0]
    assert o.monthly_cost.value == D("11972.00")
    assert o.cost_per_accepted_run.value == D("11972.00")  # one run a month
    assert o.total_36_months.value == D("11972.00") * 36  # 430,992.00
    assert bill_to_json(b)["options"][0]["total_36_months"] == 430992.00
    # share of paid capacity used: 2 x 240 of 2 x 730 instance-hours
    assert o.paid_capacity_share.value == D(480) / D(1460)


def test_use_above_the_commitment_is_on_demand() -> None:
    """Issue: 4 used / 1 committed 1-year: 13.23 x 730 = 9,657.90 + 2,150 h x 21.50 = 55,882.90 (not 38,102.40)."""
    b = bill_of(
        [
            {
                "name": "ri",
                "instance": "trn1.32xlarge",
                "pricing": "reserved_1y",
                "instances": 4,
                "commitment_instances": 1,
                "hours_per_run": 720,
            }
        ]
    )
    o = b.options[0]
    assert D("13.23") * 730 == D("9657.90")
    assert 4 * 720 - 730 == 2150
    assert o.monthly_cost.value == D("9657.90") + 2150 * D("21.50") == D("55882.90")
    assert o.paid_capacity_share.value == 1
    assert any("2,150 h on-demand" in li.name for li in o.line_items)


def test_commitment_needing_on_demand_without_a_row_is_a_clear_error(tmp_path: Path) -> None:
    f = tmp_path / "ri.toml"
    f.write_text(
        '[[price]]\ninstance = "x9.large"\naccelerator = "H100"\naccelerator_count = 8\npricing = "reserved_1y"\n'
        'price_per_hour = 10\nregion = "us-east-1"\nas_of = 2026-11-01\nsource = "quote"\n'
    )
    sc = parse_scenario(
        {
            "options": [
                {
                    "name": "x",
                    "instance": "x9.large",
                    "pricing": "reserved_1y",
                    "instances": 4,
                    "commitment_instances": 1,
                    "hours_per_run": 720,
                }
            ]
        }
    )
    with pytest.raises(ConfigError, match="no on-demand price for x9.large") as exc:
        make_bill(sc, load_catalog([f]))
    assert "commitment_instances = 4" in str(exc.value)
    # the fix it names works
    fixed = parse_scenario(
        {
            "options": [
                {
                    "name": "x",
                    "instance": "x9.large",
                    "pricing": "reserved_1y",
                    "instances": 4,
                    "commitment_instances": 4,
                    "hours_per_run": 720,
                }
            ]
        }
    )
    assert make_bill(fixed, load_catalog([f])).options[0].monthly_cost.value == 4 * 10 * 730


def test_support_and_extras_stay_when_the_commitment_exceeds_use() -> None:
    b = bill_of(
        [{"name": "ri", "instance": "trn1.32xlarge", "pricing": "reserved_3y", "hours_per_run": 26}],
        extras={"support_percent": 10, "storage_gb_months": 1000},
    )
    o = b.options[0]
    commit = D("8.20") * 730  # 5,986.00
    assert o.monthly_cost.value == commit + commit / 10 + 1000 * D("0.08")  # 6,664.60
    assert o.monthly_cost.value == D("6664.60")


def test_horizon_shorter_than_the_term_shows_the_outstanding_obligation() -> None:
    b = bill_of(
        [{"name": "ri", "instance": "trn1.32xlarge", "pricing": "reserved_3y", "hours_per_run": 26}],
        volumes={"months": 12},
    )
    o = b.options[0]
    assert o.outstanding_commitment.value == D("5986.00") * 24  # 143,664.00
    assert o.total_months.value == D("5986.00") * 12 + D("143664.00")  # 215,496.00
    assert any("still owed" in n for n in o.notes)


def test_shared_reservation_is_the_seed_rate_and_says_who_pays_the_rest() -> None:
    b = bill_of(
        [{"name": "ri", "instance": "trn1.32xlarge", "pricing": "reserved_3y", "hours_per_run": 26, "dedicated": False}]
    )
    o = b.options[0]
    assert o.cost_per_run.value == 26 * D("8.20")  # 213.20
    assert o.paid_capacity_share.value == D(26) / D(730)
    assert any("uses 26 of the reservation's 730" in n and "other 704" in n for n in o.notes)


OWNED = {"purchase": 360000, "life_months": 36, "utilisation": 0.6, "staff_per_month": 1000}
FIXED = D(10000) + D("10.2") * D("184.06") + 1000  # amortised + colocation (10.2 kW x 184.06) + staff
ENERGY_H = D("10.2") * D("1.58") * D("0.10")  # kW x PUE x USD/kWh


def test_owned_says_who_fills_the_box() -> None:
    """120 of 438 productive box-hours (730 x 0.6); the other 318 are other work and carry 73% of the box."""
    b = bill_of(
        [{"name": "own", "pricing": "owned", "hours_per_run": 30, "owned": OWNED}], volumes={"runs_per_month": 4}
    )
    o = b.options[0]
    assert o.cost_per_run.value == pytest.approx(FIXED * 30 / 438 + ENERGY_H * 30)
    note = next(n for n in o.notes if "fills" in n)
    assert "fills 120 of 438" in note and "other 318" in note and "73%" in note
    assert o.paid_capacity_share.value == D(120) / D(730)


def test_owned_dedicated_bills_the_whole_box() -> None:
    b = bill_of(
        [{"name": "own", "pricing": "owned", "hours_per_run": 30, "owned": {**OWNED, "dedicated": True}}],
        volumes={"runs_per_month": 4},
    )
    o = b.options[0]
    monthly = FIXED + ENERGY_H * 120  # 12,877.412 + 193.392 = 13,070.804
    assert o.monthly_cost.value == monthly
    assert o.cost_per_accepted_run.value == monthly / 4


def test_more_box_hours_than_a_box_has_is_whole_boxes_or_an_error() -> None:
    """2,000 box-hours a month need 2,000 / 438 = 4.57 boxes: never billed as 4.57."""
    with pytest.raises(ConfigError, match="dedicated = true in \\[options.owned\\] to bill 5 whole boxes"):
        bill_of(
            [{"name": "own", "pricing": "owned", "hours_per_run": 500, "owned": OWNED}], volumes={"runs_per_month": 4}
        )
    b = bill_of(
        [{"name": "own", "pricing": "owned", "hours_per_run": 500, "owned": {**OWNED, "dedicated": True}}],
        volumes={"runs_per_month": 4},
    )
    assert b.options[0].monthly_cost.value == 5 * FIXED + ENERGY_H * 2000  # 64,387.06 + 3,223.20 = 67,610.26
    assert b.options[0].monthly_cost.value == D("67610.26")
