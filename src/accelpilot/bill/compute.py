"""Pricing: scenario + catalog (+ pilot results) -> Bill. Pure functions over plain data.

All arithmetic goes through Figure, so every line item remembers its inputs and a vendor claim can never
enter a cost. Training options are priced per run; serving options per month and per accepted output.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

from accelpilot.bill.fleet import hourly_shares, peak_flip, peak_to_mean, plan, volume_flip
from accelpilot.bill.model import Bill, Comparison, FleetInputs, FleetMode, LineItem, OptionBill
from accelpilot.bill.scenario import Extras, Option, Owned, Scenario, Traffic
from accelpilot.catalog.loader import Catalog, parse_pricing
from accelpilot.catalog.model import PriceRow, Pricing
from accelpilot.errors import ConfigError, InputFileError, UnitMismatchError, UnknownNameError, VendorClaimError
from accelpilot.figures import Figure, Kind, assumption, constant

if TYPE_CHECKING:
    from accelpilot.evidence.model import EvidenceSet
    from accelpilot.pilot.result import PilotResult

SECONDS_PER_HOUR = constant(3600).model_copy(update={"unit": "s/h"})
M36 = constant(36).model_copy(update={"unit": "month", "label": "36 months"})
DTO_TIERS_GB = (Decimal(10240), Decimal(40960), Decimal(102400))  # 10 TB, next 40 TB, next 100 TB, then the rest


def _a(value: Any, unit: str, label: str, where: str) -> Figure:
    return assumption(value, unit, source=f"scenario {where}", label=label)


def _hours_per_month(cat: Catalog) -> Figure:
    return _d(cat, "hours_per_month")


def _zero(currency: str, per: str = "") -> Figure:
    unit = currency + (f"/{per}" if per else "")
    return Figure(value=0, unit=unit, kind=Kind.DERIVED, label="none")


def _sum(items: list[Figure], currency: str, per: str = "") -> Figure:
    if not items:
        return _zero(currency, per)
    total = items[0]
    for f in items[1:]:
        total = total + f
    return total


# --- measured inputs from pilot results ---------------------------------------------------------


def _read_result(opt: Option, sc: Scenario) -> tuple[PilotResult, str]:
    from accelpilot.pilot.result import read_result

    assert opt.result is not None
    path = sc.resolve(opt.result)
    res = read_result(
        path,
        kind=sc.workload,
        who=f"option {opt.name!r}",
        kind_fix=f'point the option at a {sc.workload} pilot result, or set workload = "{{found}}" in the scenario',
    )
    return res, str(path)


def _measured(value: float, unit: str, label: str, path: str, res: PilotResult) -> Figure:
    return Figure(
        value=Decimal(repr(float(value))),
        unit=unit,
        kind=Kind.MEASURED,
        label=label,
        source=f"pilot result {path} ({res.platform.device_name or res.platform.device})",
        as_of=res.created.date(),
    )


def _device_multiplier(opt: Option, cat: Catalog, res: PilotResult, where: str) -> tuple[Figure, list[str]]:
    """How many pilot-devices' worth of throughput one run gets: chips x instances x scaling efficiency."""
    if res.platform.device_type == "endpoint":
        # an endpoint pilot measured a whole server (all its chips): one instance is one measured server
        return constant(opt.instances), [
            f"measured over HTTP at {res.platform.device}: one instance = the measured server, scaled by instances"
        ]
    inst = cat.instance(opt.instance) if opt.instance else None
    rows = cat.rows_for_instance(opt.instance) if opt.instance else []
    count = (inst.accelerator_count if inst else (rows[0].accelerator_count if rows else None)) or 1
    measured_devices = int(res.config.get("world_size") or 1)
    devices = count * opt.instances
    mult = constant(devices) / constant(measured_devices)
    notes: list[str] = []
    measured_eff = _measured_scaling(res, devices)
    if opt.scaling_efficiency != 1:
        mult = mult * _a(opt.scaling_efficiency, "", "scaling efficiency", where)
    elif devices > measured_devices and measured_eff is not None:
        eff, note = measured_eff
        mult = mult * eff
        notes.append(note)
    return mult, _platform_note(opt, cat, res, f"scaled by {devices} devices") + notes


def _measured_scaling(res: PilotResult, devices: int) -> tuple[Figure, str] | None:
    """The scaling efficiency a distributed training pilot measured at the world size nearest ``devices``."""
    effs = {
        int(k.removeprefix("scaling_efficiency_world")): f
        for k, f in res.figures.items()
        if k.startswith("scaling_efficiency_world") and k.removeprefix("scaling_efficiency_world").isdigit()
    }
    if not effs:
        return None
    world = min(effs, key=lambda n: (abs(n - devices), -n))
    note = f"scaling efficiency {float(effs[world].value):.3g} measured at world size {world} (pilot)"
    if devices > max(effs):
        note += f"; priced at {devices} devices: extrapolated beyond the largest world size measured ({max(effs)})"
    if float(effs[world].value) > 1:
        note += "; above 1 (superlinear): check the pilot ran on dedicated devices, not shared cores"
    return effs[world], note


def _platform_note(opt: Option, cat: Catalog, res: PilotResult, how: str) -> list[str]:
    """Say so when a result measured on one platform prices another."""
    accel = None
    if opt.instance:
        inst = cat.instance(opt.instance)
        rows = cat.rows_for_instance(opt.instance)
        accel = inst.accelerator if inst else (rows[0].accelerator if rows else None)
    measured_on = res.platform.accelerator or res.platform.device_type
    if accel and (res.platform.accelerator or "").lower() != accel.lower():
        return [
            f"measured on {measured_on} ({res.platform.device_name}), priced as {accel}: the figures are the "
            f"pilot device's ({how}), not a measurement of {accel}"
        ]
    return []


def _refuse_scaling(opt: Option, sc: Scenario, where: str, what: str) -> None:
    """scaling_efficiency only scales measured throughput; anywhere else it would be silently ignored."""
    if opt.scaling_efficiency != 1:
        raise ConfigError(
            f"scaling_efficiency is not applied to {what}",
            file=sc.path or None,
            field=f"{where}.scaling_efficiency",
            fix="fold the efficiency into your figure and remove scaling_efficiency, or give result (and "
            "tokens_per_run for training) so that measured throughput is scaled",
        )


