"""Capacity Blocks: whole blocks of the durations AWS sells, paid up front whether used or not."""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from accelpilot.bill.common import _d, _derived, _Priced, _support
from accelpilot.bill.model import LineItem
from accelpilot.bill.pricing.inputs import ModelInputs
from accelpilot.bill.scenario import Scenario
from accelpilot.catalog.loader import Catalog
from accelpilot.catalog.model import Pricing
from accelpilot.errors import ConfigError, InputFileError
from accelpilot.figures import Figure, constant

if TYPE_CHECKING:
    from accelpilot.evidence.model import EvidenceSet


def offered_rates(
    sc: Scenario, evidence: EvidenceSet | None, cat: Catalog | None = None
) -> dict[str, tuple[Figure | None, str]]:
    """Per capacity_block option: the account's own offering's price per instance-hour (upfront fee / (duration
    hours x instances), from ``describe-capacity-block-offerings`` among the evidence) and a note saying which
    rate prices it. None (with the note) where the catalog's listed rate or a stated price_per_hour is used.

    The offering must be for the option's instance type and region (its own, else the one [evidence] region);
    the first listed that holds the option's instances wins, else the first listed, as with every [evidence]
    file. Read once, before pricing."""
    out: dict[str, tuple[Figure | None, str]] = {}
    if evidence is None:
        return out
    for opt in sc.options:
        if opt.pricing != "capacity_block" or opt.instance is None:
            continue
        region = opt.region or (sc.evidence.regions[0] if len(sc.evidence.regions) == 1 else None)
        found = [
            b
            for b in evidence.blocks
            if b.instance_type.lower() == opt.instance.lower() and (region is None or b.region == region)
        ]
        if region is None and len({b.region for b in found}) > 1:
            found = []  # offerings in several regions and none chosen: which one prices it is not ours to guess
        where = f" in {region}" if region else ""
        if not found:
            out[opt.name] = (
                None,
                f"capacity block: the catalog's listed rate prices it (the evidence holds no Capacity Block "
                f"offering for {opt.instance}{where})",
            )
            continue
        b = next((b for b in found if b.instance_count >= opt.instances), found[0])
        fx = cat.exchange(b.currency) if cat is not None and b.currency != "USD" else None
        if b.currency != "USD" and fx is None:
            raise InputFileError(
                f"capacity block offering {b.offering_id} is priced in {b.currency}; this bill is in USD",
                file=b.file,
                field="CapacityBlockOfferings.CurrencyCode",
                fix=f'add a dated exchange rate ([[rate]] currency = "{b.currency}", rate, as_of, source) to a '
                "--catalog file, or pass a USD offering",
            )
        rate = b.per_instance_hour()
        if fx is not None:
            rate = (rate * fx.figure()).with_label(
                f"{rate.label} in USD",
                note=f"converted once at {fx.rate} USD per {b.currency} ({fx.source}, {fx.as_of})",
            )
        what = (
            f"the account's Capacity Block offering {b.offering_id} ({Path(b.file).name}, {b.as_of}): "
            f"{b.upfront_fee:,.2f} {b.currency} up front / ({_h_min(b.duration_hours)} x {b.instance_count} "
            f"instance(s)) = {rate.value:,.4f} USD per instance-hour" + (f" ({rate.note})" if fx is not None else "")
        )
        more = (
            f"; it holds {b.instance_count} instance(s), the option asks {opt.instances}"
            if b.instance_count < opt.instances
            else ""
        )
        if opt.price_per_hour is not None:
            out[opt.name] = (None, f"capacity block: the stated price_per_hour ({opt.price_per_hour}) is used; {what}")
        else:
            out[opt.name] = (rate, f"capacity block: priced from {what}, not the catalog's listed rate{more}")
    return out


def _block_days(
    hours: Figure, cat: Catalog, where: str, sc: Scenario, instance: str | None = None
) -> tuple[int, Figure, Figure]:
    """The shortest Capacity Block AWS sells for a run: whole days up to 14, whole weeks up to 182."""
    day_rule = _d(cat, "capacity_block_day_steps_max_days")
    week_rule = _d(cat, "capacity_block_week_steps_max_days")
    days = math.ceil(hours.value / 24)
    if days <= day_rule.value:
        return days, day_rule, week_rule
    weeks = math.ceil(Decimal(days) / 7)
    if weeks * 7 <= week_rule.value:
        return weeks * 7, day_rule, week_rule
    raise ConfigError(
        f"a {hours.value:,.1f} h run is longer than the longest Capacity Block ({week_rule.value} days)",
        file=sc.path or None,
        field=f"{where}.hours_per_run",
        fix="split the run into checkpointed segments of at most 182 days each"
        + (", or price it on_demand" if instance and _has_on_demand(cat, instance) else ""),
    )


