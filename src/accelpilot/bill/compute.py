"""Pricing: scenario + catalog (+ pilot results) -> Bill. Pure functions over plain data.

All arithmetic goes through Figure, so every line item remembers its inputs and a vendor claim can never
enter a cost. Training options are priced per run; serving options per month and per accepted output.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, Decimal
from typing import TYPE_CHECKING, Any

from accelpilot.bill.model import Bill, Comparison, LineItem, OptionBill
from accelpilot.bill.scenario import Extras, Option, Owned, Scenario
from accelpilot.catalog.loader import Catalog, parse_pricing
from accelpilot.errors import ConfigError, InputFileError
from accelpilot.figures import Figure, Kind, assumption, constant

if TYPE_CHECKING:
    from accelpilot.pilot.result import PilotResult

SECONDS_PER_HOUR = constant(3600).model_copy(update={"unit": "s/h"})
DTO_TIERS_GB = (Decimal(10240), Decimal(40960), Decimal(102400))  # 10 TB, next 40 TB, next 100 TB, then the rest


def _a(value: Any, unit: str, label: str, where: str) -> Figure:
    return assumption(value, unit, source=f"scenario {where}", label=label)


def _hours_per_month(cat: Catalog) -> Figure:
    return cat.default("hours_per_month").figure()


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
    rows = [r for r in cat.prices if opt.instance and r.instance.lower() == opt.instance.lower()]
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
    return effs[world], note


def _platform_note(opt: Option, cat: Catalog, res: PilotResult, how: str) -> list[str]:
    """Say so when a result measured on one platform prices another."""
    accel = None
    if opt.instance:
        inst = cat.instance(opt.instance)
        rows = [r for r in cat.prices if r.instance.lower() == opt.instance.lower()]
        accel = inst.accelerator if inst else (rows[0].accelerator if rows else None)
    measured_on = res.platform.accelerator or res.platform.device_type
    if accel and (res.platform.accelerator or "").lower() != accel.lower():
        return [
            f"measured on {measured_on} ({res.platform.device_name}), priced as {accel}: the figures are the "
            f"pilot device's ({how}), not a measurement of {accel}"
        ]
    return []


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
    return row.price_figure(), row.accelerator, row.accelerator_count


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
        rate = cat.default(f"dto_tier{i}_per_gb").figure()
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
                    figure=(_a(v, "GB", field, where) * cat.default(key).figure()).with_label(label),
                )
            )
    if ex.data_transfer_out_gb:
        out.append(
            LineItem(
                name="data transfer out",
                per="month",
                figure=dto_monthly(_a(ex.data_transfer_out_gb, "GB/month", "data_transfer_out_gb", where), cat),
            )
        )
    return out


def _owned_items(o: Owned, opt: Option, hours: Figure, cat: Catalog, where: str) -> tuple[list[LineItem], Figure]:
    """Owned/buy-and-host: fixed monthly costs allocated to the run by its share of utilised hours."""

    def d(value: Decimal | None, key: str) -> Figure:
        return _a(value, cat.default(key).unit, key, where) if value is not None else cat.default(key).figure()

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
    fixed = _sum([li.figure for li in monthly], "USD", "month")
    util = _a(o.utilisation, "", "utilisation", where)
    energy = (power * d(o.pue, "pue") * d(o.electricity_per_kwh, "electricity_per_kwh") * hours).with_label("energy")
    items = [
        LineItem(
            name=f"{li.name} (allocated)",
            per="run",
            figure=(li.figure * hours / (_hours_per_month(cat) * util)).with_label(li.name),
        )
        for li in monthly
    ]
    items.append(LineItem(name="energy (kW x PUE x price)", per="run", figure=energy))
    return items, fixed


def _totals(monthly: Figure, maint: Figure, one_off: Figure, months: int) -> tuple[Figure, Figure]:
    """Cost over the scenario's months and over 36 months: monthly cost and maintenance, plus the one-off port."""
    horizon = _a(months, "month", "months", "volumes")
    m36 = constant(36).model_copy(update={"unit": "month", "label": "36 months"})
    total = (monthly * horizon + maint * horizon + one_off).with_label(f"total over {months} months")
    return total, (monthly * m36 + maint * m36 + one_off).with_label("total over 36 months")


