"""The bill's pricing models, one module each, behind one function: ``price(inputs) -> priced parts``.

hourly (on-demand, rental, and a reservation shared with other work), reserved (a term owed whatever the use),
capacity_block, spot (hourly plus interruption re-work), serverless (serving only), owned (owned and hosted).
"""

from __future__ import annotations

from accelpilot.bill.common import _Priced
from accelpilot.bill.pricing.capacity_block import _capacity_block
from accelpilot.bill.pricing.hourly import _usage
from accelpilot.bill.pricing.inputs import ModelInputs, gather
from accelpilot.bill.pricing.owned import _owned
from accelpilot.bill.pricing.reserved import _reserved_term
from accelpilot.errors import ConfigError

__all__ = ["ModelInputs", "gather", "price"]


def price(m: ModelInputs) -> _Priced:
    """A training option's priced parts: per-run items, or monthly items when the compute is owed by the month."""
    opt = m.opt
    if opt.pricing in ("owned", "buy_and_host"):
        return _owned(m)
    if opt.pricing.startswith("reserved") and opt.dedicated is not False:
        return _reserved_term(m)
    if opt.pricing == "capacity_block":
        return _capacity_block(m)
    if opt.pricing == "serverless":
        raise ConfigError(
            "serverless GPU is priced for serving workloads here",
            file=m.sc.path or None,
            field=f"{m.where}.pricing",
            fix='use on_demand, spot or rental for training, or set workload = "serving"',
        )
    return _usage(m)
