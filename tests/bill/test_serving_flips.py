"""Issue 10 section 5 for serving: flip points in requests a month and in the candidate's peak rate.

Fleets are whole instances, so each flip is the lowest volume (or rate) at which the answer changes; the
expected values are worked by hand from the step edges (instances = ceil(peak with headroom / rate)).
"""

from __future__ import annotations

from decimal import Decimal as D
from typing import Any

from accelpilot.bill.compute import make_bill
from accelpilot.bill.model import bill_to_json
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog

CAT = load_catalog()
SECONDS = 730 * 3600  # 2,628,000 seconds a month


def serving(options: list[dict[str, Any]], volume: int, headroom: str = "0.2", **more: Any) -> Any:
    data = {
        "workload": "serving",
        "volumes": {"requests_per_month": volume},
        "traffic": {"peak_to_mean": 1, "headroom": headroom},
        "options": options,
        **more,
    }
    return make_bill(parse_scenario(data), CAT)


P5 = {"name": "p5", "instance": "p5.48xlarge", "pricing": "on_demand", "peak_qps": 40}
INF2 = {"name": "inf2", "instance": "inf2.48xlarge", "pricing": "on_demand", "price_per_hour": "12.98", "peak_qps": 8}


def test_flat_traffic_flips_in_volume_and_peak() -> None:
    b = serving([P5, INF2], 65_700_000)  # mean 25/s, 30/s at peak with 20% headroom
    c = b.comparisons[0]
    # p5: 1 x 55.04 x 730 = 40,179.20; inf2: ceil(30 / 8) = 4 x 12.98 x 730 = 37,901.60 (5.7% less)
    assert b.option("inf2").monthly_cost.value == 4 * D("12.98") * 730 == D("37901.60")
    # inf2 needs a 5th instance once 1.2 V / 2,628,000 > 4 x 8 = 32, i.e. past V = 70,080,000 requests;
    # 5 x 12.98 x 730 = 47,377.00 > 40,179.20 (the p5 still needs one until 40 / 1.2 x 2,628,000 = 87.6M)
    edge = 32 * SECONDS / D("1.2")
    assert edge == 70_080_000
    assert c.flip_requests_per_month.value == edge + 1
    assert 5 * D("12.98") * 730 > D("55.04") * 730
    # the margin is 30% (assumed rates): inf2 must cost at most 0.7 x 40,179.20 = 28,125.44 a month;
    # 3 instances are 28,426.20 (too many), 2 are 18,950.80: 30 / 2 = 15 requests/s per instance
    assert 3 * D("12.98") * 730 > D("0.7") * D("40179.20") >= 2 * D("12.98") * 730
    assert c.flip_peak_qps.value == D(30) / 2
    j = bill_to_json(b)["comparisons"][0]
    assert j["flip_requests_per_month"] == 70_080_001 and j["flip_peak_qps"] == 15
    f = c.flip_peak_qps
    assert f.kind.value == "derived"
    labels = {lf.label for lf in f.leaves()}
    assert {"peak-to-mean ratio", "headroom above peak", "requests per month"} <= labels
    assert any(lf.label.startswith("decision margin") and lf.value == D("0.30") for lf in f.leaves())


def test_peak_flip_is_the_lowest_rate_that_still_reaches_the_margin() -> None:
    # a 5% margin: inf2 may cost 0.95 x 40,179.20 = 38,170.24 -> 4 instances (37,901.60) fit, so the rate may
    # fall to 30 / 4 = 7.5 requests/s before the saving drops under the margin (today 8)
    b = serving([P5, INF2], 65_700_000, decision={"assumed_margin": "0.05"})
    assert 4 * D("12.98") * 730 <= D("0.95") * D("40179.20") < 5 * D("12.98") * 730
    assert b.comparisons[0].flip_peak_qps.value == D("7.5")


