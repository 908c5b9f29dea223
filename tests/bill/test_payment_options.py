"""Issue 26: a reservation paid No, Partial or All Upfront (an upfront sum plus an hourly rate, as AWS sells them).

Hand arithmetic: trn1.32xlarge 1-year, catalog No Upfront 13.23 USD/h; 730 hours a month. The upfront and
hourly parts below are the scenario's own figures (the catalog lists one hourly rate per term).
"""

from __future__ import annotations

from decimal import Decimal as D
from typing import Any

import pytest

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.errors import UserError

CAT = load_catalog()
RI = {"name": "ri", "instance": "trn1.32xlarge", "pricing": "reserved_1y", "hours_per_run": 26}


def option(months: int = 12, **kw: Any) -> Any:
    return make_bill(parse_scenario({"options": [{**RI, **kw}], "volumes": {"months": months}}), CAT).options[0]


def test_no_upfront_is_the_hourly_rate() -> None:
    o = option(payment_option="no_upfront")
    assert o.monthly_cost.value == D("9657.90")  # 13.23 x 730
    assert o.total_months.value == D("115894.80")  # x 12


def test_partial_upfront_is_the_sum_spread_over_the_term_plus_the_hourly_part() -> None:
    o = option(payment_option="partial_upfront", upfront=55_000, price_per_hour="6.90")
    # 55,000 / 12 = 4,583.33 a month + 6.90 x 730 = 5,037.00 a month
    assert abs(o.monthly_cost.value - (D(55_000) / 12 + D("5037.00"))) < D("1e-20")
    assert abs(o.total_months.value - D("115444.00")) < D("1e-18")  # 55,000 + 12 x 5,037
    # 18 months on a 1-year term: two terms signed, 2 x 55,000 + 24 x 5,037 = 230,888.00
    o18 = option(18, payment_option="partial_upfront", upfront=55_000, price_per_hour="6.90")
    assert abs(o18.total_months.value - D("230888.00")) < D("1e-18")


def test_all_upfront_has_no_hourly_part() -> None:
    o = option(payment_option="all_upfront", upfront=110_000)
    assert abs(o.monthly_cost.value - D(110_000) / 12) < D("1e-20")  # 9,166.67
    assert abs(o.total_months.value - D("110000.00")) < D("1e-18")
    assert [li.name for li in o.line_items] == ["reservation upfront: 1 x 110,000 / 12 months (all_upfront)"]


@pytest.mark.parametrize(
    ("kw", "says"),
    [
        ({"payment_option": "all_upfront"}, "needs upfront"),
        ({"payment_option": "partial_upfront", "upfront": 1000}, "needs price_per_hour"),
        ({"payment_option": "all_upfront", "upfront": 1000, "price_per_hour": 1}, "remove price_per_hour"),
        ({"upfront": 1000}, "goes with payment_option"),
    ],
)
def test_an_incomplete_payment_option_is_refused(kw: dict[str, Any], says: str) -> None:
    with pytest.raises(UserError, match=says):
        option(**kw)


def test_payment_option_on_on_demand_is_refused() -> None:
    with pytest.raises(UserError, match="apply to reserved options"):
        make_bill(parse_scenario({"options": [{**RI, "pricing": "on_demand", "payment_option": "no_upfront"}]}), CAT)


def test_partial_upfront_price_flip_moves_only_the_hourly_part() -> None:
    gpu = {"name": "gpu", "instance": "p5.48xlarge", "pricing": "on_demand", "hours_per_run": 20}  # 1,100.80

    def comp(hourly: Any) -> Any:
        ri = {**RI, "payment_option": "partial_upfront", "upfront": 55_000, "price_per_hour": hourly}
        sc = {"options": [gpu, ri], "volumes": {"months": 12, "runs_per_month": 20}}
        return make_bill(parse_scenario(sc), CAT).comparisons[0]

    c = comp("6.90")
    # a run: (55,000 / 12 + 6.90 x 730) / 20 = (4,583.33 + 5,037.00) / 20 = 481.0167, of which 5,037 / 20 = 251.85
    # is the hourly part; the margin's 770.56 is reached at 6.90 x (770.56 - 229.1667) / 251.85 = 14.8327 an hour
    p = c.margin_flip_price.value
    expect = D("6.90") * (D("770.56") - D(55_000) / 12 / 20) / (D("5037.00") / 20)
    assert abs(p - expect) < D("1e-20")
    assert comp(p * (1 - D("1e-9"))).saving_percent >= 30
    assert comp(p * (1 + D("1e-9"))).saving_percent < 30
