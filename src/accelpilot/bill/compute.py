"""Pricing: scenario + catalog + pilot results (already read) -> Bill. Pure functions over plain data.

All arithmetic goes through Figure, so every line item remembers its inputs and a vendor claim can never
enter a cost. Each pricing model is its own module under bill/pricing; comparisons and flip points are in
bill/compare."""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelpilot.bill.common import TAX_STATEMENT, _hours_per_month, dto_monthly
from accelpilot.bill.compare import compare, decision_margin, serving_flips, training_flips
from accelpilot.bill.model import Bill
from accelpilot.bill.per_bill import _PerBill, lifetime_months
from accelpilot.bill.scenario import Scenario
from accelpilot.bill.training import price_option
from accelpilot.catalog.loader import Catalog

__all__ = [
    "compare",
    "decision_margin",
    "dto_monthly",
    "lifetime_months",
    "make_bill",
    "price_option",
    "serving_flips",
    "training_flips",
]

if TYPE_CHECKING:
    from collections.abc import Mapping

    from accelpilot.evidence.model import EvidenceSet
    from accelpilot.pilot.result import PilotResult


def make_bill(
    sc: Scenario,
    cat: Catalog,
    evidence: EvidenceSet | None = None,
    results: Mapping[str, PilotResult] | None = None,
) -> Bill:
    """The whole bill: every option priced, every option compared with the baseline. ``evidence``: the
    scenario's [evidence] files, already read (the Spot Advisor's interruption bands price spot, the account's Capacity
    Block offerings price capacity blocks).
    ``results``: the result files the options name, already read, by resolved path
    (``accelpilot.result_files.read_option_results``); None reads them through that one reader first."""
    from accelpilot.bill.pricing.capacity_block import offered_rates
    from accelpilot.bill.scenario import check_money_unit
    from accelpilot.bill.spot import spot_rates

    check_money_unit(sc.currency, sc.path or "scenario")
    if results is None:
        from accelpilot.result_files import read_option_results

        results = read_option_results(sc)
    spot = spot_rates(sc, evidence, _hours_per_month(cat))
    per_bill = _PerBill(sc, spot=spot, results=results, blocks=offered_rates(sc, evidence, cat), cat=cat)
    options = [price_option(o, sc, cat, i, per_bill) for i, o in enumerate(sc.options)]
    base = next(o for o in options if o.name == sc.baseline_name)
    comps = [compare(base, o, sc, per_bill) for o in options if o.name != base.name]
    taxed = sorted({str(o.extras.tax_percent if o.extras else sc.extras.tax_percent) for o in sc.options})
    statements = [
        TAX_STATEMENT
        + (
            f": tax_percent {', '.join(taxed)}% is added to the options' bills"
            if taxed != ["0"]
            else ": no tax is added here (set [extras] tax_percent to include it)"
        )
    ]
    return Bill(
        scenario=sc.name,
        scenario_path=sc.path,
        workload=sc.workload,
        currency=sc.currency,
        months=sc.volumes.months,
        runs_per_month=sc.volumes.runs_per_month,
        baseline=base.name,
        options=options,
        comparisons=comps,
        catalog_files=cat.files,
        vendor_claims=list(cat.claims),
        statements=statements,
    )
