"""A serving option priced per month and per accepted output."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from accelpilot.bill.common import (
    CONVERTED,
    SECONDS_PER_HOUR,
    _a,
    _extras_monthly,
    _hours_per_month,
    _price,
    _sum,
    _support,
    _tax,
    _totals,
)
from accelpilot.bill.fleet import hourly_shares, peak_to_mean, plan
from accelpilot.bill.measured import _device_multiplier, _measured, _read_result, _refuse_scaling, unverified_note
from accelpilot.bill.model import FleetInputs, FleetMode, LineItem, OptionBill
from accelpilot.bill.pricing.owned import _owned_monthly
from accelpilot.bill.pricing.serverless import _serverless
from accelpilot.bill.scenario import Extras, Option, Scenario, Traffic
from accelpilot.catalog.loader import Catalog
from accelpilot.errors import ConfigError, InputFileError
from accelpilot.figures import Figure, assumption, constant

if TYPE_CHECKING:
    from accelpilot.pilot.result import PilotResult


def _price_serving(
    opt: Option,
    sc: Scenario,
    cat: Catalog,
    where: str,
    ex: Extras,
    maint: Figure,
    one_off: Figure,
    results: Mapping[str, PilotResult],
) -> OptionBill:
    """Instances sized for the volume (or one at its capacity); idle time is billed once. Per accepted output."""
    cur = sc.currency
    notes: list[str] = []
    result_path = ""
    idle_measured: Figure | None = None
    res: Any = None
    if opt.result is not None:
        res, result_path = _read_result(opt, sc, results)
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
        if opt.scaling_result is not None:
            notes.append(f"scaling_result {opt.scaling_result} not used: it scales training throughput")
        peak = (
            _measured(
                sv.peak_qps_under_slo, "1/s", "peak requests/s under the SLO", result_path, res, opt.result_unverified
            )
            * mult
        )
        good = _measured(
            sv.goodput_share if sv.goodput_share is not None else 1.0,
            "",
            "goodput share",
            result_path,
            res,
            opt.result_unverified,
        )
        # output parity (run serve --compare-to): only answers that match the reference platform count as accepted
        parity = (sv.model_extra or {}).get("parity_accepted_share")
        if isinstance(parity, (int, float)) and not isinstance(parity, bool) and 0 <= parity <= 1:
            good = good * _measured(
                parity, "", "accepted share of answers (output parity)", result_path, res, opt.result_unverified
            )
        tpr = (
            _measured(sv.tokens_per_request, "token", "tokens per request", result_path, res, opt.result_unverified)
            if sv.tokens_per_request
            else None
        )
        if sv.idle_fraction is not None:
            idle_measured = _measured(
                sv.idle_fraction, "", "measured idle fraction", result_path, res, opt.result_unverified
            )
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
    rate: Figure | None = None  # the price the compute line scales with (None: owned)
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
        rate = price
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
        monthly_compute, share, more, curve, rate = _serverless(opt, sc, cat, where, peak, res, result_path)
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
    if rate is not None and rate.note.startswith(CONVERTED):
        notes.append(f"price {rate.note}")
    what = f"{n} x {opt.instance or opt.pricing}" if n else f"serverless {opt.instance}"
    items = [LineItem(name=f"compute: {what}", per="month", figure=monthly_compute)]
    items += _support(monthly_compute, ex, where, "month")
    items += _extras_monthly(ex, cat, where)
    staff = None
    if opt.owned is not None and opt.owned.staff_per_month:  # internal pay inside the box's month: untaxed by default
        staff = _a(opt.owned.staff_per_month, "USD/month", "staff_per_month", where) * constant(opt.instances)
    items += _tax(items, ex, where, "month", cur, internal=staff)
    monthly = _sum([li.figure for li in items], cur, "month").with_label("monthly cost")
    per_1k = (monthly / accepted_month * constant(1000)).with_label("cost per 1,000 accepted requests")
    rated = None
    if rate is not None and accepted_month.value:  # compute and its support scale with the price; taxed
        scaled = monthly_compute.value * (1 + ex.support_percent / 100) * (1 + ex.tax_percent / 100)
        rated = scaled / accepted_month.value * 1000
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
        measured=bool(result_path) and not opt.result_unverified,
        result_unverified=opt.result_unverified if result_path else None,
        rate=rate if rated is not None else None,
        rated_part=rated,
        notes=notes + unverified_note(opt, result_path),
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
