"""Import GPU rental quotes from a CSV: one price per GPU-hour per provider, with its date.

Required columns (header names are matched case-insensitively, ignoring spaces and punctuation):
gpu, a price column ("price", "price_per_gpu_hour", "Price per GPU-hour", "USD/GPU-hr", ...), provider and
date (ISO YYYY-MM-DD). Optional: currency (default USD), providers_in_stock, region, source.
Every bad cell is an InputFileError naming the file, the line and the column.
"""

from __future__ import annotations

import csv
import datetime as dt
import os
import re
from decimal import Decimal, InvalidOperation
from pathlib import Path

from pydantic import ValidationError

from accelpilot.catalog.model import PriceRow, Pricing
from accelpilot.errors import InputFileError

# canonical column -> accepted normalised header names ("Price per GPU-hour" -> "price_per_gpu_hour")
ALIASES: dict[str, tuple[str, ...]] = {
    "gpu": ("gpu", "gpu_model", "gpu_type", "accelerator", "model"),
    "provider": ("provider", "vendor", "cloud", "provider_name"),
    "date": ("date", "as_of", "quote_date", "date_quoted", "quoted", "quoted_on"),
    "currency": ("currency", "ccy"),
    "providers_in_stock": ("providers_in_stock", "in_stock", "providers", "n_providers", "providers_in_stock_count"),
    "region": ("region", "location"),
    "source": ("source", "url", "source_url"),
}
REQUIRED = ("gpu", "price", "provider", "date")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _norm(header: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", header.strip().lower()).strip("_")


def _is_price(name: str) -> bool:
    """Any header that names a price (or a USD per GPU-hour rate) is the price column."""
    return "price" in name or name in ("usd_gpu_hr", "usd_per_gpu_hour", "usd_gpu_hour", "rate", "cost_per_gpu_hour")


def _columns(header: list[str], file: str) -> dict[str, int]:
    cols: dict[str, int] = {}
    for i, raw in enumerate(header):
        name = _norm(raw)
        canon = "price" if _is_price(name) else next((c for c, names in ALIASES.items() if name in names), None)
        if canon is None:
            continue
        if canon in cols:
            raise InputFileError(
                f"two columns mean {canon!r}: {header[cols[canon]]!r} and {raw!r}",
                file=file,
                field=f"line 1, column {raw!r}",
                fix="keep one of them",
            )
        cols[canon] = i
    missing = [c for c in REQUIRED if c not in cols]
    if missing:
        shown = ", ".join(repr(h) for h in header[:12]) or "(none)"
        raise InputFileError(
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}; the header has {shown}",
            file=file,
            field="line 1",
            fix="a rental CSV needs the columns gpu, price (per GPU-hour), provider, date",
        )
    return cols


def _text(value: str, what: str, file: str, line: int) -> str:
    v = value.strip()
    if not v:
        raise InputFileError(f"{what} is empty", file=file, field=f"line {line}, column {what!r}")
    if _CONTROL.search(v):
        raise InputFileError(f"{what} contains control characters", file=file, field=f"line {line}, column {what!r}")
    return v


def _price(value: str, file: str, line: int, column: str) -> Decimal:
    where = f"line {line}, column {column!r}"
    raw = value.strip().lstrip("$").replace(",", "").strip()
    try:
        price = Decimal(raw)
    except InvalidOperation:
        raise InputFileError(
            f"price {value.strip()!r} is not a number",
            file=file,
            field=where,
            fix="write the price per GPU-hour as a plain number, e.g. 2.50",
        ) from None
    if not price.is_finite():
        raise InputFileError(
            f"price {value.strip()!r} is not a finite number",
            file=file,
            field=where,
            fix="write the price per GPU-hour as a plain number, e.g. 2.50",
        )
    if price <= 0:
        raise InputFileError(
            f"price {value.strip()!r} must be greater than 0",
            file=file,
            field=where,
            fix="a rental price per GPU-hour is positive",
        )
    return price


def _date(value: str, file: str, line: int, column: str) -> dt.date:
    v = value.strip()
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
            return dt.date.fromisoformat(v)
    except ValueError:
        pass
    raise InputFileError(
        f"date {v!r} is not a valid YYYY-MM-DD date",
        file=file,
        field=f"line {line}, column {column!r}",
        fix="write the quote date as e.g. 2026-09-28",
    )


