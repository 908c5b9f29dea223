"""Comparisons with the baseline, the decision margin and the flip points (decide/ imports these)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import ROUND_CEILING, Decimal
from fractions import Fraction

from accelpilot.bill.fleet import peak_flip, volume_flip
from accelpilot.bill.model import Comparison, OptionBill
from accelpilot.bill.per_bill import _PerBill
from accelpilot.bill.scenario import Scenario
from accelpilot.bill.verdict_flips import (
    Probe,
    accepted_flip_linear,
    accepted_flip_search,
    block_edges,
    brackets,
    hours_flip_search,
    price_flip,
    runs_flip_search,
)
from accelpilot.errors import UserError
from accelpilot.figures import Figure, Kind, assumption, constant


def compare(base: OptionBill, cand: OptionBill, sc: Scenario, per_bill: _PerBill | None = None) -> Comparison:
    rpm = Decimal(sc.volumes.runs_per_month)
    one_off = cand.one_off_cost
    extra_maint = cand.maintenance_per_month.value - base.maintenance_per_month.value
    if base.workload == "training" and base.cost_per_accepted_run is not None and cand.cost_per_accepted_run:
        bill = per_bill or _PerBill(sc)
        # What each side is obliged to pay per accepted run over the horizon: a term outliving the workload is
        # owed too (issue 26), spread over the horizon's accepted runs.
        base_owed = _obliged(base, bill)
        saving = (base_owed - _obliged(cand, bill)).with_label("saving per accepted run")
        pct = saving.value / base_owed.value * 100 if base_owed.value else None
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
            **margin_flips(base, cand, sc, bill),
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


def _obliged(o: OptionBill, bill: _PerBill) -> Figure:
    """Cost per accepted run, plus any commitment still owed after the horizon spread over its accepted runs."""
    assert o.cost_per_accepted_run is not None
    if o.outstanding_commitment is None or not o.outstanding_commitment.value:
        return o.cost_per_accepted_run
    owed = (o.outstanding_commitment / (bill.horizon * bill.rpm)).with_label("term owed after the horizon, per run")
    return (o.cost_per_accepted_run + owed).with_label("cost per accepted run, with what the term still owes")


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


def serving_flips(base: OptionBill, cand: OptionBill, sc: Scenario) -> dict[str, Figure | None]:
    """Serving flip points (issue 10, section 5), each a derived figure whose leaves are the fleets' inputs.

    ``flip_requests_per_month``: the lowest monthly volume above today's at which the candidate's cost per 1,000
    accepted requests crosses the baseline's, both fleets re-sized from [traffic] in whole instances (porting
    and maintenance are not in it: they are in the break-even). ``flip_peak_qps``: the lowest peak rate per
    candidate instance at which its saving reaches the [decision] margin at today's volume.
    """
    out: dict[str, Figure | None] = {
        "flip_requests_per_month": None,
        "flip_peak_qps": None,
        "margin_flip_price": None,
        "margin_flip_requests_per_month": None,
    }
    fc, fb = cand.fleet_inputs, base.fleet_inputs
    if base.cost_per_1k_accepted_requests is None or cand.cost_per_1k_accepted_requests is None:
        return out
    margin = decision_margin(base, cand, sc)
    keep = constant(1) - margin
    target = (base.cost_per_1k_accepted_requests * keep).with_label("the candidate's cost per 1,000 at the margin")
    out["margin_flip_price"] = price_flip(cand, cand.cost_per_1k_accepted_requests, target)
    if fc is None:
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
        v = volume_flip(fb, fc, keep.value)
        if v is not None:
            out["margin_flip_requests_per_month"] = Figure(
                value=Decimal(v),
                unit="1/month",
                kind=Kind.DERIVED,
                label=f"{cand.name}: requests a month at which the saving crosses the margin",
                source="the lowest monthly volume above today's at which the fleets, re-sized from [traffic] in "
                "whole instances, move the candidate's saving per 1,000 accepted requests across the [decision] "
                "margin (bill.fleet)",
                inputs=(margin, *cand_in, fb.instance_hour, fb.capacity_rps, fb.accepted, fb.overhead),
            )
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


def margin_flips(base: OptionBill, cand: OptionBill, sc: Scenario, bill: _PerBill) -> dict[str, Figure | None]:
    """Where the verdict's rule flips: the saving per accepted run (each side with what its term still owes)
    reaches the [decision] margin of the baseline's, holding the other inputs fixed (issue 26).

    Usage-billed (and owned shared), the candidate's cost per accepted run is fixed + variable x hours / hours
    today, and variable x share today / share in its accepted share: each flip in closed form. Its price flip is
    closed form for every model (bill.verdict_flips.price_flip). Billed by the month or in whole blocks (a term,
    dedicated boxes, Capacity Blocks) the cost is a step or bends past what is paid: the candidate is priced
    again at trial values (verdict_flips). Each side's cost per run is F / runs + v while re-runs stay within what
    is paid, so the test holds at one runs-per-month value at most (none when F's are zero: the test is per run);
    where either side is billed by the month the point is checked by billing again, and searched when it fails.
    """
    out: dict[str, Figure | None] = {
        "margin_flip_hours_per_run": None,
        "margin_flip_runs_per_month": None,
        "margin_flip_price": None,
        "margin_flip_accepted_share": None,
    }
    if base.cost_per_accepted_run is None or cand.cost_per_accepted_run is None:
        return out
    if base.fixed_per_month is None or cand.fixed_per_month is None:
        return out
    keep = constant(1) - decision_margin(base, cand, sc)
    rpm = bill.rpm
    b_run, c_run = _obliged(base, bill), _obliged(cand, bill)
    target = (b_run * keep).with_label("the candidate's cost per accepted run at the margin")
    var_c = (cand.cost_per_accepted_run - cand.fixed_per_month / rpm).with_label("candidate per accepted run")
    fix_c = (c_run - var_c).with_label("candidate's fixed costs per accepted run")
    out["margin_flip_price"] = price_flip(cand, c_run, target)
    # usage-billed (items per run): the cost is a line in hours and in 1 / accepted share; billed by the month or
    # in whole blocks, it is a step or bends past what is paid: the option is priced again at trial values
    per_run = bool(cand.line_items) and cand.line_items[0].per == "run" and cand.pricing != "capacity_block"
    probe = _probe(cand, sc, bill) if not per_run and bill.cat is not None else None
    owed_of = lambda o: _obliged(o, bill).value  # noqa: E731
    if per_run:
        out["margin_flip_accepted_share"] = accepted_flip_linear(cand, c_run, fix_c, target)
    elif probe is not None:
        out["margin_flip_accepted_share"] = accepted_flip_search(cand, probe, owed_of, c_run, target)
    if per_run and var_c.value > 0 and cand.hours_per_run is not None:
        h = (cand.hours_per_run * (target - fix_c) / var_c).with_label(
            f"{cand.name}: hours per run at which the saving reaches the margin"
        )
        if h.value > 0:
            out["margin_flip_hours_per_run"] = h
    elif probe is not None and cand.hours_per_run is not None:
        edges = None
        if cand.pricing == "capacity_block":
            assert bill.cat is not None
            opt = next(o for o in sc.options if o.name == cand.name)
            ex = opt.extras if opt.extras is not None else sc.extras
            edges = block_edges(
                ex.idle_fraction,
                rpm.value / cand.accepted_share.value,
                int(bill.cat.default("capacity_block_day_steps_max_days").value),
                int(bill.cat.default("capacity_block_week_steps_max_days").value),
            )
        out["margin_flip_hours_per_run"] = hours_flip_search(cand, probe, owed_of, c_run, target, edges)
    # per month: F = fixed costs a month (+ a term's remainder over the horizon), v = the rest per accepted run
    var_b = (base.cost_per_accepted_run - base.fixed_per_month / rpm).with_label("baseline per accepted run")
    f_b = ((b_run - var_b) * rpm).with_label("baseline fixed a month")
    f_c = (fix_c * rpm).with_label("candidate fixed a month")
    denom = var_b * keep - var_c
    r: Figure | None = None
    if denom.value != 0 and (f_c.value != 0 or f_b.value != 0):
        r = ((f_c - f_b * keep) / denom).with_label(f"{cand.name}: accepted runs a month at which the margin flips")
        if r.value <= 0:
            r = None
    base_per_run = bool(base.line_items) and base.line_items[0].per == "run" and base.pricing != "capacity_block"
    if (not per_run or not base_per_run) and bill.cat is not None:
        # F / runs + v holds only while re-runs stay within what is paid (a commitment, whole boxes or block days):
        # check the point by billing both sides again either side of it, else search for it
        clear = _runs_clear(base, cand, sc, bill, keep.value, (f_b.value, var_b.value) if base_per_run else None)
        if r is None or not brackets(clear, r.value):
            r = runs_flip_search(cand, clear, rpm, c_run, target)
    out["margin_flip_runs_per_month"] = r
    return out


def _runs_clear(
    base: OptionBill,
    cand: OptionBill,
    sc: Scenario,
    bill: _PerBill,
    keep: Decimal,
    base_line: tuple[Decimal, Decimal] | None,
) -> Callable[[Decimal], bool | None]:
    """Whether the candidate is clear of the margin with the scenario's runs a month changed (both sides billed
    again, everything else as given); None where either cannot be priced there. ``base_line``: a usage-billed
    baseline's (fixed a month, per accepted run), whose cost per accepted run is exactly fixed / runs + per run."""
    from accelpilot.bill.training import price_option

    assert bill.cat is not None
    cat = bill.cat
    ib, ob = next((i, o) for i, o in enumerate(sc.options) if o.name == base.name)
    ic, oc = next((i, o) for i, o in enumerate(sc.options) if o.name == cand.name)

    def clear(runs: Decimal) -> bool | None:
        sc2 = sc.model_copy(update={"volumes": sc.volumes.model_copy(update={"runs_per_month": runs})})
        pb = _PerBill(sc2, spot=bill.spot, results=bill.results, blocks=bill.blocks, cat=cat)
        try:
            c = price_option(oc, sc2, cat, ic, pb)
            b = None if base_line is not None else price_option(ob, sc2, cat, ib, pb)
        except UserError:
            return None
        if c.cost_per_accepted_run is None or (b is not None and b.cost_per_accepted_run is None):
            return None
        b_owed = _obliged(b, pb).value if b is not None else base_line[0] / runs + base_line[1]  # type: ignore[index]
        return _obliged(c, pb).value <= keep * b_owed

    return clear


def _probe(cand: OptionBill, sc: Scenario, bill: _PerBill) -> Probe:
    """The candidate priced again with some inputs changed, everything else as billed: its hours and accepted
    share stated (as measured or assumed today), so a trial value replaces them."""
    from accelpilot.bill.training import price_option

    i, opt = next((i, o) for i, o in enumerate(sc.options) if o.name == cand.name)
    assert cand.hours_per_run is not None and bill.cat is not None
    cat = bill.cat
    now = {
        "result": None,
        "tokens_per_run": None,
        "scaling_efficiency": Decimal(1),
        "hours_per_run": cand.hours_per_run.value,
        "accepted_share": cand.accepted_share.value,
    }

    def probe(**change: Decimal) -> OptionBill:
        return price_option(opt.model_copy(update={**now, **change}), sc, cat, i, bill)

    return probe
