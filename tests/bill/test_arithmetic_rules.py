"""Issue 10 section 2: the arithmetic rules that were wrong. Expected money is hand arithmetic in each test."""

from __future__ import annotations

from decimal import Decimal as D
from typing import Any

import pytest

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.errors import ConfigError

CAT = load_catalog()
SECONDS_A_MONTH = 730 * 3600  # 2,628,000


def bill_of(options: list[dict[str, Any]], **extra: Any) -> Any:
    return make_bill(parse_scenario({"options": options, **extra}), CAT)


def test_monthly_extras_are_not_divided_by_the_accepted_share() -> None:
    """A rejected run is re-run; storage is not bought twice: 215 / 0.5 + 80 / 2 = 470 (not 255 / 0.5 = 510)."""
    b = bill_of(
        [
            {
                "name": "t",
                "instance": "trn1.32xlarge",
                "pricing": "on_demand",
                "hours_per_run": 10,
                "accepted_share": 0.5,
            }
        ],
        volumes={"runs_per_month": 2},
        extras={"storage_gb_months": 1000},
    )
    o = b.options[0]
    assert o.cost_per_accepted_run.value == D("21.50") * 10 / D("0.5") + 1000 * D("0.08") / 2 == D(470)
    assert o.monthly_cost.value == D(940)


def test_serving_idle_fraction_is_honoured_with_a_volume() -> None:
    """250M requests, 100 req/s = 262.8M a month at peak, 10% idle -> 236.52M usable: 2 instances, not 1."""
    b = bill_of(
        [{"name": "inf2", "instance": "inf2.xlarge", "pricing": "on_demand", "peak_qps": 100}],
        workload="serving",
        volumes={"requests_per_month": 250_000_000},
        extras={"idle_fraction": 0.1},
    )
    o = b.options[0]
    assert o.instances_needed == 2
    assert o.monthly_cost.value == 2 * D("0.76") * 730 == D("1109.60")


def test_serving_accepted_share_is_honoured() -> None:
    b = bill_of(
        [{"name": "inf2", "instance": "inf2.xlarge", "pricing": "on_demand", "peak_qps": 100, "accepted_share": 0.8}],
        workload="serving",
        volumes={"requests_per_month": 1_000_000},
    )
    o = b.options[0]
    assert o.cost_per_1k_accepted_requests.value == D("0.76") * 730 / 800  # 554.80 / 800k accepted x 1000


def test_zero_requests_a_month_is_an_error_with_a_working_fix() -> None:
    opts = [{"name": "inf2", "instance": "inf2.xlarge", "pricing": "on_demand", "peak_qps": 100}]
    with pytest.raises(ConfigError, match="requests_per_month") as exc:
        bill_of(opts, workload="serving", volumes={"requests_per_month": 0})
    assert "leave requests_per_month out" in str(exc.value)
    assert bill_of(opts, workload="serving").options[0].monthly_cost.value == D("0.76") * 730  # the fix works


def test_owned_serving_counts_idle_once() -> None:
    """The box serves all month: its whole cost, not divided by utilisation on top of the idle share."""
    owned = {"purchase": 360000, "life_months": 36, "utilisation": 0.6, "staff_per_month": 1000}
    b = bill_of(
        [{"name": "own", "pricing": "owned", "peak_qps": 100, "owned": owned}],
        workload="serving",
        extras={"idle_fraction": 0.5},
    )
    o = b.options[0]
    monthly = D(10000) + D("10.2") * D("184.06") + 1000 + D("10.2") * D("1.58") * D("0.10") * 730  # 14,053.88
    assert o.monthly_cost.value == monthly
    accepted = D(100) * SECONDS_A_MONTH * D("0.5")  # 131,400,000
    assert o.cost_per_1k_accepted_requests.value == monthly / accepted * 1000


def test_serving_comparison_is_per_accepted_output_at_the_same_volume() -> None:
    """Twice the capacity at 1.5x the price is cheaper per request: it must pay back, not 'never'."""
    b = bill_of(
        [
            {"name": "base", "instance": "inf2.xlarge", "pricing": "on_demand", "peak_qps": 100},
            {
                "name": "big",
                "instance": "inf2.xlarge",
                "pricing": "on_demand",
                "peak_qps": 200,
                "price_per_hour": 1.14,
                "porting_days": 1,
            },
        ],
        workload="serving",
        engineering={"day_rate": 800},
    )
    c = b.comparisons[0]
    # base: 554.80 for 262.8M; big: 832.20 for 525.6M -> the same 262.8M cost 416.10 on big
    assert D("554.80") - D("832.20") * D("262.8") / D("525.6") == D("138.70")
    assert round(c.saving_per_month.value, 2) == D("138.70")
    assert round(c.break_even_months, 4) == round(D(800) / D("138.70"), 4)  # 5.7678 months


def test_scaling_efficiency_with_assumed_hours_is_refused() -> None:
    with pytest.raises(ConfigError, match="scaling_efficiency is not applied to assumed hours_per_run"):
        bill_of(
            [
                {
                    "name": "t",
                    "instance": "trn1.32xlarge",
                    "pricing": "on_demand",
                    "hours_per_run": 10,
                    "scaling_efficiency": 0.9,
                }
            ]
        )
