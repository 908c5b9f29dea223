"""Issue 29: the account's evidence reaches the bill. A Capacity Block option is priced from the account's own
offering (upfront fee / (duration x instances)); a spot option's notes show the spot placement score beside its
interruption assumption. Evidence files are in the AWS CLI's own shape (tests/evidence/fixtures). Money by hand."""

from __future__ import annotations

import json
from decimal import Decimal as D
from pathlib import Path
from typing import Any

import pytest

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.cli import main
from accelpilot.errors import UnknownNameError
from accelpilot.evidence import read_files
from accelpilot.procedure import make_report
from accelpilot.report.render_html import render_html
from accelpilot.report.render_md import render_md

FX = Path(__file__).parents[1] / "evidence" / "fixtures"
BLOCK_47H35 = FX / "capacity-block-47h35m-us-east-2.json"  # 1 x p5.48xlarge, 47 h 35 min, 1,856.83 USD
BLOCKS_USE1 = FX / "capacity-blocks-us-east-1.json"  # 4 x p5.48xlarge, 48 h, 31,464.96 USD; 4 x trn1, 168 h
SCORES = FX / "spot-scores-p5.48xlarge.json"  # us-east-1: 3, us-west-2: 6


def _block_option(**kw: Any) -> dict[str, Any]:
    return {"name": "cb", "instance": "p5.48xlarge", "pricing": "capacity_block", "hours_per_run": 40, **kw}


def _bill(opts: list[dict[str, Any]], files: list[Path], catalog: list[Path] | None = None) -> Any:
    sc = parse_scenario({"volumes": {"runs_per_month": 1}, "options": opts}, "/tmp/s.toml")
    return make_bill(sc, load_catalog(catalog or []), read_files(files) if files else None)


def test_capacity_block_priced_from_the_accounts_offering_with_its_minutes() -> None:
    o = _bill([_block_option(region="us-east-2")], [BLOCK_47H35]).options[0]
    # 47 h 35 min = 2,855 min; 1,856.83 USD / (2,855/60 h x 1 instance) = 1,856.83 x 60 / 2,855 USD per h
    rate = D("1856.83") * 60 / 2855  # 39.0227... (read as 47 h it would be 1,856.83 / 47 = 39.5070)
    # a 40 h run buys a 2-day block: 48 h x 1 instance x rate
    assert o.cost_per_run.value == pytest.approx(rate * 48, abs=D("1e-20"))
    assert round(o.cost_per_run.value, 2) == D("1873.09")  # 39.022697... x 48
    assert (o.accelerator, o.accelerator_count) == ("H100", 8)  # the catalog still says what the instance holds
    [note] = [n for n in o.notes if n.startswith("capacity block:")]
    assert "cbr-0a1b2c3d4e5f60718" in note and "capacity-block-47h35m-us-east-2.json" in note
    assert "47 h 35 min x 1 instance(s)" in note and "not the catalog's listed rate" in note
    fee = next(lf for li in o.line_items for lf in li.figure.leaves() if "upfront fee" in lf.label)
    assert fee.value == D("1856.83") and "describe-capacity-block-offerings" in fee.source


def test_offering_for_the_options_count_and_region() -> None:
    o = _bill([_block_option(region="us-east-1", instances=4)], [BLOCK_47H35, BLOCKS_USE1]).options[0]
    # us-east-1's offering (the us-east-2 one is another region): 31,464.96 / (48 h x 4) = 163.88 per instance-h
    assert o.cost_per_run.value == D("163.88") * 4 * 48  # 31,464.96: the block bought whole
    assert any("cbr-0123456789abcdef0" in n for n in o.notes)


