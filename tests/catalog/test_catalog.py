"""The bundled catalog: seed rows, derived per-accelerator-hour, capacity-block honesty, overrides."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelpilot.catalog import Pricing, load_catalog
from accelpilot.catalog.loader import load_file
from accelpilot.catalog.model import PriceRow
from accelpilot.catalog.table import price_table
from accelpilot.errors import InputFileError, UnknownNameError, UserError


def test_seed_prices_and_derived_per_accelerator_hour() -> None:
    rows = {(r["instance"], r["pricing"]): r for r in price_table(load_catalog())}
    assert rows[("trn2.48xlarge", "capacity_block")]["price_per_accelerator_hour"] == 2.23505
    assert rows[("p5.48xlarge", "on_demand")]["price_per_accelerator_hour"] == 6.88
    assert rows[("trn1.32xlarge", "on_demand")]["price_per_accelerator_hour"] == 1.34375
    assert rows[("trn1.32xlarge", "reserved_3y")]["price_per_hour"] == 8.2
    assert rows[("H100@Hyperstack", "rental")]["price_per_hour"] == 2.5
    for r in rows.values():
        assert r["source"] and r["as_of"], r
        assert r["price_per_accelerator_hour_kind"] == "derived"


def test_capacity_block_never_on_demand() -> None:
    cat = load_catalog()
    on_demand = [r for r in price_table(cat, pricing="on_demand") if r["instance"] == "trn2.48xlarge"]
    assert on_demand == []
    with pytest.raises(UnknownNameError, match="no on_demand price for trn2.48xlarge"):
        cat.find_price("trn2.48xlarge", "on_demand")
    assert cat.find_price("trn2.48xlarge", "capacity_block").pricing is Pricing.CAPACITY_BLOCK


def test_every_instance_the_seeds_name_is_known() -> None:
    """Issue 29: the seeds name inf1.xlarge, inf2.xlarge, inf2.48xlarge, trn1.2xlarge, trn1.32xlarge,
    trn2.48xlarge and p5.48xlarge; each is in the catalog, priced where the seeds give a price."""
    cat = load_catalog()
    hw = {i.instance for i in cat.instances}
    seeds = {"inf1.xlarge", "inf2.xlarge", "inf2.48xlarge", "trn1.2xlarge", "trn1.32xlarge", "trn2.48xlarge"}
    assert seeds | {"p5.48xlarge"} <= hw
    # seed 002: trn1.2xlarge USD 1.34, inf1.xlarge USD 0.228, inf2.xlarge USD 0.76 an hour on demand
    assert cat.find_price("inf2.xlarge", "on_demand").price_per_hour == Decimal("0.76")
    assert cat.find_price("inf1.xlarge", "on_demand").price_per_hour == Decimal("0.228")
    # seed 004 names inf2.48xlarge (12 chips, 384 GB) but lists no price: a clear line, not "unknown instance"
    with pytest.raises(UnknownNameError, match="inf2.48xlarge is in the catalog but has no listed price"):
        cat.find_price("inf2.48xlarge", "on_demand")


def test_unknown_instance_suggests() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'trn1.32xlarge'"):
        load_catalog().find_price("trn1.32xlarg", "on_demand")


def test_every_domain_spec_and_claim_is_bundled() -> None:
    cat = load_catalog()
    assert cat.spec("Trainium2") is not None and cat.spec("Trainium2").bf16_tflops == 667  # type: ignore[union-attr]
    assert cat.spec("Trainium3").fp8_tflops == 2517  # type: ignore[union-attr]
    assert {c.id for c in cat.claims} >= {
        "trn1-cost-to-train",
        "trn2-price-performance",
        "inf2-price-performance",
        "trn3-ultraserver",
    }
    assert cat.default("pue").value == Decimal("1.58")
    assert cat.default("colocation_per_kw_month").value == Decimal("184.06")
    assert cat.instance("inf2.48xlarge").accelerator_count == 12  # type: ignore[union-attr]


def test_override_later_file_wins_and_is_visible(tmp_path: Path) -> None:
    a = tmp_path / "a.toml"
    a.write_text(
        '[[price]]\ninstance = "p5.48xlarge"\naccelerator = "H100"\naccelerator_count = 8\n'
        'pricing = "on_demand"\nprice_per_hour = "50.00"\nregion = "us-east-1"\nas_of = 2026-11-01\n'
        'source = "our AWS quote"\n'
    )
    b = tmp_path / "b.toml"
    b.write_text(a.read_text().replace("50.00", "48.00").replace("our AWS quote", "renegotiated"))
    cat = load_catalog([a, b])
    row = cat.find_price("p5.48xlarge", "on_demand")
    assert row.price_per_hour == Decimal("48.00")
    assert row.overrides == str(a)
    assert row.origin == str(b)
    js = price_table(cat, instance="p5.48xlarge")
    assert js[0]["overrides"] == str(a)


def test_price_csv_extends(tmp_path: Path) -> None:
    f = tmp_path / "mine.csv"
    f.write_text(
        "instance,accelerator,accelerator_count,pricing,price_per_hour,region,as_of,source\n"
        "trn2.48xlarge,Trainium2,16,on_demand,44.70,us-east-2,2026-11-20,our account team\n"
    )
    cat = load_catalog([f])
    assert cat.find_price("trn2.48xlarge", "on_demand").price_per_hour == Decimal("44.70")


@pytest.mark.parametrize(
    "body,match",
    [
        (
            '[[price]]\ninstance = "x"\naccelerator = "H100"\naccelerator_count = 8\npricing = "on_demand"\n'
            'price_per_hour = -1\nas_of = 2026-01-01\nsource = "s"\n',
            "price_per_hour",
        ),
        (
            '[[price]]\ninstance = "x"\naccelerator = "H100"\naccelerator_count = 0\npricing = "on_demand"\n'
            'price_per_hour = 1\nas_of = 2026-01-01\nsource = "s"\n',
            "accelerator_count",
        ),
        (
            '[[price]]\ninstance = "x"\naccelerator = "H100"\naccelerator_count = 8\npricing = "on_demand"\n'
            'price_per_hour = nan\nas_of = 2026-01-01\nsource = "s"\n',
            "finite",
        ),
        (
            '[[price]]\ninstance = "x"\naccelerator = "H100"\naccelerator_count = 8\npricing = "ondemand2"\n'
            'price_per_hour = 1\nas_of = 2026-01-01\nsource = "s"\n',
            "pricing",
        ),
        ("[[price]\n", "malformed TOML"),
        ('[[prise]]\ninstance = "x"\n', "did you mean 'price'"),
    ],
)
def test_bad_catalog_files(tmp_path: Path, body: str, match: str) -> None:
    f = tmp_path / "bad.toml"
    f.write_text(body)
    with pytest.raises(InputFileError, match=match) as exc:
        load_file(f)
    assert str(f) in str(exc.value)


def test_missing_and_unsupported_files(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="no such file"):
        load_catalog([tmp_path / "nope.toml"])
    (tmp_path / "x.yaml").write_text("a: 1")
    with pytest.raises(InputFileError, match="unsupported catalog file type"):
        load_catalog([tmp_path / "x.yaml"])


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(st.text(max_size=400))
def test_catalog_loader_never_crashes(tmp_path: Path, text: str) -> None:
    f = tmp_path / "fuzz.toml"
    f.write_text(text, encoding="utf-8")
    try:
        tables = load_file(f)
    except UserError as exc:
        assert str(f) in str(exc) and "\n" not in str(exc), "one line naming the file"
        return
    # Whatever loads is usable: every row has a source and a date, prices are not negative.
    for rows in tables.values():
        for r in rows:
            assert getattr(r, "source", "x") and getattr(r, "as_of", True) is not None
            assert getattr(r, "price_per_hour", 0) >= 0


_price_values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(), st.text(max_size=8), st.booleans()
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    price=_price_values,
    count=st.one_of(st.integers(-3, 40), st.text(max_size=3)),
    date=st.sampled_from(["2026-01-01", "yesterday", "2026-13-01", ""]),
)
def test_catalog_rows_never_crash(tmp_path: Path, price: object, count: object, date: str) -> None:
    f = tmp_path / "fuzz.toml"
    f.write_text(
        f'[[price]]\ninstance = "x"\naccelerator = "H100"\naccelerator_count = {json.dumps(count)}\n'
        f'pricing = "on_demand"\nprice_per_hour = {json.dumps(price) if price == price else "nan"}\n'
        f'as_of = "{date}"\nsource = "s"\n'
    )
    try:
        row = load_file(f)["price"][0]
    except UserError:
        return
    assert isinstance(row, PriceRow) and row.price_per_hour >= 0