def training_hours(opt: Option, sc: Scenario, cat: Catalog, where: str) -> tuple[Figure, Figure | None, list[str], str]:
    """Hours per run and the accepted share: measured from a result file, or assumed."""
    if opt.result is None:
        if opt.hours_per_run is None:
            raise ConfigError(
                f"option {opt.name!r} names no result and no assumed hours",
                file=sc.path or None,
                field=f"{where}.hours_per_run",
                fix='add hours_per_run = <hours> or result = "<pilot result .json>"',
            )
        if opt.hours_per_run == 0:
            raise ConfigError(
                "hours_per_run must be greater than zero", file=sc.path or None, field=f"{where}.hours_per_run"
            )
        _refuse_scaling(opt, sc, where, "assumed hours_per_run")
        return _a(opt.hours_per_run, "h", "hours per run", where), None, [], ""
    res, path = _read_result(opt, sc)
    tr = res.training
    notes: list[str] = []
    accepted = None
    if res.errors:
        # A run cut short (disk full, an interrupted phase) is not an accepted run, whatever its summary says.
        accepted = _measured(0.0, "", "share of pilot runs accepted (the pilot recorded errors)", path, res)
        notes.append(
            f"the pilot result recorded {len(res.errors)} error(s), so no run is priced as accepted: {res.errors[0]}"
        )
    elif tr is not None and tr.runs:
        accepted = _measured(tr.accepted_runs / tr.runs, "", "share of pilot runs reaching the target", path, res)
    elif res.accepted is not None:
        accepted = _measured(1.0 if res.accepted else 0.0, "", "pilot run reached the target", path, res)
    if opt.tokens_per_run is not None:
        if tr is None or not tr.tokens_per_s:
            raise InputFileError(
                "result holds no measured tokens/s",
                file=path,
                field="training.tokens_per_s",
                fix="re-run the training pilot, or drop tokens_per_run to use time to target",
            )
        mult, notes = _device_multiplier(opt, cat, res, where)
        tps = _measured(tr.tokens_per_s, "token/s", "measured throughput", path, res)
        tokens = _a(opt.tokens_per_run, "token", "tokens per run", where)
        hours = (tokens / (tps * mult) / SECONDS_PER_HOUR).with_label("hours per run")
        return hours, accepted, notes, path
    if tr is None or tr.time_to_target_s is None:
        raise InputFileError(
            "result holds no time to target",
            file=path,
            field="training.time_to_target_s",
            fix="run the pilot with --target-loss, or give tokens_per_run in the option",
        )
    _refuse_scaling(opt, sc, where, "a measured time to target (it is not scaled)")
    secs = _measured(tr.time_to_target_s, "s", "time to target (olympic mean)", path, res)
    hours = (secs / SECONDS_PER_HOUR).with_label("hours per run")
    notes += _platform_note(opt, cat, res, "its time to target, unscaled")
    return hours, accepted, notes, path


# --- line items --------------------------------------------------------------------------------


def _price(opt: Option, cat: Catalog, where: str, file: str | None = None) -> tuple[Figure, str | None, int | None]:
    if opt.price_per_hour is not None:
        return _a(opt.price_per_hour, "USD/h", f"{opt.instance} price per hour (override)", where), None, None
    assert opt.instance is not None
    row = cat.find_price(opt.instance, parse_pricing(opt.pricing), opt.region, where=where, file=file)
    return _usable_price(row, where), row.accelerator, row.accelerator_count


def _usable_price(row: PriceRow, where: str) -> Figure:
    """A price row as a figure, refusing a vendor claim or a foreign currency with the row's file and field."""
    if row.kind is Kind.VENDOR_CLAIM:
        raise VendorClaimError(
            f"the {row.pricing.value} price of {row.instance} used by {where} is a vendor claim",
            file=row.origin,
            field=f"price {row.instance} {row.pricing.value}.kind",
            fix='replace it with a listed price (kind = "list_price") or your own figure (kind = "assumption")',
        )
    if row.currency != "USD":
        raise UnitMismatchError(
            f"the {row.pricing.value} price of {row.instance} is in {row.currency}; this bill is in USD",
            file=row.origin,
            field=f"price {row.instance} {row.pricing.value}.currency",
            fix='convert the row to USD (price_per_hour in USD, currency = "USD") and note the exchange rate used',
        )
    return row.price_figure()


def dto_monthly(gb: Figure, cat: Catalog) -> Figure:
    """Data transfer out to the internet with AWS's monthly tiers."""
    remaining = gb.value
    items: list[Figure] = []
    bounds = [*DTO_TIERS_GB, None]
    for i, size in enumerate(bounds, start=1):
        if remaining <= 0:
            break
        take = remaining if size is None else min(remaining, size)
        part = gb * (take / gb.value) if take != gb.value else gb
        rate = _d(cat, f"dto_tier{i}_per_gb")
        items.append(part.model_copy(update={"unit": "GB/month"}) * rate)
        remaining -= take
    return _sum(items, "USD", "month").with_label("data transfer out")


def _extras_monthly(ex: Extras, cat: Catalog, where: str) -> list[LineItem]:
    out: list[LineItem] = []
    table = [
        ("storage_gb_months", "block storage (EBS gp3)", "ebs_gp3_per_gb_month"),
        ("object_storage_gb_months", "object storage (S3 Standard)", "s3_standard_per_gb_month"),
        ("snapshot_gb_months", "snapshots", "snapshot_per_gb_month"),
    ]
    for field, label, key in table:
        v = getattr(ex, field)
        if v:
            out.append(
                LineItem(
                    name=label,
                    per="month",
                    figure=(_a(v, "GB", field, where) * _d(cat, key)).with_label(label),
                )
            )
    if ex.data_transfer_out_gb:
        gb = _a(ex.data_transfer_out_gb, "GB/month", "data_transfer_out_gb", where)
        free = _d(cat, "dto_free_gb_per_month")
        if gb.value > free.value:
            # AWS's free allowance comes off the top; the tiers apply beyond it.
            out.append(LineItem(name="data transfer out", per="month", figure=dto_monthly(gb - free, cat)))
        else:
            out.append(
                LineItem(
                    name="data transfer out (within the free allowance)",
                    per="month",
                    figure=(gb * _zero("USD", "GB")).with_label("data transfer out"),
                )
            )
    if ex.inter_region_transfer_gb:
        gb = _a(ex.inter_region_transfer_gb, "GB/month", "inter_region_transfer_gb", where)
        out.append(
            LineItem(
                name="inter-region transfer",
                per="month",
                figure=(gb * _d(cat, "inter_region_transfer_per_gb")).with_label("inter-region transfer"),
            )
        )
    return out


def _tax(items: list[LineItem], ex: Extras, where: str, per: Literal["run", "month"], cur: str) -> list[LineItem]:
    """tax_percent of everything billed (AWS list prices exclude taxes and duties)."""
    if not ex.tax_percent:
        return []
    base = _sum([li.figure for li in items], cur, "" if per == "run" else "month")
    share = _a(ex.tax_percent / 100, "", "tax share", where)
    return [LineItem(name=f"tax ({ex.tax_percent}%)", per=per, figure=(base * share).with_label("tax"))]


TAX_STATEMENT = "AWS list prices exclude taxes and duties (seed 002, AWS EC2 pricing terms, 2026-09-28)"


