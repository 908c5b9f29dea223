"""One torchrun launch of the distributed pilot's ranks: start it, bound it, read what the ranks logged.

``python -m torch.distributed.run`` (torchrun's elastic agent, c10d rendezvous) starts ``pilot.train.rank`` on
every process of this node. A launch that fails is one line: the ranks never met (``RendezvousError``, exit 2:
the flags are wrong), or a rank or the agent died during the run (``RankFailed``, exit 1: the run failed, what
was measured is kept by the caller). The torchrun log is summarised in that line, because the folder it lives in
is temporary.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelpilot.errors import UserError
from accelpilot.pilot.train.config import TrainConfig
from accelpilot.pilot.train.launch import _src_path, die_with_parent
from accelpilot.pilot.train.rank import RankConfig

LAUNCH_MARGIN_S = 30.0  # beyond the rendezvous timeout: interpreter start and torch import of each rank
LAST = -1  # ``Launch.of``: the attempt that ended the launch (after torchrun's restarts)


class RendezvousError(UserError):
    """The ranks never met: one line naming the flag, exit 2."""


class RankFailed(UserError):
    """A rank or the torchrun agent died during the run (killed from outside, out of memory, a crash).

    Not bad input, so exit 1; one line all the same, naming the rank, how it ended and what was kept.
    """

    exit_code = 1


@dataclass
class Launch:
    """One torchrun launch: its configuration and what its ranks logged."""

    world: int
    t_launch: float
    wall_s: float
    returncode: int
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def last_attempt(self) -> int:
        return max((int(e.get("attempt", 0)) for e in self.events), default=0)

    def of(self, event: str, attempt: int | None = LAST) -> list[dict[str, Any]]:
        """Events of one kind from one attempt (``LAST``: the one that finished; None: every attempt)."""
        want = self.last_attempt if attempt == LAST else attempt
        return [e for e in self.events if e.get("event") == event and (want is None or e.get("attempt", 0) == want)]


def read_events(run_dir: Path) -> list[dict[str, Any]]:
    """Every rank's events: the local logs, plus what rank 0 gathered from ranks on other nodes."""
    out: list[dict[str, Any]] = []
    local: set[int] = set()
    for p in sorted(run_dir.glob("rank*.jsonl")):
        for line in p.read_text(encoding="utf-8").splitlines():
            if line.strip() and line.endswith("}"):
                out.append(json.loads(line))
                local.add(int(out[-1]["rank"]))
    gathered = run_dir / "all-ranks.json"
    if gathered.exists():
        out += [e for e in json.loads(gathered.read_text(encoding="utf-8")) if int(e["rank"]) not in local]
    return out


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


_RANK_ERROR = re.compile(r"^\[rank(\d+)\]:\s+(\w+(?:Error|Exception)\b.*)$", re.MULTILINE)  # a rank's last error
_FAILED_RANK = re.compile(r"rank\s*:\s*(\d+)\s*\(local_rank:\s*\d+\)\s*exitcode\s*:\s*(-?\d+)")


def failure_line(returncode: int, log_text: str, world: int) -> str:
    """Why a launch that had met ended non-zero, in words: which rank, which signal or exit code.

    torchrun prints ``rank : 1 (local_rank: 1) exitcode : -9`` for each failed rank; a negative code is the
    signal that ended it. A negative return code of torchrun itself means the agent was killed.
    """
    if returncode < 0:
        return f"the torchrun agent was killed by {_signal_name(-returncode)} at world size {world}"
    root_cause = log_text.rsplit("Root Cause", 1)[-1]  # torchrun names the first failure last
    ranks = _FAILED_RANK.findall(root_cause) or _FAILED_RANK.findall(log_text)
    others = len(_FAILED_RANK.findall(log_text)) - 1
    if ranks:
        rank, code = ranks[0]
        c = int(code)
        how = f"was killed by {_signal_name(-c)}" if c < 0 else f"exited with code {c}"
        more = f" (torchrun then stopped {others} other rank(s))" if others > 0 else ""
        said = [m for m in _RANK_ERROR.findall(log_text) if m[0] == rank]
        why = f": {said[-1][1].strip()[:300]}" if c > 0 and said else ""
        return f"rank {rank} {how} at world size {world}{more}{why}"
    errs = [ln.strip() for ln in log_text.splitlines() if "Error" in ln and "errors.html" not in ln]
    tail = (errs or [ln.strip() for ln in log_text.splitlines() if ln.strip()] or ["no output"])[-1]
    return f"torchrun exited with {returncode} at world size {world}: {tail[:300]}"


