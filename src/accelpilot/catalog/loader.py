"""Load the bundled catalog and the user's override files (TOML, CSV or an AWS offer JSON).

Later files win: a row with the same key (instance, pricing, region) replaces the earlier one and records
which row it overrode, so every override stays visible. A missing on-demand cell stays empty: nothing here
fills one from another pricing model.
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from accelpilot.catalog.model import ClaimRow, DefaultRow, InstanceRow, PriceRow, Pricing, RateRow, SpecRow
from accelpilot.errors import ConfigError, InputFileError, UnknownNameError, did_you_mean
from accelpilot.figures import Figure

try:  # tomli's compiled wheels: ~3x faster than tomllib on a 1,000-option scenario (issue 10's speed), same TOML 1.0
    import tomli as tomllib
except ImportError:  # pragma: no cover - an install without it still reads TOML, with the standard library
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        raise

BUNDLED_FILES = ("prices.toml", "hardware.toml", "claims.toml", "defaults.toml")
TABLES: dict[str, type[BaseModel]] = {
    "price": PriceRow,
    "instance": InstanceRow,
    "spec": SpecRow,
    "claim": ClaimRow,
    "default": DefaultRow,
    "rate": RateRow,
}


@dataclass
class Catalog:
    """All rows, after overrides. Pure data plus lookups; no I/O."""

    prices: list[PriceRow] = field(default_factory=list)
    instances: list[InstanceRow] = field(default_factory=list)
    specs: list[SpecRow] = field(default_factory=list)
    claims: list[ClaimRow] = field(default_factory=list)
    defaults: list[DefaultRow] = field(default_factory=list)
    rates: list[RateRow] = field(default_factory=list)  # dated exchange rates ([[rate]]), none bundled
    files: list[str] = field(default_factory=list)
    # instance (lower case) -> its price rows; built on first lookup, dropped by merge (issue 10: 1,000 options
    # each scanning 1,000 rows made billing quadratic).
    _by_instance: dict[str, list[PriceRow]] | None = field(default=None, repr=False, compare=False)
    _default_figures: dict[str, Figure] = field(default_factory=dict, repr=False, compare=False)

    def default_figure(self, key: str) -> Figure:
        """A default as a Figure, made once per catalog (a bill asks for the same few thousands of times)."""
        f = self._default_figures.get(key)
        if f is None:
            f = self._default_figures[key] = self.default(key).figure()
        return f

    def rows_for_instance(self, instance: str) -> list[PriceRow]:
        """Every price row of one instance (any pricing model, any region)."""
        if self._by_instance is None:
            index: dict[str, list[PriceRow]] = {}
            for r in self.prices:
                index.setdefault(r.instance.lower(), []).append(r)
            self._by_instance = index
        return self._by_instance.get(instance.lower(), [])

    # --- lookups ----------------------------------------------------------------------------

    def price_rows(
        self,
        accelerator: str | None = None,
        pricing: str | None = None,
        instance: str | None = None,
        region: str | None = None,
    ) -> list[PriceRow]:
        """Filter rows. ``accelerator`` matches case-insensitively by prefix (trainium -> Trainium, Trainium2)."""
        rows = self.prices
        if accelerator:
            a = accelerator.lower()
            rows = [r for r in rows if r.accelerator.lower().startswith(a)]
        if pricing:
            p = parse_pricing(pricing)
            rows = [r for r in rows if r.pricing is p]
        if instance:
            rows = [r for r in rows if r.instance.lower() == instance.lower()]
        if region:
            rows = [r for r in rows if (r.region or "").lower() == region.lower()]
        return rows

    def find_price(
        self, instance: str, pricing: str | Pricing, region: str | None = None, where: str = "", file: str | None = None
    ) -> PriceRow:
        """The one price for (instance, pricing[, region]); a clear error naming file and field when missing."""
        pre = f"{where}." if where else ""
        p = parse_pricing(pricing) if isinstance(pricing, str) else pricing
        same = self.rows_for_instance(instance)
        if not same and any(i.instance.lower() == instance.lower() for i in self.instances):
            # Known hardware (the seeds name it) without a price the seeds list: say so, never invent one.
            raise UnknownNameError(
                f"{instance} is in the catalog but has no listed price (the bundled sources list none)",
                file=file,
                field=f"{pre}instance",
                fix="add a [[price]] row with its source and date via --catalog FILE, or use a listed instance",
            )
        if not same:
            known = {r.instance for r in self.prices} | {i.instance for i in self.instances}
            raise UnknownNameError(
                f"unknown instance {instance!r}; {did_you_mean(instance, known)}", file=file, field=f"{pre}instance"
            )
        rows = [r for r in same if r.pricing is p]
        if not rows:
            have = sorted({r.pricing.value for r in same})
            raise UnknownNameError(
                f"no {p.value} price for {instance} in the catalog (it has: {', '.join(have)})",
                file=file,
                field=f"{pre}pricing",
                fix="choose a listed pricing model or add a row with --catalog FILE",
            )
        if region is not None:
            rows = [r for r in rows if (r.region or "").lower() == region.lower()]
            if not rows:
                raise UnknownNameError(
                    f"no {p.value} price for {instance} in region {region!r}",
                    file=file,
                    field=f"{pre}region",
                    fix="omit the region or add a row with --catalog FILE",
                )
        if len(rows) > 1:
            regions = ", ".join(sorted(r.region or "unnamed" for r in rows))
            raise ConfigError(
                f"{instance} {p.value} is listed in several regions ({regions})",
                file=file,
                field=f"{pre}region",
                fix="name the region in the option",
            )
        return rows[0]

    def instance(self, name: str) -> InstanceRow | None:
        for r in self.instances:
            if r.instance.lower() == name.lower():
                return r
        return None

    def spec(self, accelerator: str) -> SpecRow | None:
        for r in self.specs:
            if r.accelerator.lower() == accelerator.lower():
                return r
        return None

    def default(self, key: str) -> DefaultRow:
        for r in self.defaults:
            if r.id == key:
                return r
        raise UnknownNameError(f"no catalog default {key!r}; {did_you_mean(key, [d.id for d in self.defaults])}")

    def exchange(self, currency: str, to: str = "USD") -> RateRow | None:
        """The exchange rate from ``currency`` to ``to`` the catalog files give (a later file's wins)."""
        return next((r for r in self.rates if r.currency == currency.upper() and r.to == to.upper()), None)

    def claim(self, key: str) -> ClaimRow | None:
        return next((c for c in self.claims if c.id == key), None)

    # --- merging ----------------------------------------------------------------------------

    def merge(self, table: str, rows: Iterable[BaseModel]) -> None:
        """Add rows; a row with the key of an existing one replaces it and remembers the replaced origin."""
        target: list[Any] = getattr(self, _PLURAL[table])
        self._by_instance = None
        self._default_figures.clear()
        where = {_key(table, old): i for i, old in enumerate(target)}  # one pass, not one per row
        for row in rows:
            key = _key(table, row)
            i = where.get(key)
            if i is not None:
                if hasattr(row, "overrides"):
                    row = row.model_copy(update={"overrides": target[i].origin})
                target[i] = row
            else:
                where[key] = len(target)
                target.append(row)


_PLURAL = {
    "price": "prices",
    "instance": "instances",
    "spec": "specs",
    "claim": "claims",
    "default": "defaults",
    "rate": "rates",
}


def _key(table: str, row: Any) -> tuple[str, ...]:
    if table == "price":
        return tuple(row.key)
    if table == "instance":
        return (row.instance.lower(),)
    if table == "spec":
        return (row.accelerator.lower(),)
    if table == "rate":
        return (row.currency, row.to)
    return (row.id,)


def parse_pricing(text: str | Pricing) -> Pricing:
    if isinstance(text, Pricing):
        return text
    t = str(text).strip().lower().replace("-", "_").replace(" ", "_")
    aliases = {
        "ondemand": "on_demand",
        "od": "on_demand",
        "reserved_1yr": "reserved_1y",
        "reserved_3yr": "reserved_3y",
        "ri_1y": "reserved_1y",
        "ri_3y": "reserved_3y",
        "capacityblock": "capacity_block",
        "cb": "capacity_block",
    }
    t = aliases.get(t, t)
    try:
        return Pricing(t)
    except ValueError:
        raise ConfigError(
            f"unknown pricing model {text!r}; {did_you_mean(t, [p.value for p in Pricing])}", field="pricing"
        ) from None


# --- file readers -------------------------------------------------------------------------------


def _validation_message(exc: ValidationError) -> tuple[str, str]:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    return loc, err["msg"]


def rows_from_mapping(data: dict[str, Any], origin: str) -> dict[str, list[BaseModel]]:
    """Validate ``[[price]]``, ``[[instance]]``... tables into rows; errors name file, table, index and field."""
    out: dict[str, list[BaseModel]] = {}
    unknown = [k for k in data if k not in TABLES]
    if unknown:
        raise InputFileError(f"unknown table {unknown[0]!r}; {did_you_mean(unknown[0], list(TABLES))}", file=origin)
    for table, model in TABLES.items():
        entries = data.get(table, [])
        if not isinstance(entries, list):
            raise InputFileError(f"{table} must be an array of tables ([[{table}]])", file=origin, field=table)
        rows: list[BaseModel] = []
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict):
                raise InputFileError(f"entry {i + 1} is not a table", file=origin, field=table)
            entry = {**entry, "origin": origin}
            try:
                rows.append(model.model_validate(entry))
            except ValidationError as exc:
                loc, msg = _validation_message(exc)
                raise InputFileError(
                    f"{msg}",
                    file=origin,
                    field=f"{table}[{i + 1}].{loc}",
                    fix="see the bundled catalog files for the expected fields",
                ) from None
            except ConfigError as exc:
                raise InputFileError(exc.detail, file=origin, field=f"{table}[{i + 1}]") from None
        out[table] = rows
    return out


