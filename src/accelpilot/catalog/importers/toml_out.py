"""Write price rows as a catalog TOML file of ``[[price]]`` tables, the format ``--catalog FILE`` reads.

Prices are written as strings ("21.5000000000") so the exact Decimal survives the round trip (TOML floats
would not); dates as TOML dates. Strings are escaped by hand per the TOML spec (no writer dependency).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from accelpilot.catalog.model import PriceRow
from accelpilot.errors import InputFileError
from accelpilot.figures import Kind

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _row(row: PriceRow) -> str:
    lines = [
        "[[price]]",
        f"instance = {toml_string(row.instance)}",
        f"accelerator = {toml_string(row.accelerator)}",
        f"accelerator_count = {row.accelerator_count}",
        f"pricing = {toml_string(row.pricing.value)}",
        f"price_per_hour = {toml_string(str(row.price_per_hour))}",
        f"currency = {toml_string(row.currency)}",
    ]
    if row.region is not None:
        lines.append(f"region = {toml_string(row.region)}")
    lines += [
        f"as_of = {row.as_of.isoformat()}",
        f"source = {toml_string(row.source)}",
        f"provider = {toml_string(row.provider)}",
        f"note = {toml_string(row.note)}",
    ]
    if row.kind != Kind.LIST_PRICE:
        lines.append(f"kind = {toml_string(row.kind.value)}")
    return "\n".join(lines) + "\n"


def catalog_toml(rows: Iterable[PriceRow], header: str = "") -> str:
    """The TOML text for ``rows``; ``header`` becomes leading comment lines."""
    head = "".join(f"# {line}\n" for line in header.splitlines()) if header else ""
    body = "\n".join(_row(r) for r in rows)
    return head + ("\n" if head and body else "") + body


def write_catalog_toml(rows: Iterable[PriceRow], path: str | os.PathLike[str], header: str = "") -> Path:
    """Write ``rows`` to ``path`` as ``[[price]]`` tables; returns the path written."""
    p = Path(path)
    text = catalog_toml(rows, header or "Price rows written by accelpilot's catalog importers.")
    try:
        p.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputFileError(f"cannot write file ({exc.strerror})", file=str(p), fix="check the directory") from None
    return p
