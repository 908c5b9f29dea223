"""Issue 26 item 2: the price, accepted-share and whole-day Capacity Block flip points, and the serving ones, each
solved on the verdict's rule (the saving reaches the [decision] margin, 30% here: every side's hours or rates are
assumed) and checked by billing again at the point and just past it. Hand arithmetic in each test (catalog:
p5.48xlarge on-demand 55.04, trn1.32xlarge on-demand 21.50 and 1-year 13.23, trn2.48xlarge block 35.7608 USD/h)."""

from __future__ import annotations

from decimal import Decimal as D
from pathlib import Path
from typing import Any

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog

CAT = load_catalog()
P5 = {"name": "p5", "instance": "p5.48xlarge", "pricing": "on_demand", "hours_per_run": 20}  # 1,100.80 a run
TRN = {"name": "trn", "instance": "trn1.32xlarge", "pricing": "on_demand", "hours_per_run": 26}
RI = {**TRN, "name": "ri", "pricing": "reserved_1y"}
EPS = D("1e-9")


def comp(cand: dict[str, Any], runs: Any = 4, base: dict[str, Any] = P5, months: int = 12) -> Any:
    sc = {"volumes": {"runs_per_month": runs, "months": months}, "options": [base, cand]}
    return make_bill(parse_scenario(sc), CAT).comparisons[0]


def close(c: Any) -> bool:
    """The verdict's rule (decide.gates): too close when the saving is under the margin."""
    return bool(c.saving_percent < 30)


def test_price_flip_of_an_hourly_candidate() -> None:
    c = comp(TRN)
    # 21.50 x 26 = 559.00 against 1,100.80; the margin is reached at 0.70 x 1,100.80 / 26 = 770.56 / 26
    p = c.margin_flip_price.value
    assert abs(p - D("770.56") / 26) < D("1e-20")  # 29.6369 USD an hour
    assert c.margin_flip_price.unit == "USD/h"
    assert not close(comp({**TRN, "price_per_hour": p * (1 - EPS)}))
    assert close(comp({**TRN, "price_per_hour": p * (1 + EPS)}))


def test_price_flip_leaves_what_is_not_priced_by_the_hour_alone() -> None:
    trn = {**TRN, "extras": {"storage_gb_months": 1000}}  # 1,000 GB x 0.08 = 80.00 a month: 20.00 a run at 4
    c = comp(trn)
    # 559.00 + 20.00 = 579.00 a run; only the 559.00 scales with the price: 26 x p + 20 = 770.56 at p = 750.56 / 26
    p = c.margin_flip_price.value
    assert abs(p - D("750.56") / 26) < D("1e-20")  # 28.8677 USD an hour
    assert not close(comp({**trn, "price_per_hour": p * (1 - EPS)}))
    assert close(comp({**trn, "price_per_hour": p * (1 + EPS)}))


def test_price_flip_of_a_term_counts_what_it_still_owes() -> None:
    # 18 months on a 1-year term: 13.23 x 730 = 9,657.90 a month, and 6 months still owed, 57,947.40, spread
    # over 18 x 20 runs: 482.895 + 160.965 = 643.86 a run, all of it priced by the hour: the margin's 770.56 is
    # reached at 13.23 x 770.56 / 643.86 = 15.8334 USD an hour
    c = comp(RI, runs=20, months=18)
    assert c.saving_per_run.value == D("1100.80") - D("643.86")
    p = c.margin_flip_price.value
    assert abs(p - D("13.23") * D("770.56") / D("643.86")) < D("1e-20")
    assert not close(comp({**RI, "price_per_hour": p * (1 - EPS)}, runs=20, months=18))
    assert close(comp({**RI, "price_per_hour": p * (1 + EPS)}, runs=20, months=18))


def test_all_upfront_has_no_price_to_flip() -> None:
    c = comp({**RI, "payment_option": "all_upfront", "upfront": 60_000}, runs=20)
    assert c.margin_flip_price is None


def test_accepted_share_flip_of_an_hourly_candidate() -> None:
    c = comp(TRN)
    # a rejected run is run again: 559.00 / a per accepted run reaches 770.56 at a = 559 / 770.56 = 0.72544
    a = c.margin_flip_accepted_share.value
    assert abs(a - D(559) / D("770.56")) < D("1e-20")
    assert not close(comp({**TRN, "accepted_share": a * (1 + EPS)}))
    assert close(comp({**TRN, "accepted_share": a * (1 - EPS)}))


