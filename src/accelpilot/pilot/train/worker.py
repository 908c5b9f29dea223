"""A training worker that runs in its own process, so the pilot can SIGKILL it and restart it for real.

``python -m accelpilot.pilot.train.worker CONFIG.json`` trains ``total_steps`` steps, checkpoints every
``checkpoint_every`` steps and appends one JSON line per event to ``log_path`` (flushed, so the parent can
follow it). With ``pause_at`` it stops after logging that step and waits to be killed: that makes the kill
land on a known step. With ``resume`` it restores the newest checkpoint and replays the data stream to it.
The same ``run_worker`` runs in-process for the uninterrupted reference curve.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from accelpilot.errors import UserError


@dataclass
class WorkerConfig:
    workload: str  # module:factory
    workload_options: dict[str, Any] = field(default_factory=dict)
    device: str = "cpu"
    precision: str = "fp32"
    backend: str = "eager"
    batch_size: int = 16
    seq_len: int = 64
    lr: float = 1e-3
    seed: int = 0
    total_steps: int = 20
    checkpoint_every: int = 5
    checkpoint_dir: str = ""
    log_path: str = ""
    pause_at: int | None = None
    resume: bool = False
    num_threads: int | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self))


def run_worker(cfg: WorkerConfig, emit: Callable[[dict[str, Any]], None]) -> list[float]:
    """Train, checkpoint, log every step's loss; returns the losses of the steps this process ran."""
    import torch

    from accelpilot.pilot import device as dev
    from accelpilot.pilot.train import checkpoint as ckpt
    from accelpilot.pilot.train.loop import Trainer
    from accelpilot.pilot.workloads.base import load_factory

    if cfg.num_threads:
        torch.set_num_threads(cfg.num_threads)
    device = dev.resolve_device(cfg.device)
    workload = load_factory(cfg.workload, **cfg.workload_options)
    trainer = Trainer(workload, device, cfg.precision, cfg.backend, cfg.lr, cfg.seed)
    start = 0
    if cfg.resume:
        path = ckpt.latest_checkpoint(cfg.checkpoint_dir)
        if path is not None:
            start, _, restore_s = ckpt.load_checkpoint(path, trainer.model, trainer.optimizer, device)
            emit({"event": "restored", "step": start, "restore_s": restore_s, "path": str(path)})
    batches = workload.batches("train", cfg.batch_size, cfg.seq_len, cfg.seed)
    for _ in range(start):  # replay the data stream to where the checkpoint left it
        next(batches)
    emit({"event": "ready", "step": start})
    losses: list[float] = []
    for step in range(start + 1, cfg.total_steps + 1):
        loss = float(trainer.step(trainer.to_device(next(batches))).item())
        losses.append(loss)
        if cfg.checkpoint_every and cfg.checkpoint_dir and step % cfg.checkpoint_every == 0:
            w = ckpt.save_checkpoint(cfg.checkpoint_dir, step, trainer.model, trainer.optimizer, device)
            emit({"event": "checkpoint", "step": step, "seconds": w.seconds, "bytes": w.bytes})
        emit({"step": step, "loss": loss})
        if cfg.pause_at is not None and step == cfg.pause_at:
            emit({"event": "paused", "step": step})
            while True:  # wait for SIGKILL (the watchdog ends the wait if the parent is gone)
                time.sleep(3600)
    emit({"event": "done", "step": cfg.total_steps})
    return losses


def watch_parent(interval_s: float = 0.5) -> threading.Thread:
    """Exit this process when its parent dies: a worker must never outlive the pilot that started it."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(interval_s)
            if os.getppid() != parent:  # re-parented: the pilot is gone
                os._exit(3)

    t = threading.Thread(target=watch, name="accelpilot-parent-watchdog", daemon=True)
    t.start()
    return t


def main(argv: list[str] | None = None) -> int:
    watch_parent()  # the parent also sets PR_SET_PDEATHSIG on Linux (launch.die_with_parent)
    args = sys.argv[1:] if argv is None else argv
    with open(args[0], encoding="utf-8") as fh:
        cfg = WorkerConfig(**json.load(fh))
    with open(cfg.log_path, "a", encoding="utf-8") as log:

        def emit(rec: dict[str, Any]) -> None:
            log.write(json.dumps({"t": time.time(), **rec}) + "\n")
            log.flush()

        emit({"event": "started"})
        try:
            run_worker(cfg, emit)
        except UserError as exc:
            emit({"event": "error", "message": str(exc)})
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
