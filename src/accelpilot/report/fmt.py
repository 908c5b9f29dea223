"""Number formatting and footnotes shared by the HTML and Markdown renderers.

Every figure a renderer prints goes through ``Footnotes.ref``: the first time a provenance line is seen it gets
the next number, so each number in the report points at the source behind it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from accelpilot.figures import CURRENCIES, KIND_LABELS, FigureRef, fmt_number, parse_unit, unit_text

KIND_LETTER = {
    "measured": "M",
    "list_price": "L",
    "derived": "D",
    "assumption": "A",
    "vendor_claim": "V",
    "unverified": "U",
}


def is_money(unit: str) -> bool:
    try:
        return any(s in CURRENCIES and p > 0 for s, p in parse_unit(unit).items())
    except Exception:
        return False


def fmt_value(ref: FigureRef) -> str:
    """Money to the cent (4 places under one unit), bytes in GiB, the rest with sensible digits."""
    v, unit = ref.value, ref.unit
    if is_money(unit):
        return fmt_number(v, 2 if abs(v) >= 1 or v == 0 else 4)
    if unit == "byte" and abs(v) >= 2**20:
        return fmt_number(v / 2**30, 2) + " GiB" if abs(v) >= 2**30 else fmt_number(v / 2**20, 2) + " MiB"
    for div, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M")):
        if abs(v) >= div:
            return f"{v / div:,.2f} {prefix}"
    return fmt_number(v)


def fmt_with_unit(ref: FigureRef) -> str:
    text = fmt_value(ref)
    if ref.unit == "byte" and text.endswith("iB"):
        return text
    if text.endswith((" T", " G", " M")):
        return f"{text}{ref.unit}"
    if ref.unit.startswith("1/"):
        return f"{text}{unit_text(ref.unit)}"
    out = f"{text} {ref.unit}".strip()
    if ref.unit == "s" and abs(ref.value) >= 3600:
        out += f" ({ref.value / 3600:,.2f} h)"
    return out


def kind_label(kind: str) -> str:
    return KIND_LABELS.get(kind, kind)


@dataclass
class Footnotes:
    """Numbered provenance lines, deduplicated in order of first use."""

    items: list[str] = field(default_factory=list)
    _index: dict[str, int] = field(default_factory=dict)

    def ref(self, f: FigureRef) -> int:
        text = (f"{f.label}: " if f.label else "") + f.describe()
        n = self._index.get(text)
        if n is None:
            self.items.append(text)
            n = len(self.items)
            self._index[text] = n
        return n