def test_accepted_share_flip_of_a_term_is_where_re_runs_pass_the_commitment() -> None:
    c = comp(RI, runs=20)
    # 20 / a runs of 26 h use 520 / a of the 730 h committed; past it, 21.50 an hour. The month may reach
    # 20 x 770.56 = 15,411.20: 267.5953 h above 730 (as in test_margin_flips), so 520 / a <= 997.5953:
    # a >= 520 / 997.5953 = 0.52125
    a = c.margin_flip_accepted_share.value
    expect = D(520) / (730 + D("5753.30") / D("21.50"))
    assert abs(a - expect) < a * D("1e-10")  # searched: bisection to ~1.5e-11
    assert not close(comp({**RI, "accepted_share": a * (1 + EPS)}, runs=20))
    assert close(comp({**RI, "accepted_share": a * (1 - EPS)}, runs=20))


CB = {"name": "cb", "instance": "trn2.48xlarge", "pricing": "capacity_block", "hours_per_run": 10}
P5_40 = {**P5, "hours_per_run": 40}  # 2,201.60 a run; the margin: 0.70 x 2,201.60 = 1,541.12


def test_capacity_block_hours_flip_on_whole_days() -> None:
    c = comp(CB, runs=1, base=P5_40)
    # one day 24 x 35.7608 = 858.2592 (clear), two days 1,716.5184 (> 1,541.12): the flip is at 24 h, where a
    # run still fits one day; just past it, it buys two
    assert c.margin_flip_hours_per_run.value == 24
    assert not close(comp({**CB, "hours_per_run": 24}, runs=1, base=P5_40))
    assert close(comp({**CB, "hours_per_run": 24 * (1 + EPS)}, runs=1, base=P5_40))


def test_capacity_block_hours_flip_with_the_months_runs_sharing_a_block() -> None:
    c = comp(CB, runs=3, base=P5_40)
    # three runs share one block: the month may reach 3 x 1,541.12 = 4,623.36 = 129.28 h of block: 5 days
    # (120 h), so 3 runs of up to 40 h; past 40 h the shared block needs 6 days, as do 3 own 2-day blocks
    assert c.margin_flip_hours_per_run.value == 40
    assert not close(comp({**CB, "hours_per_run": 40}, runs=3, base=P5_40))
    assert close(comp({**CB, "hours_per_run": 40 * (1 + EPS)}, runs=3, base=P5_40))


def test_a_block_too_dear_even_for_a_day_has_no_hours_flip() -> None:
    c = comp(CB, runs=1)
    # one day already costs 858.2592 > 770.56: no hours value flips it (the step, not a break-even line)
    assert close(c)
    assert c.margin_flip_hours_per_run is None


ROWS = """
[[price]]
instance = "L4@Example-serverless"
accelerator = "L4"
accelerator_count = 1
pricing = "serverless"
price_per_second = "{price}"
billing_increment_s = "1"
provider = "Example"
as_of = 2026-11-01
source = "example provider's serverless price page (test row)"

[[price]]
instance = "L4@Example"
accelerator = "L4"
accelerator_count = 1
pricing = "on_demand"
price_per_hour = "0.80"
provider = "Example"
as_of = 2026-11-01
source = "example provider's price page (test row)"
"""
SECONDS = 730 * 3600
INF2 = {"name": "inf2", "instance": "inf2.48xlarge", "pricing": "on_demand", "price_per_hour": "12.98", "peak_qps": 8}
P5S = {"name": "p5", "instance": "p5.48xlarge", "pricing": "on_demand", "peak_qps": 40}


def serving(volume: int, inf2: dict[str, Any] = INF2) -> Any:
    data = {
        "workload": "serving",
        "volumes": {"requests_per_month": volume},
        "traffic": {"peak_to_mean": 1, "headroom": "0.2"},
        "options": [P5S, inf2],
    }
    return make_bill(parse_scenario(data), CAT).comparisons[0]


