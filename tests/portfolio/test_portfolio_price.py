"""Every estate total, computed by hand: the shipped split-estate example and two estates of our own."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from accelpilot.cli import main
from accelpilot.portfolio.procedure import run_portfolio

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "split-estate" / "portfolio.toml"
OWN = Path(__file__).parent / "data" / "own.toml"


def _totals(path: Path) -> dict[str, Decimal]:
    return {e.name: e.lifetime_cost.value for e in run_portfolio(path).price.estates}


def test_split_estate_example_by_hand() -> None:
    # fine-tune, 2 runs a month: p5 20 h x 55.04 x 2 = 2,201.60; trn1 26 h x 21.50 x 2 = 1,118.00
    # serving, one instance always on: p5 55.04 x 730 = 40,179.20; inf2 12.98 x 730 = 9,475.40
    all_gpu = (Decimal("2201.60") + Decimal("40179.20")) * 36  # no port, no second toolchain
    # one Neuron family: the larger port (serving, 15 days x 800 = 12,000; fine-tune's 3 x 800 = 2,400 is
    # the same family) and the larger upkeep (1,000 a month, not 500 + 1,000)
    all_neuron = (Decimal("1118.00") + Decimal("9475.40") + 1000) * 36 + 15 * 800
    # split: fine-tune on p5, serving on inf2, plus 3 validation days x 800 x 4 releases a year x 3 years
    split = (Decimal("2201.60") + Decimal("9475.40") + 1000) * 36 + 15 * 800 + 3 * 800 * 4 * 3
    assert _totals(EXAMPLE) == {
        "all GPU": all_gpu,  # 1,525,708.80
        "all AWS silicon": all_neuron,  # 429,362.40
        "train on GPU, serve on inf2": split,  # 497,172.00
    }


def test_own_estates_by_hand() -> None:
    # x: trn1 10 h x 21.50 x 1 run = 215.00 a month; y: trn1 5 h x 21.50 x 4 runs = 430.00 a month;
    # one Neuron port (the larger: 4 days x 1,000) and one upkeep (the larger: 300 a month), 12 months
    both_trn1 = (Decimal("215.00") + Decimal("430.00") + 300) * 12 + 4 * 1000
    # x on trn1 reserved for 3 years, dedicated: 8.20 x 730 = 5,986.00 a month, and the 24 months of the
    # term after the 12-month lifetime still owed; y on p5: 4 h x 55.04 x 4 runs = 880.64 a month;
    # validation on two families: 2 days x 1,000 x 4 releases x 1 year
    owed = Decimal("8.20") * 730 * 24
    split = (Decimal("5986.00") + Decimal("880.64") + 300) * 12 + 2 * 1000 + owed + 2 * 1000 * 4 * 1
    assert _totals(OWN) == {"both on trn1": both_trn1, "x reserved on trn1, y on p5": split}
    assert split == Decimal("239663.68")


def test_bill_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bill", str(EXAMPLE), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cheapest"] == "all AWS silicon"
    # margin to the next estate: split minus all AWS silicon, by hand above
    assert out["margin_to_next"]["value"] == pytest.approx(497172.00 - 429362.40)
    by = {e["name"]: e for e in out["estates"]}
    assert by["all GPU"]["within_budget"] is False  # 1,525,708.80 > 1,500,000
    assert by["all AWS silicon"]["within_budget"] is True
    assert by["all AWS silicon"]["one_off_cost"] == 12000.0
    assert by["all AWS silicon"]["monthly_cost"] == pytest.approx(1118.00 + 9475.40 + 1000)
    lines = by["train on GPU, serve on inf2"]["line_items"]
    val = next(li for li in lines if li["label"].startswith("validation"))
    assert val["value"] == 3 * 800 * 4 * 3 and val["provenance"] == ["assumption"]
    assert {"list_price", "assumption"} <= {k for li in lines for k in li["provenance"]}


def test_estate_verdict_gates_and_margin() -> None:
    v = run_portfolio(EXAMPLE).verdict
    by = {e.name: e for e in v.estates}
    # the cheapest estate moves fine-tuning to trn1, whose [gates] validated_on_target = false: it cannot win
    assert not by["all AWS silicon"].eligible
    assert any("validated_on_target = false" in r for r in by["all AWS silicon"].reasons)
    # the split saves (1,525,708.80 - 497,172.00) / 1,525,708.80 = 67.4%, beyond the 30% assumed-hours margin
    assert v.margin_needed == Decimal("0.30")
    assert v.winner == "train on GPU, serve on inf2"


def test_cumulative_cost_by_month() -> None:
    from accelpilot.portfolio.price import cumulative

    est = {e.name: e for e in run_portfolio(OWN).price.estates}["x reserved on trn1, y on p5"]
    curve = cumulative(est, 12)
    # month 0: the port (2 x 1,000); each month 7,166.64 and a twelfth of the 8,000 validation
    assert curve[0] == 2000
    assert curve[1] == 2000 + Decimal("7166.64") + Decimal(8000) / 12
    # the 24 months still owed on the reservation (8.20 x 730 x 24) fall at the end of the lifetime
    assert curve[12] == Decimal("239663.68")
    assert curve[12] - curve[11] == Decimal("7166.64") + Decimal(8000) / 12 + Decimal("8.20") * 730 * 24


def test_close_is_a_no_between_estates(tmp_path: Path) -> None:
    import shutil

    shutil.copy(OWN.parent / "y.toml", tmp_path / "y.toml")
    p = tmp_path / "close.toml"
    p.write_text(
        '[portfolio]\nlifetime_months = 36\n[[workloads]]\nname = "y"\nscenario = "y.toml"\n'
        '[[estates]]\nname = "stay on p5"\noptions = { y = "p5" }\n'
        '[[estates]]\nname = "y on trn1"\noptions = { y = "trn1" }\n'
    )
    run = run_portfolio(p)
    stay = Decimal("880.64") * 36  # 4 h x 55.04 x 4 runs a month = 880.64; 31,703.04
    move = (Decimal("430.00") + 200) * 36 + 4 * 1000  # 5 h x 21.50 x 4 = 430.00, upkeep 200, port 4,000; 26,680
    assert {e.name: e.lifetime_cost.value for e in run.price.estates} == {"stay on p5": stay, "y on trn1": move}
    assert run.price.cheapest == "y on trn1"
    # (31,703.04 - 26,680) / 31,703.04 = 15.8%, under the 30% assumed-hours margin: keep the estate that moves
    # nothing
    assert (stay - move) / stay < Decimal("0.30")
    assert run.verdict.winner == "stay on p5"
    assert run.verdict.headline.startswith("Too close to move")
