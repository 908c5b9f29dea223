"""Issue 26 item 1: a commitment is owed for its whole term, and the comparison sees what is owed.

Every expected amount is hand arithmetic in the test (catalog: trn1.32xlarge reserved 1y 13.23, 3y 8.20,
p5.48xlarge on-demand 55.04 USD/h; 730 hours a month).
"""

from __future__ import annotations

from decimal import Decimal as D
from typing import Any

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog

CAT = load_catalog()
GPU = {"name": "gpu", "instance": "p5.48xlarge", "pricing": "on_demand", "hours_per_run": 20}


def bill_of(options: list[dict[str, Any]], **extra: Any) -> Any:
    return make_bill(parse_scenario({"options": options, **extra}), CAT)


def test_a_reservation_outliving_the_workload_is_dearer_over_it() -> None:
    """A 3-year reservation for a 6-month workload: 72.8% less per run, 63.1% dearer for what it obliges."""
    ri = {"name": "ri", "instance": "trn1.32xlarge", "pricing": "reserved_3y", "hours_per_run": 26}
    b = bill_of(
        [GPU, {**ri, "porting_days": 3}],
        volumes={"months": 6, "runs_per_month": 20},
        engineering={"day_rate": 800},
    )
    gpu, res = b.options
    # GPU: 55.04 x 20 h = 1,100.80 a run; x 20 runs = 22,016.00 a month; x 6 = 132,096.00
    assert gpu.total_months.value == D("132096.00")
    # reservation: 8.20 x 730 = 5,986.00 a month (20 x 26 = 520 h of 730 used); 5,986 / 20 = 299.30 a run
    assert res.cost_per_accepted_run.value == D("299.30")
    # still owed after month 6: 30 x 5,986.00 = 179,580.00; horizon total 6 x 5,986 + 179,580 + 3 x 800 porting
    assert res.outstanding_commitment.value == D("179580.00")
    assert res.total_months.value == D("217896.00")
    c = b.comparisons[0]
    # obliged per accepted run: 299.30 + 179,580 / (6 x 20) = 299.30 + 1,496.50 = 1,795.80 vs 1,100.80
    assert c.saving_per_run.value == D("1100.80") - D("1795.80")  # -695.00
    assert abs(c.saving_percent - D(-695) / D("1100.80") * 100) < D("1e-20")  # -63.14%
    assert c.break_even_months is None  # never repays: the term costs more than the GPU over the workload


def test_an_18_month_horizon_on_a_1_year_term_owes_two_terms_taxed() -> None:
    ri = {"name": "ri", "instance": "trn1.32xlarge", "pricing": "reserved_1y", "hours_per_run": 26}
    b = bill_of([GPU, ri], volumes={"months": 18}, extras={"support_percent": 10, "tax_percent": 20})
    res = b.options[1]
    # a month: 13.23 x 730 = 9,657.90 + 10% support 965.79 = 10,623.69, + 20% tax 2,124.738 = 12,748.428
    assert res.monthly_cost.value == D("12748.428")
    # 18 months need 2 one-year terms: 6 months still owed, with their support and tax: 6 x 12,748.428
    assert res.outstanding_commitment.value == D("76490.568")
    assert res.total_months.value == D("12748.428") * 24  # 305,962.272: what the two terms oblige
    assert any("needs 2 x 12-month terms" in n for n in res.notes)


def test_a_horizon_of_whole_terms_owes_nothing_after_it() -> None:
    ri = {"name": "ri", "instance": "trn1.32xlarge", "pricing": "reserved_1y", "hours_per_run": 26}
    res = bill_of([GPU, ri], volumes={"months": 24}).options[1]
    assert res.outstanding_commitment is None
    assert res.total_months.value == D("9657.90") * 24  # 13.23 x 730 x 24 = 231,789.60


def _outliving(runs: Any = 20, **ri_more: Any) -> Any:
    ri = {"name": "ri", "instance": "trn1.32xlarge", "pricing": "reserved_3y", "hours_per_run": 26, **ri_more}
    return bill_of([GPU, ri], volumes={"months": 6, "runs_per_month": runs}).comparisons[0]


def test_the_outliving_reservations_flip_points_hold_when_billed_again() -> None:
    """The 3-year term for a 6-month workload: what would make it worth signing (margin 30%: hours assumed)."""
    c = _outliving()
    close = lambda c: c.saving_percent < 30  # noqa: E731  (decide.gates' rule)
    assert close(c)  # 1,795.80 a run against 1,100.80
    # runs: the term obliges 6 x 5,986.00 + 179,580.00 = 215,496.00 over 6 months, 35,916.00 a month. Alone,
    # 35,916 / r would reach 0.70 x 1,100.80 = 770.56 at 46.61 runs, but 46.61 x 26 h = 1,212 h is past the
    # 730 h committed, billed on-demand at 21.50: (35,916 + 21.50 x (26 r - 730)) / r = 20,221 / r + 559 reaches
    # 770.56 at r = 20,221 / 211.56 = 95.58 runs a month
    r = c.margin_flip_runs_per_month.value
    assert abs(r - D("20221") / D("211.56")) < r * D("1e-10")  # searched: bisection to ~1.5e-11
    assert not close(_outliving(r * (1 + D("1e-9"))))
    assert close(_outliving(r * (1 - D("1e-9"))))
    # price: everything it obliges is priced by the hour: 8.20 x 770.56 / 1,795.80 = 3.5185 USD an hour
    p = c.margin_flip_price.value
    assert abs(p - D("8.20") * D("770.56") / D("1795.80")) < D("1e-20")
    assert not close(_outliving(price_per_hour=p * (1 - D("1e-9"))))
    assert close(_outliving(price_per_hour=p * (1 + D("1e-9"))))
    # fewer hours or a better accepted share cost the term nothing: no value of either flips it
    assert c.margin_flip_hours_per_run is None and c.margin_flip_accepted_share is None