def test_serving_price_flip() -> None:
    c = serving(65_700_000)
    # p5: 1 instance, 55.04 x 730 = 40,179.20; inf2: 4 instances. The margin: 4 x p x 730 = 0.70 x 40,179.20
    p = c.margin_flip_price.value
    assert abs(p - D("0.70") * D("40179.20") / (4 * 730)) < D("1e-20")  # 9.6314 USD an hour
    assert not close(serving(65_700_000, {**INF2, "price_per_hour": p * (1 - EPS)}))
    assert close(serving(65_700_000, {**INF2, "price_per_hour": p * (1 + EPS)}))


def test_serving_volume_flip_on_the_margin() -> None:
    c = serving(30_000_000)
    # inf2 is clear while it needs at most 2 instances (2 x 12.98 x 730 = 18,950.80 <= 28,125.44; 3 are
    # 28,426.20): 1.2 V / 2,628,000 <= 16 requests/s, V <= 35,040,000. The first volume past it is too close.
    assert not close(c)
    assert c.margin_flip_requests_per_month.value == 16 * SECONDS / D("1.2") + 1 == 35_040_001
    assert not close(serving(35_040_000))
    assert close(serving(35_040_001))


def test_serverless_price_flip_per_second(tmp_path: Path) -> None:
    def bill(price: D) -> Any:
        f = tmp_path / "rows.toml"
        f.write_text(ROWS.format(price=price))
        sv = {"scale_ups_per_month": 100, "idle_timeout_s": 60, "cold_start_s": 20}
        prov = {"name": "prov", "instance": "L4@Example", "pricing": "on_demand", "peak_qps": 10}
        sl = {"name": "sl", "instance": "L4@Example-serverless", "pricing": "serverless", "peak_qps": 10}
        sc = {
            "workload": "serving",
            "volumes": {"requests_per_month": 3_600_000},
            "options": [prov, {**sl, "serverless": sv}],
        }
        return make_bill(parse_scenario(sc), load_catalog([f])).comparisons[0]

    c = bill(D("0.0002"))
    # 368,000 billed s a month (test_scenario_choices) against 584.00: the margin at 368,000 x p = 0.70 x 584.00
    p = c.margin_flip_price.value
    assert abs(p - D("0.70") * D("584.00") / 368_000) < D("1e-20")  # 0.00111087 USD a second
    assert c.margin_flip_price.unit == "USD/s"
    assert not close(bill(p * (1 - EPS)))
    assert close(bill(p * (1 + EPS)))


BOX = {
    "name": "box",
    "pricing": "owned",
    "instance": "my box",
    "hours_per_run": 20,
    "owned": {
        "lease_per_month": 10_000,
        "power_kw": 10,
        "pue": "1.5",
        "electricity_per_kwh": "0.1",
        "colocation_per_kw_month": 200,
        "dedicated": True,
    },
}


def test_whole_dedicated_boxes_flip_where_a_box_fills() -> None:
    """A dedicated box: 10,000 lease + 10 kW x 200 = 12,000 a month, energy 10 x 1.5 x 0.1 = 1.50 an hour used;
    one box gives 730 x 0.6 = 438 productive hours a month."""
    c = comp(BOX, runs=20)
    # 20 runs of 20 h = 400 h: one box, 12,000 + 600 = 12,600 a month, 630.00 a run: 42.8% less, clear
    assert not close(c)
    # hours: one box holds 438 / 20 = 21.9 h a run; past it a second box, 24,000 + 30 h a month > 20 x 770.56
    h = c.margin_flip_hours_per_run.value
    assert abs(h - D("21.9")) < h * D("1e-10")
    assert not close(comp({**BOX, "hours_per_run": h * (1 - EPS)}, runs=20))
    assert close(comp({**BOX, "hours_per_run": h * (1 + EPS)}, runs=20))
    # runs: past 21.9 runs a second box (24,000 / r + 30 > 770.56 until 32.4 runs): too close. The verdict
    # also changes below, at 12,000 / 740.56 = 16.204 runs; the nearer change, 21.9, is the one quoted
    r = c.margin_flip_runs_per_month.value
    assert abs(r - D("21.9")) < r * D("1e-10")
    assert not close(comp(BOX, runs=r * (1 - EPS)))
    assert close(comp(BOX, runs=r * (1 + EPS)))
    assert not close(comp(BOX, runs=D(12_000) / D("740.56") * (1 + EPS)))
    assert close(comp(BOX, runs=D(12_000) / D("740.56") * (1 - EPS)))
    assert c.margin_flip_price is None  # an owned box has no price by the hour
