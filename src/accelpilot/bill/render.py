"""Terminal rendering of a bill (rich). Markdown/HTML live in report/."""

from __future__ import annotations

from decimal import Decimal

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table

from accelpilot.bill.model import Bill
from accelpilot.figures import Figure, money
from accelpilot.termtext import cell as escape

KIND_TAG = {"measured": "M", "list_price": "L", "derived": "D", "assumption": "A", "vendor_claim": "V"}


def fmt_money(f: Figure | Decimal | None, places: int = 2) -> str:
    if f is None:
        return "—"
    v = f.value if isinstance(f, Figure) else f
    return f"{money(v, places):,.{places}f}"


def tag(f: Figure | None) -> str:
    """Provenance of a headline figure: the kinds of the leaves it rests on."""
    if f is None:
        return ""
    kinds = sorted({KIND_TAG[leaf.kind.value] for leaf in f.leaves()})
    return f"[dim]{''.join(kinds)}[/]"


def render_bill(bill: Bill, console: Console) -> None:
    opts = Table(
        title=escape(bill.scenario),
        caption="Provenance of inputs: M measured, L listed, D derived, A assumed. Vendor claims never enter a cost.",
    )
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
    for c in cols:
        opts.add_column(c, justify="left" if c in ("option", "pricing") else "right")
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
        opts.add_row(*row)
    comps = Table(title=f"Against the baseline: {escape(bill.baseline)}")
    for c in [
        "candidate",
        "saving/run" if training else "saving/month",
        "saving %",
        "porting",
        "break-even run",
        "break-even months",
    ]:
        comps.add_column(c, justify="left" if c == "candidate" else "right")
    for cmp in bill.comparisons:
        comps.add_row(
            escape(cmp.candidate),
            fmt_money(cmp.saving_per_run if training else cmp.saving_per_month),
            "—" if cmp.saving_percent is None else f"{cmp.saving_percent:.1f}%",
            fmt_money(cmp.one_off_cost),
            "never" if training and cmp.break_even_runs is None else (str(cmp.break_even_runs) if training else "—"),
            "never" if cmp.break_even_months is None else f"{cmp.break_even_months:.1f}",
        )
    items: list[Table | str] = []
    for o in bill.options:
        t = Table(title=f"{escape(o.name)}: line items", show_header=True, title_justify="left")
        t.add_column("item")
        t.add_column("per")
        t.add_column(bill.currency, justify="right")
        t.add_column("kind")
        t.add_column("source", overflow="fold")
        for li in o.line_items:
            src = "; ".join(sorted({leaf.source for leaf in li.figure.leaves() if leaf.source}))
            t.add_row(escape(li.name), li.per, fmt_money(li.figure, 2), li.figure.kind.value, escape(src))
        items.append(t)
        for n in o.notes:
            items.append(f"[yellow]note:[/] {escape(n)}")
    console.print(opts)
    if bill.comparisons:
        console.print(comps)
    console.print(Panel(Group(*items), title="line items", expand=False))
    for st in bill.statements:
        console.print(f"[dim]{escape(st)}[/]")
    if bill.vendor_claims:
        claims = "\n".join(escape(f"• {c.text} ({c.source}, {c.as_of})") for c in bill.vendor_claims)
        console.print(Panel(claims, title="vendor claims: shown, never used in the arithmetic", expand=False))