def _d(cat: Catalog, key: str) -> Figure:
    """A catalog default as a figure; a default filed as a vendor claim names its file and field."""
    row = cat.default(key)
    if row.kind is not Kind.VENDOR_CLAIM:
        return cat.default_figure(key)
    if row.kind is Kind.VENDOR_CLAIM:
        raise VendorClaimError(
            f"catalog default {key!r} is a vendor claim and cannot enter a cost",
            file=row.origin,
            field=f"default {key}.kind",
            fix='replace it with a listed figure (kind = "list_price") or your own (kind = "assumption")',
        )
    return row.figure()


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
            monthly.append(LineItem(name=label, per="month", figure=_a(v, "USD/month", field, where)))
    energy = (power * d(o.pue, "pue") * d(o.electricity_per_kwh, "electricity_per_kwh")).with_label("energy per hour")
    return monthly, energy


def _pct(f: Figure) -> str:
    return f"{f.value:.0%}"


def _h(f: Figure) -> str:
    return f"{f.value:,.0f}"


def _totals(
    monthly: Figure,
    maint: Figure,
    one_off: Figure,
    months: int,
    outstanding: Figure | None = None,
    horizon: Figure | None = None,
) -> tuple[Figure, Figure]:
    """Cost over the scenario's months and over 36 months: monthly cost and maintenance, plus the one-off port.

    A commitment whose term outlives the horizon adds what is still owed at its end (never dropped).
    ``horizon``: the months as a figure, when the caller made it once for the bill.
    """
    horizon = horizon or _a(months, "month", "months", "volumes")
    m36 = M36
    total = monthly * horizon + maint * horizon + one_off
    if outstanding is not None:
        total = total + outstanding
    return total.with_label(f"total over {months} months"), (monthly * m36 + maint * m36 + one_off).with_label(
        "total over 36 months"
    )


TERM_MONTHS = {"reserved_1y": 12, "reserved_3y": 36}


class _Priced:
    """What one pricing rule hands back to price_option (plain holder, no logic)."""

    def __init__(
        self,
        items: list[LineItem],
        monthly_items: list[LineItem] | None = None,
        coeff: dict[str, float] | None = None,
        notes: list[str] | None = None,
        paid_share: Figure | None = None,
        outstanding: Figure | None = None,
        accel: str | None = None,
        count: int | None = None,
    ) -> None:
        self.items = items  # per run (usage-billed), or empty when the compute is billed by the month
        self.monthly_items = monthly_items or []  # per month whatever the use (a term, a whole box)
        self.coeff = coeff or {}
        self.notes = notes or []
        self.paid_share = paid_share
        self.outstanding = outstanding
        self.accel = accel
        self.count = count


def _support(base: Figure, ex: Extras, where: str, per: Literal["run", "month"]) -> list[LineItem]:
    if not ex.support_percent:
        return []
    share = _a(ex.support_percent / 100, "", "support share of compute", where)
    return [LineItem(name="support", per=per, figure=(base * share).with_label("support"))]


def _usage(
    opt: Option,
    sc: Scenario,
    cat: Catalog,
    where: str,
    ex: Extras,
    billed: Figure,
    executed: Figure,
    spot: tuple[Figure | None, str] | None = None,
) -> _Priced:
    """Billed per hour of use (on-demand, spot, rental, capacity block, a shared reservation)."""
    price, accel, count = _price(opt, cat, where, sc.path or None)
    idle = ex.idle_fraction
    compute = (price * constant(opt.instances) * billed).with_label("compute")
    name = f"compute: {opt.instances} x {opt.instance} {opt.pricing}" + (f", idle {idle:.0%} billed" if idle else "")
    items = [LineItem(name=name, per="run", figure=compute)]
    spot_note = []
    if opt.pricing == "spot" and opt.spot is not None:
        items += _spot_items(opt, sc, where, price, billed, spot[0] if spot else None)
        spot_note += [spot[1]] if spot else []
    elif opt.pricing == "spot":
        spot_note.append(
            "spot interruptions are not priced: add [options.spot] interruptions_per_hour (and restart_result or "
            "restart_s) to bill the expected re-work"
        )
    items += _support(_sum([li.figure for li in items], "USD"), ex, where, "run")
    coeff = {
        "a": float(sum((li.figure.value for li in items), Decimal(0))) * (1 - float(idle)),
        "b": 0.0,
        "u0": 1 - float(idle),
    }
    out = _Priced(items, coeff=coeff, notes=spot_note, accel=accel, count=count)
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


def _reserved_term(
    opt: Option, sc: Scenario, cat: Catalog, where: str, ex: Extras, billed: Figure, executed: Figure
) -> _Priced:
    """A reservation bills every hour of its term for the committed instances; use above it is on-demand."""
    price, accel, count = _price(opt, cat, where, sc.path or None)
    committed = opt.commitment_instances if opt.commitment_instances is not None else opt.instances
    hpm = _hours_per_month(cat)
    paid = (_a(committed, "", "committed instances", where) * hpm).with_label("reserved instance-hours a month")
    used = (constant(opt.instances) * billed * executed).with_label("instance-hours used a month")
    commit = (price * paid).with_label(f"reservation: {committed} x {opt.instance} x every hour of the term")
    items = [
        LineItem(
            name=f"reservation: {committed} x {opt.instance} {opt.pricing}, every hour", per="month", figure=commit
        )
    ]
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
        extra = (_usable_price(row, where) * over).with_label("use above the commitment, on-demand")
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
    outstanding = None
    term = TERM_MONTHS.get(opt.pricing, 0)
    if sc.volumes.months < term:
        left = _a(term - sc.volumes.months, "month", "term months after the horizon", where)
        outstanding = (commit * left).with_label("commitment still owed after the horizon")
        notes.append(
            f"the {term}-month term outlives the {sc.volumes.months}-month horizon: {outstanding.value:,.2f} is still "
            "owed for its remaining months and is included in the horizon's total"
        )
    return _Priced([], items, notes=notes, paid_share=share, outstanding=outstanding, accel=accel, count=count)


def _owned(opt: Option, sc: Scenario, cat: Catalog, where: str, hours: Figure, executed: Figure) -> _Priced:
    """Owned or hosted boxes: shared (default, other work fills the rest) or dedicated (whole boxes)."""
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


def _derived(value: Decimal, unit: str, label: str, *inputs: Figure, note: str = "") -> Figure:
    """A derived figure from a rule Figure arithmetic cannot express (ceil, max), keeping its inputs."""
    return Figure(
        value=value,
        unit=unit,
        kind=Kind.DERIVED,
        label=label,
        inputs=inputs,
        note=note,
        source=f"{label} from " + ", ".join(f.label or f.unit for f in inputs),
    )


def _block_days(hours: Figure, cat: Catalog, where: str, sc: Scenario) -> tuple[int, Figure, Figure]:
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
        fix="split the run into checkpointed segments of at most 182 days each, or price it on_demand",
    )


