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
) -> ModelInputs:
    """The option's inputs, its catalog price row looked up once (owned boxes have none)."""
    ex = opt.extras if opt.extras is not None else sc.extras
    rate = None if opt.pricing in UNRATED else _price(opt, cat, where, sc.path or None)
    return ModelInputs(opt, sc, cat, where, ex, hours, billed, executed, spot, results, rate)