def test_catalog_rate_when_no_offering_matches_and_a_stated_price_wins(tmp_path: Path) -> None:
    prices = tmp_path / "cb.csv"
    prices.write_text(
        "instance,accelerator,accelerator_count,pricing,price_per_hour,region,as_of,source\n"
        "p5.48xlarge,H100,8,capacity_block,31.464,us-west-2,2026-11-01,test capacity block price\n"
    )
    # us-west-2: the evidence holds offerings for us-east-1 and us-east-2 only
    o = _bill([_block_option(region="us-west-2")], [BLOCK_47H35, BLOCKS_USE1], [prices]).options[0]
    assert o.cost_per_run.value == D("31.464") * 48  # 1,510.272: the catalog's listed rate x 2-day block
    assert any("catalog's listed rate prices it" in n and "in us-west-2" in n for n in o.notes)
    o = _bill([_block_option(region="us-east-2", price_per_hour=30)], [BLOCK_47H35]).options[0]
    assert o.cost_per_run.value == D(30) * 48
    assert any("stated price_per_hour (30) is used" in n and "39.0227" in n for n in o.notes)
    with pytest.raises(UnknownNameError, match="capacity_block"):  # bundled catalog: no p5 block price
        _bill([_block_option(region="us-east-2")], [])


def test_cli_bill_json_prices_the_offering(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sc = tmp_path / "s.toml"
    sc.write_text(
        f'[evidence]\nfiles = ["{BLOCK_47H35}"]\n\n[[options]]\nname = "cb"\ninstance = "p5.48xlarge"\n'
        'pricing = "capacity_block"\nregion = "us-east-2"\nhours_per_run = 40\n'
    )
    assert main(["bill", str(sc), "--json"]) == 0
    o = json.loads(capsys.readouterr().out)["options"][0]
    assert o["cost_per_run"] == float(round(D("1856.83") * 60 / 2855 * 48, 2))  # 1,873.09


def _spot(**spot: Any) -> dict[str, Any]:
    opt = {"name": "sp", "instance": "p5.48xlarge", "pricing": "spot", "price_per_hour": 20, "hours_per_run": 40}
    return {**opt, "region": "us-east-1", **({"spot": spot} if spot else {})}


def test_spot_placement_score_beside_the_interruption_assumption(tmp_path: Path) -> None:
    o = _bill([_spot(interruptions_per_hour="0.01", restart_s=100)], [SCORES]).options[0]
    # the score is shown, not priced: q = 0.01 x 100 / 3,600 = 1/3,600 h lost per hour; geometric re-work
    # 40 x q / (1 - q) = 40 / 3,599 h: 20 x 40 + 20 x 40 / 3,599 = 800.2223
    assert abs(o.cost_per_run.value - (D(20) * 40 + D(20) * 40 / D(3599))) < D("1e-20")
    [note] = [n for n in o.notes if n.startswith("spot:")]
    assert "stated interruptions_per_hour (0.01) is assumed" in note
    assert "spot placement score us-east-1 3/10 (spot-scores-p5.48xlarge.json" in note and "6/10" not in note
    # without [options.spot]: interruptions unpriced, the score still shown beside that
    o = _bill([_spot()], [SCORES]).options[0]
    assert any("spot placement score us-east-1 3/10" in n for n in o.notes)
    # a score file named for another instance type says nothing about this one
    other = tmp_path / "spot-scores-trn1.32xlarge.json"
    other.write_text(SCORES.read_text())
    o = _bill([_spot(interruptions_per_hour="0.01", restart_s=100)], [other]).options[0]
    assert not any("placement score" in n for n in o.notes)


def test_spot_placement_score_in_the_report(tmp_path: Path) -> None:
    p = tmp_path / "s.toml"
    p.write_text(
        f'[evidence]\nfiles = ["{SCORES}"]\n\n[[options]]\nname = "sp"\ninstance = "p5.48xlarge"\npricing = "spot"\n'
        'price_per_hour = 20\nregion = "us-west-2"\nhours_per_run = 40\n\n[options.spot]\n'
        "interruptions_per_hour = 0.01\nrestart_s = 100\n"
    )
    rep = make_report(p)
    assert "stated interruptions_per_hour (0.01) is assumed; spot placement score us-west-2 6/10" in render_html(rep)
    md = render_md(rep)  # Markdown escapes _ and ( )
    assert "stated interruptions\\_per\\_hour \\(0.01\\) is assumed; spot placement score us-west-2 6/10" in md
