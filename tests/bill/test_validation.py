"""Issue 10 section 2, validation: each bad input is one clear line naming file, field and a fix that works."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from accelpilot.bill.compute import make_bill
from accelpilot.bill.render import render_bill
from accelpilot.bill.scenario import load_scenario, parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.errors import ConfigError, InputFileError, UserError, VendorClaimError

CAT = load_catalog()
OPT = {"name": "x", "instance": "p5.48xlarge", "pricing": "on_demand", "hours_per_run": 1}


def test_numbers_written_as_toml_strings_are_validated(tmp_path: Path) -> None:
    f = tmp_path / "s.toml"
    f.write_text('[[options]]\nname = "x"\ninstance = "p5.48xlarge"\npricing = "on_demand"\nhours_per_run = "-5"\n')
    with pytest.raises(ConfigError, match="must not be negative") as exc:
        load_scenario(f)
    assert str(f) in str(exc.value) and "hours_per_run" in str(exc.value)
    f.write_text(f.read_text().replace('"-5"', '"5"'))
    assert load_scenario(f).options[0].hours_per_run == 5  # a positive string still reads as a number


def test_residual_value_above_purchase_is_refused() -> None:
    owned = {"purchase": 100, "residual_value": 200}
    with pytest.raises(ConfigError, match="residual_value .* above purchase"):
        parse_scenario({"options": [{"name": "o", "pricing": "owned", "hours_per_run": 1, "owned": owned}]})


def test_csv_row_with_a_decimal_comma_is_refused_with_its_line(tmp_path: Path) -> None:
    f = tmp_path / "p.csv"
    f.write_text(
        "instance,accelerator,accelerator_count,pricing,price_per_hour,region,as_of,source\n"
        "a.large,H100,8,on_demand,21.50,us-east-1,2026-11-01,quote\n"
        "b.large,H100,8,on_demand,21,50,us-east-1,2026-11-01,quote\n"
    )
    with pytest.raises(InputFileError, match="line 3") as exc:
        load_catalog([f])
    assert "21.50" in str(exc.value)  # the fix shows the decimal point


@pytest.mark.parametrize("name", ["a[/]b", "[bold]x[/bold]"])
def test_option_names_are_shown_literally(name: str) -> None:
    b = make_bill(parse_scenario({"options": [{**OPT, "name": name}]}), CAT)
    out = io.StringIO()
    render_bill(b, Console(file=out, width=200))
    assert name in out.getvalue()


def test_vendor_claim_as_a_price_names_its_file_and_field(tmp_path: Path) -> None:
    f = tmp_path / "claim.toml"
    f.write_text(
        '[[price]]\ninstance = "p5.48xlarge"\naccelerator = "H100"\naccelerator_count = 8\npricing = "on_demand"\n'
        'price_per_hour = 30\nregion = "us-east-1"\nas_of = 2026-11-01\nsource = "slide"\nkind = "vendor_claim"\n'
    )
    with pytest.raises(VendorClaimError) as exc:
        make_bill(parse_scenario({"options": [OPT]}), load_catalog([f]))
    msg = str(exc.value)
    assert str(f) in msg and "price p5.48xlarge on_demand.kind" in msg and "fix:" in msg


def test_foreign_currency_scenario_is_refused_with_a_fix_that_works() -> None:
    data: dict[str, Any] = {"currency": "EUR", "options": [OPT]}
    with pytest.raises(UserError, match='set currency = "USD"'):
        make_bill(parse_scenario(data), CAT)
    assert make_bill(parse_scenario({**data, "currency": "USD"}), CAT).currency == "USD"


def test_foreign_currency_price_row_is_refused_with_its_file(tmp_path: Path) -> None:
    f = tmp_path / "eur.toml"
    f.write_text(
        '[[price]]\ninstance = "p5.48xlarge"\naccelerator = "H100"\naccelerator_count = 8\npricing = "on_demand"\n'
        'price_per_hour = 50\ncurrency = "EUR"\nregion = "us-east-1"\nas_of = 2026-11-01\nsource = "quote"\n'
    )
    with pytest.raises(UserError, match="is in EUR") as exc:
        make_bill(parse_scenario({"options": [OPT]}), load_catalog([f]))
    assert str(f) in str(exc.value) and "currency" in str(exc.value)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"options": [OPT, OPT]}, "option names must be unique"),
        ({"scenario": {"baseline": ""}, "options": [OPT]}, "baseline '' names no option"),
    ],
)
def test_a_whole_scenario_check_is_one_clear_error(data: dict[str, Any], match: str) -> None:
    """Checks across options (unique names, the baseline) have no field location; they still give one line, not
    an IndexError (found by tests/hostile/test_fuzz_readers.py)."""
    with pytest.raises(ConfigError, match=match):
        parse_scenario(data)
