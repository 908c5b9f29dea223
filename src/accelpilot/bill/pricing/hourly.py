"""On-demand and rental: billed per hour of use (also spot's base and a shared reservation's rate)."""

from __future__ import annotations

from decimal import Decimal

from accelpilot.bill.common import _h, _hours_per_month, _Priced, _sum, _support
from accelpilot.bill.model import LineItem
from accelpilot.bill.pricing.inputs import ModelInputs
from accelpilot.bill.pricing.spot import _spot_items
from accelpilot.figures import constant


def _usage(m: ModelInputs) -> _Priced:
    """Billed per hour of use (on-demand, spot, rental, capacity block, a shared reservation)."""
    opt, sc, cat, where, ex, billed, executed = m.opt, m.sc, m.cat, m.where, m.extras, m.billed, m.executed
    assert m.rate is not None
    price, accel, count = m.rate
    spot = m.spot
    idle = ex.idle_fraction
    compute = (price * constant(opt.instances) * billed).with_label("compute")
    name = f"compute: {opt.instances} x {opt.instance} {opt.pricing}" + (f", idle {idle:.0%} billed" if idle else "")
    items = [LineItem(name=name, per="run", figure=compute)]
    spot_note = []
    if opt.pricing == "spot" and opt.spot is not None:
        items += _spot_items(opt, sc, where, price, billed, m.results, spot[0] if spot else None)
        spot_note += [spot[1]] if spot else []
    elif opt.pricing == "spot":
        spot_note.append(
            "spot interruptions are not priced: add [options.spot] interruptions_per_hour (and restart_result or "
            "restart_s) to bill the expected re-work"
        )
        spot_note += [spot[1]] if spot else []  # the account's spot placement score, shown beside it
    items += _support(_sum([li.figure for li in items], "USD"), ex, where, "run")
    rated = sum((li.figure.value for li in items), Decimal(0))
    coeff = {
        "a": float(rated) * (1 - float(idle)),
        "b": 0.0,
        "u0": 1 - float(idle),
    }
    # every item is the price times hours (compute, spot re-work) or a share of those (support): all rated
    out = _Priced(items, coeff=coeff, notes=spot_note, accel=accel, count=count, rated=rated)
    if opt.pricing.startswith("reserved"):
        # A reservation shared with other work (dedicated = false): seed 004's rate arithmetic. Say who pays
        # for the rest of the term.
        committed = opt.commitment_instances if opt.commitment_instances is not None else opt.instances
        paid = (constant(committed) * _hours_per_month(cat)).with_label("reserved instance-hours a month")
        used = (constant(opt.instances) * billed * executed).with_label("instance-hours this workload uses a month")
        out.paid_share = (used / paid).with_label("share of paid capacity used")
        other = paid.value - used.value
        out.notes.append(
            f"dedicated = false: this workload uses {_h(used)} of the reservation's {_h(paid)} instance-hours a "
            f"month; the other {max(other, Decimal(0)):,.0f} are assumed to be other work and carry "
            f"{max(other, Decimal(0)) / paid.value:.0%} of the term's cost"
        )
    return out
