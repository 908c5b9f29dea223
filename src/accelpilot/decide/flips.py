"""The flip points a "too close" reason quotes, as text and figure references (the bill derives them)."""

from __future__ import annotations

from accelpilot.bill.model import Comparison
from accelpilot.figures import FigureRef, fig_ref, fmt_number


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
        ):
            if f is not None:
                out.append((fmt.format(fmt_number(float(f.value), 2)), fig_ref(f, f.label)))
            elif none:
                out.append((none, None))
        return out
    for f, fmt in (
        (comp.flip_peak_qps, "a peak of {} requests/s per candidate instance (the saving reaches the margin)"),
        (comp.flip_requests_per_month, "{} requests a month (the candidate crosses the baseline's cost per 1,000)"),
    ):
        if f is not None:
            places = {id(comp.flip_requests_per_month): 0, id(comp.flip_peak_qps): None}.get(id(f), 2)
            out.append((fmt.format(fmt_number(float(f.value), places)), fig_ref(f, f.label)))
    return out
