"""The distributed training pilot: torchrun launches the ranks, this module checks, waits and aggregates.

For each world size of ``--scaling`` (or the one given by ``--nproc-per-node``/``--nnodes``) the pilot starts
``python -m torch.distributed.run`` (torchrun's elastic agent, c10d rendezvous) over ``pilot.train.rank``,
follows the ranks' event logs, and turns them into figures: throughput, the slowest rank and the skew between
ranks, scaling efficiency derived from the measured throughputs (inputs kept), the communication share,
launch-to-first-step, and sharded-checkpoint (``torch.distributed.checkpoint``) save/load time and size. The
largest world size runs first, so the smaller ones load its sharded checkpoint: a checkpoint written at world
size N read at world size M, compared weight by weight.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelpilot.errors import ConfigError, UserError
from accelpilot.figures import Figure, Kind
from accelpilot.pilot import device as dev
from accelpilot.pilot.result import PilotResult, TrainingSummary, WorkloadInfo, write_new_result
from accelpilot.pilot.train.config import BUILTIN_WORKLOAD, TrainConfig, resolve_settings
from accelpilot.pilot.train.launch import _src_path, die_with_parent
from accelpilot.pilot.train.pilot import TrainingInterrupted, check_out_dir
from accelpilot.pilot.train.rank import RankConfig
from accelpilot.pilot.train.record import Reporter, fig
from accelpilot.pilot.workloads.base import TrainingWorkload, load_factory

PARALLEL = ("ddp", "fsdp")
LAUNCH_MARGIN_S = 30.0  # beyond the rendezvous timeout: interpreter start and torch import of each rank


class RendezvousError(UserError):
    """The ranks never met: one line naming the flag, exit 2."""


def is_distributed(cfg: TrainConfig) -> bool:
    return bool(cfg.scaling) or cfg.nproc_per_node > 1 or cfg.nnodes > 1


def world_sizes(cfg: TrainConfig) -> list[int]:
    return sorted(set(cfg.scaling or [cfg.nproc_per_node * cfg.nnodes]))


def validate(cfg: TrainConfig) -> None:
    """Bad distributed input, each a one-line error naming the flag: before anything starts."""
    if cfg.parallel not in PARALLEL:
        raise ConfigError(f"unknown strategy {cfg.parallel!r}", field="--parallel", fix="ddp or fsdp")
    if cfg.nnodes < 1 or cfg.nproc_per_node < 1:
        raise ConfigError("must be at least 1", field="--nnodes" if cfg.nnodes < 1 else "--nproc-per-node")
    if not 0 <= cfg.node_rank < cfg.nnodes:
        raise ConfigError(f"must be in 0..{cfg.nnodes - 1}", field="--node-rank")
    if cfg.nnodes > 1 and not cfg.rdzv_endpoint:
        raise ConfigError("several nodes need a meeting point", field="--rdzv-endpoint", fix="e.g. HOST:29400")
    if cfg.nnodes > 1 and cfg.scaling:
        raise ConfigError("--scaling runs on one node", field="--scaling", fix="drop --nnodes, or drop --scaling")
    sizes = world_sizes(cfg)
    if any(w < 1 for w in sizes):
        raise ConfigError("world sizes must be at least 1", field="--scaling", fix="e.g. 1,2,4")
    kind = cfg.device.split(":")[0]
    present = (os.cpu_count() or 1) if kind == "cpu" else dev.DEVICE_OPS[kind].count()
    per_node = max(sizes) // cfg.nnodes
    if per_node > present:
        flag = "--scaling" if cfg.scaling else "--nproc-per-node"
        raise ConfigError(
            f"{per_node} processes per node but this machine has {present} {kind} device(s)"
            + (" (cores)" if kind == "cpu" else ""),
            field=flag,
            fix=f"use at most {present} per node, or add nodes with --nnodes",
        )
    if cfg.global_batch is not None:
        bad = [w for w in sizes if cfg.global_batch % w]
        if cfg.global_batch < 1 or bad:
            raise ConfigError(
                f"{cfg.global_batch} is not divisible by world size {bad[0] if bad else 0}",
                field="--global-batch",
                fix="give a multiple of every world size (strong scaling), or drop it (weak scaling)",
            )
    if cfg.interrupt_at and not 0 <= cfg.interrupt_rank < max(sizes):
        raise ConfigError(f"must be a rank in 0..{max(sizes) - 1}", field="--interrupt-rank")
    if cfg.interrupt_at and cfg.interrupt_at >= cfg.warmup + cfg.steps:
        raise ConfigError(
            f"step {cfg.interrupt_at} is not before the last step ({cfg.warmup + cfg.steps})", field="--interrupt-at"
        )


@dataclass
class Launch:
    """One torchrun launch: its configuration and what its ranks logged."""

    world: int
    t_launch: float
    wall_s: float
    returncode: int
    events: list[dict[str, Any]] = field(default_factory=list)

    def of(self, event: str, attempt: int | None = 0) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("event") == event and (attempt is None or e["attempt"] == attempt)]


def _read_events(run_dir: Path) -> list[dict[str, Any]]:
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
        argv += [f"--rdzv-id=accelpilot-{cfg.seed}"]
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
    out = Launch(nproc * cfg.nnodes, t_launch, time.time() - t_launch, proc.returncode, _read_events(run_dir))
    if proc.returncode != 0:
        if not _met(run_dir):
            raise RendezvousError(
                f"the ranks never formed a group (torchrun exit {proc.returncode})"
                + (f" at {cfg.rdzv_endpoint}" if cfg.rdzv_endpoint else ""),
                field="--rdzv-endpoint" if cfg.rdzv_endpoint else "--nproc-per-node",
                fix=f"see {log_path}",
            )
        lines = log_path.read_text(errors="replace").strip().splitlines()
        errs = [ln.strip() for ln in lines if "Error" in ln and "errors.html" not in ln] or lines[-3:]
        raise RuntimeError(f"torchrun exited with {proc.returncode}: {' | '.join(errs[-3:])} (log: {log_path})")
    return out


def _met(run_dir: Path) -> bool:
    return any(e.get("event") == "process_group" for e in _read_events(run_dir))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


# --- from events to figures (pure: tested on hand-made events) ------------------------------------------------


@dataclass(frozen=True)
class WorldStats:
    """What one world size measured, from its ranks' events."""

    world: int
    tokens_per_s: float
    samples_per_s: float
    step_s: list[float]  # per timed step: the slowest rank's time (the step ends when the last rank ends)
    rank_median_step_s: dict[int, float]
    launch_to_first_step_s: float | None
    process_group_s: float | None
    fwd_bwd_sync_s: float | None
    fwd_bwd_nosync_s: float | None
    grad_bytes: int | None
    ckpt_save_s: float | None
    ckpt_bytes: int | None
    ckpt_load_s: float | None
    losses: list[float]  # rank 0, every step


