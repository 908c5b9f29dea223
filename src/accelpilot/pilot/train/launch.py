"""The worker's parent side: start a worker process, follow its event log, SIGKILL it at a known step."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from accelpilot.errors import ConfigError
from accelpilot.pilot.train.worker import WorkerConfig

WORKER_TIMEOUT_S = 600
PR_SET_PDEATHSIG = 1  # linux/prctl.h


@dataclass(frozen=True, slots=True)
class ChildRun:
    """What one worker process did, as its event log says."""

    pid: int
    returncode: int | None
    losses: list[float]
    restored_step: int
    restore_s: float | None
    ready_s: float | None  # spawn until the worker was ready to train (checkpoint restored)
    first_step_s: float | None  # spawn until its first step was logged


def die_with_parent() -> None:
    """In the child before exec: Linux sends it SIGKILL when the parent dies, even by SIGKILL.

    The worker also watches its parent itself (``worker.watch_parent``), which covers other systems.
    """
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _src_path() -> str:
    return str(Path(__file__).resolve().parents[3])


def run_child(base: WorkerConfig, root: Path, tag: str, pause_at: int | None = None, resume: bool = False) -> ChildRun:
    """Run one worker process; with ``pause_at`` SIGKILL it once it logs that step."""
    log = root / f"{tag}.log"
    cfg = WorkerConfig(**{**asdict(base), "log_path": str(log), "pause_at": pause_at, "resume": resume})
    cfg_path = root / f"{tag}.json"
    cfg_path.write_text(cfg.to_json(), encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = _src_path() + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    t_spawn = time.time()
    proc = subprocess.Popen(
        [sys.executable, "-m", "accelpilot.pilot.train.worker", str(cfg_path)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        # its own session: a Ctrl-C at the terminal reaches the pilot, which then stops the worker itself
        start_new_session=True,
        preexec_fn=die_with_parent,
    )
    records: list[dict[str, Any]] = []
    pos = 0
    deadline = time.monotonic() + WORKER_TIMEOUT_S
    try:
        while True:
            if log.exists():
                with open(log, encoding="utf-8") as fh:
                    fh.seek(pos)
                    chunk = fh.read()
                complete = chunk[: chunk.rfind("\n") + 1]
                pos += len(complete.encode("utf-8"))
                records += [json.loads(line) for line in complete.splitlines() if line.strip()]
            if pause_at is not None and any(r.get("event") == "paused" for r in records):
                proc.kill()  # SIGKILL on POSIX
                break
            if proc.poll() is not None:
                break
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"worker {tag} did not finish within {WORKER_TIMEOUT_S} s")
            time.sleep(0.01)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
    for r in records:
        if r.get("event") == "error":
            raise ConfigError(f"training worker failed: {r.get('message')}", field="--interrupt-at")
    if pause_at is None and proc.returncode != 0:
        raise RuntimeError(f"worker {tag} exited with {proc.returncode}: {err.strip()[-2000:]}")
    if pause_at is not None and not any(r.get("event") == "paused" for r in records):
        raise RuntimeError(f"worker {tag} ended before step {pause_at} (exit {proc.returncode}): {err.strip()[-2000:]}")
    steps = [r for r in records if "loss" in r]
    ready = next((r for r in records if r.get("event") == "ready"), None)
    restored = next((r for r in records if r.get("event") == "restored"), None)
    return ChildRun(
        pid=proc.pid,
        returncode=proc.returncode,
        losses=[float(r["loss"]) for r in steps],
        restored_step=int(restored["step"]) if restored else 0,
        restore_s=float(restored["restore_s"]) if restored else None,
        ready_s=(ready["t"] - t_spawn) if ready else None,
        first_step_s=(steps[0]["t"] - t_spawn) if steps else None,
    )
