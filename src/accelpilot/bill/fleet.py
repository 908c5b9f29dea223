"""Serving fleets sized from a measured peak and a traffic profile (issue 10, section 4).

From one instance's peak rate under the SLO (a serving result's ``--find-peak``, or assumed) and the scenario's
``[traffic]`` (requests a month with a peak-to-mean ratio, or 24 hourly weights), per option: instances needed
at peak with headroom, instance-hours billed a month always on and scheduled (hour by hour), the idle share that
follows (derived, no longer assumed), and the cost per 1,000 accepted requests of each. ``cost_per_1k_curve``
redoes the same arithmetic in floats over a range of monthly volumes for the report's chart.
"""

from __future__ import annotations

import bisect
import heapq
import math
from decimal import Decimal
from fractions import Fraction
from typing import Any, NamedTuple

from accelpilot.bill.model import FleetInputs, FleetMode
from accelpilot.bill.scenario import Traffic
from accelpilot.figures import Figure, Kind, assumption, constant

DAYS_PER_MONTH_HOURS = Decimal(24)  # hourly weights describe one day; a month repeats it hours_per_month / 24 times


def _derived(value: Decimal, unit: str, label: str, *inputs: Figure) -> Figure:
    return Figure(
        value=value,
        unit=unit,
        kind=Kind.DERIVED,
        label=label,
        inputs=inputs,
        source=f"{label} from " + ", ".join(f.label or f.unit for f in inputs),
    )


def hourly_shares(tr: Traffic) -> list[Decimal] | None:
    """Each hour's rate as a multiple of the day's mean rate (weights normalised to mean 1)."""
    if not tr.hourly_weights:
        return None
    total = sum(tr.hourly_weights, Decimal(0))
    return [w * 24 / total for w in tr.hourly_weights]


def peak_to_mean(tr: Traffic) -> Decimal:
    shares = hourly_shares(tr)
    if shares is not None:
        return max(shares)
    return tr.peak_to_mean if tr.peak_to_mean is not None else Decimal(1)


def plan(
    demand: Figure,
    capacity_rps: Figure,
    tr: Traffic,
    instance_hour: Figure,
    accepted: Figure,
    hours_per_month: Figure,
    monthly_overhead: Figure,
    support_share: Decimal,
    tax_share: Decimal,
) -> tuple[list[FleetMode], dict[str, Any]]:
    """Always-on and (with hourly weights) scheduled fleets for one option; plus float inputs for the curve."""
    src = "scenario [traffic]"
    secs = constant(3600).model_copy(update={"unit": "s/h"})
    mean_rps = (demand / (hours_per_month * secs)).with_label("mean requests/s")
    ptm = assumption(peak_to_mean(tr), "", source=src, label="peak-to-mean ratio")
    if tr.hourly_weights:
        ptm = ptm.model_copy(update={"kind": Kind.DERIVED, "label": "peak-to-mean (from hourly weights)"})
    head = assumption(tr.headroom, "", source=src, label="headroom above peak")
    peak_rps = (mean_rps * ptm * (constant(1) + head)).with_label("peak requests/s with headroom")
    n_peak = max(1, math.ceil(peak_rps.value / capacity_rps.value))
    n_fig = _derived(Decimal(n_peak), "", "instances at peak", peak_rps, capacity_rps)
    busy_h = (demand / (capacity_rps * secs)).with_label("busy instance-hours a month")

    def mode(name: str, n: int, inst_hours: Figure) -> FleetMode:
        compute = (instance_hour * inst_hours).with_label(f"{name} compute")
        monthly = compute + compute * _share(support_share, "support share")
        monthly = (monthly + monthly_overhead) * (constant(1) + _share(tax_share, "tax share"))
        idle = (constant(1) - busy_h / inst_hours).with_label("idle share (derived)")
        per_1k = (monthly / (demand * accepted) * constant(1000)).with_label("cost per 1,000 accepted requests")
        return FleetMode(
            mode=name,
            instances=n,
            instance_hours=inst_hours.with_label(f"instance-hours a month, {name}"),
            idle_share=idle,
            monthly_cost=monthly.with_label(f"monthly cost, {name}"),
            cost_per_1k_accepted_requests=per_1k,
        )

    modes = [mode("always_on", n_peak, (n_fig * hours_per_month).with_label("instance-hours"))]
    shares = hourly_shares(tr)
    if shares is not None:
        per_hour = [max(1, math.ceil(mean_rps.value * s * (1 + tr.headroom) / capacity_rps.value)) for s in shares]
        ih = Decimal(sum(per_hour)) * hours_per_month.value / DAYS_PER_MONTH_HOURS
        sched = _derived(ih, "h/month", "instance-hours, scheduled hour by hour", mean_rps, capacity_rps, head)
        modes.append(mode("scheduled", max(per_hour), sched))
    curve = {
        "capacity_rps": float(capacity_rps.value),
        "instance_hour": float(instance_hour.value),
        "accepted": float(accepted.value),
        "hours_per_month": float(hours_per_month.value),
        "overhead": float(monthly_overhead.value),
        "support": float(support_share),
        "tax": float(tax_share),
        "headroom": float(tr.headroom),
        "shares": [float(s) for s in shares] if shares is not None else [float(peak_to_mean(tr))],
        "scheduled": shares is not None,
    }
    return modes, curve


