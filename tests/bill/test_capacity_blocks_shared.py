"""Issue 26: Capacity Blocks are bought in whole days and a month's runs may share one (trn2.48xlarge 35.7608 USD/h)."""

from __future__ import annotations

from decimal import Decimal as D
from typing import Any

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog

CAT = load_catalog()
RATE = D("35.7608")


def block(hours: int, runs: int) -> Any:
    cb = {"name": "cb", "instance": "trn2.48xlarge", "pricing": "capacity_block", "hours_per_run": hours}
    return make_bill(parse_scenario({"options": [cb], "volumes": {"runs_per_month": runs}}), CAT).options[0]


def test_three_30_hour_runs_share_one_4_day_block() -> None:
    o = block(30, 3)
    # a block each: 3 x 2 days x 24 h x 35.7608 = 5,149.5552; one block: 90 h -> 4 days = 96 h x 35.7608
    assert o.monthly_cost.value == 96 * RATE  # 3,433.0368
    assert o.monthly_cost.value < 3 * 48 * RATE
    assert o.cost_per_run.value == 96 * RATE / 3  # 1,144.3456
    assert o.paid_capacity_share.value == D(90) / D(96)
    assert any("share one 4-day Capacity Block" in n for n in o.notes)


def test_one_run_a_month_buys_its_own_block() -> None:
    o = block(30, 1)
    assert o.cost_per_run.value == 48 * RATE  # 2 days: 1,716.5184


def test_runs_that_fill_whole_days_gain_nothing_from_sharing() -> None:
    o = block(48, 2)
    # a block each: 2 x 2 days; shared: 96 h = 4 days; the same, so each run keeps its own block
    assert o.cost_per_run.value == 48 * RATE
    assert not any("share one" in n for n in o.notes)


def test_a_month_past_two_weeks_is_bought_in_whole_weeks() -> None:
    o = block(100, 4)
    # a block each: 100 h -> 5 days, x 4 = 20 days; shared: 400 h -> 17 days -> past 14, whole weeks: 21 days.
    # 21 >= 20, so each run keeps its own 5-day block: 4 x 120 h x 35.7608 a month
    assert o.monthly_cost.value == 4 * 120 * RATE
