"""Figures every option and comparison of one bill share, made once per bill."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from accelpilot.bill.common import _a, _extras_monthly, _sum
from accelpilot.bill.model import LineItem, OptionBill
from accelpilot.bill.scenario import Scenario
from accelpilot.catalog.loader import Catalog
from accelpilot.figures import Figure, constant

if TYPE_CHECKING:
    from accelpilot.pilot.result import PilotResult


class _PerBill:
    """Figures every option and comparison of one bill use alike, made once per bill (gather once, then compute;
    issue 10's speed). Each equals what an option would make for itself, so the bill reads the same."""

    def __init__(
        self,
        sc: Scenario,
        spot: dict[str, tuple[Figure | None, str]] | None = None,
        results: Mapping[str, PilotResult] | None = None,
        blocks: dict[str, tuple[Figure | None, str]] | None = None,
        cat: Catalog | None = None,
    ) -> None:
        self.sc = sc
        self.cat = cat  # to price an option again at a trial value (bill.verdict_flips)
        self.results: Mapping[str, PilotResult] = results or {}  # result files the procedure read, by path
        self.spot = spot or {}  # spot options' interruption rates and notes (bill.spot.spot_rates), read once
        self.blocks = blocks or {}  # capacity block options' offered rates (pricing.capacity_block.offered_rates)
        self.rpm = _a(sc.volumes.runs_per_month, "1/month", "runs per month", "volumes")
        self.day_rate = _a(sc.engineering.day_rate, "USD/day", "engineer day rate", "engineering")
        self.life = _a(lifetime_months(sc), "month", "workload lifetime", "gates")
        self.horizon = _a(sc.volumes.months, "month", "months", "volumes")
        self._extras: tuple[list[LineItem], Figure] | None = None
        self._untaxed: Figure | None = None
        self._base: tuple[OptionBill, Figure, Figure] | None = None

    def extras(self, cat: Catalog) -> tuple[list[LineItem], Figure]:
        """The scenario's [extras] (options without their own), priced on first use: the items and their month."""
        if self._extras is None:
            items = _extras_monthly(self.sc.extras, cat, "extras")
            self._extras = items, _sum([li.figure for li in items], self.sc.currency, "month")
        return self._extras

    def untaxed_extras_month(self, cat: Catalog) -> Figure:
        """The scenario's [extras] a month, paid whatever the runs, when no tax applies (with tax, the tax share
        names each option)."""
        if self._untaxed is None:
            self._untaxed = _fixed_month(self.extras(cat)[1], constant(0))
        return self._untaxed

    def baseline(self, base: OptionBill) -> tuple[Figure, Figure]:
        """The baseline's side of every flip point: its total a month and its cost per accepted run that scales."""
        if self._base is None or self._base[0] is not base:
            assert base.cost_per_accepted_run is not None and base.fixed_per_month is not None
            total = (base.monthly_cost + base.maintenance_per_month).with_label("baseline a month")
            var = (base.cost_per_accepted_run - base.fixed_per_month / self.rpm).with_label("baseline per accepted run")
            self._base = base, total, var
        return self._base[1], self._base[2]


def _fixed_month(extras_month: Figure, tax: Figure) -> Figure:
    return (extras_month * (constant(1) + tax)).with_label("monthly costs whatever the runs")


def lifetime_months(sc: Scenario) -> int:
    """The port must repay within the workload's lifetime ([gates]), else the scenario's horizon."""
    return sc.gates.workload_lifetime_months or sc.volumes.months
