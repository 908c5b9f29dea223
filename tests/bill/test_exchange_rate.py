"""Issue 26: a price listed in another currency is converted once, with a dated exchange rate from the catalog
([[rate]], with its source and date), where the option's price is gathered; the bill shows the rate as such."""

from __future__ import annotations

from decimal import Decimal as D
from pathlib import Path
from typing import Any

import pytest

from accelpilot.bill.compute import make_bill
from accelpilot.bill.model import bill_to_json
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.cli import main
from accelpilot.errors import UserError

EUR_ROW = """
[[price]]
instance = "trn1.32xlarge"
accelerator = "Trainium"
accelerator_count = 16
pricing = "on_demand"
price_per_hour = "20.00"
currency = "EUR"
region = "eu-central-1"
as_of = 2026-11-01
source = "test list price in EUR"
"""
RATE = """
[[rate]]
currency = "EUR"
rate = "1.10"
as_of = 2026-11-30
source = "reference rate (test)"
"""
TRN = {
    "name": "trn",
    "instance": "trn1.32xlarge",
    "pricing": "on_demand",
    "region": "eu-central-1",
    "hours_per_run": 26,
}


def bill(tmp_path: Path, text: str, option: dict[str, Any] = TRN, **more: Any) -> Any:
    f = tmp_path / "eur.toml"
    f.write_text(text)
    return make_bill(parse_scenario({"options": [option], **more}), load_catalog([f]))


def test_a_euro_price_is_converted_once_with_the_dated_rate(tmp_path: Path) -> None:
    b = bill(tmp_path, EUR_ROW + RATE)
    o = b.options[0]
    assert o.cost_per_run.value == D("20.00") * D("1.10") * 26  # 22.00 USD an hour x 26 h = 572.00
    assert o.cost_per_run.value == D("572.00")
    rates = [lf for lf in o.cost_per_run.leaves() if lf.label == "exchange rate, USD per EUR"]
    assert len(rates) == 1 and rates[0].value == D("1.10") and rates[0].unit == "USD/EUR"
    assert rates[0].source == "reference rate (test)" and str(rates[0].as_of) == "2026-11-30"
    assert any(
        "converted once from 20.00 EUR/h at 1.10 USD per EUR (reference rate (test), 2026-11-30; the price as of "
        "2026-11-01)" in n
        for n in o.notes
    )
    leaves = bill_to_json(b)["options"][0]["figures"]["cost_per_run"]["leaves"]
    assert {
        "label": "exchange rate, USD per EUR",
        "source": "reference rate (test)",
        "as_of": "2026-11-30",
    }.items() <= next(lf for lf in leaves if lf["label"].startswith("exchange rate")).items()


def test_a_foreign_price_without_a_rate_is_refused_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(UserError) as e:
        bill(tmp_path, EUR_ROW)
    assert e.value.field == "price trn1.32xlarge on_demand.currency"
    assert e.value.fix is not None and '[[rate]] currency = "EUR"' in e.value.fix


@pytest.mark.parametrize(
    ("rate", "field"),
    [
        ('currency = "EUR"\nrate = "0"\nas_of = 2026-11-30\nsource = "x"', "rate[1].rate"),
        ('currency = "EUR"\nrate = "1.1"\nsource = "x"', "rate[1].as_of"),
        ('currency = "euro"\nrate = "1.1"\nas_of = 2026-11-30\nsource = "x"', "rate[1].currency"),
    ],
)
def test_a_bad_rate_row_is_refused(tmp_path: Path, rate: str, field: str) -> None:
    with pytest.raises(UserError) as e:
        bill(tmp_path, EUR_ROW + "\n[[rate]]\n" + rate + "\n")
    assert e.value.field == field


def test_a_serverless_price_per_second_in_euro_is_converted(tmp_path: Path) -> None:
    row = (
        '[[price]]\ninstance = "L4@Example-serverless"\naccelerator = "L4"\naccelerator_count = 1\n'
        'pricing = "serverless"\nprice_per_second = "0.0002"\ncurrency = "EUR"\nbilling_increment_s = "1"\n'
        'provider = "Example"\nas_of = 2026-11-01\nsource = "test row"\n'
    )
    sl = {
        "name": "sl",
        "instance": "L4@Example-serverless",
        "pricing": "serverless",
        "peak_qps": 10,
        "serverless": {"scale_ups_per_month": 100, "idle_timeout_s": 60, "cold_start_s": 20},
    }
    o = bill(tmp_path, row + RATE, sl, workload="serving", volumes={"requests_per_month": 3_600_000}).options[0]
    # 368,000 billed s (test_scenario_choices) x 0.0002 EUR x 1.10 USD per EUR = 80.96 USD a month
    assert o.monthly_cost.value == D("80.96")
    assert any("at 1.10 USD per EUR" in n for n in o.notes)


def test_the_report_shows_the_conversion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "eur.toml").write_text(EUR_ROW + RATE)
    (tmp_path / "s.toml").write_text(
        '[[options]]\nname = "trn"\ninstance = "trn1.32xlarge"\npricing = "on_demand"\nregion = "eu-central-1"\n'
        "hours_per_run = 26\n"
    )
    args = ["--catalog", str(tmp_path / "eur.toml")]
    assert main(["report", "--scenario", str(tmp_path / "s.toml"), *args, "--out", str(tmp_path / "r")]) == 0
    md = (tmp_path / "r" / "report.md").read_text().replace("\\", "")  # markdown escapes parentheses
    assert "converted once from 20.00 EUR/h at 1.10 USD per EUR (reference rate (test), 2026-11-30" in md
    capsys.readouterr()
    assert main(["bill", str(tmp_path / "s.toml"), *args]) == 0
    assert "converted once from 20.00 EUR/h" in capsys.readouterr().out.replace("\n", " ")
