"""The flip points a "too close" reason quotes, as text and figure references (the bill derives them)."""

from __future__ import annotations

from accelpilot.bill.model import Comparison
from accelpilot.figures import Figure, FigureRef, fig_ref, fmt_number


def _price_text(f: Figure) -> str:
    per = "a second" if f.unit.endswith("/s") else "an hour"
    cur = f.unit.split("/")[0]
    return f"a price of {fmt_number(float(f.value), 6 if per == 'a second' else 4)} {cur} {per}"


def flip_refs(comp: Comparison) -> list[tuple[str, FigureRef | None]]:
    """The comparison's flip points as text and figure references (derived by the bill). Training: where the
    verdict's own margin test flips (bill.compare.margin_flips), or that no value of the input flips it."""
    out: list[tuple[str, FigureRef | None]] = []
    if comp.saving_per_run is not None:
        for f, fmt, none in (
            (comp.margin_flip_hours_per_run, "{} h per run", "no hours-per-run value flips it"),
            (comp.flip_utilisation, "utilisation {} (break-even)", ""),
            (
                comp.margin_flip_runs_per_month,
                "{} accepted runs a month",
                "no runs-per-month value flips it (the margin test is per run)",
            ),
            (comp.margin_flip_price, "", "no price flips it"),
            (comp.margin_flip_accepted_share, "an accepted share of {}", "no accepted share flips it"),
        ):
            if f is not None:
                text = _price_text(f) if f is comp.margin_flip_price else fmt.format(fmt_number(float(f.value), 2))
                if f is comp.margin_flip_accepted_share:
                    text = fmt.format(fmt_number(float(f.value), 4))
                out.append((text, fig_ref(f, f.label)))
            elif none:
                out.append((none, None))
        return out
    for f, fmt in (
        (comp.flip_peak_qps, "a peak of {} requests/s per candidate instance (the saving reaches the margin)"),
        (comp.margin_flip_requests_per_month, "{} requests a month (the saving crosses the margin)"),
    ):
        if f is not None:
            places = {id(comp.margin_flip_requests_per_month): 0, id(comp.flip_peak_qps): None}.get(id(f), 2)
            out.append((fmt.format(fmt_number(float(f.value), places)), fig_ref(f, f.label)))
    if comp.margin_flip_requests_per_month is None and (comp.flip_peak_qps or comp.flip_requests_per_month):
        out.append(("no monthly volume above today's flips it", None))  # fleets re-sized from [traffic]: searched
    if comp.margin_flip_price is not None:
        f = comp.margin_flip_price
        out.append((_price_text(f), fig_ref(f, f.label)))
    else:
        out.append(("no price flips it", None))
    return out
