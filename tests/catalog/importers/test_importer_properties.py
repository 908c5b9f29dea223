"""Property tests: no input makes either importer fail with anything but InputFileError."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelpilot.catalog.importers import import_aws_offer, import_rental_csv
from accelpilot.errors import InputFileError

FIXTURE = Path(__file__).parent / "fixtures" / "amazonec2-offer-sample.json"
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=12), kids, max_size=4),
    max_leaves=30,
)
# Values shaped like offer files, so the deeper code paths are reached too.
offer_keys = st.sampled_from(
    [
        "formatVersion",
        "offerCode",
        "publicationDate",
        "products",
        "terms",
        "OnDemand",
        "Reserved",
        "attributes",
        "priceDimensions",
        "pricePerUnit",
        "USD",
        "unit",
        "termAttributes",
        "instanceType",
        "productFamily",
    ]
)
offer_like = st.recursive(
    st.sampled_from(
        [
            "AmazonEC2",
            "v1.0",
            "2026-11-01T00:00:00Z",
            "Hrs",
            "Linux",
            "Shared",
            "Used",
            "NA",
            "OnDemand",
            "Compute Instance",
            "trn1.32xlarge",
            "p5.48xlarge",
            "1.5",
            "-1",
            "NaN",
            "0.0",
            "x",
        ]
    )
    | st.integers(-5, 5)
    | st.none(),
    lambda kids: st.dictionaries(offer_keys | st.text(max_size=6), kids, max_size=5) | st.lists(kids, max_size=3),
    max_leaves=40,
)


def _aws(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "offer.json"
        p.write_bytes(data)
        try:
            rows = import_aws_offer(p)
        except InputFileError as exc:
            assert str(p) in str(exc) and "\n" not in str(exc)
            return
        assert all(r.price_per_hour > 0 for r in rows)


@SETTINGS
@given(st.binary(max_size=400))
def test_aws_arbitrary_bytes(data: bytes) -> None:
    _aws(data)


@SETTINGS
@given(json_values)
def test_aws_arbitrary_json(value: object) -> None:
    _aws(json.dumps(value).encode())


@SETTINGS
@given(offer_like, st.sampled_from(["AmazonEC2", "AmazonS3", 7]))
def test_aws_offer_shaped_json(body: object, code: object) -> None:
    doc = {"formatVersion": "v1.0", "offerCode": code, "publicationDate": "2026-11-01T00:00:00Z"}
    if isinstance(body, dict):
        doc.update(body)
    else:
        doc["products"] = body
    _aws(json.dumps(doc).encode())


@SETTINGS
@given(st.data())
def test_aws_mutated_fixture(data: st.DataObject) -> None:
    raw = bytearray(FIXTURE.read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(raw)))
    _aws(bytes(raw[:cut]) if data.draw(st.booleans()) else bytes(raw))


def _csv(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "quotes.csv"
        p.write_bytes(data)
        try:
            rows = import_rental_csv(p)
        except InputFileError as exc:
            assert str(p) in str(exc) and "\n" not in str(exc)
            return
        assert rows and all(r.price_per_hour > 0 and r.accelerator_count == 1 for r in rows)


@SETTINGS
@given(st.text(max_size=300))
def test_csv_arbitrary_text(text: str) -> None:
    _csv(text.encode("utf-8", "surrogatepass"))


@SETTINGS
@given(st.binary(max_size=300))
def test_csv_arbitrary_bytes(data: bytes) -> None:
    _csv(data)


cells = st.sampled_from(
    [
        "H100",
        "RunPod",
        "2026-09-28",
        "2.50",
        "-1",
        "nan",
        "1e999",
        "",
        " ",
        '"',
        ",",
        "\n",
        "x",
        "2026-02-30",
        "USD",
        "3",
        "é",
        "\x00",
        "\ufeff",
    ]
) | st.text(max_size=8)


@SETTINGS
@given(
    st.permutations(["gpu", "Price per GPU-hour", "provider", "date", "currency", "providers_in_stock", "region"]),
    st.lists(st.lists(cells, min_size=0, max_size=8), max_size=6),
)
def test_csv_structured(header: list[str], body: list[list[str]]) -> None:
    lines = [",".join(header)] + [",".join(r) for r in body]
    _csv(("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"))