def _capacity_block(m: ModelInputs) -> _Priced:
    """Capacity Blocks: each run buys whole blocks of the durations AWS sells, paid whether used or not."""
    opt, sc, cat, where, ex, billed = m.opt, m.sc, m.cat, m.where, m.extras, m.billed
    assert m.rate is not None
    price, accel, count = m.rate
    most = _d(cat, "capacity_block_max_instances")
    if opt.instances > most.value:
        raise ConfigError(
            f"{opt.instances} instances exceed the {most.value} a Capacity Block holds",
            file=sc.path or None,
            field=f"{where}.instances",
            fix=f"use at most {most.value} instances per option (AWS allows 256 across blocks)",
        )
    days, day_rule, week_rule = _block_days(billed, cat, where, sc, opt.instance)
    shared = _shared_block(m, days)
    if shared is not None:
        return shared
    block_h = _derived(Decimal(days * 24), "h", f"{days}-day Capacity Block", billed, day_rule, week_rule)
    compute = (price * constant(opt.instances) * block_h).with_label("capacity block")
    items = [
        LineItem(name=f"capacity block: {days} day(s) x {opt.instances} x {opt.instance}", per="run", figure=compute)
    ]
    items += _support(compute, ex, where, "run")
    share = (billed / block_h).with_label("share of paid capacity used")
    notes = [*m.rate_notes]
    notes += [
        f"a {billed.value:,.1f} h run buys a {days}-day Capacity Block ({days * 24} h, paid up front and whole); "
        f"it uses {share.value:.0%} of it (blocks end at 11:30 UTC; a run that straddles that needs one more day)"
    ]
    rated = sum((li.figure.value for li in items), Decimal(0))  # the block and its support: all rated
    return _Priced(items, notes=notes, paid_share=share, accel=accel, count=count, rated=rated)


def _shared_block(m: ModelInputs, days_per_run: int) -> _Priced | None:
    """The month's runs back to back in one block, when that is fewer days than a block each (three 30 h runs: one
    4-day block, not three 2-day ones). None when a block per run is as cheap, or no block holds the month."""
    opt, sc, cat, where, ex, billed, executed = m.opt, m.sc, m.cat, m.where, m.extras, m.billed, m.executed
    assert m.rate is not None
    price, accel, count = m.rate
    if executed.value <= 1:
        return None
    month_h = (billed * executed).with_label("run-hours a month")
    try:
        days, day_rule, week_rule = _block_days(month_h, cat, where, sc, opt.instance)
    except ConfigError:
        return None  # the month's runs fit no single block: each buys its own
    if days >= days_per_run * executed.value:
        return None
    block_h = _derived(
        Decimal(days * 24), "h/month", f"{days}-day Capacity Block a month", month_h, day_rule, week_rule
    )
    compute = (price * constant(opt.instances) * block_h).with_label("capacity block a month")
    items = [
        LineItem(
            name=f"capacity block: {days} day(s) x {opt.instances} x {opt.instance}, the month's runs in it",
            per="month",
            figure=compute,
        )
    ]
    items += _support(compute, ex, where, "month")
    share = (month_h / block_h).with_label("share of paid capacity used")
    notes = [*m.rate_notes]
    notes += [
        f"the month's {executed.value:,.2f} runs of {billed.value:,.1f} h ({month_h.value:,.1f} h) share one "
        f"{days}-day Capacity Block ({days * 24} h), run back to back: fewer days than "
        f"{executed.value:,.2f} blocks of {days_per_run} day(s); it uses {share.value:.0%} of it (schedule the "
        "runs inside its days; blocks end at 11:30 UTC)"
    ]
    rated = sum((li.figure.value for li in items), Decimal(0))
    return _Priced([], items, notes=notes, paid_share=share, accel=accel, count=count, rated=rated)


def _h_min(hours: Decimal) -> str:
    """47.5833 h as AWS states it: 47 h 35 min."""
    whole = int(hours)
    minutes = round((hours - whole) * 60)
    return f"{whole} h" + (f" {minutes} min" if minutes else "")


def _has_on_demand(cat: Catalog, instance: str) -> bool:
    """Whether on_demand is a fix that works: some instances (trn2.48xlarge) are sold only in Capacity Blocks."""
    return any(r.pricing is Pricing.ON_DEMAND for r in cat.rows_for_instance(instance))
