"""Seed 004's worked example, to the cent, through the CLI's JSON."""

from __future__ import annotations

import json
import operator
from decimal import Decimal
from pathlib import Path

import pytest

from accelpilot.bill.compute import make_bill
from accelpilot.bill.model import LineItem, bill_to_json
from accelpilot.bill.scenario import load_scenario, parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.cli import main
from accelpilot.errors import VendorClaimError
from accelpilot.figures import Figure, Kind

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "src/accelpilot/bill/examples/worked-example.toml"


def test_examples_copy_is_the_bundled_one() -> None:
    assert (ROOT / "examples/worked-example.toml").read_text() == BUNDLED.read_text()


def test_worked_example_to_the_cent(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bill", str(ROOT / "examples/worked-example.toml"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    opts = {o["name"]: o for o in out["options"]}
    assert opts["p5.48xlarge on-demand"]["cost_per_run"] == 1100.80
    assert opts["trn1.32xlarge on-demand"]["cost_per_run"] == 559.00
    assert opts["trn1.32xlarge reserved 3 years"]["cost_per_run"] == 213.20
    comp = next(c for c in out["comparisons"] if c["candidate"] == "trn1.32xlarge on-demand")
    assert comp["saving_per_run"] == 541.80
    assert round(comp["saving_percent"], 1) == 49.2
    assert comp["break_even_runs"] == 5
    assert comp["baseline"] == "p5.48xlarge on-demand"
    for o in out["options"]:
        assert {"name", "cost_per_run", "line_items", "total_36_months"} <= set(o)
        assert o["line_items"][0]["leaves"], "line items keep their inputs"
    assert out["vendor_claims"] and all(c["used_in_arithmetic"] is False for c in out["vendor_claims"])


def test_arithmetic_on_every_bundled_claim_raises() -> None:
    """What keeps claims out of the bill: each claim the bill shows refuses arithmetic with the bill's own numbers."""
    bill = make_bill(load_scenario(BUNDLED), load_catalog())
    cost = bill.option("p5.48xlarge on-demand").cost_per_run
    assert cost is not None and bill.vendor_claims
    for row in bill.vendor_claims:
        claim = row.figure()
        for op, a, b in ((operator.mul, cost, claim), (operator.mul, claim, cost), (operator.truediv, cost, claim)):
            with pytest.raises(VendorClaimError, match="vendor claim"):
                op(a, b)
        with pytest.raises(VendorClaimError, match="vendor claim"):
            _ = claim + claim


def test_used_in_arithmetic_is_read_from_the_figures() -> None:
    """A claim smuggled past Figure's arithmetic (built by hand as an input) is reported as used, by id."""
    bill = make_bill(load_scenario(BUNDLED), load_catalog())
    row = bill.vendor_claims[0]
    smuggled = Figure(value=1, unit="USD", kind=Kind.DERIVED, label="smuggled", inputs=(row.figure(),))
    o = bill.options[0]
    bad = o.model_copy(update={"line_items": [*o.line_items, LineItem(name="x", per="run", figure=smuggled)]})
    tampered = bill.model_copy(update={"options": [bad, *bill.options[1:]]})
    assert bill.claims_in_arithmetic() == set()
    assert tampered.claims_in_arithmetic() == {row.id}
    flags = {c["id"]: c["used_in_arithmetic"] for c in bill_to_json(tampered)["vendor_claims"]}
    assert flags[row.id] is True and not any(v for k, v in flags.items() if k != row.id)


def test_exact_decimals_in_the_model() -> None:
    bill = make_bill(load_scenario(BUNDLED), load_catalog())
    assert bill.option("p5.48xlarge on-demand").cost_per_run.value == Decimal("1100.80")  # type: ignore[union-attr]
    assert bill.option("trn1.32xlarge on-demand").total_36_months.value == Decimal("559.00") * 36 + 2400


@pytest.mark.parametrize("rate,run", [(723, 5), (800, 5), (903, 5), (722, 4), (904, 6)])
def test_break_even_run_against_day_rate(rate: int, run: int) -> None:
    """Seed 004: at a day rate between about 723 and 903 USD, break-even falls on run 5."""
    data = {
        "baseline": "p5",
        "engineering": {"day_rate": rate},
        "options": [
            {"name": "p5", "instance": "p5.48xlarge", "pricing": "on_demand", "hours_per_run": 20},
            {
                "name": "trn1",
                "instance": "trn1.32xlarge",
                "pricing": "on_demand",
                "hours_per_run": 26,
                "porting_days": 3,
            },
        ],
    }
    bill = make_bill(parse_scenario(data), load_catalog())
    assert bill.comparisons[0].break_even_runs == run


def test_used_in_arithmetic_covers_figures_the_json_does_not_project() -> None:
    """bill --json finds claims on its own walk: one hidden in a comparison (not projected with leaves) counts."""
    bill = make_bill(load_scenario(BUNDLED), load_catalog())
    row = bill.vendor_claims[0]
    smuggled = Figure(value=1, unit="USD/month", kind=Kind.DERIVED, label="smuggled", inputs=(row.figure(),))
    c = bill.comparisons[0].model_copy(update={"saving_per_month": smuggled})
    tampered = bill.model_copy(update={"comparisons": [c, *bill.comparisons[1:]]})
    assert tampered.claims_in_arithmetic() == {row.id}
    flags = {c["id"]: c["used_in_arithmetic"] for c in bill_to_json(tampered)["vendor_claims"]}
    assert flags[row.id] is True and not any(v for k, v in flags.items() if k != row.id)
    assert not any(c["used_in_arithmetic"] for c in bill_to_json(bill)["vendor_claims"])
