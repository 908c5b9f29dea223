"""Import accelerator prices from an AWS Price List bulk offer file for AmazonEC2 (JSON), streaming it.

Real offer files are hundreds of MB (the all-region file several GB), so the file is never loaded whole.
It is read with ijson (C backend when installed) in up to four streaming passes over the file:

1. the header (formatVersion, offerCode, publicationDate); real files put it first, so this pass stops
   after a few hundred bytes; a key written after ``products``/``terms`` is found by a C-speed scan;
2. ``products``: one product at a time; only the products that pass the filters are kept, as small tuples
   (the *filtered product map*: a few hundred entries for a real file, whatever its size);
3. ``terms.OnDemand`` and 4. ``terms.Reserved``: one SKU's terms at a time, looked up in the filtered map.

Peak memory is therefore the filtered product map plus one product or one SKU's terms, independent of the
file size; the order of ``products`` and ``terms`` in the file does not matter. Pass 2 always parses the
whole file, so a truncated or malformed file is an error even when no product matches the filters.

What is kept (documented choices):

* products: productFamily "Compute Instance" (or its bare-metal variant), operatingSystem Linux, tenancy
  Shared, capacitystatus Used (not AllocatedCapacityReservation / UnusedCapacityReservation), preInstalledSw
  NA, marketoption OnDemand (files published before the attribute existed have none: read as OnDemand).
  Capacity Block SKUs (marketoption CapacityBlock, listed under OnDemand terms at 0.00) are dropped.
* rates: price dimensions with unit "Hrs" and a USD price above zero; a 0.00 rate is dropped, never a price.
* OnDemand terms -> ``Pricing.ON_DEMAND``; Reserved terms with OfferingClass "standard", PurchaseOption
  "No Upfront" and LeaseContractLength "1yr"/"3yr" -> ``RESERVED_1Y``/``RESERVED_3Y``. Convertible,
  Partial Upfront and All Upfront terms are skipped (their hourly rate omits the upfront fee).
* accelerator: the catalog's InstanceRow data wins (name and physical count); otherwise the instance family
  (trn2 -> Trainium2, p5 -> H100, ...) with the count from the ``gpu`` attribute or the Neuron table below.
  Instances without an accelerator are dropped unless ``keep_non_accelerator`` (then accelerator "none",
  count 1, and a note saying so).
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import IO, Any, TypeVar

from pydantic import ValidationError

from accelpilot.catalog.model import InstanceRow, PriceRow, Pricing
from accelpilot.errors import InputFileError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

T = TypeVar("T")

# Instance family (the part of instanceType before the dot) -> catalog accelerator name.
FAMILY_ACCELERATOR: dict[str, str] = {
    "trn1": "Trainium",
    "trn1n": "Trainium",
    "trn2": "Trainium2",
    "trn2u": "Trainium2",
    "trn3": "Trainium3",
    "inf1": "Inferentia",
    "inf2": "Inferentia2",
    "p6-b300": "B300",
    "p6-b200": "B200",
    "p6e-gb200": "GB200",
    "p5": "H100",
    "p5e": "H200",
    "p5en": "H200",
    "p4d": "A100",
    "p4de": "A100",
    "p3": "V100",
    "p3dn": "V100",
    "p2": "K80",
    "g6": "L4",
    "gr6": "L4",
    "g6e": "L40S",
    "g5": "A10G",
    "g5g": "T4G",
    "g4dn": "T4",
    "g4ad": "Radeon Pro V520",
    "g3": "M60",
    "g3s": "M60",
    "dl1": "Gaudi",
}

# Physical Neuron device counts (AWS Neuron docs, neuron-hardware, 2026-08 snapshot; AWS Trn/Inf pages):
# the offer file's ``gpu`` attribute does not describe Neuron devices, so these fill in when the catalog's
# InstanceRow data does not name the instance.
NEURON_COUNTS: dict[str, int] = {
    "trn1.2xlarge": 1,
    "trn1.32xlarge": 16,
    "trn1n.32xlarge": 16,
    "trn2.3xlarge": 1,
    "trn2.48xlarge": 16,
    "trn2u.48xlarge": 16,
    "inf1.xlarge": 1,
    "inf1.2xlarge": 1,
    "inf1.6xlarge": 4,
    "inf1.24xlarge": 16,
    "inf2.xlarge": 1,
    "inf2.8xlarge": 1,
    "inf2.24xlarge": 6,
    "inf2.48xlarge": 12,
}

ACCELERATOR_FAMILIES = {"GPU instance", "Machine Learning ASIC Instances"}
COMPUTE_FAMILIES = {"Compute Instance", "Compute Instance (bare metal)"}
PRODUCT_FILTER = {
    "operatingSystem": "Linux",
    "tenancy": "Shared",
    "capacitystatus": "Used",
    "preInstalledSw": "NA",
}
HEADER_KEYS = ("formatVersion", "offerCode", "publicationDate")
RESERVED_TERMS = {"1yr": Pricing.RESERVED_1Y, "3yr": Pricing.RESERVED_3Y}


@dataclass
class AwsImportReport:
    """What the importer saw and dropped, for the user who wonders why a row is missing."""

    publication_date: str = ""
    products_seen: int = 0
    products_kept: int = 0
    capacity_block_skus: int = 0
    zero_rates_dropped: int = 0
    terms_seen: int = 0
    duplicates: int = 0
    no_accelerator: int = 0
    unknown_accelerator: dict[str, str] = field(default_factory=dict)  # instance -> why it was skipped
    passes: int = 0


@dataclass(frozen=True)
class _Product:
    instance: str
    region: str | None
    accelerator: str
    count: int
    note: str


class _NotOffer(Exception):
    """The JSON is well formed so far but is not an offer file."""


def _engine() -> Any:
    """ijson with its fastest backend (yajl2_c when the wheel ships it)."""
    try:
        import ijson  # type: ignore[import-untyped]
    except ImportError as exc:  # pragma: no cover - ijson is a declared dependency
        raise InputFileError("reading an AWS offer file needs the ijson package", fix="pip install ijson") from exc
    for name in ("yajl2_c", "yajl2_cffi", "yajl2"):
        try:
            return ijson.get_backend(name)
        except Exception:
            continue
    return ijson


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0].strip() if text else exc.__class__.__name__


def _scan(path: Path, size: int, work: Callable[[IO[bytes]], T]) -> T:
    """Run one streaming pass; JSON errors become one clear InputFileError naming the file and byte."""
    from ijson.common import JSONError  # type: ignore[import-untyped]

    fh = path.open("rb")
    try:
        return work(fh)
    except _NotOffer as exc:
        raise InputFileError(
            f"not an AWS Price List offer file ({exc})",
            file=str(path),
            fix="pass the AmazonEC2 bulk offer file (a JSON object with products and terms)",
        ) from None
    except (JSONError, UnicodeDecodeError, InvalidOperation, RecursionError) as exc:
        try:
            pos = fh.tell()
        except (OSError, ValueError):
            pos = size
        where = "the file ends there" if pos >= size else "within the 64 KiB read that ends there"
        raise InputFileError(
            f"truncated or malformed JSON at byte {pos} ({where}): {_first_line(exc)}",
            file=str(path),
            fix="download the offer file again; it must be complete JSON",
        ) from None
    finally:
        fh.close()


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _date(text: Any, path: Path) -> dt.date:
    m = re.match(r"^\s*(\d{4}-\d{2}-\d{2})", text) if isinstance(text, str) else None
    try:
        if m:
            return dt.date.fromisoformat(m.group(1))
    except ValueError:
        pass
    raise InputFileError(
        f"publicationDate {text!r} is not a date",
        file=str(path),
        field="publicationDate",
        fix="use an unmodified AWS Price List offer file",
    )


def _bundled_instances() -> list[InstanceRow]:
    """The bundled [[instance]] rows (hardware.toml), read directly so this module needs no loader."""
    try:
        from importlib import resources

        data = (resources.files("accelpilot.catalog") / "data" / "hardware.toml").read_bytes()
        rows = tomllib.loads(data.decode("utf-8")).get("instance", [])
        return [InstanceRow.model_validate(r) for r in rows if isinstance(r, dict)]
    except Exception:  # bundled data missing or mid-edit: the built-in tables still apply
        return []


def _count_attr(attrs: Mapping[str, Any]) -> int | None:
    raw = _str(attrs.get("gpu")).strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else None


class _Filter:
    def __init__(
        self,
        regions: Sequence[str] | None,
        prefixes: Sequence[str] | None,
        known: Mapping[str, InstanceRow],
        keep_non_accelerator: bool,
        report: AwsImportReport,
    ) -> None:
        self.regions = {r.strip().lower() for r in regions} if regions else None
        self.prefixes = tuple(p.strip().lower() for p in prefixes) if prefixes else None
        self.known = known
        self.keep_non_accelerator = keep_non_accelerator
        self.report = report

    def product(self, product: Any) -> _Product | None:
        """The filtered product, or None when it is not a kept Linux, shared-tenancy, on-demand instance."""
        if not isinstance(product, dict):
            return None
        attrs = product.get("attributes")
        if not isinstance(attrs, dict) or _str(product.get("productFamily")) not in COMPUTE_FAMILIES:
            return None
        instance = _str(attrs.get("instanceType")).strip()
        if not instance or any(_str(attrs.get(k)) != v for k, v in PRODUCT_FILTER.items()):
            return None
        market = attrs.get("marketoption", "OnDemand")
        if market != "OnDemand":
            if market == "CapacityBlock":
                self.report.capacity_block_skus += 1
            return None
        region = _str(attrs.get("regionCode")).strip() or None
        if self.regions is not None and (region or "").lower() not in self.regions:
            return None
        if self.prefixes is not None and not instance.lower().startswith(self.prefixes):
            return None
        return self._accelerator(instance, region, attrs)

    def _accelerator(self, instance: str, region: str | None, attrs: Mapping[str, Any]) -> _Product | None:
        family = instance.split(".", 1)[0].lower()
        attr_count = _count_attr(attrs)
        known = self.known.get(instance.lower())
        if known is not None:
            note = ""
            if attr_count is not None and attr_count != known.accelerator_count:
                note = f"count from the catalog's instance data; the offer file says gpu={attr_count}"
            return _Product(instance, region, known.accelerator, known.accelerator_count, note)
        name = FAMILY_ACCELERATOR.get(family)
        if name is not None:
            count = NEURON_COUNTS.get(instance.lower()) or attr_count
            if count is None:
                self.report.unknown_accelerator[instance] = f"{name} instance with no accelerator count"
                return None
            return _Product(instance, region, name, count, "")
        if _str(attrs.get("instanceFamily")) in ACCELERATOR_FAMILIES or attr_count is not None:
            self.report.unknown_accelerator[instance] = (
                f"accelerator model not known for family {family!r} ({_str(attrs.get('instanceFamily'))})"
            )
            return None
        self.report.no_accelerator += 1
        if not self.keep_non_accelerator:
            return None
        return _Product(instance, region, "none", 1, "no accelerator: count 1, per-accelerator-hour = instance price")


def _hourly_rates(term: Any) -> list[tuple[str, Decimal]]:
    """(rateCode, USD per hour) for each hourly price dimension of one term; malformed prices are errors."""
    if not isinstance(term, dict) or not isinstance(term.get("priceDimensions"), dict):
        return []
    out = []
    for code, dim in term["priceDimensions"].items():
        if not isinstance(dim, dict) or _str(dim.get("unit")).strip().lower() not in ("hrs", "hours", "hr"):
            continue
        ppu = dim.get("pricePerUnit")
        raw = ppu.get("USD") if isinstance(ppu, dict) else None
        if raw is None:
            continue
        try:
            price = Decimal(str(raw).strip())
        except InvalidOperation:
            price = Decimal("NaN")
        if not price.is_finite() or price < 0:
            raise ValueError(f"rate {code}: pricePerUnit.USD {raw!r} is not a price")
        out.append((str(code), price))
    return out


def _reserved_pricing(term: Any) -> Pricing | None:
    attrs = term.get("termAttributes") if isinstance(term, dict) else None
    if not isinstance(attrs, dict):
        return None
    if _str(attrs.get("PurchaseOption")) != "No Upfront" or _str(attrs.get("OfferingClass")) != "standard":
        return None
    return RESERVED_TERMS.get(_str(attrs.get("LeaseContractLength")))


def import_aws_offer(
    path: str | os.PathLike[str],
    regions: Sequence[str] | None = None,
    instance_prefixes: Sequence[str] | None = None,
    *,
    instances: Iterable[InstanceRow] | None = None,
    keep_non_accelerator: bool = False,
    report: AwsImportReport | None = None,
) -> list[PriceRow]:
    """Accelerator instance prices from an AmazonEC2 offer file: on-demand, reserved 1y/3y No Upfront.

    ``regions`` (regionCodes) and ``instance_prefixes`` ("trn", "p5.") narrow the import; ``instances``
    replaces the bundled InstanceRow data used for accelerator names and counts; ``report`` is filled in
    with what was seen and dropped. Raises InputFileError for a missing, truncated or non-offer file.
    """
    p = Path(path)
    rep = report if report is not None else AwsImportReport()
    if not p.exists():
        raise InputFileError("no such file", file=str(p), fix="check the path to the AWS offer file")
    if not p.is_file():
        raise InputFileError("is not a regular file", file=str(p))
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise InputFileError(f"cannot read file ({exc.strerror})", file=str(p)) from None
    if size == 0:
        raise InputFileError(
            "the file is empty: not an AWS Price List offer file", file=str(p), fix="pass the AmazonEC2 bulk offer file"
        )
    _check_depth(p)
    ijson = _engine()
    known = {r.instance.lower(): r for r in (instances if instances is not None else _bundled_instances())}
    filt = _Filter(regions, instance_prefixes, known, keep_non_accelerator, rep)

    header = _scan(p, size, lambda fh: _header(ijson, fh))
    rep.passes += 1
    for key in HEADER_KEYS:
        if key not in header:  # written after products/terms: a C-speed scan for that one top-level key
            header.update(_scan(p, size, functools.partial(_late_key, ijson, key=key)))
            rep.passes += 1
    offer = header.get("offerCode")
    if offer is None or "formatVersion" not in header:
        raise InputFileError(
            "not an AWS Price List offer file (no formatVersion/offerCode at the top level)",
            file=str(p),
            fix="pass the AmazonEC2 bulk offer file (offers/v1.0/aws/AmazonEC2/current/.../index.json)",
        )
    if offer != "AmazonEC2":
        raise InputFileError(
            f"offerCode is {offer!r}, not 'AmazonEC2'",
            file=str(p),
            field="offerCode",
            fix="pass the AmazonEC2 offer file",
        )
    published = _str(header.get("publicationDate"))
    as_of = _date(header.get("publicationDate"), p)
    rep.publication_date = published

    def products_pass(fh: IO[bytes]) -> dict[str, _Product]:
        kept: dict[str, _Product] = {}
        for sku, product in ijson.kvitems(fh, "products", use_float=False):
            rep.products_seen += 1
            prod = filt.product(product)
            if prod is not None:
                kept[str(sku)] = prod
        return kept

    kept = _scan(p, size, products_pass)
    rep.passes += 1
    rep.products_kept = len(kept)
    if rep.products_seen == 0:
        raise InputFileError(
            "the offer file lists no products",
            file=str(p),
            field="products",
            fix="pass a complete AmazonEC2 offer file",
        )
    if not kept:
        return []

    source = f"AWS Price List API offer file AmazonEC2, {published}, {p.name}"
    found: dict[tuple[str, str, str], list[PriceRow]] = {}
    skus_with_terms: set[str] = set()

    def add(sku: str, pricing: Pricing, code: str, rate: str, price: Decimal, extra: str) -> None:
        prod = kept[sku]
        if price == 0:
            rep.zero_rates_dropped += 1
            return
        note = "; ".join(x for x in (f"SKU {sku}, rate {rate}", extra, prod.note) if x)
        try:
            row = PriceRow(
                instance=prod.instance,
                accelerator=prod.accelerator,
                accelerator_count=prod.count,
                pricing=pricing,
                price_per_hour=price,
                region=prod.region,
                as_of=as_of,
                source=source,
                note=note,
                origin=str(p),
            )
        except ValidationError as exc:
            raise InputFileError(
                f"SKU {sku}: {exc.errors()[0].get('msg', 'invalid row')}", file=str(p), field=f"terms.{code}"
            ) from None
        found.setdefault(row.key, []).append(row)

    def terms_pass(section: str) -> Callable[[IO[bytes]], None]:
        def work(fh: IO[bytes]) -> None:
            for sku, terms in ijson.kvitems(fh, f"terms.{section}", use_float=False):
                rep.terms_seen += 1
                sku = str(sku)
                if sku not in kept or not isinstance(terms, dict):
                    continue
                skus_with_terms.add(sku)
                for code, term in terms.items():
                    if section == "OnDemand":
                        pricing: Pricing | None = Pricing.ON_DEMAND
                        extra = ""
                    else:
                        pricing = _reserved_pricing(term)
                        extra = (
                            f"standard {term['termAttributes']['LeaseContractLength']} No Upfront" if pricing else ""
                        )
                    if pricing is None:
                        continue
                    try:
                        rates = _hourly_rates(term)
                    except ValueError as exc:
                        raise InputFileError(f"SKU {sku}: {exc}", file=str(p), field=f"terms.{section}") from None
                    for rate, price in rates:
                        add(sku, pricing, str(code), rate, price, extra)

        return work

    for section in ("OnDemand", "Reserved"):
        _scan(p, size, terms_pass(section))
        rep.passes += 1
    if not skus_with_terms:
        raise InputFileError(
            f"no terms.OnDemand or terms.Reserved entries for the {len(kept)} matching products",
            file=str(p),
            field="terms",
            fix="pass a complete AmazonEC2 offer file",
        )
    rows: list[PriceRow] = []
    for group in found.values():
        best = min(group, key=lambda r: r.price_per_hour)
        if len(group) > 1:
            rep.duplicates += len(group) - 1
            best = best.model_copy(update={"note": f"{best.note}; lowest of {len(group)} matching SKUs"})
        rows.append(best)
    rows.sort(key=lambda r: (r.instance, r.region or "", r.pricing.value))
    return rows


MAX_DEPTH = 512  # an offer file nests about 7 levels; ijson keeps one prefix string per level


def _check_depth(path: Path, chunk: int = 1 << 15) -> None:
    """Refuse absurd nesting before ijson sees it: its prefixes grow with depth, so a 200,000-deep array takes
    O(depth squared) memory (the process was killed). Brackets are counted with numpy at memory speed; those
    inside strings count too, which can only over-count, and no real offer file comes near the limit.
    """
    import numpy as np

    step = np.zeros(256, dtype=np.int8)
    step[[ord("["), ord("{")]] = 1
    step[[ord("]"), ord("}")]] = -1
    depth = 0
    offset = 0
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            levels = np.cumsum(step[np.frombuffer(block, dtype=np.uint8)], dtype=np.int32)
            if depth + int(levels.max()) > MAX_DEPTH:
                at = offset + int(np.argmax(levels > MAX_DEPTH - depth))
                raise InputFileError(
                    f"nested more than {MAX_DEPTH} levels deep (at byte {at}): not an AWS Price List offer file",
                    file=str(path),
                    fix="pass the AmazonEC2 bulk offer file",
                )
            depth += int(levels[-1])
            offset += len(block)


def _header(ijson: Any, fh: IO[bytes]) -> dict[str, Any]:
    """Top-level scalars before the first big section; checks the top level is an object."""
    events = ijson.parse(fh, use_float=False)
    first = next(events, None)
    if first is None:
        raise _NotOffer("the file is empty")
    if first[1] != "start_map":
        raise _NotOffer("the top level is not a JSON object")
    header: dict[str, Any] = {}
    for prefix, event, value in events:
        if prefix == "" and event == "map_key" and value in ("products", "terms"):
            break
        if prefix in HEADER_KEYS and event in ("string", "number"):
            header[prefix] = value
    return header


def _late_key(ijson: Any, fh: IO[bytes], *, key: str) -> dict[str, Any]:
    for value in ijson.items(fh, key, use_float=False):
        if isinstance(value, (str, Decimal, int)):
            return {key: value}
    return {}
