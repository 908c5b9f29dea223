"""Issue 10 section 5: flip points (break-even hours, utilisation, runs a month). Hand arithmetic in each test."""

from __future__ import annotations

from decimal import Decimal as D
from typing import Any

import pytest

from accelpilot.bill.compute import make_bill
from accelpilot.bill.model import bill_to_json
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog

CAT = load_catalog()
P5 = {"name": "p5", "instance": "p5.48xlarge", "pricing": "on_demand", "hours_per_run": 20}
TRN = {"name": "trn1", "instance": "trn1.32xlarge", "pricing": "on_demand", "hours_per_run": 26, "porting_days": 3}


def test_seed_004_flip_points() -> None:
    """p5 1,100.80 a run vs trn1 559.00; the 2,400 port spread over 36 months is 66.67 a month."""
    b: Any = make_bill(parse_scenario({"engineering": {"day_rate": 800}, "options": [P5, TRN]}), CAT)
    c = b.comparisons[0]
    port = D(2400) / 36
    # hours at which trn1's run costs what p5's does, less the port's monthly share: 48.10 h
    assert c.flip_hours_per_run.value == pytest.approx(26 * (D("1100.80") - port) / D("559.00"))
    assert round(c.flip_hours_per_run.value, 2) == D("48.10")
    # runs a month below which the saving (541.80 a run) no longer repays the port: 0.123
    assert c.flip_runs_per_month.value == pytest.approx(port / (D("1100.80") - D("559.00")))
    assert bill_to_json(b)["comparisons"][0]["flip_hours_per_run"] == 48.10
    four: Any = make_bill(
        parse_scenario({"engineering": {"day_rate": 800}, "volumes": {"runs_per_month": 4}, "options": [P5, TRN]}),
        CAT,
    )
    # four runs a month share the same 66.67: 26 x (4 x 1,100.80 - 66.67) / (4 x 559.00) = 50.43 h
    assert four.comparisons[0].flip_hours_per_run.value == pytest.approx(
        26 * (4 * D("1100.80") - port) / (4 * D("559.00"))
    )


def test_owned_box_break_even_utilisation() -> None:
    """Owned baseline, 30 h runs x 4 a month, against p5 on-demand 20 h (1,100.80 a run)."""
    owned = {"purchase": 360000, "life_months": 36, "utilisation": 0.6, "staff_per_month": 1000}
    b: Any = make_bill(
        parse_scenario(
            {
                "volumes": {"runs_per_month": 4},
                "options": [{"name": "own", "pricing": "owned", "hours_per_run": 30, "owned": owned}, P5],
            }
        ),
        CAT,
    )
    fixed = D(10000) + D("10.2") * D("184.06") + 1000  # a month
    energy = D("10.2") * D("1.58") * D("0.10") * 30  # a run
    # fixed x 30 / (730 u) + energy = 1,100.80  ->  u = fixed x 30 / (730 x (1,100.80 - energy)) = 0.503
    u = fixed * 30 / (730 * (D("1100.80") - energy))
    assert b.comparisons[0].flip_utilisation.value == pytest.approx(u, rel=D("1e-9"))
    assert round(u, 3) == D("0.503")


def test_term_billed_candidate_has_no_hours_flip() -> None:
    """A 3-year reservation costs the same whatever the hours (within its term): no hours flip point."""
    ri = {**TRN, "name": "ri", "pricing": "reserved_3y"}
    sc = {"engineering": {"day_rate": 800}, "volumes": {"runs_per_month": 8}, "options": [P5, ri]}
    b: Any = make_bill(parse_scenario(sc), CAT)
    # 8 x 1,100.80 = 8,806.40 a month leaves room above the 5,986.00 term, yet hours move nothing
    assert b.comparisons[0].flip_hours_per_run is None