def _capacity_block(
    opt: Option, sc: Scenario, cat: Catalog, where: str, ex: Extras, billed: Figure, executed: Figure
) -> _Priced:
    """Capacity Blocks: each run buys whole blocks of the durations AWS sells, paid whether used or not."""
    price, accel, count = _price(opt, cat, where, sc.path or None)
    most = _d(cat, "capacity_block_max_instances")
    if opt.instances > most.value:
        raise ConfigError(
            f"{opt.instances} instances exceed the {most.value} a Capacity Block holds",
            file=sc.path or None,
            field=f"{where}.instances",
            fix=f"use at most {most.value} instances per option (AWS allows 256 across blocks)",
        )
    days, day_rule, week_rule = _block_days(billed, cat, where, sc)
    block_h = _derived(Decimal(days * 24), "h", f"{days}-day Capacity Block", billed, day_rule, week_rule)
    compute = (price * constant(opt.instances) * block_h).with_label("capacity block")
    items = [
        LineItem(name=f"capacity block: {days} day(s) x {opt.instances} x {opt.instance}", per="run", figure=compute)
    ]
    items += _support(compute, ex, where, "run")
    share = (billed / block_h).with_label("share of paid capacity used")
    notes = [
        f"a {billed.value:,.1f} h run buys a {days}-day Capacity Block ({days * 24} h, paid up front and whole); "
        f"it uses {share.value:.0%} of it (blocks end at 11:30 UTC; a run that straddles that needs one more day)"
    ]
    return _Priced(items, notes=notes, paid_share=share, accel=accel, count=count)


def _restart_cost(opt: Option, sc: Scenario, where: str) -> Figure:
    """The measured cost of one interruption: steps lost x step time + restart time (run train --interrupt-at)."""
    assert opt.spot is not None
    src = opt.spot.restart_result or opt.result
    if src is not None:
        from accelpilot.pilot.result import read_result

        path = sc.resolve(src)
        res = read_result(path)
        figs = res.figures
        need = ("interrupt_steps_lost", "step_time_mean_s", "restart_s")
        missing = [k for k in need if k not in figs]
        if missing:
            raise InputFileError(
                f"result holds no {missing[0]} to price an interruption",
                file=str(path),
                field=f"figures.{missing[0]}",
                fix="re-run the training pilot with --interrupt-at STEP, or give restart_s in [options.spot]",
            )
        lost = figs["interrupt_steps_lost"].model_copy(update={"unit": ""})
        step = figs["step_time_mean_s"]
        return (lost * step + figs["restart_s"]).with_label("measured cost of one interruption")
    if opt.spot.restart_s is None:
        raise ConfigError(
            "spot needs the cost of one interruption",
            file=sc.path or None,
            field=f"{where}.spot.restart_s",
            fix='add restart_result = "<training result run with --interrupt-at>" or restart_s = <seconds>',
        )
    return _a(opt.spot.restart_s, "s", "cost of one interruption (assumed)", where)


def _spot_items(
    opt: Option, sc: Scenario, where: str, price: Figure, billed: Figure, advisor: Figure | None = None
) -> list[LineItem]:
    assert opt.spot is not None
    if opt.spot.interruptions_per_hour is not None:  # stated: it wins over the Spot Advisor (bill.spot)
        rate = _a(opt.spot.interruptions_per_hour, "1/h", "spot interruptions per hour", where)
    else:
        assert advisor is not None  # bill.spot.spot_rates refused the option otherwise
        rate = advisor
    lost = (rate * billed * _restart_cost(opt, sc, where) / SECONDS_PER_HOUR).with_label("re-work hours per run")
    return [
        LineItem(
            name=f"spot interruptions: {lost.value:,.2f} h expected re-work",
            per="run",
            figure=(price * constant(opt.instances) * lost).with_label("spot re-work"),
        )
    ]


def _serverless(
    opt: Option, sc: Scenario, cat: Catalog, where: str, peak: Figure, res: Any, result_path: str
) -> tuple[Figure, Figure, list[str], dict[str, Any]]:
    """Serverless GPU a month: worker lifetimes (cold start + busy + idle timeout) rounded up, plus always-on."""
    sv = opt.serverless
    assert sv is not None and opt.instance is not None
    row = cat.find_price(opt.instance, Pricing.SERVERLESS, opt.region, where=where, file=sc.path or None)
    _usable_price(row, where)
    if row.price_per_second is None:
        raise InputFileError(
            f"serverless row {row.instance} has no price_per_second",
            file=row.origin,
            field=f"price {row.instance} serverless.price_per_second",
            fix="give the provider's listed per-second price as price_per_second",
        )
    per_s = Figure(
        value=row.price_per_second,
        unit=f"{row.currency}/s",
        kind=row.kind,
        source=row.source,
        as_of=row.as_of,
        region=row.region,
        label=f"{row.instance} price per worker-second",
    )
    inc_v = row.billing_increment_s or Decimal(1)
    inc = Figure(
        value=inc_v,
        unit="s",
        kind=row.kind,
        source=row.source,
        as_of=row.as_of,
        label=f"{row.instance} billing increment",
    )
    if sc.volumes.requests_per_month is None:
        raise ConfigError(
            "serverless is billed by traffic: the scenario gives no requests_per_month",
            file=sc.path or None,
            field="volumes.requests_per_month",
            fix="add requests_per_month = <requests> to [volumes]",
        )
    demand = _a(sc.volumes.requests_per_month, "1/month", "requests per month", "volumes")
    if sv.cold_start_s is not None:
        cold = _a(sv.cold_start_s, "s", "cold start (assumed)", where)
    elif res is not None and any(k.startswith("bucket.") and k.endswith(".build_s") for k in res.figures):
        builds = [f for k, f in res.figures.items() if k.startswith("bucket.") and k.endswith(".build_s")]
        cold = builds[0]
        for f in builds[1:]:
            cold = cold + f
        cold = cold.with_label("cold start: the serving pilot's measured bucket builds (model load not included)")
    else:
        raise ConfigError(
            "no cold start for the serverless option",
            file=sc.path or None,
            field=f"{where}.serverless.cold_start_s",
            fix='add cold_start_s = <seconds>, or result = "<serving result with bucket builds>"',
        )
    secs_month = (_hours_per_month(cat) * SECONDS_PER_HOUR).with_label("seconds a month")
    workers = _a(sv.min_workers, "", "always-on workers", where)
    on_cap = (peak * secs_month * workers).with_label("requests always-on workers serve a month")
    over_v = max(Decimal(0), demand.value - on_cap.value)
    over = _derived(over_v, "1/month", "requests left to scale-from-zero workers", demand, on_cap)
    busy = (over / peak).with_label("busy worker-seconds a month") if over_v else None
    k = _a(sv.scale_ups_per_month, "1/month", "scale-ups per month", where)
    notes: list[str] = []
    parts: list[Figure] = []
    if sv.min_workers:
        parts.append((per_s * workers * secs_month).with_label("always-on workers"))
    if busy is not None:
        if k.value == 0:
            raise ConfigError(
                "traffic above the always-on workers needs at least one scale-up a month",
                file=sc.path or None,
                field=f"{where}.serverless.scale_ups_per_month",
                fix="give the number of bursts a month (scale-from-zero events), or raise min_workers",
            )
        timeout = _a(sv.idle_timeout_s, "s", "idle timeout (billed)", where)
        life = (cold + busy / k + timeout).with_label("worker lifetime per scale-up")
        rounded = _derived(
            Decimal(math.ceil(life.value / inc.value)) * inc.value, "s", "worker lifetime rounded up", life, inc
        )
        billed_s = (rounded * k).with_label("billed worker-seconds a month")
        parts.append((per_s * billed_s).with_label("scale-from-zero workers"))
        notes.append(
            f"serverless: {k.value:,.0f} scale-ups a month, each billed {rounded.value:,.0f} s (cold start "
            f"{cold.value:,.1f} s + busy {busy.value / k.value:,.1f} s + idle timeout {timeout.value:,.0f} s, "
            f"rounded up to {inc.value} s)"
        )
        paid = billed_s + secs_month * workers if sv.min_workers else billed_s
    else:
        paid = secs_month * workers
    used = (demand / peak).with_label("busy worker-seconds a month")
    monthly = _sum(parts, row.currency, "month").with_label("serverless compute")
    share = (used / paid).with_label("share of paid capacity used")
    del result_path
    ex = opt.extras if opt.extras is not None else sc.extras
    curve = {
        "serverless": True,
        "per_second": float(per_s.value),
        "increment_s": float(inc.value),
        "min_workers": sv.min_workers,
        "scale_ups": float(sv.scale_ups_per_month),
        "cold_start_s": float(cold.value),
        "idle_timeout_s": float(sv.idle_timeout_s),
        "capacity_rps": float(peak.value),
        "hours_per_month": float(_hours_per_month(cat).value),
        "overhead": float(_sum([li.figure for li in _extras_monthly(ex, cat, where)], "USD", "month").value),
        "support": float(ex.support_percent / 100),
        "tax": float(ex.tax_percent / 100),
        "accepted": 1.0,
    }
    return monthly, share, notes, curve