def launch(cfg: TrainConfig, rank_cfg: RankConfig, run_dir: Path, nproc: int, max_restarts: int = 0) -> Launch:
    """Start torchrun over the rank module with ``nproc`` ranks per node and wait, bounded; ranks die with it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    cfg_path = run_dir / "rank-config.json"
    cfg_path.write_text(rank_cfg.to_json(), encoding="utf-8")
    argv = [sys.executable, "-m", "torch.distributed.run", f"--nnodes={cfg.nnodes}", f"--nproc-per-node={nproc}"]
    argv += [f"--max-restarts={max_restarts}"]
    if cfg.rdzv_endpoint:
        argv += ["--rdzv-backend=c10d", f"--rdzv-endpoint={cfg.rdzv_endpoint}", f"--node-rank={cfg.node_rank}"]
        timeout = max(1, math.ceil(cfg.rdzv_timeout_s))  # torchrun takes whole seconds
        argv += [f"--rdzv-conf=join_timeout={timeout},read_timeout={timeout}"]
        argv += [f"--rdzv-id=accelpilot-{cfg.seed}-{rank_cfg.tag}"]
    else:
        argv += ["--standalone"]  # one node: c10d rendezvous on a free local port
    argv += ["-m", "accelpilot.pilot.train.rank", str(cfg_path)]
    env = dict(os.environ)
    env["PYTHONPATH"] = _src_path() + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["OMP_NUM_THREADS"] = str(rank_cfg.threads)  # one thread per process: the ranks share the cores
    log_path = run_dir / "torchrun.log"
    t_launch = time.time()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # one process group: torchrun and its ranks are stopped together
            preexec_fn=die_with_parent,
        )
    met_deadline = time.monotonic() + cfg.rdzv_timeout_s + LAUNCH_MARGIN_S
    try:
        while proc.poll() is None:
            time.sleep(0.2)
            if time.monotonic() > met_deadline and not _met(run_dir):
                raise RendezvousError(
                    f"no rendezvous within {cfg.rdzv_timeout_s:g} s"
                    + (f" at {cfg.rdzv_endpoint}" if cfg.rdzv_endpoint else ""),
                    field="--rdzv-endpoint",
                    fix="start every node with the same --rdzv-endpoint and --nnodes, and check the address",
                )
    except BaseException:
        _kill_group(proc)
        raise
    _kill_group(proc)  # ranks orphaned by a killed agent: their parent-death signal, and this, end them
    out = Launch(nproc * cfg.nnodes, t_launch, time.time() - t_launch, proc.returncode, read_events(run_dir))
    if proc.returncode != 0:
        text = log_path.read_text(errors="replace")
        if not _met(run_dir) and proc.returncode > 0:
            raise RendezvousError(
                f"the ranks never formed a group (torchrun exit {proc.returncode})"
                + (f" at {cfg.rdzv_endpoint}" if cfg.rdzv_endpoint else ""),
                field="--rdzv-endpoint" if cfg.rdzv_endpoint else "--nproc-per-node",
                fix="start every node with the same --rdzv-endpoint and --nnodes; torchrun said: "
                + failure_line(proc.returncode, text, out.world),
            )
        raise RankFailed(failure_line(proc.returncode, text, out.world))
    return out


def _met(run_dir: Path) -> bool:
    return any(e.get("event") == "process_group" for e in read_events(run_dir))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
