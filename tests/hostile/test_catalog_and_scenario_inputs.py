"""Hostile catalogs and scenarios: deep TOML, absurd magnitudes, oversized CSV cells, a 10,000-row CSV."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.hostile.hostile_kit import one_error_line

import accelpilot.catalog.loader as loader
from accelpilot.catalog.loader import load_catalog

Cli = Callable[..., tuple[int, str, str]]
WORKED = Path(__file__).resolve().parents[2] / "examples" / "worked-example.toml"


@pytest.mark.parametrize("nest", ["[", "{a="])
def test_5000_deep_toml_catalog_is_one_line(cli: Cli, tmp_path: Path, nest: str) -> None:
    close = "]" if nest == "[" else "}"
    f = tmp_path / "deep.toml"
    f.write_text("x = " + nest * 5000 + ("1" if nest != "[" else "") + close * 5000 + "\n", encoding="utf-8")
    code, _, err = cli("prices", "--catalog", f)
    assert code == 2
    assert one_error_line(err) == (
        f"accelpilot: error: {f}: nested too deeply to be a catalog or scenario (fix: check the TOML syntax)"
    )


def test_5000_deep_toml_scenario_is_one_line(cli: Cli, tmp_path: Path) -> None:
    f = tmp_path / "deep.toml"
    f.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    code, _, err = cli("bill", f)
    assert code == 2
    assert f"{f}: nested too deeply" in one_error_line(err)


def test_hours_per_run_1e308_names_the_field(cli: Cli, tmp_path: Path) -> None:
    f = tmp_path / "huge.toml"
    f.write_text(WORKED.read_text(encoding="utf-8").replace("hours_per_run = 26", "hours_per_run = 1e308"), "utf-8")
    code, _, err = cli("bill", f)
    assert code == 2
    line = one_error_line(err)
    assert f"{f}: options[2 " in line and "].hours_per_run: hours_per_run must be at most 1e+12" in line


def test_products_too_large_for_cents_are_one_line(cli: Cli, tmp_path: Path) -> None:
    """Each input within bounds, their product beyond what Decimal holds to the cent."""
    text = WORKED.read_text(encoding="utf-8").replace("hours_per_run = 26", "hours_per_run = 1e11")
    text = text.replace("runs_per_month = 1\n", "runs_per_month = 1e11\n")
    text = text.replace("months = 36\n", "months = 1000000000\n")
    assert "runs_per_month = 1e11" in text and "months = 1000000000" in text
    f = tmp_path / "huge.toml"
    f.write_text(text, encoding="utf-8")
    code, _, err = cli("bill", f)
    assert code == 2
    assert "is too large to compute to the cent" in one_error_line(err)


@pytest.mark.parametrize("kind", ["prices", "rental"])
def test_200kb_csv_field_is_one_line(cli: Cli, tmp_path: Path, kind: str) -> None:
    f = tmp_path / "big.csv"
    if kind == "prices":
        head = "instance,accelerator,accelerator_count,pricing,price_per_hour,region,as_of,source\n"
        f.write_text(head + "x,H100,8,on_demand,1,us,2026-01-01," + "a" * 200_000 + "\n", encoding="utf-8")
    else:
        f.write_text("gpu,price,provider,date\nH100,1," + "a" * 200_000 + ",2026-01-01\n", encoding="utf-8")
    code, _, err = cli("prices", "--catalog", f)
    assert code == 2
    assert f"{f}: " in one_error_line(err) and "field larger than field limit (131072)" in err


def test_10000_row_catalog_merges_in_linear_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted, not timed: the duplicate check computes each row's key a bounded number of times.

    The quadratic check computed about rows x rows / 2 keys (5e7 for 10,000 rows, 32 s); linear is about 2 x rows.
    """
    rows = 10_000
    f = tmp_path / "big.csv"
    with f.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(
            ["instance", "accelerator", "accelerator_count", "pricing", "price_per_hour", "region", "as_of", "source"]
        )
        for i in range(rows):
            w.writerow([f"x{i}.large", "H100", 8, "on_demand", "12.5", "us-east-1", "2026-01-01", "t"])
        w.writerow(["x7.large", "H100", 8, "on_demand", "99", "us-east-1", "2026-01-01", "t"])  # a later row wins
    calls = 0
    real = loader._key

    def counting(table: str, row: object) -> tuple[str, ...]:
        nonlocal calls
        calls += 1
        return real(table, row)

    bundled = len(load_catalog().prices)
    monkeypatch.setattr(loader, "_key", counting)
    cat = load_catalog([f])
    assert len(cat.prices) == bundled + rows
    assert str(next(r.price_per_hour for r in cat.prices if r.instance == "x7.large")) == "99"
    assert calls < 4 * (rows + bundled + 200), calls
