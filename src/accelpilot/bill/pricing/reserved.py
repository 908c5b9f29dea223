"""Reserved instances and savings plans: a term of committed hours, owed whatever the use."""

from __future__ import annotations

import math

from accelpilot.bill.common import TERM_MONTHS, _a, _h, _hours_per_month, _Priced, _support, _usable_price
from accelpilot.bill.model import LineItem
from accelpilot.bill.pricing.inputs import ModelInputs
from accelpilot.catalog.model import Pricing
from accelpilot.errors import ConfigError, UnknownNameError
from accelpilot.figures import Figure, constant


def _reserved_term(m: ModelInputs) -> _Priced:
    """A reservation bills every hour of its term for the committed instances; use above it is on-demand."""
    opt, sc, cat, where, ex, billed, executed = m.opt, m.sc, m.cat, m.where, m.extras, m.billed, m.executed
    assert m.rate is not None
    price, accel, count = m.rate
    committed = opt.commitment_instances if opt.commitment_instances is not None else opt.instances
    hpm = _hours_per_month(cat)
    paid = (_a(committed, "", "committed instances", where) * hpm).with_label("reserved instance-hours a month")
    used = (constant(opt.instances) * billed * executed).with_label("instance-hours used a month")
    hourly: Figure | None  # the part of the commitment paid by the hour (what the price flip point moves)
    if opt.upfront is None:
        commit = (price * paid).with_label(f"reservation: {committed} x {opt.instance} x every hour of the term")
        hourly = commit
        items = [
            LineItem(
                name=f"reservation: {committed} x {opt.instance} {opt.pricing}, every hour", per="month", figure=commit
            )
        ]
    else:
        items = _upfront_items(m, committed, paid)
        commit = items[0].figure if len(items) == 1 else (items[0].figure + items[1].figure)
        commit = commit.with_label(f"reservation: {committed} x {opt.instance}, {opt.payment_option}")
        hourly = items[1].figure if len(items) > 1 else None
    compute = commit
    notes: list[str] = []
    if used.value > paid.value:
        over = (used - paid).with_label("instance-hours above the commitment a month")
        assert opt.instance is not None
        try:
            row = cat.find_price(opt.instance, Pricing.ON_DEMAND, opt.region, where=where, file=sc.path or None)
        except (ConfigError, UnknownNameError):
            need = math.ceil(used.value / hpm.value)
            raise ConfigError(
                f"the workload uses {used.value:,.0f} instance-hours a month, above the {paid.value:,.0f} committed, "
                f"and the catalog has no on-demand price for {opt.instance} to bill the rest",
                file=sc.path or None,
                field=f"{where}.commitment_instances",
                fix=f"set commitment_instances = {need}, or add an on_demand price row for {opt.instance} "
                "with --catalog FILE",
            ) from None
        extra = (_usable_price(row, where, cat) * over).with_label("use above the commitment, on-demand")
        items.append(LineItem(name=f"use above the commitment: {_h(over)} h on-demand", per="month", figure=extra))
        compute = compute + extra
        share: Figure = constant(1).with_label("share of paid capacity used")
    else:
        share = (used / paid).with_label("share of paid capacity used")
        if used.value < paid.value:
            notes.append(
                f"the reservation commitment is paid for {_h(paid)} instance-hours a month; this workload uses "
                f"{_h(used)} ({share.value:.0%}): the rest is billed whether used or not"
            )
    items += _support(compute, ex, where, "month")
    outstanding = _owed_after_horizon(commit, m, notes)
    rated = rated_out = None
    if hourly is not None:
        rated = hourly.value * (1 + ex.support_percent / 100)
        if outstanding is not None:  # the term's remainder is the commitment's, so its hourly share is the same
            rated_out = outstanding.value * hourly.value / commit.value
    return _Priced(
        [],
        items,
        notes=notes,
        paid_share=share,
        outstanding=outstanding,
        accel=accel,
        count=count,
        rated=rated,
        rated_outstanding=rated_out,
    )


def _owed_after_horizon(commit: Figure, m: ModelInputs, notes: list[str]) -> Figure | None:
    """A reservation is signed in whole terms: what the last term still owes after the horizon (the months up to
    the next whole term), with the support and tax its bill carries. None when the horizon ends with a term."""
    opt, sc, ex, where = m.opt, m.sc, m.extras, m.where
    term = TERM_MONTHS.get(opt.pricing, 0)
    months = sc.volumes.months
    if not term or months % term == 0:
        return None
    terms = -(-months // term)  # whole terms signed to cover the horizon
    left = _a(terms * term - months, "month", "term months after the horizon", where)
    owed = commit
    if ex.support_percent:
        owed = owed + commit * _a(ex.support_percent / 100, "", "support share of compute", where)
    if ex.tax_percent:
        owed = owed * (constant(1) + _a(ex.tax_percent / 100, "", "tax share", where))
    outstanding = (owed * left).with_label("commitment still owed after the horizon")
    signed = f"{terms} x {term}-month term{'s' if terms > 1 else ''}"
    taxed = " (with its support and tax)" if ex.support_percent or ex.tax_percent else ""
    if months < term:
        head = f"the {term}-month term outlives the {months}-month horizon"
    else:
        head = f"the {months}-month horizon needs {signed} ({terms * term} months)"
    notes.append(
        f"{head}: {outstanding.value:,.2f}{taxed} is still owed for its remaining {left.value} months and is "
        "included in the horizon's total"
    )
    return outstanding


def _upfront_items(m: ModelInputs, committed: int, paid: Figure) -> list[LineItem]:
    """partial_upfront / all_upfront: the upfront sum spread over the term's months, plus any hourly part."""
    opt, where = m.opt, m.where
    assert opt.upfront is not None
    term = TERM_MONTHS[opt.pricing]
    up = _a(opt.upfront, "USD", f"upfront per instance for the {term}-month term", where)
    spread = (
        _a(committed, "", "committed instances", where) * up / _a(term, "month", "term months", where)
    ).with_label("upfront, spread over the term")
    items = [
        LineItem(
            name=f"reservation upfront: {committed} x {opt.upfront:,} / {term} months ({opt.payment_option})",
            per="month",
            figure=spread,
        )
    ]
    if opt.payment_option == "partial_upfront":
        assert m.rate is not None
        hourly = (m.rate[0] * paid).with_label("reservation hourly part, every hour")
        items.append(LineItem(name=f"reservation hourly part: {committed} x every hour", per="month", figure=hourly))
    return items
