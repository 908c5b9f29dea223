"""Checkpoints: write atomically (temp, fsync, rename), restore in place, time both.

A checkpoint holds model and optimizer state, the step, the CPU RNG state and free-form extras. Restoring
loads into the existing model and optimizer so compiled code keeps working.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from accelpilot.errors import InputFileError
from accelpilot.pilot import device as dev

_NAME = re.compile(r"^step_(\d+)\.pt$")


@dataclass(frozen=True, slots=True)
class CheckpointWrite:
    path: Path
    seconds: float
    bytes: int


def check_writable(
    directory: Path | str,
    what: str = "checkpoint directory is not writable",
    field: str = "--checkpoint-dir",
    fix: str = "give a folder you can write to",
) -> Path:
    """Create the folder and prove a file can be written there, or fail with one clear line.

    The one writability check of the training pilot: checkpoints and the result folder (``--out``) both use it,
    before anything is measured.
    """
    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".write-test-", dir=d)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise InputFileError(
            f"{what} ({exc.strerror or exc.__class__.__name__})", file=str(d), field=field, fix=fix
        ) from None
    return d


def checkpoint_path(directory: Path | str, step: int) -> Path:
    return Path(directory) / f"step_{step:07d}.pt"


def save_checkpoint(
    directory: Path | str,
    step: int,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer | None,
    device: torch.device,
    extra: dict[str, Any] | None = None,
) -> CheckpointWrite:
    """Write ``step_NNNNNNN.pt`` atomically; the time covers device-to-host copy, serialisation and fsync."""
    d = check_writable(directory)
    path = checkpoint_path(d, step)
    dev.synchronize(device)
    t0 = time.perf_counter()
    state = {
        "step": step,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict() if optimizer is not None else None,
        "rng_cpu": torch.get_rng_state(),
        "extra": extra or {},
    }
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as fh:
            torch.save(state, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    seconds = time.perf_counter() - t0
    return CheckpointWrite(path, seconds, path.stat().st_size)


def latest_checkpoint(directory: Path | str) -> Path | None:
    d = Path(directory)
    if not d.is_dir():
        return None
    found = [(int(m.group(1)), p) for p in d.iterdir() if (m := _NAME.match(p.name))]
    return max(found)[1] if found else None


def load_checkpoint(
    path: Path | str,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer | None,
    device: torch.device,
) -> tuple[int, dict[str, Any], float]:
    """Restore in place; returns (step, extras, seconds including the device sync)."""
    t0 = time.perf_counter()
    try:
        state = torch.load(Path(path), map_location=device, weights_only=False)
    except (OSError, RuntimeError, EOFError) as exc:
        raise InputFileError(f"cannot read checkpoint ({exc.__class__.__name__})", file=str(path)) from None
    with torch.no_grad():
        model.load_state_dict(state["model"])
    if optimizer is not None and state.get("optimizer") is not None:
        optimizer.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["rng_cpu"].cpu())
    dev.synchronize(device)
    return int(state["step"]), dict(state.get("extra") or {}), time.perf_counter() - t0
