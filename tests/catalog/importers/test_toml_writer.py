"""Imported rows written as catalog TOML load back through the catalog loader and `accelpilot prices`."""

from __future__ import annotations

import datetime as dt
import json
import sys
from decimal import Decimal
from pathlib import Path

from accelpilot.catalog.importers import catalog_toml, import_aws_offer, import_rental_csv, write_catalog_toml
from accelpilot.catalog.loader import load_file
from accelpilot.catalog.model import PriceRow, Pricing

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FIELDS = (
    "instance",
    "accelerator",
    "accelerator_count",
    "pricing",
    "price_per_hour",
    "currency",
    "region",
    "as_of",
    "source",
    "provider",
    "note",
)


def test_round_trip_exact(offer_path: Path, rental_path: Path, tmp_path: Path) -> None:
    rows = import_aws_offer(offer_path) + import_rental_csv(rental_path)
    out = write_catalog_toml(rows, tmp_path / "imported.toml")
    data = tomllib.loads(out.read_text(encoding="utf-8"))
    assert len(data["price"]) == len(rows)
    back = [PriceRow.model_validate(t) for t in data["price"]]
    for a, b in zip(rows, back, strict=True):
        assert a.model_dump(include=set(FIELDS)) == b.model_dump(include=set(FIELDS))
    assert back[0].price_per_hour == Decimal("0.7582000000")  # exact, not a float


def test_strings_are_escaped() -> None:
    row = PriceRow(
        instance='we"ird\\name',
        accelerator="H100",
        accelerator_count=1,
        pricing=Pricing.RENTAL,
        price_per_hour="1.5",
        as_of=dt.date(2026, 1, 2),
        source="line1\nline2\ttab\x01\x7f é",
        provider="P",
    )
    data = tomllib.loads(catalog_toml([row], header="two\nlines"))
    (t,) = data["price"]
    assert t["instance"] == 'we"ird\\name'
    assert t["source"] == "line1\nline2\ttab\x01\x7f é"
    assert "region" not in t
    assert t["as_of"] == dt.date(2026, 1, 2)


def test_loader_and_prices_cli_read_the_written_file(offer_path: Path, tmp_path: Path) -> None:
    out = write_catalog_toml(import_aws_offer(offer_path, instance_prefixes=["trn1"]), tmp_path / "imported.toml")
    prices = [r for r in load_file(out)["price"] if isinstance(r, PriceRow)]
    assert {(r.instance, r.pricing.value, r.region) for r in prices} == {
        ("trn1.32xlarge", "on_demand", "us-east-1"),
        ("trn1.32xlarge", "reserved_1y", "us-east-1"),
        ("trn1.32xlarge", "reserved_3y", "us-east-1"),
        ("trn1.32xlarge", "on_demand", "us-west-2"),
    }
    import contextlib
    import io

    from accelpilot.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["prices", "--catalog", str(out), "--json"])
    assert code == 0
    rows = json.loads(buf.getvalue())
    west = [r for r in rows if r["instance"] == "trn1.32xlarge" and r["region"] == "us-west-2"]
    assert len(west) == 1
    assert Decimal(str(west[0]["price_per_accelerator_hour"])) == Decimal("1.34375")
    assert "AWS Price List API offer file AmazonEC2" in west[0]["source"]


def test_loader_reads_offer_json_and_rental_csv_directly(offer_path: Path, rental_path: Path) -> None:
    assert len(load_file(offer_path)["price"]) == len(import_aws_offer(offer_path))
    rentals = [r for r in load_file(rental_path)["price"] if isinstance(r, PriceRow)]
    assert {r.instance for r in rentals} == {r.instance for r in import_rental_csv(rental_path)}