class _PerBill:
    """Figures every option and comparison of one bill use alike, made once per bill (gather once, then compute;
    issue 10's speed). Each equals what an option would make for itself, so the bill reads the same."""

    def __init__(self, sc: Scenario, spot: dict[str, tuple[Figure | None, str]] | None = None) -> None:
        self.sc = sc
        self.spot = spot or {}  # spot options' interruption rates and notes (bill.spot.spot_rates), read once
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


def price_option(opt: Option, sc: Scenario, cat: Catalog, index: int, per_bill: _PerBill | None = None) -> OptionBill:
    where = f"options[{index + 1} {opt.name!r}]"
    ex = opt.extras if opt.extras is not None else sc.extras
    cur = sc.currency
    bill = per_bill or _PerBill(sc)
    rpm = bill.rpm
    maint = _a(opt.maintenance_per_month, "USD/month", "maintenance of a second toolchain", where)
    one_off = (_a(opt.porting_days, "day", "porting engineer-days", where) * bill.day_rate).with_label("porting")
    notes: list[str] = []
    if opt.pricing == "measured_spend":
        from accelpilot.bill.measured_spend import monthly_figure, price_measured_spend

        totals = _totals(monthly_figure(opt, sc, where), maint, one_off, sc.volumes.months)
        return price_measured_spend(opt, sc, cat, where, maint, one_off, totals)
    if sc.workload == "serving":
        return _price_serving(opt, sc, cat, where, ex, maint, one_off)
    hours, accepted, more, result_path = training_hours(opt, sc, cat, where)
    notes += more
    if accepted is None:
        accepted = _a(opt.accepted_share if opt.accepted_share is not None else 1, "", "share of runs accepted", where)
        if opt.accepted_share is None:
            accepted = accepted.with_label(accepted.label, note="assumed: every run meets its quality target")
    # A rejected run is re-run: runs executed a month = accepted runs wanted / accepted share.
    executed = (rpm / accepted).with_label("runs executed a month") if accepted.value else rpm
    idle = ex.idle_fraction
    billed = hours / (constant(1) - _a(idle, "", "idle fraction", where)) if idle else hours
    if opt.pricing in ("owned", "buy_and_host"):
        p = _owned(opt, sc, cat, where, hours, executed)
    elif opt.pricing.startswith("reserved") and opt.dedicated is not False:
        p = _reserved_term(opt, sc, cat, where, ex, billed, executed)
    elif opt.pricing == "capacity_block":
        p = _capacity_block(opt, sc, cat, where, ex, billed, executed)
    elif opt.pricing == "serverless":
        raise ConfigError(
            "serverless GPU is priced for serving workloads here",
            file=sc.path or None,
            field=f"{where}.pricing",
            fix='use on_demand, spot or rental for training, or set workload = "serving"',
        )
    else:
        p = _usage(opt, sc, cat, where, ex, billed, executed, bill.spot.get(opt.name))
    notes += p.notes
    if opt.extras is None:
        # [extras] shared by every option: priced once per bill (its figures name the scenario's [extras])
        extras, extras_month = bill.extras(cat)
    else:
        extras = _extras_monthly(ex, cat, where)
        extras_month = _sum([li.figure for li in extras], cur, "month")
    if p.monthly_items:
        # Billed by the month whatever the use: the month's bill, shared by the runs executed in it.
        month_items = p.monthly_items + extras
        month_items += _tax(month_items, ex, where, "month", cur)
        monthly = _sum([li.figure for li in month_items], cur, "month").with_label("monthly cost")
        items = month_items
        cost_per_run = (monthly / executed).with_label("cost per run")
        cpar = (monthly / rpm).with_label("cost per accepted run") if accepted.value else None
        fixed = monthly  # paid whatever the runs (within the commitment or the boxes)
    else:
        # Per-run costs scale with re-runs; monthly extras are bought once a month, never twice.
        items = p.items + [
            LineItem(name=f"{li.name} (per run)", per="run", figure=(li.figure / executed).with_label(li.name))
            for li in extras
        ]
        items += _tax(items, ex, where, "run", cur)
        if opt.extras is None and not ex.tax_percent:
            fixed = bill.untaxed_extras_month(cat)  # the same for every option without its own [extras]
        else:
            tax = _a(ex.tax_percent / 100, "", "tax share", where) if ex.tax_percent else constant(0)
            fixed = _fixed_month(extras_month, tax)
        cost_per_run = _sum([li.figure for li in items], cur).with_label("cost per run")
        if accepted.value:
            cpar = (cost_per_run / accepted).with_label("cost per accepted run")
            monthly = (cpar * rpm).with_label("monthly cost")
        else:
            cpar = None
            monthly = _zero(cur, "month")
    if not accepted.value:
        notes.append("no pilot run reached its quality target: no accepted run to price")
    coeff = dict(p.coeff)
    if coeff:
        # sweep: cost_per_accepted_run(u, r) = (a/u + b + c/r) / accepted; extras are not divided by the
        # accepted share, so c carries it back out.
        coeff["c"] = float(extras_month.value) * float(accepted.value)
        coeff.update(accepted=float(accepted.value), one_off=float(one_off.value), maint=float(maint.value))
    total, total36 = _totals(monthly, maint, one_off, sc.volumes.months, p.outstanding, bill.horizon)
    return OptionBill(
        name=opt.name,
        pricing=opt.pricing,
        instance=opt.instance,
        accelerator=p.accel,
        accelerator_count=p.count,
        workload="training",
        hours_per_run=hours,
        line_items=items,
        cost_per_run=cost_per_run,
        accepted_share=accepted,
        cost_per_accepted_run=cpar,
        monthly_cost=monthly,
        one_off_cost=one_off,
        maintenance_per_month=maint,
        total_months=total,
        total_36_months=total36,
        paid_capacity_share=p.paid_share,
        outstanding_commitment=p.outstanding,
        result_file=result_path or None,
        measured=bool(result_path),
        sweep_coefficients=coeff,
        fixed_per_month=fixed,
        notes=notes,
    )


