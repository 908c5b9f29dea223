"""Resilience: checkpoint write/restore timing, and a real worker SIGKILLed mid-run and restarted."""

from __future__ import annotations

import shutil
import signal
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from accelpilot.pilot.train import checkpoint as ckpt
from accelpilot.pilot.train.launch import run_child
from accelpilot.pilot.train.loop import Trainer
from accelpilot.pilot.train.record import Context, Measurements, fig
from accelpilot.pilot.train.worker import WorkerConfig, run_worker


@dataclass(frozen=True, slots=True)
class CheckpointRoot:
    """Where checkpoints go: the user's --checkpoint-dir (kept) or a temporary folder (removed)."""

    path: Path
    temporary: bool


def checkpoint_root(ctx: Context, out_dir: Path) -> CheckpointRoot:
    if ctx.cfg.checkpoint_dir:
        return CheckpointRoot(ckpt.check_writable(ctx.cfg.checkpoint_dir), temporary=False)
    return CheckpointRoot(Path(tempfile.mkdtemp(prefix=".checkpoints-", dir=out_dir)), temporary=True)


def run_checkpoint(ctx: Context, m: Measurements, trainer: Trainer, root: CheckpointRoot) -> None:
    """Save, scramble the weights, restore: time both and prove the restore replaced the weights."""
    advance = ctx.reporter.phase("checkpoint write and restore", 1)
    try:
        w = ckpt.save_checkpoint(root.path / "pilot", 0, trainer.model, trainer.optimizer, ctx.device)
        before = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
        with torch.no_grad():
            for p in trainer.model.parameters():
                p.add_(1.0)  # prove the restore really replaces the weights
        _, _, restore_s = ckpt.load_checkpoint(w.path, trainer.model, trainer.optimizer, ctx.device)
        same = all(torch.equal(before[k], v) for k, v in trainer.model.state_dict().items())
    finally:
        if root.temporary:
            shutil.rmtree(root.path / "pilot", ignore_errors=True)
    advance(1)
    m.figures["checkpoint_write_s"] = fig(w.seconds, "s", "checkpoint write (serialise + fsync + rename)")
    m.figures["checkpoint_bytes"] = fig(w.bytes, "byte", "checkpoint size (model + optimizer)")
    m.figures["checkpoint_restore_s"] = fig(restore_s, "s", "checkpoint restore (load + copy in place)")
    m.details["checkpoint"] = {"restored_bitwise": same, "path": str(w.path) if not root.temporary else None}
    if not same:
        m.errors.append("checkpoint restore did not reproduce the saved weights")


def _discard(_: dict[str, Any]) -> None:
    return None


def run_interrupt(ctx: Context, m: Measurements, root: CheckpointRoot, stamp: str) -> None:
    """A worker process is SIGKILLed after step k, a new one resumes from the last checkpoint."""
    s = ctx.settings
    if not s.interrupt_at:
        m.unavailable["interrupt"] = "not requested (--interrupt-at STEP)"
        return
    k = s.interrupt_at
    total = k + 2 * s.checkpoint_every
    advance = ctx.reporter.phase(f"interrupted worker (SIGKILL at step {k}, restart)", 3)
    work = root.path / f"interrupt-{stamp}"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    base = WorkerConfig(
        workload=ctx.cfg.workload,
        workload_options=ctx.options,
        device=ctx.cfg.device,
        precision=s.precision,
        backend=s.backend,
        batch_size=s.batch_size,
        seq_len=s.seq_len,
        lr=s.lr,
        seed=ctx.cfg.seed,
        total_steps=total,
        checkpoint_every=s.checkpoint_every,
        checkpoint_dir=str(work / "ckpt"),
        num_threads=torch.get_num_threads(),
    )
    try:
        killed = run_child(base, work, "killed", pause_at=k)
        advance(1)
        resumed = run_child(base, work, "resumed", resume=True)
        advance(1)
        # the uninterrupted curve: same code in this process, no checkpoints
        reference = run_worker(WorkerConfig(**{**asdict(base), "checkpoint_every": 0, "checkpoint_dir": ""}), _discard)
        advance(1)
    finally:
        if root.temporary:
            shutil.rmtree(work, ignore_errors=True)
    restored_step = resumed.restored_step
    lost = k - restored_step
    expected = reference[restored_step:]
    diffs = [abs(a - b) for a, b in zip(resumed.losses, expected, strict=False)]
    bitwise = len(resumed.losses) == len(expected) and all(
        a == b for a, b in zip(resumed.losses, expected, strict=True)
    )
    exact = ctx.device.type == "cpu" and s.backend == "eager" and s.precision == "fp32"
    tol = 0.0 if exact else 1e-2
    max_diff = max(diffs) if diffs else float("nan")
    m.details["interrupt"] = {
        "interrupt_at": k,
        "checkpoint_every": s.checkpoint_every,
        "total_steps": total,
        "kill_signal": "SIGKILL",
        "killed_returncode": killed.returncode,
        "killed_pid": killed.pid,
        "restored_step": restored_step,
        "steps_lost": lost,
        "restart_s": resumed.ready_s,
        "first_resumed_step_s": resumed.first_step_s,
        "restore_s": resumed.restore_s,
        "loss_curve_uninterrupted": reference,
        "loss_curve_before_kill": killed.losses,
        "loss_curve_resumed": resumed.losses,
        "max_abs_loss_diff": max_diff,
        "bitwise_equal": bitwise,
        "tolerance_abs": tol,
        "matches": bool(diffs) and max_diff <= tol,
        "how": "the child pauses after logging the step, is SIGKILLed, and a new process resumes",
    }
    m.figures["interrupt_steps_lost"] = fig(lost, "step", f"steps lost when killed at step {k}")
    if resumed.ready_s is not None:
        m.figures["restart_s"] = fig(
            resumed.ready_s, "s", "restart: new process spawned until checkpoint restored and ready"
        )
    if resumed.first_step_s is not None:
        m.figures["restart_to_first_step_s"] = fig(
            resumed.first_step_s, "s", "restart: new process spawned until its first resumed step"
        )
    if diffs:
        m.figures["resume_loss_max_abs_diff"] = fig(max_diff, "", "resumed vs uninterrupted loss (max abs)")
    if killed.returncode != -signal.SIGKILL:
        m.errors.append(f"the killed worker exited with {killed.returncode}, not SIGKILL")