def _share(v: Decimal, label: str) -> Figure:
    return constant(v).with_label(label) if v == 0 else assumption(v, "", source="scenario [extras]", label=label)


def cost_per_1k_curve(k: dict[str, Any], volumes: list[float], operation: str = "always_on") -> list[float]:
    """Cost per 1,000 accepted requests at each monthly volume (floats, for charts): the same rule as ``plan``."""
    out = []
    secs = k["hours_per_month"] * 3600.0
    for v in volumes:
        mean = v / secs
        if k.get("serverless"):
            monthly = _serverless_float(k, v)
        elif operation == "scheduled" and k["scheduled"]:
            ns = [max(1, math.ceil(mean * s * (1 + k["headroom"]) / k["capacity_rps"])) for s in k["shares"]]
            monthly = k["instance_hour"] * sum(ns) * k["hours_per_month"] / 24.0
        else:
            n = max(1, math.ceil(mean * max(k["shares"]) * (1 + k["headroom"]) / k["capacity_rps"]))
            monthly = k["instance_hour"] * n * k["hours_per_month"]
        monthly = (monthly * (1 + k["support"]) + k["overhead"]) * (1 + k["tax"])
        out.append(monthly / (v * k["accepted"]) * 1000.0 if v > 0 else float("nan"))
    return out


def _serverless_float(k: dict[str, Any], volume: float) -> float:
    """Serverless a month in floats: worker lifetimes per scale-up rounded up, plus always-on workers."""
    secs = k["hours_per_month"] * 3600.0
    rate = k["capacity_rps"] * k.get("duty", 1.0)  # a live worker serves at its peak rate only while busy
    on_cap = rate * secs * k["min_workers"]
    over = max(0.0, volume - on_cap)
    cost = k["per_second"] * k["min_workers"] * secs
    if over > 0 and k["scale_ups"] > 0:
        life = k["cold_start_s"] + over / rate / k["scale_ups"] + k["idle_timeout_s"]
        cost += k["per_second"] * k["scale_ups"] * math.ceil(life / k["increment_s"]) * k["increment_s"]
    return cost


# --- flip points (issue 10, section 5) ----------------------------------------------------------
#
# A fleet is whole instances, so its cost is a step function of the volume and of the peak rate: each flip
# point below is the lowest volume (or rate) at which the answer changes, found exactly with fractions over
# the steps' edges, never by a float search.


class _Exact(NamedTuple):
    """A fleet's monthly cost divided by its accepted share, in exact fractions."""

    per_unit_hour: Fraction  # instance_hour x (1 + support) x (1 + tax) / accepted
    fixed: Fraction  # overhead x (1 + tax) / accepted
    per_request: list[Fraction]  # peak requests/s with headroom per request a month, one per share of the day
    hours: Fraction  # hours billed per share
    capacity: Fraction


def _exact(fi: FleetInputs) -> _Exact:
    acc = Fraction(fi.accepted.value)
    tax = 1 + Fraction(fi.tax_share)
    hpm = Fraction(fi.hours_per_month.value)
    head = 1 + Fraction(fi.headroom.value)
    return _Exact(
        per_unit_hour=Fraction(fi.instance_hour.value) * (1 + Fraction(fi.support_share)) * tax / acc,
        fixed=Fraction(fi.overhead.value) * tax / acc,
        per_request=[Fraction(s) * head / (hpm * 3600) for s in fi.shares],
        hours=hpm / len(fi.shares),
        capacity=Fraction(fi.capacity_rps.value),
    )


