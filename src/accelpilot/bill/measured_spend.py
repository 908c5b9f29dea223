"""Pricing an option from the bill the team already pays (``pricing = "measured_spend"``).

The monthly cost is the CUR's measured effective cost (``accelpilot spend import --as-baseline``), so the
comparison starts from the real number; per accepted run (training) or per 1,000 accepted requests (serving)
divides it by the scenario's volumes. Scenario-level extras are not added: the CUR already holds what the
team pays for these instances, and storage or transfer would be counted twice.
"""

from __future__ import annotations

from decimal import Decimal

from accelpilot.bill.model import LineItem, OptionBill
from accelpilot.bill.scenario import Option, Scenario
from accelpilot.catalog.loader import Catalog
from accelpilot.errors import ConfigError
from accelpilot.figures import Figure, Kind, assumption, constant


def price_measured_spend(
    opt: Option,
    sc: Scenario,
    cat: Catalog,
    where: str,
    maint: Figure,
    one_off: Figure,
    totals: tuple[Figure, Figure],
) -> OptionBill:
    """``totals`` are computed by the caller from the measured monthly cost (see ``monthly_figure``)."""
    assert opt.spend is not None
    monthly = monthly_figure(opt, sc, where)
    inst = cat.instance(opt.instance) if opt.instance else None
    notes = [
        f"measured spend over {opt.spend.period} ({opt.spend.months} month(s)) of "
        f"{', '.join(opt.spend.instance_types) or opt.instance}; scenario extras are not added (the CUR holds them)"
    ]
    share = opt.accepted_share if opt.accepted_share is not None else Decimal(1)
    accepted = assumption(share, "", f"{where}.accepted_share", "share of runs accepted")
    common = {
        "name": opt.name,
        "pricing": opt.pricing,
        "instance": opt.instance,
        "accelerator": inst.accelerator if inst else None,
        "accelerator_count": inst.accelerator_count if inst else None,
        "accepted_share": accepted,
        "monthly_cost": monthly,
        "one_off_cost": one_off,
        "maintenance_per_month": maint,
        "total_months": totals[0],
        "total_36_months": totals[1],
        "notes": notes,
    }
    if sc.workload == "serving":
        if not sc.volumes.requests_per_month:
            raise ConfigError(
                "a measured-spend serving option needs the requests it serves",
                file=sc.path or None,
                field="volumes.requests_per_month",
                fix="set requests_per_month under [volumes]",
            )
        good = assumption(
            opt.goodput_share if opt.goodput_share is not None else 1, "", f"{where}.goodput_share", "goodput share"
        )
        demand = assumption(sc.volumes.requests_per_month, "1/month", "volumes", "requests per month")
        per_1k = (monthly / (demand * good) * constant(1000)).with_label("cost per 1,000 accepted requests")
        return OptionBill(
            **common,
            workload="serving",
            line_items=[LineItem(name="measured spend (CUR)", per="month", figure=monthly)],
            cost_per_1k_accepted_requests=per_1k,
        )
    rpm = assumption(sc.volumes.runs_per_month, "1/month", "volumes", "runs per month")
    per_run = (monthly / rpm).with_label("cost per run")
    hours = None
    if opt.spend.instance_hours_per_month is not None:
        ih = Figure(
            value=opt.spend.instance_hours_per_month,
            unit="h/month",
            kind=Kind.MEASURED,
            source=opt.spend.source,
            as_of=opt.spend.as_of,
            label="instance-hours per month",
        )
        hours = (ih / rpm / constant(opt.instances)).with_label("hours per run")
    return OptionBill(
        **common,
        workload="training",
        hours_per_run=hours,
        line_items=[LineItem(name="measured spend (CUR), per run", per="run", figure=per_run)],
        cost_per_run=per_run,
        cost_per_accepted_run=(per_run / accepted).with_label("cost per accepted run"),
        # cost_per_run(u, r) = a / u + b + c / r: all of it is the measured month spread over the runs
        sweep_coefficients={
            "a": 0.0,
            "b": 0.0,
            "c": float(monthly.value),
            "u0": 1.0,
            "accepted": float(share),
            "one_off": float(one_off.value),
            "maint": float(maint.value),
        },
    )


def monthly_figure(opt: Option, sc: Scenario, where: str) -> Figure:
    """The measured monthly cost, in the scenario's currency (a different one is refused, never converted)."""
    assert opt.spend is not None
    if opt.spend.currency != sc.currency:
        raise ConfigError(
            f"the measured spend is in {opt.spend.currency}, the scenario in {sc.currency}",
            file=sc.path or None,
            field=f"{where}.spend.currency",
            fix="import a CUR in the scenario's currency, or set the scenario's currency to match",
        )
    return Figure(
        value=opt.spend.monthly_cost,
        unit=f"{sc.currency}/month",
        kind=Kind.MEASURED,
        source=opt.spend.source,
        as_of=opt.spend.as_of,
        label="monthly cost",
        note=f"measured spend, period {opt.spend.period}",
    )
