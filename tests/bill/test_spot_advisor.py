"""Issue 10 section 3: a spot interruption rate read from the Spot Instance Advisor's data. Money by hand."""

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
from accelpilot.errors import ConfigError
from accelpilot.evidence import read_files
from accelpilot.figures import Kind

# The shape of spot-advisor-data.json (a small test file, not AWS's data): five bands, one Linux row.
ADVISOR = {
    "global_rate": "<10%",
    "instance_types": {"trn1.32xlarge": {"emr": False, "cores": 128, "ram_gb": 512}},
    "ranges": [
        {"index": 0, "label": "<5%", "dots": 0, "max": 5},
        {"index": 1, "label": "5-10%", "dots": 1, "max": 11},
        {"index": 2, "label": "10-15%", "dots": 2, "max": 16},
        {"index": 3, "label": "15-20%", "dots": 3, "max": 22},
        {"index": 4, "label": ">20%", "dots": 4, "max": 100},
    ],
    "spot_advisor": {"us-east-1": {"Linux": {"trn1.32xlarge": {"s": 70, "r": 1}}, "Windows": {}}},
}
RESTART_S = 130  # assumed cost of one interruption (s), as restart_s


def _files(tmp_path: Path) -> tuple[Any, Path]:
    adv = tmp_path / "spot-advisor-data.json"
    adv.write_text(json.dumps(ADVISOR))
    prices = tmp_path / "spot.csv"
    prices.write_text(
        "instance,accelerator,accelerator_count,pricing,price_per_hour,region,as_of,source\n"
        "trn1.32xlarge,Trainium,16,spot,6.45,us-east-1,2026-11-01,test spot quote\n"
    )
    return load_catalog([prices]), adv


def _scenario(tmp_path: Path, **spot: Any) -> Any:
    opt = {
        "name": "spot",
        "instance": "trn1.32xlarge",
        "pricing": "spot",
        "region": "us-east-1",
        "hours_per_run": 20,
        "spot": {"restart_s": RESTART_S, **spot},
    }
    return parse_scenario(
        {"options": [opt], "evidence": {"files": ["spot-advisor-data.json"]}}, str(tmp_path / "s.toml")
    )


def test_rate_from_the_advisor_band_upper_bound(tmp_path: Path) -> None:
    cat, adv = _files(tmp_path)
    o: Any = make_bill(_scenario(tmp_path), cat, read_files([adv])).options[0]
    # band "5-10%": upper bound 11% of instances a month = 0.11 interruptions per instance-month / 730 h
    q = D("0.11") / 730 * RESTART_S / 3600  # hours lost per hour run
    rework_h = 20 * q / (1 - q)  # geometric: the re-work is interrupted too
    assert o.cost_per_run.value == pytest.approx(D("6.45") * 20 + D("6.45") * rework_h, abs=D("1e-20"))
    rate = next(
        lf for li in o.line_items for lf in li.figure.leaves() if lf.label.startswith("spot interruption frequency")
    )
    assert rate.kind is Kind.MEASURED and rate.value == D("0.11") and "5-10%" in rate.label
    assert "spot-advisor-data.json" in rate.source and rate.as_of is not None and rate.region == "us-east-1"
    assert any("Spot Advisor (spot-advisor-data.json" in n for n in o.notes)


def test_a_stated_rate_wins_and_the_advisor_is_noted(tmp_path: Path) -> None:
    cat, adv = _files(tmp_path)
    o: Any = make_bill(_scenario(tmp_path, interruptions_per_hour="0.05"), cat, read_files([adv])).options[0]
    # q = 0.05 x 130 / 3,600 = 13/7,200; geometric re-work 20 x q / (1 - q) = 260 / 7,187 h
    assert abs(o.cost_per_run.value - (D("6.45") * 20 + D("6.45") * D(260) / D(7187))) < D("1e-20")
    assert any("stated interruptions_per_hour (0.05) is used" in n for n in o.notes)


def test_no_rate_and_no_row_is_one_clear_error(tmp_path: Path) -> None:
    cat, adv = _files(tmp_path)
    with pytest.raises(ConfigError, match="spot needs an interruption rate"):
        make_bill(_scenario(tmp_path), cat, None)
    other = {**ADVISOR, "spot_advisor": {"eu-west-1": {"Linux": {"trn1.32xlarge": {"s": 70, "r": 0}}}}}
    adv.write_text(json.dumps(other))
    with pytest.raises(ConfigError, match="has no Linux row for trn1.32xlarge in us-east-1"):
        make_bill(_scenario(tmp_path), cat, read_files([adv]))


def test_cli_bill_reads_the_scenario_evidence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, adv = _files(tmp_path)
    sc = tmp_path / "s.toml"
    sc.write_text(
        '[evidence]\nfiles = ["spot-advisor-data.json"]\n\n[[options]]\nname = "spot"\ninstance = "trn1.32xlarge"\n'
        'pricing = "spot"\nregion = "us-east-1"\nhours_per_run = 20\n\n[options.spot]\nrestart_s = 130\n'
    )
    assert main(["bill", str(sc), "--catalog", str(tmp_path / "spot.csv"), "--json"]) == 0
    o = json.loads(capsys.readouterr().out)["options"][0]
    q = D("0.11") / 730 * RESTART_S / 3600
    rework_h = 20 * q / (1 - q)
    assert o["cost_per_run"] == float(round(D("6.45") * 20 + D("6.45") * rework_h, 2))  # 129.00 + 0.00 by cents
    spot_item = next(li for li in o["line_items"] if li["name"].startswith("spot interruptions"))
    assert spot_item["value"] == float(round(D("6.45") * rework_h, 4))
    adv.write_text('{"ranges": [], "spot_advisor": {"us-east-1": {"Linux": {"trn1.32xlarge": {"s": 70, "r": 7}}}}}')
    assert main(["bill", str(sc), "--catalog", str(tmp_path / "spot.csv")]) == 2
    err = capsys.readouterr()
    assert "spot_advisor.us-east-1.Linux.trn1.32xlarge.r = 7 names no band" in err.err + err.out
    assert "Traceback" not in err.err + err.out
