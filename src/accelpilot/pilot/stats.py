"""The one type that turns raw samples into statistics (percentiles, olympic mean).

Raw samples are kept in results; everything reported is computed here so that training and serving
agree on what p99 means (linear interpolation between order statistics, numpy's default).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9)


@dataclass(slots=True)
class Samples:
    """A growing list of float samples (seconds, tokens/s...) with the statistics a pilot reports."""

    values: list[float] = field(default_factory=list)

    def add(self, v: float) -> None:
        self.values.append(float(v))

    def extend(self, vs: Iterable[float]) -> None:
        self.values.extend(float(v) for v in vs)

    def __len__(self) -> int:
        return len(self.values)

    def percentile(self, q: float) -> float:
        if not self.values:
            raise ValueError("no samples")
        return float(np.percentile(np.asarray(self.values, dtype=np.float64), q))

    def percentiles(self, qs: Sequence[float] = PERCENTILES) -> dict[str, float]:
        """``{"p50": ..., "p99.9": ...}``; empty when there are no samples."""
        if not self.values:
            return {}
        arr = np.percentile(np.asarray(self.values, dtype=np.float64), list(qs))
        return {f"p{q:g}": float(v) for q, v in zip(qs, arr, strict=True)}

    def mean(self) -> float:
        if not self.values:
            raise ValueError("no samples")
        return float(np.mean(self.values))

    def olympic_mean(self) -> float:
        """MLPerf's olympic mean: drop the fastest and slowest, average the rest (plain mean below 3)."""
        return olympic_mean(self.values)


def olympic_mean(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("no samples")
    vs = sorted(values)
    if len(vs) >= 3:
        vs = vs[1:-1]
    return float(sum(vs) / len(vs))
