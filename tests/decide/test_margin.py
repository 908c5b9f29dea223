"""Issue 10 section 5: a saving inside the [decision] margin is 'too close: keep the working deployment'."""

from __future__ import annotations

from typing import Any

from accelpilot.figures import fmt_number


def commercial(d: Any) -> Any:
    return next(g for g in d.gates if g.id == "commercial")


def _trn_hours(world: Any, result_of: Any, saving: float) -> float:
    """Hours on trn1 (21.50 an hour) that make a run cost (1 - saving) x the p5's 20 h x 55.04 = 1,100.80."""
    hours = (1 - saving) * 1100.80 / 21.50
    world.set_result(result_of(hours=hours))
    return hours


def test_assumed_baseline_needs_the_wider_margin(world: Any, result_of: Any) -> None:
    hours = _trn_hours(world, result_of, 0.10)  # 10% less, baseline hours assumed: inside the 30% margin
    d = world.decide()
    g = commercial(d)
    assert d.verdict == "keep_working_deployment" and g.holds is False
    assert "too close: keep the working deployment" in g.reason and "30% margin" in g.reason
    del hours
    # flip (issue 26: on the verdict's rule, not the break-even): the trn1 hours at which a run costs 30% less
    # than the p5's 1,100.80: 0.70 x 1,100.80 / 21.50 = 770.56 / 21.50 = 35.84 h; the test is per run, so no
    # runs-per-month value flips it
    flip = 0.70 * 1100.80 / 21.50
    assert f"{fmt_number(flip, 2)} h per run" in g.reason
    assert "no runs-per-month value flips it" in g.reason
    assert any("saving reaches the margin" in f.label for f in g.evidence.figures)
    # re-run the decision just inside the point and just past it
    world.set_result(result_of(hours=flip * (1 - 1e-6)))
    assert "too close" not in commercial(world.decide()).reason
    world.set_result(result_of(hours=flip * (1 + 1e-6)))
    assert "too close" in commercial(world.decide()).reason


def test_margin_is_a_scenario_setting(world: Any, result_of: Any) -> None:
    _trn_hours(world, result_of, 0.20)
    assert "too close" in commercial(world.decide()).reason  # 20% < 30% (assumed)
    world.data["decision"] = {"assumed_margin": 0.15}
    assert world.decide().verdict == "qualify_trainium"  # 20% > 15%


def test_measured_on_both_sides_uses_the_default_15_percent(world: Any, result_of: Any) -> None:
    world.set_result(result_of(device_type="cuda", accelerator="H100", hours=20.0), "gpu.json")
    gpu = world.option("gpu")
    del gpu["hours_per_run"]
    gpu["result"] = "gpu.json"
    _trn_hours(world, result_of, 0.20)
    assert world.decide().verdict == "qualify_trainium"  # 20% > 15%
    _trn_hours(world, result_of, 0.10)
    assert "within the 15% margin for measured hours" in commercial(world.decide()).reason


def test_price_and_accepted_share_flips_are_quoted_and_hold(world: Any, result_of: Any) -> None:
    """Issue 26: the candidate's price and accepted share at which the verdict flips, re-run through decide."""
    _trn_hours(world, result_of, 0.10)  # 990.72 a run: 10% less than 1,100.80, inside the 30% margin
    g = commercial(world.decide())
    # price: 21.50 x h = 990.72 reaches the margin's 770.56 at 21.50 x 770.56 / 990.72 = 16.7222 USD an hour;
    # accepted share: 990.72 / a <= 770.56 needs a > 1: no share flips it
    price = 21.50 * 770.56 / 990.72
    assert f"a price of {fmt_number(price, 4)} USD an hour" in g.reason
    assert "no accepted share flips it" in g.reason
    world.option("trn")["price_per_hour"] = price * (1 - 1e-6)
    assert "too close" not in commercial(world.decide()).reason
    world.option("trn")["price_per_hour"] = price * (1 + 1e-6)
    assert "too close" in commercial(world.decide()).reason


def test_capacity_block_flips_quoted_and_held_through_decide(world: Any) -> None:
    """Issue 26: a Capacity Block candidate's flip points (whole days) quoted by the gate and re-run through decide.

    p5 40 h x 55.04 = 2,201.60 a run; the margin (30%, assumed): 0.70 x 2,201.60 = 1,541.12. A 30 h run on
    trn2.48xlarge buys a 2-day block, 48 h x 35.7608 = 1,716.5184: 22.0% less, too close."""
    cb = {"name": "cb", "instance": "trn2.48xlarge", "pricing": "capacity_block", "hours_per_run": 30}
    world.data["options"] = [{**world.option("gpu"), "hours_per_run": 40}, cb]
    world.data["volumes"]["runs_per_month"] = 1
    g = commercial(world.decide())
    assert "too close" in g.reason
    # hours: one day (858.2592) is clear, two are not: it flips at 24 h
    assert "it flips at 24.00 h per run" in g.reason
    # runs: a second run shares the 2-day block while the month's runs fit 48 h: 1,716.5184 / r <= 1,541.12
    # from r = 1.1138 runs a month
    runs = 1716.5184 / 1541.12
    assert f"{fmt_number(runs, 2)} accepted runs a month" in g.reason
    # price: all of it is the 48 h block: 48 x p = 1,541.12 at p = 32.1067 USD an hour
    price = 1541.12 / 48
    assert f"a price of {fmt_number(price, 4)} USD an hour" in g.reason
    assert "no accepted share flips it" in g.reason
    for key, value, edits in (
        ("hours_per_run", 24.0, cb),
        ("price_per_hour", price, cb),
    ):
        edits[key] = value * (1 - 1e-6)
        assert "too close" not in commercial(world.decide()).reason, key
        edits[key] = value * (1 + 1e-6)
        assert "too close" in commercial(world.decide()).reason, key
        edits[key] = {"hours_per_run": 30, "price_per_hour": None}[key]
        if edits[key] is None:
            del edits[key]
    cb["hours_per_run"] = 24  # at the edge itself the run still fits one day
    assert "too close" not in commercial(world.decide()).reason
    cb["hours_per_run"] = 30
    world.data["volumes"]["runs_per_month"] = runs * (1 + 1e-6)
    assert "too close" not in commercial(world.decide()).reason
    world.data["volumes"]["runs_per_month"] = runs * (1 - 1e-6)
    assert "too close" in commercial(world.decide()).reason