def import_rental_csv(path: str | os.PathLike[str]) -> list[PriceRow]:
    """Rental quotes as PriceRow(instance="<gpu>@<provider>", count 1, pricing rental), one per CSV row."""
    p = Path(path)
    file = str(p)
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise InputFileError("no such file", file=file, fix="check the path to the rental CSV") from None
    except IsADirectoryError:
        raise InputFileError("is a directory, not a file", file=file) from None
    except UnicodeDecodeError as exc:
        raise InputFileError(
            f"not UTF-8 text (bad byte at offset {exc.start})", file=file, fix="save the CSV as UTF-8"
        ) from None
    except OSError as exc:
        raise InputFileError(f"cannot read file ({exc.strerror})", file=file) from None
    if "\x00" in text:
        raise InputFileError("contains NUL bytes: not a text CSV", file=file, fix="save the CSV as UTF-8 text")

    reader = csv.reader(text.splitlines(keepends=True))
    rows: list[PriceRow] = []
    seen: dict[tuple[str, str, str], int] = {}
    try:
        header = next(reader, None)
        if header is None or not any(h.strip() for h in header):
            raise InputFileError(
                "is empty (no header row)",
                file=file,
                field="line 1",
                fix="a rental CSV starts with the header gpu,price,provider,date",
            )
        cols = _columns(header, file)
        names = {c: header[i].strip() for c, i in cols.items()}
        for cells in reader:
            line = reader.line_num
            if not any(c.strip() for c in cells):
                continue
            if len(cells) > len(header):
                raise InputFileError(
                    f"{len(cells)} cells, but the header has {len(header)}",
                    file=file,
                    field=f"line {line}",
                    fix="quote cells that contain commas",
                )

            def cell(name: str, cells: list[str] = cells) -> str:
                i = cols.get(name)
                return cells[i] if i is not None and i < len(cells) else ""

            gpu = _text(cell("gpu"), names["gpu"], file, line)
            provider = _text(cell("provider"), names["provider"], file, line)
            price = _price(cell("price"), file, line, names["price"])
            as_of = _date(cell("date"), file, line, names["date"])
            currency = cell("currency").strip().upper() or "USD"
            if not re.fullmatch(r"[A-Z]{3}", currency):
                raise InputFileError(
                    f"currency {currency!r} is not a 3-letter code",
                    file=file,
                    field=f"line {line}, column {names['currency']!r}",
                    fix="e.g. USD",
                )
            notes = []
            stock = cell("providers_in_stock").strip()
            if stock:
                if not stock.isdigit():
                    raise InputFileError(
                        f"providers_in_stock {stock!r} is not a whole number",
                        file=file,
                        field=f"line {line}, column {names['providers_in_stock']!r}",
                    )
                notes.append(f"{int(stock)} providers in stock")
            region = cell("region").strip() or None
            if region is not None:
                region = _text(region, names["region"], file, line)
            source = cell("source").strip()
            if source:
                source = _text(source, names["source"], file, line)
            notes.append(f"quote from line {line}")
            instance = f"{gpu}@{provider}"
            try:
                row = PriceRow(
                    instance=instance,
                    accelerator=gpu,
                    accelerator_count=1,
                    pricing=Pricing.RENTAL,
                    price_per_hour=price,
                    currency=currency,
                    region=region,
                    as_of=as_of,
                    source=source or f"rental quote CSV {p.name}",
                    provider=provider,
                    note="; ".join(notes),
                    origin=file,
                )
            except ValidationError as exc:
                err = exc.errors()[0]
                raise InputFileError(
                    str(err.get("msg", "invalid row")),
                    file=file,
                    field=f"line {line}, {'.'.join(str(x) for x in err.get('loc', ()))}",
                ) from None
            if row.key in seen:
                raise InputFileError(
                    f"a second quote for {instance} (the first is on line {seen[row.key]})",
                    file=file,
                    field=f"line {line}",
                    fix="keep one quote per GPU and provider",
                )
            seen[row.key] = line
            rows.append(row)
    except csv.Error as exc:
        raise InputFileError(f"malformed CSV: {exc}", file=file, field=f"line {reader.line_num}") from None
    if not rows:
        raise InputFileError("has a header but no quotes", file=file, fix="add rows: gpu,price,provider,date")
    return rows
