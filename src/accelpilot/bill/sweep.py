"""Vectorised sensitivity: cost per accepted run, 36-month cost and payback over grids of utilisation,
runs per month and porting days. numpy broadcasting, no Python loop, so reports can draw dense surfaces.

Each option's cost per run is linear in its coefficients (see OptionBill.sweep_coefficients):
``cost_per_run(u, r) = a / u + b + c / r`` with u the share of provisioned (or owned) time doing useful
work, r the runs per month; dividing by the accepted share gives the cost per accepted run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from accelpilot.bill.model import OptionBill

F64 = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Coeffs:
    a: float  # utilisation-scaled cost per run at u = 1
    b: float  # fixed cost per run (energy, ...)
    c: float  # monthly costs shared by the month's runs
    u0: float  # the utilisation the bill assumed
    accepted: float
    maint: float  # per month
    day_rate: float = 0.0

    @classmethod
    def of(cls, o: OptionBill, day_rate: float) -> Coeffs:
        k = o.sweep_coefficients
        return cls(
            a=k["a"], b=k["b"], c=k["c"], u0=k["u0"], accepted=k["accepted"], maint=k["maint"], day_rate=day_rate
        )


@dataclass(frozen=True, slots=True)
class SweepResult:
    cost_per_accepted_run: F64
    baseline_cost_per_accepted_run: F64
    saving_per_run: F64
    total_36_months: F64
    break_even_months: F64  # inf where it never pays back


def cost_per_accepted_run(k: Coeffs, u: F64 | float, r: F64 | float) -> F64:
    return np.asarray((k.a / u + k.b + k.c / r) / k.accepted, dtype=np.float64)


def sweep(base: Coeffs, cand: Coeffs, utilisation: F64, runs_per_month: F64, porting_days: F64) -> SweepResult:
    """Evaluate every combination (arrays broadcast against each other; pass meshgrids or 1-D aligned arrays).

    The baseline keeps its own utilisation; the candidate's varies.
    """
    u = np.asarray(utilisation, dtype=np.float64)
    r = np.asarray(runs_per_month, dtype=np.float64)
    d = np.asarray(porting_days, dtype=np.float64)
    cand_cost = cost_per_accepted_run(cand, u, r)
    base_cost = cost_per_accepted_run(base, base.u0, r)
    saving = base_cost - cand_cost
    one_off = d * cand.day_rate
    net_month = saving * r - (cand.maint - base.maint)
    with np.errstate(divide="ignore", invalid="ignore"):
        months = np.where(net_month > 0, one_off / net_month, np.inf)
    total = cand_cost * r * 36.0 + one_off + cand.maint * 36.0
    return SweepResult(cand_cost, np.broadcast_to(base_cost, cand_cost.shape), saving, total, months)


def sweep_python(base: Coeffs, cand: Coeffs, points: list[tuple[float, float, float]]) -> list[tuple[float, ...]]:
    """The same arithmetic as ``sweep`` as a plain loop: the benchmark's reference and a test oracle."""
    out: list[tuple[float, ...]] = []
    for u, r, d in points:
        cc = (cand.a / u + cand.b + cand.c / r) / cand.accepted
        bc = (base.a / base.u0 + base.b + base.c / r) / base.accepted
        s = bc - cc
        one = d * cand.day_rate
        net = s * r - (cand.maint - base.maint)
        months = one / net if net > 0 else float("inf")
        out.append((cc, bc, s, cc * r * 36.0 + one + cand.maint * 36.0, months))
    return out