def _cost(e: _Exact, volume: Fraction, capacity: Fraction | None = None) -> Fraction:
    """``plan``'s monthly cost over the accepted share, at a volume and a capacity per fleet unit."""
    cap = e.capacity if capacity is None else capacity
    units = sum(max(1, math.ceil(volume * x / cap)) for x in e.per_request)
    return e.per_unit_hour * e.hours * units + e.fixed


def volume_flip(base: FleetInputs, cand: FleetInputs, keep: Decimal = Decimal(1), limit: int = 20_000) -> int | None:
    """The lowest whole monthly volume above today's at which the candidate's cost per 1,000 accepted requests
    moves to the other side of ``keep`` x the baseline's (cheaper to dearer, or the reverse; keep = 1 - margin
    for the verdict's rule); None if none exists.

    Between two steps of either fleet nothing changes, so only the steps' edges are tried, in order: the first
    integer volume past ``m`` instances is floor(m x capacity / rate) + 1. The search ends where the slopes
    settle the answer for good (a fleet's cost lies within one instance per share of its straight line), or
    after ``limit`` edges (equal slopes), which then returns None.
    """
    eb, ec = _exact(base), _exact(cand)
    if keep != 1:  # the baseline's costs scaled by keep: the same steps, the margin's line
        k = Fraction(keep)
        eb = eb._replace(per_unit_hour=eb.per_unit_hour * k, fixed=eb.fixed * k)
    v0 = Fraction(cand.demand.value)

    def cheaper(v: Fraction) -> bool:
        return _cost(ec, v) < _cost(eb, v)

    now = cheaper(v0)
    slope = {k: e.per_unit_hour * e.hours * sum(e.per_request) / e.capacity for k, e in (("b", eb), ("c", ec))}
    spread = {k: e.per_unit_hour * e.hours * len(e.per_request) for k, e in (("b", eb), ("c", ec))}
    bound: Fraction | None = None
    if slope["c"] < slope["b"]:
        bound = (ec.fixed + spread["c"] - eb.fixed) / (slope["b"] - slope["c"])
    elif slope["c"] > slope["b"]:
        bound = (eb.fixed + spread["b"] - ec.fixed) / (slope["c"] - slope["b"])
    heap: list[tuple[Fraction, int, int]] = []
    streams = [(e, x) for e in (eb, ec) for x in e.per_request if x > 0]
    for i, (e, x) in enumerate(streams):
        m = max(1, math.ceil(v0 * x / e.capacity))
        heapq.heappush(heap, (Fraction(math.floor(m * e.capacity / x) + 1), i, m))
    for _ in range(limit):
        if not heap:
            return None
        v, i, m = heapq.heappop(heap)
        if bound is not None and v > bound + 1:
            return None  # past the bound the answer no longer changes
        if cheaper(v) != now:
            return int(v)
        e, x = streams[i]
        heapq.heappush(heap, (Fraction(math.floor((m + 1) * e.capacity / x) + 1), i, m + 1))
    return None


def peak_flip(cand: FleetInputs, base_per_1k: Decimal, margin: Decimal, limit: int = 200_000) -> Fraction | None:
    """The lowest capacity per fleet unit (requests/s under the SLO) at which the candidate's cost per 1,000
    accepted requests is at least ``margin`` below ``base_per_1k`` at today's volume; None if no rate does.

    The cost only falls when a share's instances drop from m + 1 to m, at capacity = peak rate / m, so the
    answer is one of those edges; cost never rises with capacity, so a bisection over them is exact.
    """
    e = _exact(cand)
    v0 = Fraction(cand.demand.value)
    budget = (1 - Fraction(margin)) * Fraction(base_per_1k) * v0 / 1000
    peaks = [v0 * x for x in e.per_request if x > 0]
    if not peaks or _cost(e, v0, max(peaks)) > budget:
        return None  # even one instance per hour costs too much
    room = budget - e.fixed
    # no capacity below this can fit: the fleet costs at least its straight line
    lowest = e.per_unit_hour * e.hours * sum(peaks) / room
    if sum(int(p / lowest) for p in peaks) > limit:
        return None
    edges = sorted({p / m for p in peaks for m in range(1, int(p / lowest) + 1)} | {max(peaks)})
    # the first edge that fits (the last one, every share on one instance, does)
    return edges[bisect.bisect_left(edges, True, key=lambda c: _cost(e, v0, c) <= budget)]