def world_stats(run: Launch, warmup: int, batch_per_rank: int) -> WorldStats:
    steps = run.of("step")
    by_step: dict[int, list[dict[str, Any]]] = {}
    for e in steps:
        by_step.setdefault(int(e["step"]), []).append(e)
    timed = [by_step[k] for k in sorted(by_step) if k > warmup]
    step_s = [max(e["seconds"] for e in rows) for rows in timed]
    tokens = sum(e["tokens"] for rows in timed for e in rows)
    samples = sum(len(rows) * batch_per_rank for rows in timed)
    wall = sum(step_s)
    ranks = sorted({int(e["rank"]) for e in steps})
    rank_median = {r: statistics.median(e["seconds"] for rows in timed for e in rows if e["rank"] == r) for r in ranks}
    first = [e["t"] for e in steps if e["rank"] == 0]
    pg = [e["seconds"] for e in run.of("process_group")]
    sync = [e["seconds"] for e in run.of("sync_step")]
    nosync = [e["seconds"] for e in run.of("nosync_step")]
    saves = [e for e in run.of("checkpoint") if e["step"] == max((int(s["step"]) for s in steps), default=0)]
    loads = [e["seconds"] for e in run.of("loaded_own")]
    return WorldStats(
        world=run.world,
        tokens_per_s=tokens / wall if wall > 0 else 0.0,
        samples_per_s=samples / wall if wall > 0 else 0.0,
        step_s=step_s,
        rank_median_step_s=rank_median,
        launch_to_first_step_s=(min(first) - run.t_launch) if first else None,
        process_group_s=max(pg) if pg else None,
        fwd_bwd_sync_s=statistics.median(sync) if sync else None,
        fwd_bwd_nosync_s=statistics.median(nosync) if nosync else None,
        grad_bytes=next((int(e["grad_bytes"]) for e in run.of("sync_step")), None),
        ckpt_save_s=max(e["seconds"] for e in saves) if saves else None,
        ckpt_bytes=max(e["bytes"] for e in saves) if saves else None,
        ckpt_load_s=max(loads) if loads else None,
        losses=[float(e["loss"]) for e in sorted((e for e in steps if e["rank"] == 0), key=lambda e: e["step"])],
    )


