"""Issue 26 item 2: flip points solved on the verdict's rule (the saving reaches the [decision] margin), each
checked by re-running the bill at the point and just past it. Hand arithmetic in each test."""

from __future__ import annotations

from decimal import Decimal as D
from typing import Any

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog

CAT = load_catalog()
P5 = {"name": "p5", "instance": "p5.48xlarge", "pricing": "on_demand", "hours_per_run": 20}  # 1,100.80 a run
RI = {"name": "ri", "instance": "trn1.32xlarge", "pricing": "reserved_1y", "hours_per_run": 26}  # 9,657.90 a month
MARGIN = D("0.30")  # assumed hours on both sides: [decision] assumed_margin


def comp(runs: Any, options: list[dict[str, Any]] | None = None) -> Any:
    sc = {"volumes": {"runs_per_month": runs, "months": 12}, "options": options or [P5, RI]}
    return make_bill(parse_scenario(sc), CAT).comparisons[0]


def flips(c: Any) -> bool:
    """The verdict's rule (decide.gates): too close when the saving is under the margin."""
    return bool(c.saving_percent < MARGIN * 100)


def test_a_term_flips_at_a_runs_per_month_value_and_at_hours_past_the_commitment() -> None:
    c = comp(20)
    # clear: 9,657.90 / 20 = 482.895 a run against 1,100.80: 56.1% less
    assert abs(c.saving_percent - (1 - D("482.895") / D("1100.80")) * 100) < D("1e-20")
    assert not flips(c)
    # the term's cost per run reaches 70% of 1,100.80 = 770.56 at 9,657.90 / 770.56 = 12.5336 runs a month
    r = c.margin_flip_runs_per_month.value
    assert abs(r - D("9657.90") / (D("0.70") * D("1100.80"))) < D("1e-20")
    assert not flips(comp(r * (1 + D("1e-9"))))  # just above: still clear
    assert flips(comp(r * (1 - D("1e-9"))))  # just below: too close
    # close: 12 runs: 804.825 a run, 26.9% less
    assert flips(comp(12))
    # within the commitment (730 h a month: 36.5 h a run at 20 runs) the term costs the same whatever the hours;
    # past it each hour is billed on-demand at 21.50. The margin's 20 x 770.56 = 15,411.20 a month leaves
    # 15,411.20 - 9,657.90 = 5,753.30 / 21.50 = 267.5953 h above 730: 997.5953 / 20 = 49.8798 h a run
    h = c.margin_flip_hours_per_run.value
    assert abs(h - (730 + D("5753.30") / D("21.50")) / 20) < h * D("1e-10")  # searched: bisection to ~1.5e-11
    ri = [P5, {**RI, "hours_per_run": h * (1 - D("1e-9"))}]
    assert not flips(comp(20, ri))
    assert flips(comp(20, [P5, {**RI, "hours_per_run": h * (1 + D("1e-9"))}]))


def test_an_hourly_candidate_flips_at_hours_and_at_no_runs_value() -> None:
    trn = {"name": "trn", "instance": "trn1.32xlarge", "pricing": "on_demand", "hours_per_run": 26}
    c = comp(4, [P5, trn])
    # 21.50 x 26 = 559.00 against 1,100.80; the margin is reached at 770.56 / 21.50 = 35.84 h
    h = c.margin_flip_hours_per_run.value
    assert abs(h - D("770.56") / D("21.50")) < D("1e-20")
    assert not flips(comp(4, [P5, {**trn, "hours_per_run": h * (1 - D("1e-9"))}]))
    assert flips(comp(4, [P5, {**trn, "hours_per_run": h * (1 + D("1e-9"))}]))
    assert c.margin_flip_runs_per_month is None  # both per run: the per-run test holds at any volume
