"""The portfolio's terminal tables: estates side by side, then each estate's line items."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from accelpilot.bill.render import fmt_money, tag
from accelpilot.portfolio.price import PortfolioPrice


def render_portfolio(p: PortfolioPrice, console: Console) -> None:
    t = Table(title=f"{p.name}: estates over {p.lifetime_months} months ({p.currency})")
    for col in ("estate", "platforms", "monthly", "one-off", "lifetime", "within budget"):
        t.add_column(col, justify="left" if col in ("estate", "platforms") else "right")
    for e in p.estates:
        budget = "-" if e.within_budget is None else ("yes" if e.within_budget else "no")
        t.add_row(
            e.name,
            ", ".join(e.families),
            fmt_money(e.monthly_cost),
            fmt_money(e.one_off_cost),
            fmt_money(e.lifetime_cost),
            budget,
        )
    console.print(t)
    for e in p.estates:
        lt = Table(title=e.name)
        lt.add_column("line item")
        lt.add_column("amount", justify="right")
        lt.add_column("unit")
        lt.add_column("kind")
        for li in e.lines:
            lt.add_row(li.label, fmt_money(li.figure), li.figure.unit, tag(li.figure))
        console.print(lt)
    tail = f"cheapest: {p.cheapest}"
    if p.margin is not None and p.margin_share is not None:
        tail += f", {fmt_money(p.margin)} ({p.margin_share:.1%}) below the next estate"
    console.print(tail)
