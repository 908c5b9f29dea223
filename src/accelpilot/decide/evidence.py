"""Plain-data references to the evidence behind a gate: figures (with their passport) and log findings.

A ``FigureRef`` is a Figure flattened for display and JSON: value, unit, kind, source and the leaves it rests
on, so a reason can say "this gate fails because of *this* number, which came from *there*".
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from accelpilot.figures import Figure

KIND_LABELS: dict[str, str] = {
    "measured": "measured",
    "list_price": "listed",
    "derived": "derived",
    "assumption": "assumed",
    "vendor_claim": "vendor claim",
}


class FigureRef(BaseModel):
    """A figure as the report shows it: number, unit, provenance and what it was derived from."""

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


def _sep(unit: str) -> str:
    return " " if unit and not unit.startswith("1/") else ""


def unit_text(unit: str) -> str:
    """``1/month`` reads as ``/month`` after a number."""
    return unit[1:] if unit.startswith("1/") else unit


def fig_ref(f: Figure, label: str | None = None) -> FigureRef:
    """Flatten a Figure (vendor claims included: they are only displayed)."""
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


class Evidence(BaseModel):
    """What a gate rests on: figures, portability-log findings, pilot results, or the scenario's answer."""

    model_config = ConfigDict(frozen=True)

    figures: list[FigureRef] = Field(default_factory=list)
    finding_ids: list[str] = Field(default_factory=list)
    results: list[str] = Field(default_factory=list)
    scenario_field: str | None = None  # "gates.aws_production_home"
    scenario_answer: bool | None = None

    def is_empty(self) -> bool:
        return not (self.figures or self.finding_ids or self.results or self.scenario_field)


def as_jsonable(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")
