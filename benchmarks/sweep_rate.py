"""Sensitivity sweep rate: vectorised numpy vs a plain Python loop over the same scenarios.

Target (issue 2): at least 1,000,000 scenario evaluations per second. Prints both rates and the ratio.
Run: .venv/bin/python benchmarks/sweep_rate.py
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import load_scenario
from accelpilot.bill.sweep import F64, Coeffs, cost_per_accepted_run
from accelpilot.catalog import load_catalog

SCENARIO = Path(__file__).resolve().parents[1] / "src/accelpilot/bill/examples/worked-example.toml"


@dataclass(frozen=True, slots=True)
class SweepResult:
    cost_per_accepted_run: F64
    baseline_cost_per_accepted_run: F64
    saving_per_run: F64
    total_36_months: F64
    break_even_months: F64  # inf where it never pays back


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


def main() -> None:
    sc = load_scenario(SCENARIO)
    bill = make_bill(sc, load_catalog())
    rate = float(sc.engineering.day_rate)
    base = Coeffs.of(bill.option(bill.baseline), rate)
    cand = Coeffs.of(bill.options[1], rate)
    # 100 utilisations x 100 run rates x 100 porting-day values = 1,000,000 scenarios.
    u, r, d = np.meshgrid(
        np.linspace(0.05, 1.0, 100), np.linspace(0.25, 60, 100), np.linspace(0, 60, 100), indexing="ij"
    )
    n = u.size
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        res = sweep(base, cand, u, r, d)
        best = min(best, time.perf_counter() - t)
    vec_rate = n / best
    # The loop is slow: time it on a 100,000-scenario slice of the same grid.
    m = 100_000
    pts = list(zip(u.ravel()[:m].tolist(), r.ravel()[:m].tolist(), d.ravel()[:m].tolist(), strict=True))
    t = time.perf_counter()
    ref = sweep_python(base, cand, pts)
    loop_rate = m / (time.perf_counter() - t)
    assert np.allclose([x[0] for x in ref[:1000]], res.cost_per_accepted_run.ravel()[:1000])
    print(
        f"vectorised sweep: {n:,} scenarios in {best * 1e3:.1f} ms = {vec_rate:,.0f} evaluations/s "
        f"(target >= 1,000,000: {'met' if vec_rate >= 1e6 else 'MISSED'})"
    )
    print(f"python loop:      {m:,} scenarios = {loop_rate:,.0f} evaluations/s")
    print(f"ratio vectorised / loop: {vec_rate / loop_rate:.1f}x")


if __name__ == "__main__":
    main()
