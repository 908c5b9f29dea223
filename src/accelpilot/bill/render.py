"""Terminal rendering of a bill: plain-text tables (bill.text_table). Markdown/HTML live in report/."""

from __future__ import annotations

import textwrap
from decimal import Decimal
from typing import Any

from accelpilot.bill.model import Bill
from accelpilot.bill.text_table import boxed, draw
from accelpilot.figures import Figure, money
from accelpilot.termtext import visible as escape

KIND_TAG = {
    "measured": "M",
    "list_price": "L",
    "derived": "D",
    "assumption": "A",
    "vendor_claim": "V",
    "unverified": "U",
}


def fmt_money(f: Figure | Decimal | None, places: int = 2) -> str:
    if f is None:
        return "—"
    v = f.value if isinstance(f, Figure) else f
    return f"{money(v, places):,.{places}f}"


def tag(f: Figure | None) -> str:
    """Provenance of a headline figure: the kinds of the leaves it rests on."""
    if f is None:
        return ""
    return "".join(sorted({KIND_TAG[leaf.kind.value] for leaf in f.leaves()}))


def render_bill(bill: Bill, console: Any) -> None:
    """The bill as plain-text tables (text_table) written to ``console``'s file at its width."""
    width = max(60, int(console.width))
    lines: list[str] = []
    training = bill.workload == "training"
    cols = [
        "option",
        "pricing",
        "hours/run" if training else "instances",
        "cost/run" if training else "per 1k accepted req",
        "accepted",
        "cost/accepted run" if training else "per 1M tokens",
        *([f"{bill.months} months"] if bill.months != 36 else []),
        "36 months",
        "inputs",
    ]
    rows: list[list[str]] = []
    for o in bill.options:
        if training:
            row = [
                escape(o.name),
                o.pricing,
                fmt_money(o.hours_per_run, 2),
                fmt_money(o.cost_per_run),
                f"{o.accepted_share.value:.0%}",
                fmt_money(o.cost_per_accepted_run),
            ]
        else:
            row = [
                escape(o.name),
                o.pricing,
                str(o.instances_needed or ""),
                fmt_money(o.cost_per_1k_accepted_requests, 4),
                f"{o.accepted_share.value:.0%}",
                fmt_money(o.cost_per_million_accepted_tokens, 4),
            ]
        row += [
            *([fmt_money(o.total_months)] if bill.months != 36 else []),
            fmt_money(o.total_36_months),
            tag(o.cost_per_accepted_run or o.cost_per_1k_accepted_requests),
        ]
        rows.append(row)
    lines += draw(
        cols,
        rows,
        [c not in ("option", "pricing") for c in cols],
        width,
        title=escape(bill.scenario),
        caption="Provenance of inputs: M measured, L listed, D derived, A assumed. Vendor claims never enter a cost.",
    )
    if bill.comparisons:
        heads = [
            "candidate",
            "saving/run" if training else "saving/month",
            "saving %",
            "porting",
            "break-even run",
            "break-even months",
        ]
        crow = [
            [
                escape(cmp.candidate),
                fmt_money(cmp.saving_per_run if training else cmp.saving_per_month),
                "—" if cmp.saving_percent is None else f"{cmp.saving_percent:.1f}%",
                fmt_money(cmp.one_off_cost),
                "never"
                if training and cmp.break_even_runs is None
                else (str(cmp.break_even_runs) if training else "—"),
                "never" if cmp.break_even_months is None else f"{cmp.break_even_months:.1f}",
            ]
            for cmp in bill.comparisons
        ]
        lines += draw(
            heads,
            crow,
            [h != "candidate" for h in heads],
            width,
            title=f"Against the baseline: {escape(bill.baseline)}",
        )
    items: list[str] = []
    inner = width - 4  # inside the panel's box
    for o in bill.options:
        t_rows = []
        for li in o.line_items:
            src = "; ".join(sorted({leaf.source for leaf in li.figure.leaves() if leaf.source}))
            t_rows.append([escape(li.name), li.per, fmt_money(li.figure, 2), li.figure.kind.value, escape(src)])
        items += draw(
            ["item", "per", bill.currency, "kind", "source"],
            t_rows,
            [False, False, True, False, False],
            inner,
            title=f"{escape(o.name)}: line items",
            title_left=True,
        )
        for n in o.notes:
            items += textwrap.wrap(f"note: {escape(n)}", inner, break_on_hyphens=False) or [""]
    lines += boxed(items, "line items", width)
    lines += [piece for st in bill.statements for piece in textwrap.wrap(escape(st), width) or [""]]
    if bill.vendor_claims:
        claims = [escape(f"• {c.text} ({c.source}, {c.as_of})") for c in bill.vendor_claims]
        lines += boxed(claims, "vendor claims: shown, never used in the arithmetic", width)
    console.file.write("\n".join(lines) + "\n")
