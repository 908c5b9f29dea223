"""The training step and the timed loop: the part of the pilot that must cost nothing.

One ``Trainer`` holds the model on the device, the compiled loss module, the optimizer and (fp16) the grad
scaler. The fast path matches a tuned PyTorch loop: autocast, fused AdamW where the device has it,
``torch.compile`` over model *and* loss (so the float32 cross-entropy fuses), and no host sync in the timed
loop except one per step to read the clock (the next batch is sent to the device before that sync).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from accelpilot.pilot import device as dev
from accelpilot.pilot.workloads.base import TrainingWorkload


class LossModule(torch.nn.Module):
    """Wraps ``workload.loss(model, batch)`` so one torch.compile covers the model and its loss."""

    def __init__(self, workload: TrainingWorkload, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model
        self._workload = workload

    def forward(self, *batch: torch.Tensor) -> torch.Tensor:
        return self._workload.loss(self.model, batch)


def fused_optimizer_supported(device: torch.device) -> bool:
    """Whether torch has fused AdamW kernels for this device type (cuda, cpu, mps, xpu in recent torch)."""
    try:
        from torch.utils._foreach_utils import _get_fused_kernels_supported_devices

        return device.type in _get_fused_kernels_supported_devices()
    except Exception:
        return False


def build_model(workload: TrainingWorkload, seed: int) -> torch.nn.Module:
    """A fresh float32 CPU model, deterministic under the seed."""
    torch.manual_seed(seed)
    return workload.build_model()


@dataclass
class Trainer:
    """Model, compiled loss, optimizer and precision on one device."""

    workload: TrainingWorkload
    device: torch.device
    precision: str = "fp32"
    backend: str = "eager"
    lr: float = 1e-3
    seed: int = 0
    fused: bool | None = None  # None: fused where supported
    model: torch.nn.Module = field(init=False)
    loss_module: torch.nn.Module = field(init=False)
    compiled: Any = field(init=False)
    optimizer: torch.optim.Optimizer = field(init=False)
    scaler: Any = field(init=False, default=None)
    init_state: dict[str, torch.Tensor] = field(init=False)

    def __post_init__(self) -> None:
        model = build_model(self.workload, self.seed)
        self.init_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        self.model = model.to(self.device)
        self.loss_module = LossModule(self.workload, self.model)
        self.compiled = dev.compile_model(self.loss_module, self.backend)
        if self.fused is None:
            self.fused = fused_optimizer_supported(self.device)
        self.new_optimizer()

    def new_optimizer(self) -> None:
        kwargs: dict[str, Any] = {"lr": self.lr}
        if self.fused:
            kwargs["fused"] = True
        self.optimizer = torch.optim.AdamW(self.model.parameters(), **kwargs)
        self.scaler = torch.amp.GradScaler(self.device.type) if self.precision == "fp16" else None

    def reset(self, seed: int | None = None) -> None:
        """Fresh weights (in place, so compiled code is reused) and a fresh optimizer."""
        state = self.init_state if seed is None or seed == self.seed else build_model(self.workload, seed).state_dict()
        with torch.no_grad():
            self.model.load_state_dict(state)
        self.new_optimizer()

    def to_device(self, batch: Sequence[torch.Tensor]) -> tuple[torch.Tensor, ...]:
        return tuple(t.to(self.device, non_blocking=True) for t in batch)

    def forward_backward(self, batch: Sequence[torch.Tensor]) -> torch.Tensor:
        with dev.autocast(self.device, self.precision):
            loss = self.compiled(*batch)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        return loss

    def optimizer_step(self) -> None:
        if self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    def step(self, batch: Sequence[torch.Tensor]) -> torch.Tensor:
        """One training step; returns the loss tensor without reading it (no host sync)."""
        loss = self.forward_backward(batch)
        self.optimizer_step()
        return loss.detach()

    def grads_finite(self) -> bool:
        """All gradients finite (after forward_backward, before optimizer_step). Syncs once."""
        flags = [torch.isfinite(p.grad).all() for p in self.model.parameters() if p.grad is not None]
        return bool(torch.stack(flags).all().item()) if flags else False

    @torch.no_grad()
    def eval_loss(self, batches: Sequence[Sequence[torch.Tensor]]) -> float:
        """Mean loss over fixed eval batches already on the device."""
        total = torch.zeros((), device=self.device, dtype=torch.float32)
        with dev.autocast(self.device, self.precision):
            for b in batches:
                total += self.compiled(*b).float()
        return float(total.item()) / max(1, len(batches))


@dataclass
class LoopTimes:
    """Per-step wall times (device synchronised) and the loss tensors of a timed window."""

    step_s: list[float]
    losses: list[torch.Tensor]
    tokens: int
    samples: int

    @property
    def wall_s(self) -> float:
        return float(sum(self.step_s))


def timed_steps(trainer: Trainer, batches: Iterator[Sequence[torch.Tensor]], n: int) -> LoopTimes:
    """Run ``n`` steps, reading the clock once per step after a device sync.

    The next batch is moved to the device before the sync so the copy overlaps the step; losses stay
    on the device until the caller reads them.
    """
    device = trainer.device
    tokens_in = trainer.workload.tokens_in
    step = trainer.step
    to_device = trainer.to_device
    sync = dev.ops_for(device).synchronize
    clock = time.perf_counter
    times: list[float] = []
    losses: list[torch.Tensor] = []
    tokens = samples = 0
    batch = to_device(next(batches))
    sync(device)
    t0 = clock()
    for _ in range(n):
        losses.append(step(batch))
        tokens += tokens_in(batch)
        samples += int(batch[0].shape[0])
        batch = to_device(next(batches))
        sync(device)
        t1 = clock()
        times.append(t1 - t0)
        t0 = t1
    return LoopTimes(times, losses, tokens, samples)
