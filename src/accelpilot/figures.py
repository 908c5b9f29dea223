"""Figure: every number that enters a bill or a report, with its passport.

A figure carries value, unit (currency codes are units too: ``USD/h``), and provenance:
kind, source, as_of, region. Arithmetic between figures yields a ``derived`` figure that
keeps its inputs, so a report can always answer "where does this number come from?".
Vendor claims can be stored and shown, but any arithmetic on one raises VendorClaimError.
Money is Decimal so that a cent reproduces; sweeps use floats elsewhere.

``FigureRef`` is the one projection of a Figure for JSON and display (bill JSON, gate evidence, report):
the number as a float, its passport, and the leaves a derived figure rests on.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from accelpilot.errors import ConfigError, UnitMismatchError, VendorClaimError

CURRENCIES = frozenset({"USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "INR", "CNY", "SEK"})


class Kind(str, Enum):
    """Where a number comes from. ``list_price`` covers any vendor-listed figure: a price or a datasheet spec."""

    MEASURED = "measured"
    LIST_PRICE = "list_price"
    DERIVED = "derived"
    ASSUMPTION = "assumption"
    VENDOR_CLAIM = "vendor_claim"
    # a pilot figure from a result whose .sha256 is missing or does not match (``collect --accept-unverified``)
    UNVERIFIED = "unverified"


# --- units -------------------------------------------------------------------------------------
# A unit is a product of named symbols with integer exponents: "USD/h" = {USD: 1, h: -1}.
# Only this algebra is needed: multiplication, division, equality for addition.

Unit = dict[str, int]


def parse_unit(text: str) -> Unit:
    """Parse ``a*b/c/d`` (or ``a.b/c``) into exponents; ``""`` and ``"1"`` are dimensionless."""
    return dict(_parse_unit_cached(text or ""))


@functools.lru_cache(maxsize=4096)
def _parse_unit_cached(text: str) -> tuple[tuple[str, int], ...]:
    """Units repeat endlessly in a bill (``USD/h``, ``h``): parse each spelling once (issue 10's speed)."""
    return tuple(_parse_unit(text).items())


def _parse_unit(text: str) -> Unit:
    text = (text or "").strip()
    if text in ("", "1"):
        return {}
    out: Unit = {}
    num, *dens = text.split("/")
    for sign, chunk in [(1, num)] + [(-1, d) for d in dens]:
        for sym in chunk.replace(".", "*").split("*"):
            sym = sym.strip()
            if not sym or sym == "1":
                continue
            power = 1
            if "^" in sym:
                sym, p = sym.split("^", 1)
                try:
                    power = int(p)
                except ValueError as exc:
                    raise ConfigError(f"bad exponent in unit {text!r}") from exc
            out[sym] = out.get(sym, 0) + sign * power
    return {k: v for k, v in out.items() if v}


def format_unit(unit: Unit) -> str:
    """Inverse of parse_unit, currencies first so money reads naturally (``USD/h``)."""

    def key(s: str) -> tuple[int, str]:
        return (0 if s in CURRENCIES else 1, s)

    num = [s if unit[s] == 1 else f"{s}^{unit[s]}" for s in sorted(unit, key=key) if unit[s] > 0]
    den = [s if unit[s] == -1 else f"{s}^{-unit[s]}" for s in sorted(unit, key=key) if unit[s] < 0]
    head = "*".join(num) if num else "1"
    if not den:
        return "" if head == "1" else head
    return head + "/" + "/".join(den)


def _combine(a: Unit, b: Unit, sign: int) -> Unit:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + sign * v
    return {k: v for k, v in out.items() if v}


@functools.lru_cache(maxsize=4096)
def normalise_unit(text: str) -> str:
    return format_unit(parse_unit(text))


@functools.lru_cache(maxsize=4096)
def _unit_product(a: str, b: str, sign: int) -> str:
    """The normal spelling of ``a * b`` (sign 1) or ``a / b`` (sign -1): a bill repeats the same few products."""
    return format_unit(_combine(parse_unit(a), parse_unit(b), sign))


@functools.lru_cache(maxsize=4096)
def currency_of(unit: str) -> str | None:
    """The currency of a money unit: the currency symbol with a positive exponent, if any."""
    syms = [s for s, p in parse_unit(unit).items() if s in CURRENCIES and p > 0]
    if len(syms) > 1:
        raise UnitMismatchError(f"unit {unit!r} mixes currencies {syms}", fix="convert to one currency first")
    return syms[0] if syms else None


# --- values ------------------------------------------------------------------------------------


def to_decimal(value: Any, what: str = "value") -> Decimal:
    """Exact Decimal from an int/str/float/Decimal; NaN and infinities are refused."""
    if isinstance(value, bool):
        raise ConfigError(f"{what} must be a number, not a boolean")
    if isinstance(value, Decimal):
        d = value
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ConfigError(f"{what} must be a finite number, got {value}")
        d = Decimal(repr(value))
    elif isinstance(value, (int, str)):
        try:
            d = Decimal(str(value).strip().replace(",", "").replace("_", ""))
        except InvalidOperation as exc:
            raise ConfigError(f"{what} must be a number, got {value!r}") from exc
    else:
        raise ConfigError(f"{what} must be a number, got {type(value).__name__}")
    if not d.is_finite():
        raise ConfigError(f"{what} must be a finite number, got {value}")
    return d


_QUANTA = {places: Decimal(1).scaleb(-places) for places in range(9)}  # money() rounds tens of thousands a bill


def money(value: Decimal, places: int = 2) -> Decimal:
    """Round half-up to cents (or ``places``), the way an invoice does."""
    try:
        return value.quantize(_QUANTA.get(places) or Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    except InvalidOperation:
        # More digits than the decimal context holds: the inputs multiplied to an absurd amount.
        raise ConfigError(
            f"an amount of about {value:.3e} is too large to compute to the cent",
            fix="check the hours, volumes and prices for a misplaced exponent",
        ) from None


class Figure(BaseModel):
    """A number with a unit and a passport. Immutable; arithmetic returns derived figures."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    value: Decimal
    unit: str = ""
    kind: Kind
    source: str = ""
    as_of: dt.date | None = None
    region: str | None = None
    label: str = ""
    inputs: tuple[Figure, ...] = ()
    note: str = ""

    @field_validator("value", mode="before")
    @classmethod
    def _value(cls, v: Any) -> Decimal:
        return to_decimal(v)

    @field_validator("unit", mode="before")
    @classmethod
    def _unit(cls, v: Any) -> str:
        text = normalise_unit(str(v or ""))
        # Checked here, not in a model validator: pydantic runs an "after" model validator again for every
        # Figure placed in another model (each option, line item, comparison), and a figure's unit never changes.
        currency_of(text)  # raises on mixed currencies
        return text

    @field_serializer("value")
    def _ser_value(self, v: Decimal) -> float | int:
        return int(v) if v == v.to_integral_value() and abs(v) < 2**53 else float(v)

    # --- passport --------------------------------------------------------------------------

    @property
    def currency(self) -> str | None:
        return currency_of(self.unit)

    @property
    def is_money(self) -> bool:
        return self.currency is not None

    def __float__(self) -> float:
        self._usable("float()")
        return float(self.value)

    def leaves(self) -> list[Figure]:
        """The non-derived figures this one rests on, depth first, without duplicates."""
        if not self.inputs:
            return [self]
        # One walk with a hashable key per leaf (a leaf has no inputs, so its fields are its identity):
        # comparing every pair of pydantic models was the bill's hot spot at catalog scale (issue 10).
        seen: dict[tuple[Any, ...], Figure] = {}
        stack = list(reversed(self.inputs))
        while stack:
            f = stack.pop()
            if f.inputs:
                stack.extend(reversed(f.inputs))
                continue
            key = (f.value, f.unit, f.kind, f.source, f.as_of, f.region, f.label, f.note)
            seen.setdefault(key, f)
        return list(seen.values())

    def with_label(self, label: str, note: str = "") -> Figure:
        return _trusted({**self.__dict__, "label": label, "note": note or self.note})

    # --- arithmetic: the one place numbers are combined -------------------------------------

    def _usable(self, op: str) -> None:
        if self.kind is Kind.VENDOR_CLAIM:
            name = self.label or self.source or "a vendor claim"
            raise VendorClaimError(
                f"{name} is a vendor claim and cannot be used in {op}",
                fix="use a measured figure or state an assumption instead",
            )

    @staticmethod
    def _lift(other: Figure | int | Decimal) -> Figure:
        if isinstance(other, Figure):
            return other
        if isinstance(other, (int, Decimal)) and not isinstance(other, bool):
            return Figure(value=Decimal(other), unit="", kind=Kind.DERIVED, label="constant")
        raise TypeError(f"cannot combine a Figure with {type(other).__name__}")

    def _derive(self, other: Figure, value: Decimal, unit: str, op: str) -> Figure:
        """The derived figure ``self op other`` (``unit`` already normal: ``self.unit`` or ``_unit_product``'s)."""
        a = self.__dict__
        b = other.__dict__
        if a["kind"] is _CLAIM or b["kind"] is _CLAIM:
            self._usable(op)
            other._usable(op)
        currency_of(unit)  # raises on mixed currencies, as validation would
        if not value.is_finite():
            raise ConfigError(f"{op} gave a non-finite number")
        a_label, b_label = a["label"], b["label"]
        # A pure constant (no provenance of its own) is not an input worth listing.
        a_const = a_label == "constant" and not a["inputs"]
        if b_label == "constant" and not b["inputs"]:
            inputs: tuple[Figure, ...] = () if a_const else (self,)
        else:
            inputs = (other,) if a_const else (self, other)
        ra, rb = a["region"], b["region"]
        # Both operands were validated and the unit is already normal: skip re-validation (the bill's hot path).
        # The object is made here rather than through _trusted(): ~30,000 a 1,000-option bill (issue 10's speed).
        f = _new_object(Figure)
        _set_dict(
            f,
            "__dict__",
            {
                "value": value,
                "unit": unit,
                "kind": _DERIVED,
                "source": f"{a_label or a['unit'] or 'x'} {op} {b_label or b['value']}",
                "as_of": None,
                "region": ra if ra == rb else (ra or rb),
                "label": "",
                "inputs": inputs,
                "note": "",
            },
        )
        _set_fields_set(f, _ALL_FIELDS)
        _set_extra(f, None)
        _set_private(f, None)
        return f

    def _check_same_unit(self, other: Figure, op: str) -> None:
        if self.unit != other.unit and parse_unit(self.unit) != parse_unit(other.unit):
            raise UnitMismatchError(
                f"cannot {op} {self.unit or 'a number'} ({self.label or self.value}) and "
                f"{other.unit or 'a number'} ({other.label or other.value})",
                fix="convert both figures to the same unit and currency",
            )

    def __add__(self, other: Figure | int | Decimal) -> Figure:
        o = other if type(other) is Figure else self._lift(other)
        self._check_same_unit(o, "add")
        return self._derive(o, self.value + o.value, self.unit, "+")

    def __radd__(self, other: int | Decimal) -> Figure:
        if other == 0:  # so sum() works
            self._usable("sum()")
            return self
        return self._lift(other) + self

    def __sub__(self, other: Figure | int | Decimal) -> Figure:
        o = other if type(other) is Figure else self._lift(other)
        self._check_same_unit(o, "subtract")
        return self._derive(o, self.value - o.value, self.unit, "-")

    def __mul__(self, other: Figure | int | Decimal) -> Figure:
        o = other if type(other) is Figure else self._lift(other)
        return self._derive(o, self.value * o.value, _unit_product(self.unit, o.unit, 1), "×")

    def __rmul__(self, other: int | Decimal) -> Figure:
        return self * other

    def __truediv__(self, other: Figure | int | Decimal) -> Figure:
        o = other if type(other) is Figure else self._lift(other)
        if o.value == 0:
            raise ConfigError(f"division by zero: {o.label or 'a figure'} is 0")
        return self._derive(o, self.value / o.value, _unit_product(self.unit, o.unit, -1), "÷")

    def rounded(self, places: int = 2) -> Figure:
        self._usable("rounding")
        return self.model_copy(update={"value": money(self.value, places)})


_ALL_FIELDS = set(Figure.model_fields)  # shared: a frozen model never changes its fields-set
_CLAIM = Kind.VENDOR_CLAIM  # enum members looked up once: a class attribute lookup per figure adds up
_DERIVED = Kind.DERIVED
_new_object = object.__new__
_set_dict = object.__setattr__
# pydantic's per-instance slots, set through their descriptors: half the cost of object.__setattr__ by name.
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _trusted(fields: dict[str, Any]) -> Figure:
    """A Figure from fields that are already valid (every field given): no validation, no copy machinery.

    Billing 1,000 options makes tens of thousands of derived figures; pydantic's construct/copy paths were the
    largest cost left (issue 10's benchmark). Only arithmetic and relabelling of valid figures come here.
    """
    f = _new_object(Figure)
    _set_dict(f, "__dict__", fields)
    _set_fields_set(f, _ALL_FIELDS)
    _set_extra(f, None)
    _set_private(f, None)
    return f


def measured(
    value: Any, unit: str, source: str, label: str = "", as_of: dt.date | None = None, note: str = ""
) -> Figure:
    return Figure(
        value=value,
        unit=unit,
        kind=Kind.MEASURED,
        source=source,
        label=label,
        as_of=as_of or dt.date.today(),
        note=note,
    )


def assumption(value: Any, unit: str, source: str = "assumption", label: str = "", note: str = "") -> Figure:
    # The same checks validation makes (finite number, normal unit, one currency), without its cost: a bill
    # states thousands of assumptions.
    text = normalise_unit(str(unit or ""))
    currency_of(text)
    return _trusted(
        {
            "value": to_decimal(value),
            "unit": text,
            "kind": Kind.ASSUMPTION,
            "source": source,
            "as_of": None,
            "region": None,
            "label": label,
            "inputs": (),
            "note": note,
        }
    )


def constant(value: int | Decimal) -> Figure:
    """A pure number (count, conversion factor) that carries no provenance of its own."""
    return _constant(Decimal(value))


@functools.lru_cache(maxsize=1024)
def _constant(value: Decimal) -> Figure:
    return Figure(value=value, unit="", kind=Kind.DERIVED, label="constant")


# --- the one projection for JSON and display ---------------------------------------------------

KIND_LABELS: dict[str, str] = {
    "measured": "measured",
    "list_price": "listed",
    "derived": "derived",
    "assumption": "assumed",
    "vendor_claim": "vendor claim",
    "unverified": "unverified pilot result",
}


class FigureRef(BaseModel):
    """A figure as reports, bills and gates show it: number, unit, provenance and what it was derived from.

    Flat (leaves, not the whole derivation tree) because a reader asks "which inputs", not "in which order".
    """

    model_config = ConfigDict(frozen=True)

    label: str = ""
    value: float
    unit: str = ""
    kind: str
    source: str = ""
    as_of: str | None = None
    region: str | None = None
    note: str = ""
    leaves: list[FigureRef] = Field(default_factory=list)

    @property
    def kind_label(self) -> str:
        return KIND_LABELS.get(self.kind, self.kind)

    def describe(self) -> str:
        """One line for a hover or a footnote: kind, source, date, region, and the leaves of a derived figure."""
        bits = [self.kind_label]
        if self.source:
            bits.append(self.source)
        if self.as_of:
            bits.append(self.as_of)
        if self.region:
            bits.append(self.region)
        if self.note:
            bits.append(self.note)
        head = " · ".join(bits)
        if self.leaves:
            head += " — from: " + "; ".join(
                f"{lf.label or 'input'} = {fmt_number(lf.value)}{_sep(lf.unit)}{unit_text(lf.unit)} ({lf.kind_label}"
                + (f", {lf.source}" if lf.source else "")
                + ")"
                for lf in self.leaves
            )
        return head

    def flat_json(self, with_leaves: bool = True) -> dict[str, Any]:
        """JSON for scripts (the bill's ``--json``): leaves carry no ``leaves`` key of their own (always empty)."""
        if not with_leaves:
            return self.model_dump(mode="json", exclude={"leaves"})
        return self.model_dump(mode="json", exclude={"leaves": {"__all__": {"leaves"}}})


def fig_ref(f: Figure, label: str | None = None) -> FigureRef:
    """Project a Figure (vendor claims included: projecting is display, not arithmetic)."""
    leaves = [fig_ref(lf) for lf in f.leaves()] if f.inputs else []
    return FigureRef(
        label=label if label is not None else f.label,
        value=float(f.value),
        unit=f.unit,
        kind=f.kind.value,
        source=f.source,
        as_of=f.as_of.isoformat() if f.as_of else None,
        region=f.region,
        note=f.note,
        leaves=leaves,
    )


def plain_ref(value: float, unit: str, kind: str, source: str, label: str = "", note: str = "") -> FigureRef:
    """A number that is not (yet) a Figure, with its provenance stated explicitly."""
    return FigureRef(label=label, value=float(value), unit=unit, kind=kind, source=source, note=note)


def _sep(unit: str) -> str:
    return " " if unit and not unit.startswith("1/") else ""


def unit_text(unit: str) -> str:
    """``1/month`` reads as ``/month`` after a number."""
    return unit[1:] if unit.startswith("1/") else unit


def fmt_number(v: float | int | None, places: int | None = None) -> str:
    """Thousands separators; cents for money-sized numbers, significant digits for small ones."""
    if v is None:
        return "—"
    x = float(v)
    if x != x:  # NaN
        return "—"
    if places is not None:
        return f"{x:,.{places}f}"
    ax = abs(x)
    if ax == 0:
        return "0"
    if ax >= 100 or x == int(x):
        return f"{x:,.2f}".rstrip("0").rstrip(".") if x != int(x) else f"{int(x):,}"
    if ax >= 1:
        return f"{x:,.2f}"
    return f"{x:.4g}"
