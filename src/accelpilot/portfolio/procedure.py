"""The portfolio procedure: read the files once, bill and gate each workload once, price the estates.

The one place that calls the bill's and decide's public entry points (``make_bill``, ``decide``); everything
after it (price, verdict, report) is pure over what it returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from accelpilot.bill.model import Bill
from accelpilot.bill.scenario import Scenario
from accelpilot.decide.verdict import Decision
from accelpilot.portfolio.model import Portfolio
from accelpilot.portfolio.price import PortfolioPrice, price_portfolio
from accelpilot.portfolio.read import read_portfolio
from accelpilot.portfolio.verdict import PortfolioVerdict, portfolio_verdict


@dataclass(frozen=True)
class PortfolioRun:
    portfolio: Portfolio
    scenarios: dict[str, Scenario]
    bills: dict[str, Bill]
    decisions: dict[str, Decision]
    price: PortfolioPrice
    verdict: PortfolioVerdict


def run_portfolio(path: Path, catalog_files: list[Path] | None = None) -> PortfolioRun:
    from accelpilot.bill.compute import make_bill
    from accelpilot.catalog import load_catalog
    from accelpilot.decide.verdict import decide

    pf, read = read_portfolio(path)
    cat = load_catalog(catalog_files or [])
    scenarios: dict[str, Scenario] = {}
    bills: dict[str, Bill] = {}
    decisions: dict[str, Decision] = {}
    for name, sc in read.items():
        # each workload priced by its own scenario's bill, over the portfolio's lifetime
        vol = sc.volumes.model_copy(update={"months": pf.portfolio.lifetime_months})
        sc = sc.model_copy(update={"volumes": vol})
        evidence = None
        if sc.evidence.files:
            from accelpilot.evidence import read_evidence

            evidence = read_evidence([sc.resolve(f) for f in sc.evidence.files])
        scenarios[name] = sc
        bills[name] = make_bill(sc, cat, evidence)
        decisions[name] = decide(sc, bills[name], catalog=cat, evidence=evidence)
    price = price_portfolio(pf, bills)
    margins: dict[str, tuple[Decimal, Decimal]] = {
        n: (sc.decision.margin, sc.decision.assumed_margin) for n, sc in scenarios.items()
    }
    gates = {n: d.gates for n, d in decisions.items()}
    return PortfolioRun(pf, scenarios, bills, decisions, price, portfolio_verdict(price, bills, gates, margins))


def bill_portfolio(path: Path, catalog_files: list[Path] | None = None) -> PortfolioPrice:
    return run_portfolio(path, catalog_files).price