def _price_serving(
    opt: Option, sc: Scenario, cat: Catalog, where: str, ex: Extras, maint: Figure, one_off: Figure
) -> OptionBill:
    """Instances sized for the volume (or one at its capacity); idle time is billed once. Per accepted output."""
    cur = sc.currency
    notes: list[str] = []
    result_path = ""
    idle_measured: Figure | None = None
    res: Any = None
    if opt.result is not None:
        res, result_path = _read_result(opt, sc)
        sv = res.serving
        if res.errors:
            raise InputFileError(
                f"the serving pilot recorded {len(res.errors)} error(s) ({res.errors[0]}); its rate is not an "
                "accepted output",
                file=result_path,
                field="errors",
                fix="re-run the serving pilot, or use assumed peak_qps in the option",
            )
        if sv is None or not sv.peak_qps_under_slo:
            raise InputFileError(
                "result holds no peak rate under the SLO",
                file=result_path,
                field="serving.peak_qps_under_slo",
                fix="re-run the serving pilot with --find-peak",
            )
        mult, notes = _device_multiplier(opt, cat, res, where)
        peak = _measured(sv.peak_qps_under_slo, "1/s", "peak requests/s under the SLO", result_path, res) * mult
        good = _measured(
            sv.goodput_share if sv.goodput_share is not None else 1.0, "", "goodput share", result_path, res
        )
        # output parity (run serve --compare-to): only answers that match the reference platform count as accepted
        parity = (sv.model_extra or {}).get("parity_accepted_share")
        if isinstance(parity, (int, float)) and not isinstance(parity, bool) and 0 <= parity <= 1:
            good = good * _measured(parity, "", "accepted share of answers (output parity)", result_path, res)
        tpr = (
            _measured(sv.tokens_per_request, "token", "tokens per request", result_path, res)
            if sv.tokens_per_request
            else None
        )
        if sv.idle_fraction is not None:
            idle_measured = _measured(sv.idle_fraction, "", "measured idle fraction", result_path, res)
    else:
        if opt.peak_qps is None or opt.peak_qps == 0:
            raise ConfigError(
                f"option {opt.name!r} names no result and no assumed peak_qps",
                file=sc.path or None,
                field=f"{where}.peak_qps",
                fix='add peak_qps = <requests/s> or result = "<.json>"',
            )
        if opt.scaling_efficiency != 1:
            _refuse_scaling(opt, sc, where, "an assumed peak_qps")
        peak = _a(opt.peak_qps, "1/s", "peak requests/s under the SLO", where) * constant(opt.instances)
        good = _a(opt.goodput_share if opt.goodput_share is not None else 1, "", "goodput share", where)
        tpr = _a(opt.tokens_per_request, "token", "tokens per request", where) if opt.tokens_per_request else None
    if opt.accepted_share is not None:
        good = (good * _a(opt.accepted_share, "", "share of responses accepted", where)).with_label("accepted share")
    hpm = _hours_per_month(cat)
    accel: str | None = None
    count: int | None = None
    unit_month: Figure | None = None
    if opt.pricing == "serverless":
        pass
    elif opt.pricing in ("owned", "buy_and_host"):
        assert opt.owned is not None
        box_items, energy_h = _owned_monthly(opt.owned, opt, cat, where)
        # A serving box serves all month: its whole cost is the service's, and its idle time is counted once,
        # through idle_fraction or the volume, never again through the utilisation.
        unit_month = (_sum([li.figure for li in box_items], cur, "month") + energy_h * hpm) * constant(opt.instances)
        unit_month = unit_month.with_label("owned system per month, always on")
        notes.append("owned serving: the box is on all month; utilisation is not applied (idle is billed once)")
    else:
        price, accel, count = _price(opt, cat, where, sc.path or None)
        unit_month = (price * constant(opt.instances) * hpm).with_label("instance-month, always on")
    capacity = (peak * hpm * SECONDS_PER_HOUR).with_label("requests per month at peak")
    share: Figure | None
    idle = _a(ex.idle_fraction, "", "idle fraction", where) if ex.idle_fraction else idle_measured
    usable = (capacity * (constant(1) - idle)).with_label("usable requests per month") if idle is not None else capacity
    fleet: list[FleetMode] = []
    fleet_inputs: FleetInputs | None = None
    curve: dict[str, Any] = {}
    tr = sc.traffic
    if tr is not None and ex.idle_fraction:
        raise ConfigError(
            "idle_fraction is derived from the traffic profile when [traffic] is given",
            file=sc.path or None,
            field=f"{where}.extras.idle_fraction" if opt.extras is not None else "extras.idle_fraction",
            fix="remove idle_fraction, or remove [traffic] to assume it",
        )
    if tr is not None and sc.volumes.requests_per_month is None:
        raise ConfigError(
            "[traffic] shapes a monthly volume, and the scenario gives none",
            file=sc.path or None,
            field="volumes.requests_per_month",
            fix="add requests_per_month = <requests> to [volumes]",
        )
    if opt.operation == "scheduled" and (tr is None or not tr.hourly_weights):
        raise ConfigError(
            "a scheduled fleet follows the hour-by-hour traffic, and the scenario gives no hourly_weights",
            file=sc.path or None,
            field=f"{where}.operation",
            fix='add hourly_weights = [24 numbers] to [traffic], or use operation = "always_on"',
        )
    if unit_month is None:
        monthly_compute, share, more, curve = _serverless(opt, sc, cat, where, peak, res, result_path)
        notes += more
        n = 0
        served = _a(sc.volumes.requests_per_month, "1/month", "requests per month", "volumes")
    elif tr is not None:
        demand = _a(sc.volumes.requests_per_month, "1/month", "requests per month", "volumes")
        extras_month = _sum([li.figure for li in _extras_monthly(ex, cat, where)], cur, "month")
        fleet, curve = plan(
            demand,
            peak,
            tr,
            (unit_month / hpm).with_label("instance-hour"),
            good,
            hpm,
            extras_month,
            ex.support_percent / 100,
            ex.tax_percent / 100,
        )
        chosen = next(m for m in fleet if m.mode == opt.operation)
        fleet_inputs = _fleet_inputs(opt, tr, unit_month / hpm, peak, good, extras_month, ex, hpm, demand)
        n = chosen.instances
        monthly_compute = (unit_month / hpm * chosen.instance_hours).with_label(f"{chosen.mode} fleet")
        served = demand
        share = (constant(1) - chosen.idle_share).with_label("share of paid capacity used")
        notes.append(
            f"{opt.operation.replace('_', '-')} fleet sized from the peak rate: {n} instance(s) at peak, "
            f"{chosen.instance_hours.value:,.0f} instance-hours a month, idle share {chosen.idle_share.value:.1%} "
            "(derived from [traffic])"
        )
    elif sc.volumes.requests_per_month is not None:
        demand = _a(sc.volumes.requests_per_month, "1/month", "requests per month", "volumes")
        n = max(1, math.ceil(demand.value / usable.value))
        monthly_compute = (unit_month * constant(n)).with_label(f"{n} always-on instance(s)")
        served = demand
        share = (demand / (capacity * constant(n))).with_label("share of paid capacity used")
        notes.append(
            f"{n} always-on instance(s) for {demand.value:,.0f} requests a month; idle share of provisioned "
            f"capacity {1 - share.value:.1%} (billed)"
        )
    else:
        n = 1
        monthly_compute = unit_month
        served = usable
        share = (constant(1) - idle).with_label("share of paid capacity used") if idle is not None else None
    accepted_month = (served * good).with_label("accepted requests per month")
    if curve:
        curve["accepted"] = float(good.value)
    what = f"{n} x {opt.instance or opt.pricing}" if n else f"serverless {opt.instance}"
    items = [LineItem(name=f"compute: {what}", per="month", figure=monthly_compute)]
    items += _support(monthly_compute, ex, where, "month")
    items += _extras_monthly(ex, cat, where)
    items += _tax(items, ex, where, "month", cur)
    monthly = _sum([li.figure for li in items], cur, "month").with_label("monthly cost")
    per_1k = (monthly / accepted_month * constant(1000)).with_label("cost per 1,000 accepted requests")
    per_m_tok = None
    if tpr is not None:
        per_m_tok = (monthly / (accepted_month * tpr) * constant(1_000_000)).with_label(
            "cost per million accepted tokens"
        )
    total, total36 = _totals(monthly, maint, one_off, sc.volumes.months)
    return OptionBill(
        name=opt.name,
        pricing=opt.pricing,
        instance=opt.instance,
        accelerator=accel,
        accelerator_count=count,
        workload="serving",
        line_items=items,
        accepted_share=good,
        cost_per_1k_accepted_requests=per_1k,
        cost_per_million_accepted_tokens=per_m_tok,
        accepted_requests_per_month=accepted_month,
        instances_needed=n,
        fleet=fleet,
        fleet_curve=curve,
        fleet_inputs=fleet_inputs,
        monthly_cost=monthly,
        one_off_cost=one_off,
        maintenance_per_month=maint,
        total_months=total,
        total_36_months=total36,
        paid_capacity_share=share,
        result_file=result_path or None,
        measured=bool(result_path),
        notes=notes,
    )


