"""Owned and hosted (buy_and_host) boxes: fixed monthly costs shared by use or whole dedicated boxes."""

from __future__ import annotations

import math
from decimal import Decimal

from accelpilot.bill.common import _a, _d, _h, _hours_per_month, _Priced, _sum
from accelpilot.bill.model import LineItem
from accelpilot.bill.pricing.inputs import ModelInputs
from accelpilot.bill.scenario import Option, Owned
from accelpilot.catalog.loader import Catalog
from accelpilot.errors import ConfigError
from accelpilot.figures import Figure, constant


def _owned_monthly(o: Owned, opt: Option, cat: Catalog, where: str) -> tuple[list[LineItem], Figure]:
    """Owned/buy-and-host: one box's fixed monthly costs, and its energy price per hour of use."""

    def d(value: Decimal | None, key: str) -> Figure:
        return _a(value, cat.default(key).unit, key, where) if value is not None else _d(cat, key)

    hosted = opt.pricing == "buy_and_host"
    monthly: list[LineItem] = []
    if o.lease_per_month is not None:
        monthly.append(LineItem(name="lease", per="month", figure=_a(o.lease_per_month, "USD/month", "lease", where)))
    if o.purchase is not None:
        cap = _a(o.purchase, "USD", "purchase", where) - _a(o.residual_value, "USD", "residual value", where)
        life = _a(o.life_months, "month", "amortisation months", where)
        monthly.append(LineItem(name="purchase less residual, amortised", per="month", figure=cap / life))
        if o.spares_percent_per_year:
            spares = (
                _a(o.purchase, "USD", "purchase", where)
                * _a(o.spares_percent_per_year / 100, "1/month", "spares share per year", where)
                / constant(12)
            )
            monthly.append(LineItem(name="spares", per="month", figure=spares))
    power = d(o.power_kw, "dgx_h100_power")
    colo = d(o.colocation_per_kw_month, "colocation_per_kw_month")
    monthly.append(
        LineItem(
            name="hosting facility (per kW)" if hosted else "colocation (per kW)",
            per="month",
            figure=(power * colo).with_label("facility"),
        )
    )
    for field, label in [
        ("hosting_per_month", "hosting operations"),
        ("network_per_month", "network"),
        ("support_per_month", "hardware support"),
        ("staff_per_month", "staff"),
    ]:
        v = getattr(o, field)
        if v:
            fig = _a(v, "USD/month", field, where)
            monthly.append(LineItem(name=label, per="month", figure=fig, internal=field == "staff_per_month"))
    energy = (power * d(o.pue, "pue") * d(o.electricity_per_kwh, "electricity_per_kwh")).with_label("energy per hour")
    return monthly, energy


def _owned(m: ModelInputs) -> _Priced:
    """Owned or hosted boxes: shared (default, other work fills the rest) or dedicated (whole boxes)."""
    opt, sc, cat, where, hours, executed = m.opt, m.sc, m.cat, m.where, m.hours, m.executed
    o = opt.owned
    assert o is not None
    box_items, energy_h = _owned_monthly(o, opt, cat, where)
    fixed = _sum([li.figure for li in box_items], "USD", "month")
    hpm = _hours_per_month(cat)
    util = _a(o.utilisation, "", "utilisation", where)
    productive = (hpm * util).with_label("productive box-hours a month")
    boxes_run = constant(opt.instances)
    needed = (boxes_run * hours * executed).with_label("box-hours this workload needs a month")
    inst = cat.instance(opt.instance) if opt.instance else None
    accel, count = (inst.accelerator, inst.accelerator_count) if inst else (None, None)
    if o.dedicated:
        boxes = max(opt.instances, math.ceil(needed.value / productive.value))
        nb = _a(boxes, "", "whole boxes", where)
        items = [
            LineItem(
                name=f"{li.name} ({boxes} whole box{'es' if boxes > 1 else ''})",
                per="month",
                figure=(li.figure * nb).with_label(li.name),
                internal=li.internal,
            )
            for li in box_items
        ]
        items.append(
            LineItem(
                name="energy (kW x PUE x price x hours used)",
                per="month",
                figure=(energy_h * needed).with_label("energy"),
            )
        )
        share = (needed / (hpm * nb)).with_label("share of paid capacity used")
        notes = [
            f"dedicated: {boxes} whole box{'es' if boxes > 1 else ''} for this workload ({_h(needed)} box-hours a "
            f"month of {_h(productive * nb)} productive); idle box time is this workload's cost"
        ]
        return _Priced([], items, notes=notes, paid_share=share, accel=accel, count=count)
    capacity = (productive * boxes_run).with_label("productive box-hours a month")
    if needed.value > capacity.value:
        boxes = math.ceil(needed.value / productive.value)
        raise ConfigError(
            f"the workload needs {needed.value:,.0f} box-hours a month but {opt.instances} box(es) give "
            f"{capacity.value:,.0f} productive hours at utilisation {o.utilisation}: it cannot share them",
            file=sc.path or None,
            field=f"{where}.owned.dedicated",
            fix=f"set dedicated = true in [options.owned] to bill {boxes} whole boxes, or lower the volume",
        )
    items = [
        LineItem(
            name=f"{li.name} (allocated)",
            per="run",
            figure=(li.figure * boxes_run * hours / productive).with_label(li.name),
            internal=li.internal,
        )
        for li in box_items
    ]
    items.append(
        LineItem(
            name="energy (kW x PUE x price)", per="run", figure=(energy_h * boxes_run * hours).with_label("energy")
        )
    )
    other = capacity.value - needed.value
    notes = [
        f"this workload fills {_h(needed)} of {_h(capacity)} productive box-hours a month; the other "
        f"{other:,.0f} are assumed to be other work and carry {other / capacity.value:.0%} of the box "
        "(set dedicated = true in [options.owned] if nothing else runs on it)"
    ]
    coeff = {
        "a": float(fixed.value) * opt.instances * float(hours.value) / float(hpm.value),
        "b": float(items[-1].figure.value),
        "u0": float(o.utilisation),
    }
    share = (needed / (hpm * boxes_run)).with_label("share of paid capacity used")
    return _Priced(items, coeff=coeff, notes=notes, paid_share=share, accel=accel, count=count)
