"""What a pricing model prices from: one option's inputs, gathered once before any model computes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from accelpilot.bill.common import _price
from accelpilot.bill.scenario import Extras, Option, Scenario
from accelpilot.catalog.loader import Catalog
from accelpilot.figures import Figure

if TYPE_CHECKING:
    from accelpilot.pilot.result import PilotResult

UNRATED = ("owned", "buy_and_host", "serverless")  # priced from boxes, or refused for training


@dataclass(frozen=True)
class ModelInputs:
    """One training option, its measured or assumed hours and its catalog rate, gathered once (data flows one
    way: catalog and results -> these inputs -> a pricing model -> priced parts)."""

    opt: Option
    sc: Scenario
    cat: Catalog
    where: str
    extras: Extras
    hours: Figure  # hours per run
    billed: Figure  # hours billed per run (idle included)
    executed: Figure  # runs executed a month (re-runs of rejected runs included)
    spot: tuple[Figure | None, str] | None  # the Spot Advisor's rate and note (bill.spot), when the option is spot
    results: Mapping[str, PilotResult]  # result files the procedure read, by resolved path
    rate: tuple[Figure, str | None, int | None] | None  # price per hour, accelerator, count (None: owned)
    rate_notes: tuple[str, ...] = ()  # which rate prices it, when the evidence could (a capacity block offering)


def gather(
    opt: Option,
    sc: Scenario,
    cat: Catalog,
    where: str,
    hours: Figure,
    billed: Figure,
    executed: Figure,
    spot: tuple[Figure | None, str] | None,
    results: Mapping[str, PilotResult],
    block: tuple[Figure | None, str] | None = None,
) -> ModelInputs:
    """The option's inputs, its catalog price row looked up once (owned boxes have none). ``block``: the
    account's Capacity Block offering's rate and note (pricing.capacity_block.offered_rates); a rate found
    there replaces the catalog's, which is then not needed."""
    ex = opt.extras if opt.extras is not None else sc.extras
    if block is not None and block[0] is not None:
        spec = cat.instance(opt.instance or "")
        row = next(iter(cat.rows_for_instance(opt.instance or "")), None)
        accel = spec.accelerator if spec else row.accelerator if row else None
        count = spec.accelerator_count if spec else row.accelerator_count if row else None
        rate: tuple[Figure, str | None, int | None] | None = (block[0], accel, count)
    else:
        rate = None if opt.pricing in UNRATED else _price(opt, cat, where, sc.path or None)
    notes = (block[1],) if block is not None else ()
    return ModelInputs(opt, sc, cat, where, ex, hours, billed, executed, spot, results, rate, notes)