# --- comparisons -------------------------------------------------------------------------------


def compare(base: OptionBill, cand: OptionBill, sc: Scenario, per_bill: _PerBill | None = None) -> Comparison:
    rpm = Decimal(sc.volumes.runs_per_month)
    one_off = cand.one_off_cost
    extra_maint = cand.maintenance_per_month.value - base.maintenance_per_month.value
    if base.workload == "training" and base.cost_per_accepted_run is not None and cand.cost_per_accepted_run:
        bill = per_bill or _PerBill(sc)
        saving = (base.cost_per_accepted_run - cand.cost_per_accepted_run).with_label("saving per accepted run")
        pct = saving.value / base.cost_per_accepted_run.value * 100 if base.cost_per_accepted_run.value else None
        net = saving.value - extra_maint / rpm
        runs = months = None
        if net > 0:
            runs = max(1, int((one_off.value / net).to_integral_value(rounding=ROUND_CEILING)))
            months = one_off.value / (net * rpm)
        return Comparison(
            baseline=base.name,
            candidate=cand.name,
            saving_per_run=saving,
            saving_percent=pct,
            saving_per_month=(saving * bill.rpm),
            one_off_cost=one_off,
            break_even_runs=runs,
            break_even_months=months,
            **training_flips(base, cand, sc, bill),
        )
    if base.cost_per_1k_accepted_requests is not None and cand.cost_per_1k_accepted_requests is not None:
        # Spend per accepted output at the same served volume (the baseline's): an option with twice the
        # capacity is not twice the cost of the same traffic.
        volume = base.accepted_requests_per_month or (
            base.monthly_cost / base.cost_per_1k_accepted_requests * constant(1000)
        ).with_label("accepted requests per month")  # a measured-spend baseline states only its cost per 1k
        per_1k = base.cost_per_1k_accepted_requests - cand.cost_per_1k_accepted_requests
        saving_m = (per_1k * volume / constant(1000)).with_label("saving per month")
        pct = per_1k.value / base.cost_per_1k_accepted_requests.value * 100
    else:
        saving_m = (base.monthly_cost - cand.monthly_cost).with_label("saving per month")
        pct = saving_m.value / base.monthly_cost.value * 100 if base.monthly_cost.value else None
    net = saving_m.value - extra_maint
    months = one_off.value / net if net > 0 else None
    return Comparison(
        baseline=base.name,
        candidate=cand.name,
        saving_percent=pct,
        saving_per_month=saving_m,
        one_off_cost=one_off,
        break_even_months=months,
        **serving_flips(base, cand, sc),
    )


def decision_margin(base: OptionBill, cand: OptionBill, sc: Scenario) -> Figure:
    """The saving a move must reach to be acted on (seed 004): wider when either side's hours or rates are
    assumed rather than measured."""
    measured = cand.measured and base.measured
    return assumption(
        sc.decision.margin if measured else sc.decision.assumed_margin,
        "",
        source="scenario [decision] " + ("margin" if measured else "assumed_margin"),
        label="decision margin (" + ("measured" if measured else "assumed") + " hours or rates)",
    )


def _fleet_inputs(
    opt: Option,
    tr: Traffic,
    instance_hour: Figure,
    peak: Figure,
    good: Figure,
    overhead: Figure,
    ex: Extras,
    hpm: Figure,
    demand: Figure,
) -> FleetInputs:
    """The exact inputs ``plan`` priced the chosen fleet from, kept for its flip points."""
    src = "scenario [traffic]"
    shares = hourly_shares(tr) if opt.operation == "scheduled" else None
    return FleetInputs(
        instance_hour=instance_hour.with_label(f"{opt.name}: instance-hour"),
        capacity_rps=peak,
        instances=opt.instances,
        accepted=good,
        overhead=overhead,
        support_share=ex.support_percent / 100,
        tax_share=ex.tax_percent / 100,
        headroom=assumption(tr.headroom, "", source=src, label="headroom above peak"),
        peak_to_mean=assumption(peak_to_mean(tr), "", source=src, label="peak-to-mean ratio"),
        shares=shares if shares is not None else [peak_to_mean(tr)],
        hours_per_month=hpm,
        demand=demand,
    )