def scaling_figures(stats: dict[int, WorldStats], strong: bool) -> tuple[dict[str, Figure], dict[str, str]]:
    """Per world size: throughput, step times, stragglers, communication, checkpoints; efficiency against 1."""
    figs: dict[str, Figure] = {}
    unavailable: dict[str, str] = {}
    for w, st in sorted(stats.items()):
        sfx = f"_world{w}"
        note = f"world size {w}"
        figs["tokens_per_s" + sfx] = fig(st.tokens_per_s, "token/s", "training throughput, all ranks", note)
        figs["samples_per_s" + sfx] = fig(st.samples_per_s, "sample/s", "training throughput, all ranks", note)
        figs["step_time_p50_s" + sfx] = fig(statistics.median(st.step_s), "s", "step time p50 (slowest rank)", note)
        slow, fast = max(st.rank_median_step_s.values()), min(st.rank_median_step_s.values())
        figs["slowest_rank_step_s" + sfx] = fig(slow, "s", "median step time of the slowest rank", note)
        figs["rank_step_skew" + sfx] = fig(
            (slow - fast) / fast if fast > 0 else 0.0, "", "straggler skew: (slowest - fastest) / fastest rank", note
        )
        if st.launch_to_first_step_s is not None:
            figs["launch_to_first_step_s" + sfx] = fig(
                st.launch_to_first_step_s, "s", "launch to first completed step (rendezvous, group, build)", note
            )
        if st.fwd_bwd_sync_s is not None and st.fwd_bwd_nosync_s is not None:
            t_sync = fig(st.fwd_bwd_sync_s, "s", "forward+backward with gradient all-reduce", note)
            t_nosync = fig(st.fwd_bwd_nosync_s, "s", "forward+backward without synchronisation (DDP no_sync)", note)
            figs["fwd_bwd_sync_s" + sfx] = t_sync
            figs["fwd_bwd_nosync_s" + sfx] = t_nosync
            figs["comm_share" + sfx] = ((t_sync - t_nosync) / t_sync).with_label(
                "share of forward+backward spent on gradient communication",
                note="(synchronised - no_sync) / synchronised; negative values are noise",
            )
        else:
            unavailable["comm_share" + sfx] = "measured with DDP's no_sync only (FSDP shards need their collectives)"
        if st.grad_bytes is not None:
            figs["allreduce_bytes_per_step" + sfx] = fig(
                st.grad_bytes, "byte", "bytes all-reduced per step (every gradient once)", note
            )
        if st.ckpt_save_s is not None:
            figs["dcp_save_s" + sfx] = fig(st.ckpt_save_s, "s", "sharded checkpoint save (DCP, slowest rank)", note)
        if st.ckpt_bytes is not None:
            figs["dcp_bytes" + sfx] = fig(st.ckpt_bytes, "byte", "sharded checkpoint size (all shards)", note)
        if st.ckpt_load_s is not None:
            figs["dcp_load_s" + sfx] = fig(st.ckpt_load_s, "s", "sharded checkpoint load (DCP, slowest rank)", note)
    if 1 in stats:
        one = figs["tokens_per_s_world1"]
        for w in sorted(stats):
            if w == 1:
                continue
            n = Figure(value=w, unit="", kind=Kind.DERIVED, label="world size")
            how = "speed-up / N (fixed --global-batch)" if strong else "throughput(N) / (N x throughput(1))"
            figs[f"scaling_efficiency_world{w}"] = (figs[f"tokens_per_s_world{w}"] / (one * n)).with_label(
                f"scaling efficiency 1 -> {w}", note=f"{'strong' if strong else 'weak'} scaling: {how}"
            )
    else:
        unavailable["scaling_efficiency"] = "world size 1 not measured (add 1 to --scaling)"
    return figs, unavailable


