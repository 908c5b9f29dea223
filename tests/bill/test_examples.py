"""Issue 10 section 6: the three example scenarios are billed and reported; key figures by hand."""

from __future__ import annotations

import json
from decimal import Decimal as D
from pathlib import Path

import pytest

from accelpilot.bill.compute import make_bill
from accelpilot.bill.model import Bill
from accelpilot.bill.scenario import load_scenario
from accelpilot.catalog import load_catalog
from accelpilot.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CAT = load_catalog()


def bill(name: str) -> Bill:
    return make_bill(load_scenario(EXAMPLES / f"{name}.toml"), CAT)


@pytest.mark.parametrize(
    "name,verdict",
    [
        ("aws-product-team", "not_enough_evidence"),
        ("research-lab", "prefer_portable_gpu"),
        ("flat-traffic-serving", "not_enough_evidence"),
        ("worked-example", None),
    ],
)
def test_example_is_billed_and_reported(
    name: str, verdict: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (EXAMPLES / f"{name}.toml").read_text()
    assert text.startswith("#"), "each example explains itself in a comment header"
    assert main(["report", "--scenario", str(EXAMPLES / f"{name}.toml"), "--out", str(tmp_path), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert (tmp_path / "report.html").exists() and (tmp_path / "report.md").exists()
    if verdict is not None:
        assert rep["decision"]["verdict"] == verdict


def test_aws_product_team_reservation_bills_the_term() -> None:
    o = bill("aws-product-team").option("trn1.32xlarge reserved 1 year")
    commit = D("13.23") * 730  # 9,657.90
    extras = 2000 * D("0.08") + 5000 * D("0.023") + (300 - 100) * D("0.09")  # 160 + 115 + 18
    assert o.monthly_cost.value == commit * D("1.1") + extras == D("10916.69")


def test_research_lab_owned_box_says_who_fills_it() -> None:
    o = bill("research-lab").option("owned 8xH100")
    assert any("fills 360 of 511" in n for n in o.notes)  # 12 x 30 h of 730 x 0.7


def test_flat_traffic_serving_sized_fleets(tmp_path: Path) -> None:
    b = bill("flat-traffic-serving")
    p5 = b.option("p5.48xlarge always on")
    inf2 = b.option("inf2.xlarge fleet")
    dto = (1500 - 100) * D("0.09")  # 126.00
    assert p5.monthly_cost.value == D("55.04") * 730 + dto == D("40305.20")  # near 40,000 a month
    assert inf2.instances_needed == 12  # 25 x 1.2 / 2.5
    assert inf2.monthly_cost.value == 12 * D("0.76") * 730 + dto == D("6783.60")
    assert main(["report", "--scenario", str(EXAMPLES / "flat-traffic-serving.toml"), "--out", str(tmp_path)]) == 0
    assert "Cost per 1,000 accepted requests against monthly volume" in (tmp_path / "report.html").read_text()