def price_option(opt: Option, sc: Scenario, cat: Catalog, index: int) -> OptionBill:
    where = f"options[{index + 1} {opt.name!r}]"
    ex = opt.extras if opt.extras is not None else sc.extras
    cur = sc.currency
    rpm = _a(sc.volumes.runs_per_month, "1/month", "runs per month", "volumes")
    maint = _a(opt.maintenance_per_month, "USD/month", "maintenance of a second toolchain", where)
    one_off = (
        _a(opt.porting_days, "day", "porting engineer-days", where)
        * _a(sc.engineering.day_rate, "USD/day", "engineer day rate", "engineering")
    ).with_label("porting")
    notes: list[str] = []
    accel: str | None = None
    count: int | None = None
    if sc.workload == "serving":
        return _price_serving(opt, sc, cat, where, ex, maint, one_off)
    hours, accepted, more, result_path = training_hours(opt, sc, cat, where)
    notes += more
    items: list[LineItem] = []
    idle = ex.idle_fraction
    billed = hours / (constant(1) - _a(idle, "", "idle fraction", where)) if idle else hours
    coeff: dict[str, float] = {}
    if opt.pricing in ("owned", "buy_and_host"):
        assert opt.owned is not None
        items, fixed = _owned_items(opt.owned, opt, hours, cat, where)
        inst = cat.instance(opt.instance) if opt.instance else None
        accel, count = (inst.accelerator, inst.accelerator_count) if inst else (None, None)
        util = float(opt.owned.utilisation)
        coeff["a"] = float(fixed.value) * float(hours.value) / float(_hours_per_month(cat).value)
        coeff["b"] = float(items[-1].figure.value)
        coeff["u0"] = util
    else:
        price, accel, count = _price(opt, cat, where, sc.path or None)
        compute = (price * constant(opt.instances) * billed).with_label("compute")
        name = f"compute: {opt.instances} x {opt.instance} {opt.pricing}" + (
            f", idle {idle:.0%} billed" if idle else ""
        )
        items.append(LineItem(name=name, per="run", figure=compute))
        if ex.support_percent:
            items.append(
                LineItem(
                    name="support",
                    per="run",
                    figure=(compute * _a(ex.support_percent / 100, "", "support share of compute", where)).with_label(
                        "support"
                    ),
                )
            )
        coeff["a"] = float(sum((li.figure.value for li in items), Decimal(0))) * (1 - float(idle))
        coeff["b"] = 0.0
        coeff["u0"] = 1 - float(idle)
    monthly_extras = _extras_monthly(ex, cat, where)
    for li in monthly_extras:
        items.append(LineItem(name=f"{li.name} (per run)", per="run", figure=(li.figure / rpm).with_label(li.name)))
    coeff["c"] = float(sum((li.figure.value for li in monthly_extras), Decimal(0)))
    cost_per_run = _sum([li.figure for li in items], cur).with_label("cost per run")
    if accepted is None:
        accepted = _a(opt.accepted_share if opt.accepted_share is not None else 1, "", "share of runs accepted", where)
        if opt.accepted_share is None:
            accepted = accepted.model_copy(update={"note": "assumed: every run meets its quality target"})
    if accepted.value == 0:
        cpar = None
        notes.append("no pilot run reached its quality target: no accepted run to price")
        monthly = _zero(cur, "month")
    else:
        cpar = (cost_per_run / accepted).with_label("cost per accepted run")
        monthly = (cpar * rpm).with_label("monthly cost")
    if opt.commitment_instances and opt.pricing.startswith("reserved"):
        price, _, _ = _price(opt, cat, where, sc.path or None)
        commit = (price * constant(opt.commitment_instances) * _hours_per_month(cat)).with_label("reserved commitment")
        if commit.value > monthly.value:
            notes.append(f"the reserved commitment ({commit.value:.2f}/month) exceeds use: the commitment is billed")
            monthly = commit
    coeff.update(accepted=float(accepted.value), one_off=float(one_off.value), maint=float(maint.value))
    total, total36 = _totals(monthly, maint, one_off, sc.volumes.months)
    return OptionBill(
        name=opt.name,
        pricing=opt.pricing,
        instance=opt.instance,
        accelerator=accel,
        accelerator_count=count,
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
        result_file=result_path or None,
        measured=bool(result_path),
        sweep_coefficients=coeff,
        notes=notes,
    )