def test_volume_flip_where_the_big_instance_starts_to_win() -> None:
    """Baseline: 1 request/s instances at 1.00 an hour; candidate: 10 requests/s at 8.00 an hour, 85% accepted."""
    small = {"name": "small", "instance": "inf2.xlarge", "pricing": "on_demand", "price_per_hour": 1, "peak_qps": 1}
    big = {
        "name": "big",
        "instance": "inf2.48xlarge",
        "pricing": "on_demand",
        "price_per_hour": 8,
        "peak_qps": 10,
        "goodput_share": "0.85",
    }
    b = serving([small, big], 5 * SECONDS, headroom="0")  # mean 5/s: 5 small (3,650) vs 1 big (5,840)
    c = b.comparisons[0]
    assert b.option("big").cost_per_1k_accepted_requests.value > b.option("small").cost_per_1k_accepted_requests.value
    # per accepted request, one big costs 8 / 0.85 = 9.41 small instances: it wins from the 10th small one,
    # i.e. past V = 9 x 2,628,000 = 23,652,000 (the big one still serves up to 10 x 2,628,000 alone)
    assert 9 < D(8) / D("0.85") < 10
    assert c.flip_requests_per_month.value == 9 * SECONDS + 1
    assert c.flip_peak_qps is None  # even one big instance costs more than the small fleet today


def test_no_serving_flip_without_traffic() -> None:
    b = make_bill(
        parse_scenario({"workload": "serving", "volumes": {"requests_per_month": 1_000_000}, "options": [P5, INF2]}),
        CAT,
    )
    c = b.comparisons[0]
    assert c.flip_requests_per_month is None and c.flip_peak_qps is None


def test_flip_model_is_the_billed_fleet_to_the_cent() -> None:
    """The exact model the flips search is the bill's own arithmetic: support, extras, tax, accepted share and
    a scheduled fleet included (else a flip would be the flip of another bill)."""
    from fractions import Fraction

    from accelpilot.bill.fleet import _cost, _exact

    extras = {"support_percent": 10, "tax_percent": 10, "storage_gb_months": 50000}
    inf2 = {**INF2, "goodput_share": "0.9"}
    b = serving([P5, inf2], 65_700_000, extras=extras)
    # p5 by hand: (40,179.20 x 1.1 + 50,000 x 0.08) x 1.1 = 53,016.832
    assert b.option("p5").monthly_cost.value == (D("40179.20") * D("1.1") + 4000) * D("1.1") == D("53016.832")
    sched = {**inf2, "name": "inf2 scheduled", "operation": "scheduled"}
    weights = {"hourly_weights": [1] * 12 + [3] * 12, "headroom": "0.2"}
    b2 = make_bill(
        parse_scenario(
            {
                "workload": "serving",
                "volumes": {"requests_per_month": 65_700_000},
                "traffic": weights,
                "extras": extras,
                "options": [P5, sched],
            }
        ),
        CAT,
    )
    for o in (b.option("p5"), b.option("inf2"), b2.option("inf2 scheduled")):
        fi = o.fleet_inputs
        assert fi is not None
        monthly = _cost(_exact(fi), Fraction(fi.demand.value)) * Fraction(fi.accepted.value)
        assert round(D(monthly.numerator) / D(monthly.denominator), 6) == round(o.monthly_cost.value, 6), o.name


def test_peak_flip_among_many_small_instances() -> None:
    # inf2.xlarge at 0.76 (catalog): 554.80 an instance-month; within 0.7 x 40,179.20 = 28,125.44 fit
    # floor(28,125.44 / 554.80) = 50 instances, so the rate must reach 30 / 50 = 0.6 requests/s per instance
    small = {"name": "inf2 small", "instance": "inf2.xlarge", "pricing": "on_demand", "peak_qps": "0.5"}
    b = serving([P5, small], 65_700_000)
    assert b.option("inf2 small").instances_needed == 60  # 30 / 0.5
    assert 50 * D("554.80") <= D("0.7") * D("40179.20") < 51 * D("554.80")
    assert b.comparisons[0].flip_peak_qps.value == D("0.6")
