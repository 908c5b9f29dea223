"""Vectorised sensitivity: cost per accepted run over grids of utilisation and runs per month, with numpy
broadcasting and no Python loop, so the report's sensitivity charts are dense (benchmarks/sweep_rate.py adds
36-month cost and payback over porting days on the same coefficients).

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


def cost_per_accepted_run(k: Coeffs, u: F64 | float, r: F64 | float) -> F64:
    return np.asarray((k.a / u + k.b + k.c / r) / k.accepted, dtype=np.float64)