def _price_serving(
    opt: Option, sc: Scenario, cat: Catalog, where: str, ex: Extras, maint: Figure, one_off: Figure
) -> OptionBill:
    """Always-on instances sized for the volume; idle time is billed. Per 1,000 accepted requests and per 1M tokens."""
    cur = sc.currency
    notes: list[str] = []
    result_path = ""
    idle_measured: Figure | None = None
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
        peak = _a(opt.peak_qps, "1/s", "peak requests/s under the SLO", where) * constant(opt.instances)
        good = _a(opt.goodput_share if opt.goodput_share is not None else 1, "", "goodput share", where)
        tpr = _a(opt.tokens_per_request, "token", "tokens per request", where) if opt.tokens_per_request else None
    if opt.pricing in ("owned", "buy_and_host"):
        assert opt.owned is not None
        hpm = _hours_per_month(cat)
        items, fixed = _owned_items(opt.owned, opt, hpm, cat, where)
        del fixed
        inst_month = _sum([li.figure for li in items], cur, "month").with_label("owned system per month")
        accel, count = None, None
    else:
        price, accel, count = _price(opt, cat, where, sc.path or None)
        inst_month = (price * constant(opt.instances) * _hours_per_month(cat)).with_label("instance-month, always on")
    capacity = (peak * _hours_per_month(cat) * SECONDS_PER_HOUR).with_label("requests per month at peak")
    if sc.volumes.requests_per_month:
        demand = _a(sc.volumes.requests_per_month, "1/month", "requests per month", "volumes")
        n = max(1, math.ceil(demand.value / capacity.value))
        monthly_compute = (inst_month * constant(n)).with_label(f"{n} always-on instance(s)")
        accepted_month = demand * good
        if n * capacity.value > demand.value:
            notes.append(f"idle share of provisioned capacity: {1 - demand.value / (n * capacity.value):.1%} (billed)")
    else:
        idle = _a(ex.idle_fraction, "", "idle fraction", where) if ex.idle_fraction else idle_measured
        busy = constant(1) - idle if idle is not None else constant(1)
        monthly_compute = inst_month
        accepted_month = (capacity * busy * good).with_label("accepted requests per month")
    items = [LineItem(name="compute", per="month", figure=monthly_compute)]
    if ex.support_percent:
        items.append(
            LineItem(
                name="support",
                per="month",
                figure=monthly_compute * _a(ex.support_percent / 100, "", "support share", where),
            )
        )
    items += _extras_monthly(ex, cat, where)
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
        monthly_cost=monthly,
        one_off_cost=one_off,
        maintenance_per_month=maint,
        total_months=total,
        total_36_months=total36,
        result_file=result_path or None,
        measured=bool(result_path),
        notes=notes,
    )


# --- comparisons -------------------------------------------------------------------------------


def compare(base: OptionBill, cand: OptionBill, sc: Scenario) -> Comparison:
    rpm = Decimal(sc.volumes.runs_per_month)
    one_off = cand.one_off_cost
    extra_maint = cand.maintenance_per_month.value - base.maintenance_per_month.value
    if base.workload == "training" and base.cost_per_accepted_run is not None and cand.cost_per_accepted_run:
        saving = (base.cost_per_accepted_run - cand.cost_per_accepted_run).with_label("saving per accepted run")
        pct = saving.value / base.cost_per_accepted_run.value * 100 if base.cost_per_accepted_run.value else None
        net = saving.value - extra_maint / rpm
        runs = months = None
        if net > 0:
            runs = max(1, int((one_off.value / net).to_integral_value(rounding=ROUND_CEILING)))
            months = one_off.value / (net * rpm)
        horizon = max(12, 2 * runs if runs else 12)
        curve = []
        for n in range(0, horizon + 1):
            curve.append(
                (
                    n,
                    base.cost_per_accepted_run.value * n + base.maintenance_per_month.value * n / rpm,
                    one_off.value + cand.cost_per_accepted_run.value * n + cand.maintenance_per_month.value * n / rpm,
                )
            )
        return Comparison(
            baseline=base.name,
            candidate=cand.name,
            saving_per_run=saving,
            saving_percent=pct,
            saving_per_month=(saving * _a(rpm, "1/month", "runs per month", "volumes")),
            one_off_cost=one_off,
            break_even_runs=runs,
            break_even_months=months,
            payback_curve=curve,
        )
    saving_m = (base.monthly_cost - cand.monthly_cost).with_label("saving per month")
    pct = saving_m.value / base.monthly_cost.value * 100 if base.monthly_cost.value else None
    net = saving_m.value - extra_maint
    months = one_off.value / net if net > 0 else None
    curve = [
        (
            m,
            base.monthly_cost.value * m + base.maintenance_per_month.value * m,
            one_off.value + (cand.monthly_cost.value + cand.maintenance_per_month.value) * m,
        )
        for m in range(0, 37)
    ]
    return Comparison(
        baseline=base.name,
        candidate=cand.name,
        saving_percent=pct,
        saving_per_month=saving_m,
        one_off_cost=one_off,
        break_even_months=months,
        payback_curve=curve,
    )


def make_bill(sc: Scenario, cat: Catalog) -> Bill:
    """The whole bill: every option priced, every option compared with the baseline."""
    from accelpilot.bill.scenario import check_money_unit

    check_money_unit(sc.currency, sc.path or "scenario")
    options = [price_option(o, sc, cat, i) for i, o in enumerate(sc.options)]
    base = next(o for o in options if o.name == sc.baseline_name)
    comps = [compare(base, o, sc) for o in options if o.name != base.name]
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
    )
