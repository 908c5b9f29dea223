"""What the phases hand back: the run's context (read-only inputs) and the measurements they add to.

A phase reads ``Context`` and the typed outcome of the phases it depends on, and writes figures, samples and
details into ``Measurements``. Nothing a phase needs is read back out of ``details``: that dict is output only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import torch

from accelpilot.figures import Figure, assumption, measured
from accelpilot.pilot.result import Platform, Topology, TrainingSummary
from accelpilot.pilot.train.config import Settings, TrainConfig
from accelpilot.pilot.workloads.base import TrainingWorkload

SOURCE = "accelpilot run train"


def fig(value: float, unit: str, label: str, note: str = "") -> Figure:
    """A figure this pilot measured."""
    return measured(value, unit, SOURCE, label=label, note=note)


class Advance(Protocol):
    def __call__(self, n: int = 1) -> None: ...


class Reporter:
    """Progress callbacks; the CLI supplies a rich one, library callers get silence."""

    def phase(self, name: str, total: int | None = None) -> Advance:
        def advance(n: int = 1) -> None:
            return None

        return advance

    def end_phase(self) -> None:
        return None


@dataclass(frozen=True)
class Context:
    """Inputs every phase may read; fixed before the first phase runs."""

    cfg: TrainConfig
    settings: Settings
    device: torch.device
    workload: TrainingWorkload
    options: dict[str, Any]
    platform: Platform
    reporter: Reporter
    t_start: float


@dataclass
class Measurements:
    """The figures, samples and details a run has gathered so far; enough to write a partial result."""

    figures: dict[str, Figure] = field(default_factory=dict)
    samples: dict[str, list[float]] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    phase_seconds: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    summary: TrainingSummary = field(default_factory=TrainingSummary)
    accepted: bool | None = None

    def details_out(self) -> dict[str, Any]:
        """``details`` as the result stores it: ``unavailable`` and ``phase_seconds`` first."""
        return {"unavailable": self.unavailable, "phase_seconds": self.phase_seconds, **self.details}


def topology_of(platform: Platform, world: int, nnodes: int = 1) -> tuple[Topology, str]:
    """The topology behind a throughput of ``world`` ranks on ``nnodes`` nodes, and what it assumes."""
    from accelpilot.pilot.device import devices_per_accelerator

    per, how = devices_per_accelerator(platform.device_type or platform.device, platform.accelerator)
    topo = Topology(
        world_size=world,
        nnodes=nnodes,
        nproc_per_node=max(1, world // nnodes),
        devices_per_accelerator=per,
        accelerators=world / per,
    )
    return topo, how


def per_accelerator(figures: dict[str, Figure], topo: Topology, how: str, keys: tuple[str, ...]) -> None:
    """``{key}_per_accelerator`` = ``{key}`` (all ranks) / accelerators, for each key present; derived, inputs kept."""
    acc = assumption(
        topo.accelerators,
        "",
        source=how,
        label="accelerators the ranks drove",
        note=f"world size {topo.world_size} / {topo.devices_per_accelerator} device(s) per accelerator",
    )
    for key in keys:
        if key in figures:
            figures[f"{key}_per_accelerator"] = (figures[key] / acc).with_label(
                "training throughput per accelerator",
                note=f"all {topo.world_size} rank(s) / {topo.accelerators:g} accelerator(s)",
            )
