"""The estate verdict: an estate whose workload fails a gate cannot win, and between the estates that can,
"if it is close, it is a no" with the margin each workload's own scenario decision rule uses."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from accelpilot.bill.model import Bill
from accelpilot.decide.gates import GateResult
from accelpilot.portfolio.price import EstatePrice, PortfolioPrice, family


@dataclass(frozen=True)
class EstateVerdict:
    name: str
    eligible: bool
    reasons: list[str]


@dataclass(frozen=True)
class PortfolioVerdict:
    winner: str | None  # None: no estate can win, or the leaders are too close and no estate is today's
    headline: str
    margin_needed: Decimal
    estates: list[EstateVerdict]


def _moves(e: EstatePrice, w: str, bills: dict[str, Bill]) -> bool:
    base = bills[w].option(bills[w].baseline)
    return family(e.chosen[w]) != family(base)


def estate_verdict(e: EstatePrice, bills: dict[str, Bill], gates: dict[str, list[GateResult]]) -> EstateVerdict:
    """A workload moved off its baseline's platform family must pass its own scenario's gates."""
    reasons: list[str] = []
    eligible = True
    for w, o in e.chosen.items():
        if not _moves(e, w, bills):
            reasons.append(f"{w}: stays on {family(o)} ({o.name}); its gates ask about a move it does not make")
            continue
        for g in gates.get(w, []):
            # a Trainium gate that fails, or a portable-GPU gate that holds, keeps the workload where it is
            if (g.group == "trainium_all" and g.holds is False) or (g.group != "trainium_all" and g.holds):
                eligible = False
                reasons.append(f"{w}: {g.question} {g.status}: {g.reason}")
            elif g.holds is None:
                reasons.append(f"{w}: {g.question} not answered")
    if e.within_budget is False:
        reasons.append("over the portfolio's budget")
    return EstateVerdict(e.name, eligible, reasons)


def margin_needed(bills: dict[str, Bill], p: PortfolioPrice, margins: dict[str, tuple[Decimal, Decimal]]) -> Decimal:
    """The largest decision margin among the workloads: the assumed-hours margin when any chosen option in
    any estate is not measured (as the scenario's own rule does), else the measured one."""
    measured = all(o.measured for e in p.estates for o in e.chosen.values())
    return max(m if measured else a for m, a in margins.values())


def portfolio_verdict(
    p: PortfolioPrice,
    bills: dict[str, Bill],
    gates: dict[str, list[GateResult]],
    margins: dict[str, tuple[Decimal, Decimal]],
) -> PortfolioVerdict:
    verdicts = [estate_verdict(e, bills, gates) for e in p.estates]
    need = margin_needed(bills, p, margins)
    ok = {v.name for v in verdicts if v.eligible}
    ranked = sorted((e for e in p.estates if e.name in ok), key=lambda e: e.lifetime_cost.value)
    if not ranked:
        return PortfolioVerdict(None, "No estate can win: each fails a workload's gate", need, verdicts)
    best = ranked[0]
    today = next(
        (e for e in p.estates if all(not _moves(e, w, bills) for w in e.chosen) and e.name in ok),
        None,
    )
    if len(ranked) == 1:
        return PortfolioVerdict(
            best.name, f"{best.name}: the only estate whose workloads pass their gates", need, verdicts
        )
    nxt = ranked[1]
    share = (nxt.lifetime_cost.value - best.lifetime_cost.value) / nxt.lifetime_cost.value
    if share < need:
        head = f"Too close to move: {best.name} is {share:.1%} below {nxt.name}, under the {need:.0%} margin"
        if today is not None:
            return PortfolioVerdict(today.name, f"{head}; keep {today.name}", need, verdicts)
        return PortfolioVerdict(None, head, need, verdicts)
    return PortfolioVerdict(
        best.name,
        f"{best.name}: {share:.1%} below {nxt.name} over the lifetime, beyond the {need:.0%} margin",
        need,
        verdicts,
    )
