"""The GPU rental quote CSV importer: header variants, BOM, and errors naming file, line and column."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

from accelpilot.catalog.importers import import_rental_csv
from accelpilot.catalog.model import Pricing
from accelpilot.errors import InputFileError


def _csv(tmp_path: Path, text: str, name: str = "quotes.csv") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_fixture_with_bom_and_header_variants(rental_path: Path) -> None:
    assert rental_path.read_bytes().startswith(b"\xef\xbb\xbf")
    rows = import_rental_csv(rental_path)
    got = {(r.instance, r.accelerator, r.provider, r.price_per_hour) for r in rows}
    assert got == {
        ("H100@Hyperstack", "H100", "Hyperstack", Decimal("2.50")),
        ("H200@QuantaCloud", "H200", "QuantaCloud", Decimal("3.43")),
        ("B200@RunPod", "B200", "RunPod", Decimal("6.79")),
        ("L4@RunPod", "L4", "RunPod", Decimal("0.49")),
        ("A10@LeaderGPU", "A10", "LeaderGPU", Decimal("0.37")),
    }
    h100 = rows[0]
    assert h100.pricing is Pricing.RENTAL and h100.accelerator_count == 1
    assert h100.as_of == dt.date(2026, 9, 28)
    assert h100.source.startswith("seed 002")
    assert "9 providers in stock" in h100.note
    assert h100.origin == str(rental_path)
    assert h100.region is None
    assert h100.per_accelerator_hour().value == Decimal("2.50")


def test_minimal_columns_default_source(tmp_path: Path) -> None:
    p = _csv(tmp_path, "gpu,price,provider,date\nH100,2.5,Hyperstack,2026-09-28\n")
    (row,) = import_rental_csv(p)
    assert row.source == "rental quote CSV quotes.csv"
    assert row.currency == "USD"


@pytest.mark.parametrize(
    "header",
    [
        "GPU,Price per GPU-hour,Provider,Date",
        "gpu , PRICE_PER_GPU_HOUR , provider , date",
        "Model,Price (USD/GPU-hr),Vendor,As of",
        "gpu;price;provider;date".replace(";", ","),
    ],
)
def test_header_variants(tmp_path: Path, header: str) -> None:
    p = _csv(tmp_path, f"{header}\nL4,0.49,RunPod,2026-09-28\n")
    (row,) = import_rental_csv(p)
    assert (row.instance, row.price_per_hour) == ("L4@RunPod", Decimal("0.49"))


def test_optional_columns(tmp_path: Path) -> None:
    p = _csv(
        tmp_path,
        "gpu,price,provider,date,currency,providers_in_stock,region,source\n"
        "H100,2.10,Nebius,2026-10-01,eur,4,eu-north1,https://example.invalid/quote\n",
    )
    (row,) = import_rental_csv(p)
    assert (row.currency, row.region, row.source) == ("EUR", "eu-north1", "https://example.invalid/quote")
    assert "4 providers in stock" in row.note


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("-1.0", "must be greater than 0"),
        ("0", "must be greater than 0"),
        ("NaN", "not a finite number"),
        ("inf", "not a finite number"),
        ("cheap", "not a number"),
        ("", "not a number"),
    ],
)
def test_bad_prices_name_file_line_and_column(tmp_path: Path, cell: str, message: str) -> None:
    p = _csv(tmp_path, f"gpu,Price per GPU-hour,provider,date\nH100,2.5,A,2026-09-28\nH200,{cell},B,2026-09-28\n")
    with pytest.raises(InputFileError) as info:
        import_rental_csv(p)
    msg = str(info.value)
    assert message in msg
    assert str(p) in msg and "line 3" in msg and "'Price per GPU-hour'" in msg


@pytest.mark.parametrize("cell", ["28/09/2026", "2026-13-01", "2026-02-30", "yesterday", ""])
def test_bad_dates(tmp_path: Path, cell: str) -> None:
    p = _csv(tmp_path, f"gpu,price,provider,date\nH100,2.5,A,{cell}\n")
    with pytest.raises(InputFileError, match=r"line 2, column 'date'"):
        import_rental_csv(p)


def test_missing_columns(tmp_path: Path) -> None:
    p = _csv(tmp_path, "gpu,provider\nH100,A\n")
    with pytest.raises(InputFileError, match="missing columns price, date") as info:
        import_rental_csv(p)
    assert "line 1" in str(info.value)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "empty"),
        ("gpu,price,provider,date\n", "no quotes"),
        ("gpu,price,provider,date\n,2.5,A,2026-09-28\n", "gpu is empty"),
        ("gpu,price,provider,date\nH100,2.5,,2026-09-28\n", "provider is empty"),
        ("gpu,price,provider,date\nH100,2.5,A,2026-09-28,extra\n", "5 cells"),
        ("gpu,price,provider,date\nH100,2.5,A,2026-09-28\nH100,2.6,A,2026-09-29\n", "second quote"),
        ("gpu,price,provider,date,currency\nH100,2.5,A,2026-09-28,dollars\n", "currency"),
        ("gpu,price,price_usd,provider,date\nH100,2.5,2.5,A,2026-09-28\n", "two columns mean 'price'"),
        ('gpu,price,provider,date\n"H100,2.5,A,2026-09-28\n', "line"),
    ],
)
def test_other_bad_files(tmp_path: Path, text: str, match: str) -> None:
    with pytest.raises(InputFileError, match=match):
        import_rental_csv(_csv(tmp_path, text))


def test_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="no such file"):
        import_rental_csv(tmp_path / "nope.csv")
    p = tmp_path / "bin.csv"
    p.write_bytes(b"gpu,price\n\xff\xfe\x00")
    with pytest.raises(InputFileError, match="UTF-8"):
        import_rental_csv(p)
