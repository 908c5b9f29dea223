"""Flip points on the verdict's rule where the margin test is not a straight line in the input (issue 26).

The verdict keeps the working deployment when the candidate's cost per accepted output (with what a term still
owes) is above ``keep`` = 1 - margin times the baseline's. Where that cost is a line in the input (the price; the
accepted share of a usage-billed option) the point is solved in closed form. Where it is a step function (a
Capacity Block's whole days, whole dedicated boxes) or bends (use above a reservation's commitment), the option is
priced again at trial values of the input, holding everything else fixed: the same arithmetic as the bill, on the
step edges where there are any, else by bisection to a relative width of 2^-36 (~1.5e-11). Each returns None
where no value of the input flips the verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from accelpilot.bill.model import OptionBill
from accelpilot.errors import UserError
from accelpilot.figures import Figure, Kind, _trusted

STEPS = 36  # bisection halvings: 2^-36 ~ 1.5e-11 of the interval (each is the option priced again)


def _flip(value: Decimal, unit: str, label: str, source: str, *inputs: Figure) -> Figure:
    # every field valid by construction: made without validation, as Figure arithmetic makes its results (two a
    # comparison; validating them was ~4% of billing 1,000 options, issue 10's speed)
    fields = {"value": value, "unit": unit, "kind": Kind.DERIVED, "source": source, "as_of": None, "region": None}
    return _trusted({**fields, "label": label, "inputs": inputs, "note": ""})


def price_flip(cand: OptionBill, owed: Figure, target: Figure) -> Figure | None:
    """The candidate's price at which its cost per accepted output reaches ``target``: cost = owed - R + R x p / p0
    (R: the part that scales with the price, ``rated_part``)."""
    r, rate = cand.rated_part, cand.rate
    if rate is None or r is None or r <= 0 or not rate.value:
        return None
    p = rate.value * (target.value - (owed.value - r)) / r
    if p <= 0:
        return None  # even free compute does not reach the margin
    per = "second" if rate.unit.endswith("/s") else "hour"
    return _flip(
        p,
        rate.unit,
        f"{cand.name}: price per {per} at which the saving reaches the margin",
        "the price at which the cost per accepted output, with everything else fixed, is (1 - margin) x the "
        "baseline's: its priced part scales with the price (bill.verdict_flips)",
        rate,
        owed,
        target,
    )


def accepted_flip_linear(cand: OptionBill, owed: Figure, fixed: Figure, target: Figure) -> Figure | None:
    """Usage-billed: cost per accepted run = fixed + V x a0 / a (a rejected run is run again), so the margin is
    reached at a = V x a0 / (target - fixed); None outside (0, 1]."""
    a0 = cand.accepted_share.value
    v = owed.value - fixed.value
    room = target.value - fixed.value
    if v <= 0 or room <= 0:
        return None
    a = v * a0 / room
    if not 0 < a <= 1:
        return None
    return _accepted_figure(cand, a, owed, target)


def _accepted_figure(cand: OptionBill, a: Decimal, owed: Figure, target: Figure) -> Figure:
    return _flip(
        a,
        "",
        f"{cand.name}: accepted share below which the saving falls inside the margin",
        "the share of runs meeting quality at which the cost per accepted run (rejected runs re-run) is "
        "(1 - margin) x the baseline's (bill.verdict_flips)",
        cand.accepted_share,
        owed,
        target,
    )


Probe = Callable[..., OptionBill]


def _clear(probe: Probe, owed_of: Callable[[OptionBill], Decimal], target: Decimal, **change: Decimal) -> bool | None:
    """Whether the candidate priced with ``change`` is clear of the margin; None where it cannot be priced."""
    try:
        o = probe(**change)
    except UserError:
        return None
    if o.cost_per_accepted_run is None:
        return False
    return owed_of(o) <= target


def accepted_flip_search(
    cand: OptionBill, probe: Probe, owed_of: Callable[[OptionBill], Decimal], owed: Figure, target: Figure
) -> Figure | None:
    """Billed by the month (a term, whole boxes, a shared block): fewer accepted runs mean more re-runs, which cost
    nothing within what is paid and more past it. The lowest accepted share still clear of the margin, by
    bisection (clear is monotone in the share); None when every share is clear, or none is."""
    t = target.value
    lo, hi = Decimal("1e-6"), Decimal(1)
    if not _clear(probe, owed_of, t, accepted_share=hi):
        return None
    if _clear(probe, owed_of, t, accepted_share=lo):
        return None  # clear down to one run in a million accepted: no share within reason flips it
    for _ in range(STEPS):
        mid = (lo + hi) / 2
        got = _clear(probe, owed_of, t, accepted_share=mid)
        if got is None:
            return None
        lo, hi = (lo, mid) if got else (mid, hi)
    return _accepted_figure(cand, hi, owed, target)


def hours_flip_search(
    cand: OptionBill,
    probe: Probe,
    owed_of: Callable[[OptionBill], Decimal],
    owed: Figure,
    target: Figure,
    edges: list[Decimal] | None = None,
) -> Figure | None:
    """Hours per run where the cost per accepted run is a rising step function (whole block days) or bends (past a
    commitment): the largest hours still clear of the margin, with too close just past them. ``edges``: the
    hours at which the steps rise (a block's whole days); searched among them, else by doubling and bisection."""
    assert cand.hours_per_run is not None
    t = target.value
    h0 = cand.hours_per_run.value
    if edges:
        # the cost is flat between edges and rises just past one: the flip is the last edge still clear
        return _edge_result(cand, edges, probe, owed_of, owed, target)
    lo: Decimal | None = None
    hi: Decimal | None = None
    now = _clear(probe, owed_of, t, hours_per_run=h0)
    if now is None:
        return None
    x = h0
    for _ in range(40):  # double (or halve) until the verdict differs
        x = x * 2 if now else x / 2
        got = _clear(probe, owed_of, t, hours_per_run=x)
        if got is None:
            return None
        if got != now:
            lo, hi = (x / 2, x) if now else (x, x * 2)
            break
    if lo is None or hi is None:
        return None
    for _ in range(STEPS):
        mid = (lo + hi) / 2
        got = _clear(probe, owed_of, t, hours_per_run=mid)
        if got is None:
            return None
        lo, hi = (mid, hi) if got else (lo, mid)
    return _hours_figure(cand, lo, owed, target)


def _edge_result(
    cand: OptionBill,
    edges: list[Decimal],
    probe: Probe,
    owed_of: Callable[[OptionBill], Decimal],
    owed: Figure,
    target: Figure,
) -> Figure | None:
    """The last edge at which the option is clear of the margin, when just past it is too close (cost rises with
    hours, so clear holds on a prefix of the edges: bisect over them)."""
    t = target.value
    lo, hi = 0, len(edges)  # clear on edges[:k], too close on edges[k:]
    cache: dict[int, bool | None] = {}

    def ok(i: int) -> bool | None:
        if i not in cache:
            cache[i] = _clear(probe, owed_of, t, hours_per_run=edges[i])
        return cache[i]

    while lo < hi:
        mid = (lo + hi) // 2
        got = ok(mid)
        if got is None:
            return None
        lo, hi = (mid + 1, hi) if got else (lo, mid)
    k = lo
    if k == 0 or k == len(edges):
        return None  # too close even on the shortest block, or clear on the longest: no hours value flips it
    return _hours_figure(cand, edges[k - 1], owed, target)


def _hours_figure(cand: OptionBill, h: Decimal, owed: Figure, target: Figure) -> Figure:
    assert cand.hours_per_run is not None
    return _flip(
        h,
        "h",
        f"{cand.name}: hours per run past which the saving falls inside the margin",
        "the most hours per run at which the option, priced again with everything else fixed, still costs "
        "(1 - margin) x the baseline's or less; just past it, more (bill.verdict_flips)",
        cand.hours_per_run,
        owed,
        target,
    )


def block_edges(idle: Decimal, executed: Decimal, day_max: int, week_max: int) -> list[Decimal]:
    """Hours per run at which a Capacity Block priced per run or shared by the month's runs buys one more step:
    a block of L hours holds a run of L x (1 - idle) hours, or the month's runs of L x (1 - idle) / executed."""
    lengths = [24 * d for d in range(1, day_max + 1)] + [
        24 * 7 * w for w in range(day_max // 7 + 1, week_max // 7 + 1) if 7 * w > day_max
    ]
    out = {Decimal(L) * (1 - idle) for L in lengths}
    if executed > 1:
        out |= {Decimal(L) * (1 - idle) / executed for L in lengths}
    return sorted(out)


Clear = Callable[[Decimal], "bool | None"]


def brackets(clear: Clear, x: Decimal, eps: Decimal = Decimal("1e-9")) -> bool:
    """Whether the verdict differs just below and just above ``x`` (a flip point found in closed form holds)."""
    lo, hi = clear(x * (1 - eps)), clear(x * (1 + eps))
    return lo is not None and hi is not None and lo != hi


def runs_flip_search(cand: OptionBill, clear: Clear, rpm: Figure, owed: Figure, target: Figure) -> Figure | None:
    """Runs a month where the cost per accepted run is not F / runs + v (re-runs past a commitment, whole boxes,
    block days; both sides billed again by ``clear``): the nearest change of verdict to today's volume, looking
    up and down by quarter doublings to 4x, then doublings to 2^30, then bisected; None when none is found (a
    change between two looks that is undone before the next is not seen)."""
    r0 = rpm.value
    now = clear(r0)
    if now is None:
        return None
    found: tuple[Decimal, Decimal] | None = None
    # quarter doublings within 4x of today (whole boxes or block days can change the verdict and change it
    # back: the nearest change is the one worth quoting), then doublings
    steps = [Decimal(2) ** (Decimal(k) / 4) for k in range(1, 9)] + [Decimal(2) ** k for k in range(3, 31)]
    prev = Decimal(1)
    for m in steps:
        for near, far in ((r0 * prev, r0 * m), (r0 / prev, r0 / m)):
            got = clear(far)
            if got is not None and got != now:
                found = (near, far)
                break
        if found:
            break
        prev = m
    if found is None:
        return None
    a, b = found  # clear(a) == now, clear(b) != now
    for _ in range(STEPS):
        mid = (a + b) / 2
        got = clear(mid)
        if got is None:
            return None
        a, b = (mid, b) if got == now else (a, mid)
    point = a if now else b  # the clear side of the edge
    return _flip(
        point,
        rpm.unit,
        f"{cand.name}: accepted runs a month at which the margin flips",
        "the runs a month, nearest today's, across which the candidate's cost per accepted run moves across "
        "(1 - margin) x the baseline's, both billed again with everything else fixed (bill.verdict_flips)",
        rpm,
        owed,
        target,
    )