# --- the run ------------------------------------------------------------------------------------------------


def _workload(cfg: TrainConfig) -> TrainingWorkload:
    workload = load_factory(cfg.workload, **cfg.workload_factory_options())
    if not isinstance(workload, TrainingWorkload):
        raise ConfigError(f"{cfg.workload} does not return a TrainingWorkload", field="--workload")
    return workload


def _checkpoint_dir(cfg: TrainConfig, work: Path, stamp: str, world: int) -> str:
    """Where the ranks write their shards: one folder every rank of the job sees."""
    if cfg.nnodes == 1:
        return str(work / f"{stamp}-world{world}" / "ckpt")
    if cfg.checkpoint_dir:  # several nodes: a folder they share, named alike on every node (no local stamp)
        return str(Path(cfg.checkpoint_dir) / f"dcp-world{world}")
    return ""


def run_distributed(cfg: TrainConfig, reporter: Reporter | None = None) -> tuple[PilotResult, Path | None]:
    """Measure every world size, write one result with all of them; returns it and where it was written.

    Only node rank 0 writes (None elsewhere): one job, one result.
    """
    import torch

    cfg.validate()
    validate(cfg)
    rep = reporter or Reporter()
    device = dev.resolve_device(cfg.device)
    out_dir = Path(cfg.out)
    check_out_dir(out_dir)
    workload = _workload(cfg)
    s = resolve_settings(cfg, workload, device)
    sizes = world_sizes(cfg)
    strong = cfg.global_batch is not None
    total = cfg.warmup + cfg.steps
    keep = cfg.checkpoint_dir is not None
    work = (
        Path(cfg.checkpoint_dir)
        if cfg.checkpoint_dir is not None
        else Path(tempfile.mkdtemp(prefix=".distributed-", dir=out_dir))
    )
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    launches: dict[int, Launch] = {}
    stats: dict[int, WorldStats] = {}
    portability: dict[str, Any] = {}
    interrupt: dict[str, Any] | None = None
    errors: list[str] = []
    current = ""
    try:
        previous: tuple[int, str] | None = None  # (world size, its sharded checkpoint folder)
        for w in sorted(sizes, reverse=True):  # largest first: smaller worlds then load its sharded checkpoint
            current = f"world size {w}"
            advance = rep.phase(f"torchrun: world size {w} ({cfg.parallel}, {total} steps)", 1)
            bpr = cfg.global_batch // w if cfg.global_batch else s.batch_size
            rank_cfg = RankConfig(
                workload=cfg.workload,
                workload_options=cfg.workload_factory_options(),
                device=cfg.device,
                parallel=cfg.parallel,
                batch_per_rank=bpr,
                seq_len=s.seq_len,
                lr=s.lr,
                seed=cfg.seed,
                total_steps=total,
                warmup=cfg.warmup,
                run_dir=str(work / f"{stamp}-world{w}"),
                checkpoint_dir=_checkpoint_dir(cfg, work, stamp, w),
                load_from=str(Path(previous[1]) / f"step_{total}") if previous and previous[1] else "",
                reference_weights=str(Path(previous[1]) / f"full_step_{total}.pt") if previous and previous[1] else "",
            )
            run = launch(cfg, rank_cfg, Path(rank_cfg.run_dir), nproc=w // cfg.nnodes)
            launches[w] = run
            stats[w] = world_stats(run, cfg.warmup, bpr)
            if previous is not None and previous[1]:
                (other,) = run.of("loaded_other") or [{}]
                portability[f"world{previous[0]}_to_world{w}"] = {
                    "saved_at_world": previous[0],
                    "loaded_at_world": w,
                    "load_s": other.get("seconds"),
                    "identical_weights": other.get("identical"),
                }
            previous = (w, rank_cfg.checkpoint_dir)
            advance(1)
        if cfg.interrupt_at:
            current = "interrupted rank"
            interrupt = _interrupted_rank(cfg, s.seq_len, s.lr, s.batch_size, max(sizes), work, stamp, stats, rep)
    except KeyboardInterrupt:
        raise TrainingInterrupted(current, [f"world size {w}" for w in stats], None) from None
    finally:
        rep.end_phase()
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    figs, unavailable = scaling_figures(stats, strong)
    if cfg.nnodes > 1 and not keep:
        unavailable["dcp"] = "several nodes: give --checkpoint-dir on a file system every node shares"
    for key, row in portability.items():
        if row["load_s"] is not None:
            figs[f"dcp_load_s_{key}"] = fig(
                row["load_s"],
                "s",
                f"sharded checkpoint of world {row['saved_at_world']} loaded at world {row['loaded_at_world']}",
            )
        if row["identical_weights"] is not True:
            errors.append(f"checkpoint {key}: weights not identical after loading at another world size")
    if interrupt is not None:
        figs.update(interrupt.pop("_figures"))
        if not interrupt["matches"]:
            errors.append("the resumed loss curve does not match the uninterrupted one")
    base = min(stats)
    platform = dev.fingerprint(device, "eager", s.precision)
    topology = {
        "nnodes": cfg.nnodes,
        "nproc_per_node": {w: w // cfg.nnodes for w in sizes},
        "world_sizes": sizes,
        "backend": dev.process_group_backend(device.type),
        "launcher": "torchrun (torch.distributed.run, c10d rendezvous)",
        "parallel": cfg.parallel,
    }
    platform = platform.model_copy(update={"topology": topology})
    figs["tokens_per_s"] = figs[f"tokens_per_s_world{base}"].with_label(f"training throughput at world size {base}")
    config = {k: v for k, v in vars(cfg).items()}
    config.update(
        batch_per_rank={w: (cfg.global_batch // w if cfg.global_batch else s.batch_size) for w in sizes},
        scaling="strong" if strong else "weak",
        seq_len=s.seq_len,
        lr=s.lr,
        torch_threads_per_rank=1,
    )
    params = int(sum(p.numel() for p in workload.build_model().parameters()))
    result = PilotResult(
        kind="training",
        command=cfg.command,
        platform=platform,
        workload=WorkloadInfo(
            name=workload.name,
            factory=f"builtin:{workload.name}" if cfg.workload == BUILTIN_WORKLOAD else cfg.workload,
            params=params,
        ),
        config=config,
        figures=figs,
        samples={f"step_time_s_world{w}": st.step_s for w, st in stats.items()},
        training=TrainingSummary(tokens_per_s=stats[base].tokens_per_s, samples_per_s=stats[base].samples_per_s),
        details={
            "unavailable": unavailable,
            "distributed": {
                "topology": topology,
                "per_world": {
                    str(w): {
                        "rank_median_step_s": {str(r): v for r, v in st.rank_median_step_s.items()},
                        "process_group_s": st.process_group_s,
                        "launch_wall_s": launches[w].wall_s,
                        "loss_curve_rank0": st.losses,
                    }
                    for w, st in stats.items()
                },
                "portability": portability,
                "interrupt": interrupt,
                "clock": "launch_to_first_step: wall clock from starting torchrun to rank 0's first step",
            },
        },
        errors=errors,
    )
    del torch
    return result, write_new_result(result, out_dir) if cfg.node_rank == 0 else None


def _interrupted_rank(
    cfg: TrainConfig,
    seq_len: int,
    lr: float,
    batch: int,
    world: int,
    work: Path,
    stamp: str,
    stats: dict[int, WorldStats],
    rep: Reporter,
) -> dict[str, Any]:
    """SIGKILL one rank mid-run; torchrun restarts the group, which resumes from the sharded checkpoint."""
    assert cfg.interrupt_at
    k: int = cfg.interrupt_at
    every = cfg.checkpoint_every or max(1, k - 1)
    advance = rep.phase(f"interrupted rank {cfg.interrupt_rank} at step {cfg.interrupt_at} (world {world})", 1)
    bpr = cfg.global_batch // world if cfg.global_batch else batch
    run_dir = work / f"{stamp}-interrupt-world{world}"
    rank_cfg = RankConfig(
        workload=cfg.workload,
        workload_options=cfg.workload_factory_options(),
        device=cfg.device,
        parallel=cfg.parallel,
        batch_per_rank=bpr,
        seq_len=seq_len,
        lr=lr,
        seed=cfg.seed,
        total_steps=cfg.warmup + cfg.steps,
        warmup=cfg.warmup,
        nosync_steps=0,
        run_dir=str(run_dir),
        checkpoint_dir=str(run_dir / "ckpt"),
        checkpoint_every=every,
        interrupt_at=k,
        interrupt_rank=cfg.interrupt_rank,
    )
    # one restart recovers the kill; a second covers a restarted group that fails to reconnect on a loaded host
    restarts = max(2, cfg.max_restarts)
    run = launch(cfg, rank_cfg, run_dir, nproc=world // cfg.nnodes, max_restarts=restarts)
    advance(1)
    killed = run.of("killing_self")
    last = max((int(e["attempt"]) for e in run.events), default=0)  # the attempt that finished the job
    restored = [e for e in run.of("restored", attempt=last) if e["rank"] == 0]
    resumed = sorted((e for e in run.of("step", attempt=last) if e["rank"] == 0), key=lambda e: e["step"])
    restored_step = int(restored[0]["step"]) if restored else 0
    reference = stats[world].losses if world in stats else []
    mine = [float(e["loss"]) for e in resumed]
    expected = reference[restored_step:]
    diffs = [abs(a - b) for a, b in zip(mine, expected, strict=False)]
    max_diff = max(diffs) if diffs else float("nan")
    t_kill = killed[0]["t"] if killed else None
    t_resume = resumed[0]["t"] if resumed else None
    out: dict[str, Any] = {
        "world": world,
        "interrupt_at": cfg.interrupt_at,
        "interrupt_rank": cfg.interrupt_rank,
        "checkpoint_every": every,
        "max_restarts": restarts,
        "restarts": last,
        "restored_step": restored_step,
        "steps_lost": k - restored_step,
        "recover_s": (t_resume - t_kill) if t_kill and t_resume else None,
        "loss_curve_uninterrupted": reference,
        "loss_curve_resumed": mine,
        "max_abs_loss_diff": max_diff,
        "matches": bool(diffs) and len(mine) == len(expected) and max_diff <= 1e-6,
        "how": "the rank SIGKILLs itself after the step on the first attempt; torchrun --max-restarts restarts "
        "the group; every rank restores the newest sharded checkpoint and replays its data stream",
    }
    figs = {"interrupt_steps_lost_distributed": fig(out["steps_lost"], "step", "steps lost when a rank was killed")}
    if out["recover_s"] is not None:
        figs["rank_recover_s"] = fig(out["recover_s"], "s", "rank killed until the restarted group's first step")
    out["_figures"] = figs
    return out
