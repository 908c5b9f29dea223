"""The AWS Price List offer-file importer on a small fixture in the real format, and on broken files."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import textwrap
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from accelpilot.catalog.importers import AwsImportReport, import_aws_offer
from accelpilot.catalog.model import InstanceRow, PriceRow, Pricing
from accelpilot.errors import InputFileError


def _table(rows: list[PriceRow]) -> set[tuple[str, str, str | None, Decimal]]:
    return {(r.instance, r.pricing.value, r.region, r.price_per_hour) for r in rows}


EXPECTED = {
    ("inf2.xlarge", "on_demand", "us-east-1", Decimal("0.7582")),
    ("p5.48xlarge", "on_demand", "us-east-1", Decimal("55.04")),
    ("p5.48xlarge", "reserved_1y", "us-east-1", Decimal("38.53")),
    ("p5.48xlarge", "reserved_3y", "us-east-1", Decimal("27.52")),
    ("trn1.32xlarge", "on_demand", "us-east-1", Decimal("21.50")),
    ("trn1.32xlarge", "reserved_1y", "us-east-1", Decimal("13.23")),
    ("trn1.32xlarge", "reserved_3y", "us-east-1", Decimal("8.20")),
    ("trn1.32xlarge", "on_demand", "us-west-2", Decimal("21.50")),
}


def test_fixture_rows_exactly(offer_path: Path) -> None:
    report = AwsImportReport()
    rows = import_aws_offer(offer_path, report=report)
    assert _table(rows) == EXPECTED
    assert len(rows) == len(EXPECTED)
    assert report.products_seen == 11
    assert report.capacity_block_skus == 1
    assert report.zero_rates_dropped == 1  # p5 us-west-2 at 0.00
    assert report.no_accelerator == 1  # m5.xlarge
    for r in rows:
        assert r.as_of == dt.date(2026, 11, 1)
        assert r.source == "AWS Price List API offer file AmazonEC2, 2026-11-01T00:00:00Z, amazonec2-offer-sample.json"
        assert r.origin == str(offer_path)
        assert r.provider == "AWS" and r.currency == "USD"
        assert r.price_per_hour > 0
        assert "SKU " in r.note


def test_accelerators_and_derived_per_accelerator_hour(offer_path: Path) -> None:
    rows = {(r.instance, r.pricing, r.region): r for r in import_aws_offer(offer_path)}
    trn1 = rows["trn1.32xlarge", Pricing.ON_DEMAND, "us-east-1"]
    p5 = rows["p5.48xlarge", Pricing.ON_DEMAND, "us-east-1"]
    inf2 = rows["inf2.xlarge", Pricing.ON_DEMAND, "us-east-1"]
    assert (trn1.accelerator, trn1.accelerator_count) == ("Trainium", 16)
    assert (p5.accelerator, p5.accelerator_count) == ("H100", 8)
    assert (inf2.accelerator, inf2.accelerator_count) == ("Inferentia2", 1)
    assert trn1.per_accelerator_hour().value == Decimal("1.34375")
    assert p5.per_accelerator_hour().value == Decimal("6.88")


def test_capacity_block_never_becomes_on_demand(offer_path: Path) -> None:
    rows = import_aws_offer(offer_path)
    assert not [r for r in rows if r.instance.startswith("trn2")]
    assert not [r for r in rows if r.price_per_hour == 0]
    assert not [r for r in rows if r.pricing is Pricing.CAPACITY_BLOCK]


def test_windows_dedicated_and_reservation_skus_dropped(offer_path: Path) -> None:
    rows = [r for r in import_aws_offer(offer_path, regions=["us-east-1"]) if r.instance == "trn1.32xlarge"]
    on_demand = [r for r in rows if r.pricing is Pricing.ON_DEMAND]
    assert len(on_demand) == 1
    assert on_demand[0].price_per_hour == Decimal("21.50")  # not Windows 27.388, not Dedicated 23.65
    assert "7QPZ5VXH3TJ6ZB2M" in on_demand[0].note


def test_only_standard_no_upfront_reserved_terms(offer_path: Path) -> None:
    rows = [r for r in import_aws_offer(offer_path) if r.pricing in (Pricing.RESERVED_1Y, Pricing.RESERVED_3Y)]
    prices = {(r.instance, r.pricing.value): r.price_per_hour for r in rows}
    # Partial Upfront 6.30, convertible 15.10 and All Upfront 0.00 are all skipped.
    assert prices == {
        ("trn1.32xlarge", "reserved_1y"): Decimal("13.23"),
        ("trn1.32xlarge", "reserved_3y"): Decimal("8.20"),
        ("p5.48xlarge", "reserved_1y"): Decimal("38.53"),
        ("p5.48xlarge", "reserved_3y"): Decimal("27.52"),
    }
    assert all("No Upfront" in r.note and "standard" in r.note for r in rows)


def test_keep_non_accelerator_flag(offer_path: Path) -> None:
    rows = import_aws_offer(offer_path, keep_non_accelerator=True)
    m5 = [r for r in rows if r.instance == "m5.xlarge"]
    assert len(m5) == 1
    assert (m5[0].accelerator, m5[0].accelerator_count, m5[0].price_per_hour) == ("none", 1, Decimal("0.192"))
    assert "no accelerator" in m5[0].note


def test_region_and_prefix_filters(offer_path: Path) -> None:
    west = import_aws_offer(offer_path, regions=["US-WEST-2"])
    assert _table(west) == {("trn1.32xlarge", "on_demand", "us-west-2", Decimal("21.50"))}
    p5 = import_aws_offer(offer_path, instance_prefixes=["p5"])
    assert {r.instance for r in p5} == {"p5.48xlarge"}
    neuron = import_aws_offer(offer_path, regions=["us-east-1"], instance_prefixes=["trn", "inf"])
    assert {r.instance for r in neuron} == {"trn1.32xlarge", "inf2.xlarge"}
    assert import_aws_offer(offer_path, regions=["eu-north-9"]) == []


def test_known_instance_rows_win(offer_path: Path) -> None:
    known = [
        InstanceRow(instance="p5.48xlarge", accelerator="H100 SXM", accelerator_count=4, as_of="2026-01-01", source="t")
    ]
    rows = [r for r in import_aws_offer(offer_path, instances=known) if r.instance == "p5.48xlarge"]
    assert rows and all((r.accelerator, r.accelerator_count) == ("H100 SXM", 4) for r in rows)
    assert all("gpu=8" in r.note for r in rows)  # the disagreement with the offer file is visible


def _reordered(offer_path: Path, tmp_path: Path, order: list[str]) -> Path:
    data = json.loads(offer_path.read_text())
    out = tmp_path / "reordered.json"
    out.write_text(json.dumps({k: data[k] for k in order}))
    return out


def test_terms_before_products_same_rows(offer_path: Path, tmp_path: Path) -> None:
    first = import_aws_offer(offer_path)
    p = _reordered(
        offer_path,
        tmp_path,
        ["terms", "products", "formatVersion", "disclaimer", "offerCode", "version", "publicationDate"],
    )
    again = import_aws_offer(p)
    assert [r.model_dump(exclude={"origin", "source"}) for r in again] == [
        r.model_dump(exclude={"origin", "source"}) for r in first
    ]


@pytest.mark.parametrize("fraction", [0.002, 0.1, 0.35, 0.5, 0.8, 0.95, 0.999])
def test_truncated_file_is_an_error_naming_file_and_byte(offer_path: Path, tmp_path: Path, fraction: float) -> None:
    data = offer_path.read_bytes()
    cut = int(len(data) * fraction)
    p = tmp_path / "cut.json"
    p.write_bytes(data[:cut])
    variants: list[dict[str, Any]] = [{}, {"regions": ["eu-north-9"]}]
    for kwargs in variants:  # also when no product would match
        with pytest.raises(InputFileError) as info:
            import_aws_offer(p, **kwargs)
        msg = str(info.value)
        assert str(p) in msg
        assert "\n" not in msg
        if fraction > 0.01:
            assert f"truncated or malformed JSON at byte {cut}" in msg


def test_malformed_in_the_middle(offer_path: Path, tmp_path: Path) -> None:
    data = offer_path.read_bytes()
    i = data.index(b'"p5.48xlarge"')
    p = tmp_path / "bad.json"
    p.write_bytes(data[:i] + b"}}" + data[i:])
    with pytest.raises(InputFileError, match="truncated or malformed JSON at byte"):
        import_aws_offer(p)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="no such file") as info:
        import_aws_offer(tmp_path / "nope.json")
    assert "nope.json" in str(info.value)


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ('{"foo": 1, "bar": [1, 2]}', "not an AWS Price List offer file"),
        ("[1, 2, 3]", "not an AWS Price List offer file"),
        ('"just a string"', "not an AWS Price List offer file"),
        ("", "not an AWS Price List offer file"),
        (
            '{"formatVersion": "v1.0", "offerCode": "AmazonS3", "publicationDate": "2026-11-01T00:00:00Z",'
            ' "products": {}, "terms": {}}',
            "offerCode is 'AmazonS3'",
        ),
        (
            '{"formatVersion": "v1.0", "offerCode": "AmazonEC2", "publicationDate": "yesterday",'
            ' "products": {}, "terms": {}}',
            "publicationDate",
        ),
        (
            '{"formatVersion": "v1.0", "offerCode": "AmazonEC2", "publicationDate": "2026-11-01T00:00:00Z",'
            ' "products": {}, "terms": {}}',
            "no products",
        ),
    ],
)
def test_not_an_offer_file(tmp_path: Path, content: str, match: str) -> None:
    p = tmp_path / "other.json"
    p.write_text(content)
    with pytest.raises(InputFileError, match=match) as info:
        import_aws_offer(p)
    assert str(p) in str(info.value)


def test_kept_products_without_terms_is_an_error(offer_path: Path, tmp_path: Path) -> None:
    data = json.loads(offer_path.read_text())
    data["terms"] = {"OnDemand": {}, "Reserved": {}}
    p = tmp_path / "noterms.json"
    p.write_text(json.dumps(data))
    with pytest.raises(InputFileError, match="no terms"):
        import_aws_offer(p)


def test_bad_price_string_is_an_error(offer_path: Path, tmp_path: Path) -> None:
    text = offer_path.read_text().replace('"USD": "55.0400000000"', '"USD": "fifty-five"')
    p = tmp_path / "badprice.json"
    p.write_text(text)
    with pytest.raises(InputFileError, match="P5H100USE1NVDA8X"):
        import_aws_offer(p)


def test_unknown_gpu_family_is_reported_not_guessed(offer_path: Path, tmp_path: Path) -> None:
    data = json.loads(offer_path.read_text())
    prod = json.loads(json.dumps(data["products"]["P5H100USE1NVDA8X"]))
    prod["sku"] = "ZZUNKNOWNGPU0001"
    prod["attributes"]["instanceType"] = "zz9.8xlarge"
    data["products"]["ZZUNKNOWNGPU0001"] = prod
    p = tmp_path / "unknown.json"
    p.write_text(json.dumps(data))
    report = AwsImportReport()
    rows = import_aws_offer(p, report=report)
    assert "zz9.8xlarge" in report.unknown_accelerator
    assert not [r for r in rows if r.instance == "zz9.8xlarge"]


def test_header_after_products(offer_path: Path, tmp_path: Path) -> None:
    p = _reordered(
        offer_path, tmp_path, ["products", "terms", "publicationDate", "offerCode", "formatVersion", "version"]
    )
    assert _table(import_aws_offer(p)) == EXPECTED


def test_uses_c_backend_when_available() -> None:
    import ijson  # type: ignore[import-untyped]

    from accelpilot.catalog.importers.aws import _engine

    if "yajl2_c" not in {ijson.backend, *[b for b in ("yajl2_c",) if _has_backend(ijson, b)]}:
        pytest.skip("ijson's C backend is not built here")
    assert _engine().backend_name == "yajl2_c"


def _has_backend(ijson: object, name: str) -> bool:
    try:
        ijson.get_backend(name)  # type: ignore[attr-defined]
        return True
    except Exception:
        return False


@pytest.mark.slow
def test_large_synthetic_file_streams_in_small_memory(tmp_path: Path, synthetic_offer) -> None:  # type: ignore[no-untyped-def]
    """30k products (~38 MB): peak RSS growth stays far below the file size (json.load holds it several times over)."""
    big = tmp_path / "big.json"
    n_trn = synthetic_offer(big, 30_000, 300)
    size = big.stat().st_size
    assert size > 30e6
    script = textwrap.dedent(
        f"""
        import resource, sys
        from accelpilot.catalog.importers import import_aws_offer
        import_aws_offer({str(Path(__file__).parent / "fixtures" / "amazonec2-offer-sample.json")!r})  # warm up
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        rows = import_aws_offer({str(big)!r})
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(len(rows), before, after)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    n_rows, before_kib, after_kib = (int(x) for x in out.stdout.split())
    assert n_rows == n_trn  # one on-demand row per synthetic region
    growth = (after_kib - before_kib) * 1024
    print(f"peak RSS growth {growth / 1e6:.1f} MB for a {size / 1e6:.0f} MB file")
    assert growth < 40e6, f"peak RSS grew by {growth / 1e6:.1f} MB on a {size / 1e6:.0f} MB file"


@pytest.mark.slow
def test_tracemalloc_peak_is_small(tmp_path: Path, synthetic_offer) -> None:  # type: ignore[no-untyped-def]
    import tracemalloc

    f = tmp_path / "mid.json"
    n_trn = synthetic_offer(f, 3_000, 250)
    size = f.stat().st_size
    tracemalloc.start()
    try:
        rows = import_aws_offer(f)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(rows) == n_trn
    # json.load would hold ~5-10x the file; streaming holds one product plus the filtered map (~1 MB
    # here, mostly the bundled instance data and pydantic, whatever the file size).
    assert peak < min(2e6, size / 2), f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB file"
