"""The portfolio procedure: read the files once, bill each workload once, price the estates.

The one place that calls the bill's public entry point (``make_bill``); everything after it is pure.
"""

from __future__ import annotations

from pathlib import Path

from accelpilot.bill.model import Bill
from accelpilot.portfolio.price import PortfolioPrice, price_portfolio
from accelpilot.portfolio.read import read_portfolio


def bill_portfolio(path: Path, catalog_files: list[Path] | None = None) -> PortfolioPrice:
    from accelpilot.bill.compute import make_bill
    from accelpilot.catalog import load_catalog

    pf, scenarios = read_portfolio(path)
    cat = load_catalog(catalog_files or [])
    bills: dict[str, Bill] = {}
    for name, sc in scenarios.items():
        # each workload priced by its own scenario's bill, over the portfolio's lifetime
        sc = sc.model_copy(update={"volumes": sc.volumes.model_copy(update={"months": pf.portfolio.lifetime_months})})
        evidence = None
        if sc.evidence.files:
            from accelpilot.evidence import read_evidence

            evidence = read_evidence([sc.resolve(f) for f in sc.evidence.files])
        bills[name] = make_bill(sc, cat, evidence)
    return price_portfolio(pf, bills)
