"""bill.model.payback_curve: the payback chart's points, made where the report draws them (issue 10's speed).

Expected money is hand arithmetic from the scenario's inputs, never read back from the bill.
"""

from __future__ import annotations

from decimal import Decimal as D
from typing import Any

from accelpilot.bill.compute import make_bill
from accelpilot.bill.model import Bill, payback_curve
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog

CAT = load_catalog()


def bill_of(cand: dict[str, Any]) -> Bill:
    base = {"name": "gpu", "instance": "p5.48xlarge", "pricing": "on_demand", "price_per_hour": 10, "hours_per_run": 10}
    opts = [base, {"name": "trn", "instance": "trn1.32xlarge", "pricing": "on_demand", "price_per_hour": 6, **cand}]
    return make_bill(
        parse_scenario({"options": opts, "volumes": {"runs_per_month": 4}, "engineering": {"day_rate": 800}}), CAT
    )


def curve(b: Bill) -> list[tuple[int, D, D]]:
    (c,) = b.comparisons
    return payback_curve(c, b.option(c.baseline), b.option(c.candidate), b.runs_per_month)


def test_training_curve_is_by_accepted_run_to_twice_the_break_even() -> None:
    """Baseline 10 h x 10 USD = 100 a run; candidate 10 h x 6 = 60 a run plus 40 a month of maintenance (10 a run
    at 4 runs a month) and one porting day (800): it saves 30 a run, so it repays after ceil(800 / 30) = 27 runs,
    and the curve runs to 54."""
    pts = curve(bill_of({"hours_per_run": 10, "porting_days": 1, "maintenance_per_month": 40}))
    assert len(pts) == 55 and pts[0] == (0, D(0), D(800))
    n, base, cand = pts[27]
    assert n == 27 and base == D(2700) and cand == 800 + 60 * 27 + D(40) * 27 / 4 == D(2690)
    assert pts[26][2] > pts[26][1]  # one run earlier it has not repaid yet: 2,620 against 2,600


def test_serving_curve_is_by_month_over_36_months() -> None:
    """Serving compares by month: one instance each at 730 h a month (1M requests fit in one at 100 req/s):
    baseline 10 x 730 = 7,300 a month; candidate 6 x 730 = 4,380 plus 25 of maintenance, after the port (800)."""
    base = {"name": "gpu", "instance": "g6.xlarge", "pricing": "on_demand", "price_per_hour": 10, "peak_qps": 100}
    cand = {**base, "name": "inf2", "instance": "inf2.xlarge", "price_per_hour": 6, "porting_days": 1}
    sc = {"workload": "serving", "volumes": {"requests_per_month": 1_000_000}, "engineering": {"day_rate": 800}}
    b = make_bill(parse_scenario({"options": [base, {**cand, "maintenance_per_month": 25}], **sc}), CAT)
    pts = curve(b)
    assert [p[0] for p in pts] == list(range(37))
    assert pts[1] == (1, D(7300), 800 + D(4380) + 25)
    assert pts[36] == (36, D(7300) * 36, 800 + (D(4380) + 25) * 36)
