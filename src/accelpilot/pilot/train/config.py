"""What `accelpilot run train` accepts (``TrainConfig``) and what a run resolves it to (``Settings``).

``TrainConfig`` is the one source of defaults: the CLI reads its option defaults from it. ``None`` means
"the workload's or the device's default", resolved once by ``resolve_settings`` into plain numbers that the
phases use and the result records.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from accelpilot.errors import ConfigError

if TYPE_CHECKING:  # this module stays torch-free: the CLI imports it for its option defaults
    import torch

    from accelpilot.pilot.workloads.base import TrainingWorkload

BUILTIN_WORKLOAD = "accelpilot.pilot.workloads.gpt:factory"
WORKLOAD_ALIASES = ("builtin:gpt", "gpt", "builtin")

# Relative tolerance of the first step's loss against the float32 CPU reference, per precision.
FIRST_STEP_RTOL = {"fp32": 1e-3, "bf16": 3e-2, "fp16": 1e-2}
DEFAULT_BACKEND = {"cuda": "inductor", "xla": "openxla"}
# Used when neither the command line nor the workload's training_defaults() give a value.
FALLBACKS: dict[str, Any] = {
    "batch_size": 8,
    "seq_len": 128,
    "learning_rate": 1e-3,
    "max_steps": 500,
    "eval_every": 10,
    "eval_batches": 2,
}
INTERRUPT_AT_ON_CPU = 12  # the kill-and-restart test is cheap on the CPU, so it is on by default there


@dataclass(kw_only=True)
class TrainConfig:
    """Everything `accelpilot run train` accepts; None means "the workload's or device's default"."""

    device: str = "cpu"
    workload: str = BUILTIN_WORKLOAD
    workload_options: dict[str, Any] = field(default_factory=dict)
    size: str | None = None
    tokens: str | None = None
    compile: str | None = None
    precision: str | None = None
    batch_size: int | None = None
    seq_len: int | None = None
    steps: int = 20
    warmup: int = 3
    shapes: list[int] | None = None
    target_loss: float | None = None
    max_steps: int | None = None
    eval_every: int | None = None
    eval_batches: int | None = None
    runs: int = 3
    interrupt_at: int | None = None  # None: automatic on the CPU, off elsewhere; 0: off
    checkpoint_every: int | None = None
    checkpoint_dir: str | None = None
    compare_to: str | None = None
    out: str = "pilot-results"
    seed: int = 0
    lr: float | None = None
    profile_steps: int = 3
    shape_steps: int = 3
    command: str = ""
    # distributed (torchrun): any of these turns the distributed pilot on (see pilot/train/distributed.py)
    nproc_per_node: int = 1
    nnodes: int = 1
    node_rank: int = 0
    rdzv_endpoint: str | None = None
    rdzv_timeout_s: float = 60.0
    scaling: list[int] | None = None
    parallel: str = "ddp"
    global_batch: int | None = None  # fixed: strong scaling; None: the per-rank batch is fixed (weak scaling)
    max_restarts: int = 0
    interrupt_rank: int = 0

    def __post_init__(self) -> None:
        if self.workload in WORKLOAD_ALIASES:
            self.workload = BUILTIN_WORKLOAD

    def validate(self) -> None:
        """Checks without side effects; every error names the option."""
        positive = {
            "--steps": self.steps,
            "--runs": self.runs,
            "--batch-size": self.batch_size,
            "--seq-len": self.seq_len,
            "--max-steps": self.max_steps,
            "--eval-every": self.eval_every,
            "--checkpoint-every": self.checkpoint_every,
        }
        for name, v in positive.items():
            if v is not None and v < 1:
                raise ConfigError(f"must be at least 1, got {v}", field=name)
        if self.warmup < 1:
            raise ConfigError(f"must be at least 1, got {self.warmup}", field="--warmup")
        if self.interrupt_at is not None and self.interrupt_at < 0:
            raise ConfigError("must be a step number >= 1 (0 turns the test off)", field="--interrupt-at")
        if self.shapes is not None and (not self.shapes or any(s < 1 for s in self.shapes)):
            raise ConfigError("give positive sequence lengths, e.g. 128,256,512", field="--shapes")
        if self.target_loss is not None and not math.isfinite(self.target_loss):
            raise ConfigError("must be a finite number", field="--target-loss")
        from accelpilot.pilot import device as dev

        if self.precision is not None:
            dev.check_precision(self.precision)
        if self.compile is not None:
            dev.check_backend(self.compile)

    def workload_factory_options(self) -> dict[str, Any]:
        options = dict(self.workload_options)
        if self.size is not None:
            options["size"] = self.size
        if self.tokens is not None:
            options["tokens"] = self.tokens
        return options


DEFAULTS = TrainConfig()  # the CLI's option defaults come from here


@dataclass(frozen=True, kw_only=True)
class Settings:
    """A run's resolved settings: every None of ``TrainConfig`` replaced by the value actually used."""

    backend: str
    precision: str
    batch_size: int
    seq_len: int
    lr: float
    target_loss: float | None
    max_steps: int
    eval_every: int
    eval_batches: int
    shapes: list[int]
    interrupt_at: int
    checkpoint_every: int


def resolve_settings(cfg: TrainConfig, workload: TrainingWorkload, device: torch.device) -> Settings:
    """Command line first, then the workload's ``training_defaults()``, then the device, then ``FALLBACKS``."""
    from accelpilot.pilot import device as dev

    get = getattr(workload, "training_defaults", None)
    d: dict[str, Any] = {**FALLBACKS, **(dict(get()) if callable(get) else {})}
    seq_len = int(cfg.seq_len or d["seq_len"])
    tl = cfg.target_loss if cfg.target_loss is not None else d.get("target_loss")
    interrupt_at = (
        cfg.interrupt_at if cfg.interrupt_at is not None else (INTERRUPT_AT_ON_CPU if device.type == "cpu" else 0)
    )
    return Settings(
        backend=dev.check_backend(cfg.compile or DEFAULT_BACKEND.get(device.type, "eager")),
        precision=dev.check_precision(cfg.precision or ("fp32" if device.type == "cpu" else "bf16")),
        batch_size=int(cfg.batch_size or d["batch_size"]),
        seq_len=seq_len,
        lr=float(cfg.lr or d["learning_rate"]),
        target_loss=float(tl) if tl is not None else None,
        max_steps=int(cfg.max_steps or d["max_steps"]),
        eval_every=int(cfg.eval_every or d["eval_every"]),
        eval_batches=int(cfg.eval_batches or d["eval_batches"]),
        shapes=list(cfg.shapes) if cfg.shapes else [seq_len, max(1, seq_len // 2)],
        interrupt_at=interrupt_at,
        checkpoint_every=int(cfg.checkpoint_every or max(1, min(5, interrupt_at or 5))),
    )


def parse_shapes(text: str | None, flag: str = "--shapes", example: str = "128,256,512") -> list[int] | None:
    """``"128,256,512"`` -> [128, 256, 512]."""
    if text is None or not text.strip():
        return None
    try:
        return [int(s) for s in text.replace(" ", "").split(",") if s]
    except ValueError:
        raise ConfigError(f"not a list of integers: {text!r}", field=flag, fix=f"e.g. {example}") from None
