"""Price each estate over the portfolio's lifetime: pure functions over the workloads' bills.

Each workload's chosen option keeps the price its own scenario's bill gives it (that scenario's horizon set
to the lifetime). What an estate shares is counted once: porting to a platform family, that family's
second-toolchain maintenance a month; what a split estate adds is validation on every family, per release.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from accelpilot.bill.model import Bill, OptionBill
from accelpilot.figures import Figure, assumption
from accelpilot.portfolio.model import Portfolio


def family(o: OptionBill) -> str:
    """The platform family an option runs on (what a port and a second toolchain are paid for once):
    ``neuron`` for Trainium and Inferentia (one SDK), else decide/'s family (``gpu``, ``cpu``)."""
    from accelpilot.decide.portability import family_of

    fam = family_of(o.accelerator, o.instance)
    return "neuron" if fam in ("trainium", "inferentia") else fam


OWED = "commitment owed after the lifetime"


@dataclass(frozen=True)
class Line:
    label: str
    figure: Figure
    workload: str = ""  # empty: the estate's own line (shared port, maintenance, validation)


@dataclass(frozen=True)
class EstatePrice:
    name: str
    families: list[str]
    monthly_cost: Figure  # the workloads' monthly costs and each family's maintenance once
    one_off_cost: Figure  # each family's port once
    lifetime_cost: Figure
    within_budget: bool | None  # None: the portfolio states no budget
    lines: list[Line] = field(default_factory=list)
    chosen: dict[str, OptionBill] = field(default_factory=dict)


def _max(figs: list[Figure]) -> Figure:
    return max(figs, key=lambda f: f.value)


def price_estate(pf: Portfolio, i: int, bills: dict[str, Bill]) -> EstatePrice:
    e = pf.estates[i]
    where = f"{pf.path}: estates[{i + 1}]"
    head = pf.portfolio
    cur = next(iter(bills.values())).currency
    months = assumption(head.lifetime_months, "month", f"{pf.path}: portfolio.lifetime_months", "lifetime")
    chosen = {w.name: bills[w.name].option(e.options[w.name]) for w in pf.workloads}
    lines: list[Line] = []
    monthly: list[Figure] = []
    for wname, o in chosen.items():
        monthly.append(o.monthly_cost)
        lines.append(Line(f"{wname}: {o.name}, a month", o.monthly_cost, wname))
    fams = sorted({family(o) for o in chosen.values()})
    one_offs: list[Figure] = []
    for fam in fams:
        same = [o for o in chosen.values() if family(o) == fam]
        port = _max([o.one_off_cost for o in same]).with_label(f"porting to {fam}, once per estate")
        maint = _max([o.maintenance_per_month for o in same]).with_label(f"{fam} toolchain upkeep, once a month")
        if port.value:
            one_offs.append(port)
            lines.append(Line(port.label, port))
        if maint.value:
            monthly.append(maint)
            lines.append(Line(maint.label, maint))
    month_total = sum(monthly[1:], monthly[0]).with_label("monthly cost")
    one_off = (sum(one_offs[1:], one_offs[0]) if one_offs else assumption(0, cur, "nothing to port")).with_label(
        "one-off cost"
    )
    total = month_total * months + one_off
    if len(fams) > 1 and e.validation_days_per_release and e.releases_per_year:
        days = assumption(e.validation_days_per_release, "day", where, "validation days per release")
        rate = assumption(head.day_rate, f"{cur}/day", f"{pf.path}: portfolio.day_rate", "day rate")
        rel = assumption(e.releases_per_year, "1/year", where, "releases a year")
        years = assumption(Decimal(head.lifetime_months) / 12, "year", f"{pf.path}: portfolio.lifetime_months")
        val = (days * rate * rel * years).with_label(f"validation on {len(fams)} platform families, over the lifetime")
        lines.append(Line(val.label, val))
        total = total + val
    for wname, o in chosen.items():
        if o.outstanding_commitment is not None and o.outstanding_commitment.value:
            owed = o.outstanding_commitment.with_label(f"{wname}: {OWED}")
            lines.append(Line(owed.label, owed, wname))
            total = total + owed
    total = total.with_label(f"lifetime cost over {head.lifetime_months} months")
    within = None if head.budget is None else total.value <= head.budget
    return EstatePrice(e.name, fams, month_total, one_off, total, within, lines, chosen)


@dataclass(frozen=True)
class PortfolioPrice:
    name: str
    currency: str
    lifetime_months: int
    budget: Decimal | None
    estates: list[EstatePrice]
    cheapest: str
    margin: Figure | None  # next estate's lifetime cost minus the cheapest's; None with one estate
    margin_share: Decimal | None  # that margin over the next estate's cost (the decision rule's measure)


def price_portfolio(pf: Portfolio, bills: dict[str, Bill]) -> PortfolioPrice:
    estates = [price_estate(pf, i, bills) for i in range(len(pf.estates))]
    ranked = sorted(estates, key=lambda e: e.lifetime_cost.value)
    margin = share = None
    if len(ranked) > 1:
        margin = (ranked[1].lifetime_cost - ranked[0].lifetime_cost).with_label("margin to the next estate")
        share = margin.value / ranked[1].lifetime_cost.value if ranked[1].lifetime_cost.value else None
    return PortfolioPrice(
        pf.portfolio.name,
        next(iter(bills.values())).currency,
        pf.portfolio.lifetime_months,
        pf.portfolio.budget,
        estates,
        ranked[0].name,
        margin,
        share,
    )


def cumulative(e: EstatePrice, months: int) -> list[Decimal]:
    """Lifetime cost paid by the end of each month 0..months: ports at month 0, validation spread over the
    releases, a commitment still owed added at the end of the lifetime."""
    owed = sum((li.figure.value for li in e.lines if li.label.endswith(OWED)), Decimal(0))
    spread = e.lifetime_cost.value - e.one_off_cost.value - e.monthly_cost.value * months - owed
    return [
        e.one_off_cost.value + e.monthly_cost.value * m + spread * m / months + (owed if m == months else 0)
        for m in range(months + 1)
    ]


def _f(f: Figure | None) -> dict[str, Any] | None:
    if f is None:
        return None
    return {
        "value": float(round(f.value, 2)),
        "unit": f.unit,
        "kind": f.kind.value,
        "label": f.label,
        "source": f.source,
    }


def to_json(p: PortfolioPrice) -> dict[str, Any]:
    return {
        "portfolio": p.name,
        "currency": p.currency,
        "lifetime_months": p.lifetime_months,
        "budget": float(p.budget) if p.budget is not None else None,
        "estates": [
            {
                "name": e.name,
                "platform_families": e.families,
                "lifetime_cost": float(round(e.lifetime_cost.value, 2)),
                "monthly_cost": float(round(e.monthly_cost.value, 2)),
                "one_off_cost": float(round(e.one_off_cost.value, 2)),
                "within_budget": e.within_budget,
                "options": {w: o.name for w, o in e.chosen.items()},
                "line_items": [
                    {
                        **(_f(li.figure) or {}),
                        "label": li.label,
                        "workload": li.workload or None,
                        "provenance": sorted({leaf.kind.value for leaf in li.figure.leaves()}),
                    }
                    for li in e.lines
                ],
            }
            for e in p.estates
        ],
        "cheapest": p.cheapest,
        "margin_to_next": _f(p.margin),
        "margin_share": float(round(p.margin_share, 4)) if p.margin_share is not None else None,
    }