def serving_flips(base: OptionBill, cand: OptionBill, sc: Scenario) -> dict[str, Figure | None]:
    """Serving flip points (issue 10, section 5), each a derived figure whose leaves are the fleets' inputs.

    ``flip_requests_per_month``: the lowest monthly volume above today's at which the candidate's cost per 1,000
    accepted requests crosses the baseline's, both fleets re-sized from [traffic] in whole instances (porting
    and maintenance are not in it: they are in the break-even). ``flip_peak_qps``: the lowest peak rate per
    candidate instance at which its saving reaches the [decision] margin at today's volume.
    """
    out: dict[str, Figure | None] = {"flip_requests_per_month": None, "flip_peak_qps": None}
    fc, fb = cand.fleet_inputs, base.fleet_inputs
    if fc is None or base.cost_per_1k_accepted_requests is None:
        return out
    cand_in = (fc.instance_hour, fc.capacity_rps, fc.accepted, fc.overhead, fc.peak_to_mean, fc.headroom, fc.demand)
    if fb is not None:
        v = volume_flip(fb, fc)
        if v is not None:
            out["flip_requests_per_month"] = Figure(
                value=Decimal(v),
                unit="1/month",
                kind=Kind.DERIVED,
                label=f"{cand.name}: requests a month at which it crosses {base.name} per 1,000 accepted requests",
                source="the lowest monthly volume above today's at which the fleets, re-sized from [traffic] in "
                "whole instances, change which option costs less per 1,000 accepted requests (bill.fleet)",
                inputs=(*cand_in, fb.instance_hour, fb.capacity_rps, fb.accepted, fb.overhead),
            )
    margin = decision_margin(base, cand, sc)
    p = peak_flip(fc, base.cost_per_1k_accepted_requests.value, margin.value)
    if p is not None:
        per_instance = p / fc.instances
        value = Decimal(per_instance.numerator) / Decimal(per_instance.denominator)
        if Fraction(value) < per_instance:  # a rounded quotient must not fall below the edge it stands for
            value = value.next_plus()
        out["flip_peak_qps"] = Figure(
            value=value,
            unit="1/s",
            kind=Kind.DERIVED,
            label=f"{cand.name}: peak requests/s per instance at which the saving reaches the margin",
            source="the lowest peak rate under the SLO per instance at which the fleet, sized from [traffic] in "
            "whole instances, costs the [decision] margin less per 1,000 accepted requests than the baseline "
            "at today's volume (bill.fleet)",
            inputs=(base.cost_per_1k_accepted_requests, margin, *cand_in),
        )
    return out


def lifetime_months(sc: Scenario) -> int:
    """The port must repay within the workload's lifetime ([gates]), else the scenario's horizon."""
    return sc.gates.workload_lifetime_months or sc.volumes.months


def training_flips(
    base: OptionBill, cand: OptionBill, sc: Scenario, per_bill: _PerBill | None = None
) -> dict[str, Figure | None]:
    """How far the inputs may move before the decision flips (issue 10, section 5), each a derived figure.

    Flip = the point where the candidate's monthly cost, its maintenance and its port spread over the lifetime
    equal the baseline's monthly cost and maintenance. Monthly cost is split into what is paid whatever the runs
    (``fixed_per_month``) and what scales with accepted runs (the rest), which is linear in hours per run and in
    1 / utilisation for an owned box sharing its hours.
    """
    out: dict[str, Figure | None] = {"flip_hours_per_run": None, "flip_utilisation": None, "flip_runs_per_month": None}
    if base.cost_per_accepted_run is None or cand.cost_per_accepted_run is None:
        return out
    if base.fixed_per_month is None or cand.fixed_per_month is None:
        return out
    bill = per_bill or _PerBill(sc)
    rpm = bill.rpm
    port = (cand.one_off_cost / bill.life).with_label("porting spread over the lifetime")
    base_total, var_b = bill.baseline(base)
    cand_over = (cand.maintenance_per_month + port).with_label("candidate's maintenance and port a month")
    var_c = (cand.cost_per_accepted_run - cand.fixed_per_month / rpm).with_label("candidate per accepted run")
    # budget the candidate's run-scaled costs may reach each month before the decision flips
    room = (base_total - cand_over - cand.fixed_per_month).with_label("room for the candidate's runs a month")
    if var_c.value > 0 and cand.hours_per_run is not None and room.value > 0:
        out["flip_hours_per_run"] = (cand.hours_per_run * room / (var_c * rpm)).with_label(
            f"{cand.name}: break-even hours per run"
        )
    if var_b.value > var_c.value:
        gap = (cand.fixed_per_month + cand_over - base.fixed_per_month - base.maintenance_per_month).with_label(
            "candidate's extra monthly fixed costs"
        )
        if gap.value > 0:
            out["flip_runs_per_month"] = (gap / (var_b - var_c)).with_label("break-even accepted runs per month")
    for o in (cand, base):
        k = o.sweep_coefficients
        if "u0" not in k or o.pricing not in ("owned", "buy_and_host"):
            continue
        # the other side's month, made only here: most comparisons hold no owned box (issue 10's speed)
        if o is cand:
            other_total = base_total - cand_over
        else:
            other_total = (cand.monthly_cost + cand_over - base.maintenance_per_month).with_label("candidate a month")
        # owned, shared: cost per accepted run = (a/u + b + c/r) / accepted (bill.sweep's form); solve for the
        # u at which its monthly cost equals ``other_total``.
        target = other_total.value / rpm.value * Decimal(repr(k["accepted"]))
        denom = target - Decimal(repr(k["b"])) - Decimal(repr(k["c"])) / rpm.value
        if denom > 0:
            u = Decimal(repr(k["a"])) / denom
            util = next(leaf for leaf in o.cost_per_accepted_run.leaves() if leaf.label == "utilisation")  # type: ignore[union-attr]
            out["flip_utilisation"] = Figure(
                value=u,
                unit="",
                kind=Kind.DERIVED,
                label=f"{o.name}: break-even utilisation",
                source="utilisation at which the owned box costs what the other option costs",
                inputs=(util, other_total),
            )
        break
    return out


def make_bill(sc: Scenario, cat: Catalog, evidence: EvidenceSet | None = None) -> Bill:
    """The whole bill: every option priced, every option compared with the baseline. ``evidence``: the
    scenario's [evidence] files, already read (the Spot Advisor's interruption bands price spot)."""
    from accelpilot.bill.scenario import check_money_unit
    from accelpilot.bill.spot import spot_rates

    check_money_unit(sc.currency, sc.path or "scenario")
    per_bill = _PerBill(sc, spot=spot_rates(sc, evidence, _hours_per_month(cat)))
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
