"""Property fuzz of every file reader: for any bytes, any JSON or TOML, and any one-field mutation of a valid file,
the reader returns a valid object or raises a UserError; never another exception (no RecursionError, csv.Error,
decimal.InvalidOperation, KeyError...). Readers: pilot results, scan logs, scenarios (read and billed), catalogs
(TOML and CSV) and AWS offer files."""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tomlkit
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.hostile.hostile_kit import SCENARIO, dump, scan_log, training_result

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import load_scenario
from accelpilot.catalog.importers import import_aws_offer
from accelpilot.catalog.loader import load_catalog, load_file
from accelpilot.errors import UserError
from accelpilot.pilot.result import PilotResult, read_result
from accelpilot.porting.log import PortabilityLog, load_log

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OFFER = Path(__file__).resolve().parents[1] / "catalog" / "importers" / "fixtures" / "amazonec2-offer-sample.json"
CATALOG = load_catalog()

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=16)
    | st.sampled_from(["1e308", "-1", "2.0", "NaN", "training", "serving", "portability_log", "\x1b[2J", "a|b\n`"])
)
json_values = st.recursive(
    scalars,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=10), kids, max_size=4),
    max_leaves=25,
)
toml_scalars = (
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=16)
    | st.dates()
)
toml_values = st.recursive(
    toml_scalars,
    lambda kids: (
        st.lists(kids, max_size=3)
        | st.dictionaries(st.text(min_size=1, max_size=10).filter(str.isidentifier), kids, max_size=3)
    ),
    max_leaves=15,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def _mutate(doc: Any, pick: int, value: Any, delete: bool) -> Any:
    """``doc`` with one field (chosen by ``pick``) replaced by ``value`` or deleted."""
    doc = copy.deepcopy(doc)
    paths = _paths(doc)
    path = paths[pick % len(paths)]
    node = doc
    for k in path[:-1]:
        node = node[k]
    if delete and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


def _clean(reader: Callable[[Path], Any], content: bytes, name: str, valid: type | tuple[type, ...]) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / name
        p.write_bytes(content)
        try:
            got = reader(p)
        except UserError as exc:
            assert "\n" not in str(exc)
            return
        assert isinstance(got, valid), type(got)


RESULT = dump(training_result())
LOG = json.loads(scan_log().to_json())
SCENARIO_DOC = tomlkit.parse(SCENARIO).unwrap()
OFFER_DOC = json.loads(OFFER.read_text(encoding="utf-8"))
CATALOG_DOC = {
    "price": [
        {
            "instance": "x.large",
            "accelerator": "H100",
            "accelerator_count": 8,
            "pricing": "on_demand",
            "price_per_hour": 12.5,
            "region": "us-east-1",
            "as_of": "2026-01-01",
            "source": "fuzz",
        }
    ]
}


def _json_bytes(doc: Any) -> bytes:
    return json.dumps(doc, allow_nan=True).encode()


# --- pilot results -----------------------------------------------------------------------------------------------


@SETTINGS
@given(st.binary(max_size=200))
def test_result_reader_any_bytes(raw: bytes) -> None:
    _clean(read_result, raw, "r.json", PilotResult)


@SETTINGS
@given(json_values)
def test_result_reader_any_json(doc: Any) -> None:
    _clean(read_result, _json_bytes(doc), "r.json", PilotResult)


@SETTINGS
@given(st.integers(min_value=0), json_values, st.booleans())
def test_result_reader_one_field_mutated(pick: int, value: Any, delete: bool) -> None:
    _clean(read_result, _json_bytes(_mutate(RESULT, pick, value, delete)), "r.json", PilotResult)


# --- scan logs ----------------------------------------------------------------------------------------------------


@SETTINGS
@given(json_values)
def test_log_reader_any_json(doc: Any) -> None:
    _clean(load_log, _json_bytes(doc), "log.json", PortabilityLog)


@SETTINGS
@given(st.integers(min_value=0), json_values, st.booleans())
def test_log_reader_one_field_mutated(pick: int, value: Any, delete: bool) -> None:
    _clean(load_log, _json_bytes(_mutate(LOG, pick, value, delete)), "log.json", PortabilityLog)


# --- scenarios: read, then billed ----------------------------------------------------------------------------------


def _bill(p: Path) -> Any:
    (p.parent / "trn.json").write_text(json.dumps(RESULT), encoding="utf-8")
    return make_bill(load_scenario(p), CATALOG)


@SETTINGS
@given(st.text(max_size=300))
def test_scenario_any_text(text: str) -> None:
    _clean(_bill, text.encode("utf-8", "surrogatepass"), "s.toml", object)


@SETTINGS
@given(st.integers(min_value=0), toml_values, st.booleans())
def test_scenario_one_field_mutated(pick: int, value: Any, delete: bool) -> None:
    doc = _mutate(SCENARIO_DOC, pick, value, delete)
    _clean(_bill, tomlkit.dumps(doc).encode(), "s.toml", object)


# --- catalogs: TOML and CSV ----------------------------------------------------------------------------------------


@SETTINGS
@given(st.integers(min_value=0), toml_values, st.booleans())
def test_catalog_toml_one_field_mutated(pick: int, value: Any, delete: bool) -> None:
    doc = _mutate(CATALOG_DOC, pick, value, delete)
    _clean(load_file, tomlkit.dumps(doc).encode(), "c.toml", dict)


@SETTINGS
@given(st.lists(st.lists(st.text(max_size=12), max_size=9), max_size=5), st.booleans())
def test_catalog_csv_any_cells(rows: list[list[str]], rental: bool) -> None:
    import csv
    import io

    head = ["gpu", "price", "provider", "date"] if rental else list(CATALOG_DOC["price"][0])
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(head)
    w.writerows(rows)
    _clean(load_file, buf.getvalue().encode("utf-8", "surrogatepass"), "c.csv", dict)


@SETTINGS
@given(st.binary(max_size=200))
@example(b"\r\x00\xc2")  # a bad UTF-8 byte after the header line: once a traceback from the second read
def test_catalog_csv_any_bytes(raw: bytes) -> None:
    _clean(load_file, raw, "c.csv", dict)


# --- AWS offer files -----------------------------------------------------------------------------------------------


@SETTINGS
@given(st.integers(min_value=0), json_values, st.booleans())
def test_aws_offer_one_field_mutated(pick: int, value: Any, delete: bool) -> None:
    _clean(lambda p: list(import_aws_offer(p)), _json_bytes(_mutate(OFFER_DOC, pick, value, delete)), "o.json", list)


@SETTINGS
@given(st.binary(max_size=200))
def test_aws_offer_any_bytes(raw: bytes) -> None:
    _clean(lambda p: list(import_aws_offer(p)), raw, "o.json", list)


def test_deep_json_in_every_json_reader() -> None:
    deep = b"[" * 200_000 + b"]" * 200_000
    _clean(read_result, deep, "r.json", PilotResult)
    _clean(load_log, deep, "log.json", PortabilityLog)
    _clean(lambda p: list(import_aws_offer(p)), b'{"products": ' + deep + b"}", "o.json", list)