def read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise InputFileError("no such file", file=str(path), fix="check the path") from None
    except IsADirectoryError:
        raise InputFileError("is a directory, not a file", file=str(path)) from None
    except UnicodeDecodeError:
        raise InputFileError("not UTF-8 text", file=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputFileError(f"malformed TOML: {exc}", file=str(path), fix="check the TOML syntax") from None
    except RecursionError:
        # tomllib parses nested arrays and inline tables recursively; a hostile file thousands deep exhausts
        # the stack. No catalog or scenario nests more than three levels.
        raise InputFileError(
            "nested too deeply to be a catalog or scenario", file=str(path), fix="check the TOML syntax"
        ) from None
    except OSError as exc:
        raise InputFileError(f"cannot read file ({exc.strerror})", file=str(path)) from None


def _read_price_csv(path: Path) -> list[PriceRow]:
    """A CSV with PriceRow columns, or a rental-quote CSV (gpu, price, provider, date)."""
    # Decoded once, whole: a bad byte past the header is a one-line error here, not a traceback mid-parse.
    try:
        text = path.read_bytes().decode("utf-8-sig")
        header = next(csv.reader(io.StringIO(text, newline="")), [])
    except FileNotFoundError:
        raise InputFileError("no such file", file=str(path)) from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputFileError(f"cannot read CSV ({exc.__class__.__name__})", file=str(path)) from None
    cols = {h.strip().lower() for h in header}
    if "gpu" in cols:
        from accelpilot.catalog.importers import import_rental_csv

        return list(import_rental_csv(path))
    rows: list[PriceRow] = []
    with io.StringIO(text, newline="") as fh:
        for i, rec in enumerate(csv.DictReader(fh), start=2):
            if rec.get(None):
                # More cells than the header: a decimal comma (21,50) or an unquoted comma shifts every column.
                raise InputFileError(
                    f"line {i} has {len(header) + len(rec[None])} cells, the header {len(header)}",
                    file=str(path),
                    field=f"line {i}",
                    fix='write decimals with a point (21.50) and quote any text holding a comma ("a, b")',
                )
            clean = {
                k.strip(): (v.strip() if isinstance(v, str) else v) for k, v in rec.items() if k and v not in ("", None)
            }
            clean["origin"] = str(path)
            try:
                rows.append(PriceRow.model_validate(clean))
            except ValidationError as exc:
                loc, msg = _validation_message(exc)
                raise InputFileError(msg, file=str(path), field=f"line {i}, {loc}") from None
            except ConfigError as exc:
                raise InputFileError(exc.detail, file=str(path), field=f"line {i}") from None
    return rows


def load_file(path: Path | str) -> dict[str, list[BaseModel]]:
    """Rows from one user file, by table. TOML tables, a CSV of prices, or an AWS offer JSON."""
    path = Path(path)
    if not path.exists():
        raise InputFileError("no such file", file=str(path), field="--catalog", fix="check the path")
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return rows_from_mapping(read_toml(path), str(path))
    if suffix == ".csv":
        try:
            return {"price": list(_read_price_csv(path))}
        except csv.Error as exc:  # a cell over the csv module's 128 KiB field limit, a NUL byte
            raise InputFileError(f"malformed CSV: {exc}", file=str(path), fix="check the CSV") from None
    if suffix == ".json":
        from accelpilot.catalog.importers import import_aws_offer

        return {"price": list(import_aws_offer(path))}
    raise InputFileError(
        f"unsupported catalog file type {suffix or '(none)'!r}",
        file=str(path),
        field="--catalog",
        fix="use .toml ([[price]] tables), .csv (prices or rental quotes) or an AWS offer .json",
    )


def load_bundled() -> Catalog:
    cat = Catalog()
    pkg = resources.files("accelpilot.catalog") / "data"
    for name in BUNDLED_FILES:
        with resources.as_file(pkg / name) as p:
            rows = rows_from_mapping(read_toml(Path(p)), f"bundled:{name}")
        for table, rs in rows.items():
            cat.merge(table, [r.model_copy(update={"origin": "bundled"}) for r in rs])
        cat.files.append(f"bundled:{name}")
    return cat


def load_catalog(extra: Sequence[Path | str] = ()) -> Catalog:
    """The bundled catalog with the user's files applied in order (later files win)."""
    cat = load_bundled()
    for f in extra:
        for table, rows in load_file(f).items():
            cat.merge(table, rows)
        cat.files.append(str(f))
    return cat
