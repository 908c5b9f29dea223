"""A training option priced per run and per accepted run."""

from __future__ import annotations

from accelpilot.bill.common import CONVERTED, _a, _extras_monthly, _sum, _tax, _totals, _zero
from accelpilot.bill.measured import training_hours, unverified_note
from accelpilot.bill.model import LineItem, OptionBill
from accelpilot.bill.per_bill import _fixed_month, _PerBill
from accelpilot.bill.pricing import gather, price
from accelpilot.bill.scenario import Option, Scenario
from accelpilot.bill.serving import _price_serving
from accelpilot.catalog.loader import Catalog
from accelpilot.figures import constant


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
        return _price_serving(opt, sc, cat, where, ex, maint, one_off, bill.results)
    hours, accepted, more, result_path = training_hours(opt, sc, cat, where, bill.results)
    notes += more
    if accepted is None:
        accepted = _a(opt.accepted_share if opt.accepted_share is not None else 1, "", "share of runs accepted", where)
        if opt.accepted_share is None:
            accepted = accepted.with_label(accepted.label, note="assumed: every run meets its quality target")
    # A rejected run is re-run: runs executed a month = accepted runs wanted / accepted share.
    executed = (rpm / accepted).with_label("runs executed a month") if accepted.value else rpm
    idle = ex.idle_fraction
    billed = hours / (constant(1) - _a(idle, "", "idle fraction", where)) if idle else hours
    mi = gather(
        opt, sc, cat, where, hours, billed, executed, bill.spot.get(opt.name), bill.results, bill.blocks.get(opt.name)
    )
    p = price(mi)
    if mi.rate is not None and mi.rate[0].note.startswith(CONVERTED):
        notes.append(f"price {mi.rate[0].note}")
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
    rated = None
    if p.rated is not None and accepted.value:
        # what scales with the price, per accepted run: items (per run over the accepted share, or a month over
        # the runs) taxed, plus the price's share of a term still owed after the horizon, spread like _obliged
        taxed = p.rated * (1 + ex.tax_percent / 100)
        rated = taxed / rpm.value if p.monthly_items else taxed / accepted.value
        if p.rated_outstanding:
            rated += p.rated_outstanding / (bill.horizon.value * rpm.value)
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
        measured=bool(result_path) and not opt.result_unverified,
        result_unverified=opt.result_unverified if result_path else None,
        sweep_coefficients=coeff,
        fixed_per_month=fixed,
        rate=mi.rate[0] if mi.rate is not None and rated is not None else None,
        rated_part=rated,
        notes=notes + unverified_note(opt, result_path),
    )
