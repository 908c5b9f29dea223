"""The distributed training pilot: torchrun launches the ranks, this module checks, waits and aggregates.

For each world size of ``--scaling`` (or the one given by ``--nproc-per-node``/``--nnodes``) the pilot starts
torchrun over ``pilot.train.rank`` (``torchrun.launch``) and turns the ranks' events into figures
(``scaling``): throughput of all ranks, the slowest rank and the skew between ranks, scaling efficiency derived
from the measured throughputs (inputs kept), the communication share, launch-to-first-step, sharded-checkpoint
(``torch.distributed.checkpoint``) save/load time and size, and with ``--target-loss`` time to target over
``--runs`` runs. The largest world size runs first, so the smaller ones load its sharded checkpoint: a
checkpoint written at world size N read at world size M, compared weight by weight. ``--resume`` continues a
sharded checkpoint a run kept, at any world size and strategy. A run cut short (Ctrl-C, a rank or the agent
killed) still writes what it measured.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelpilot.errors import ConfigError
from accelpilot.pilot import device as dev
from accelpilot.pilot.result import PilotResult, TrainingSummary, WorkloadInfo, write_new_result
from accelpilot.pilot.train.config import BUILTIN_WORKLOAD, Settings, TrainConfig, resolve_settings
from accelpilot.pilot.train.pilot import TrainingInterrupted, check_out_dir
from accelpilot.pilot.train.rank import RankConfig
from accelpilot.pilot.train.record import Reporter, fig, per_accelerator, topology_of
from accelpilot.pilot.train.scaling import WorldStats, scaling_figures, target_figures, world_stats
from accelpilot.pilot.train.torchrun import Launch, RankFailed, RendezvousError, launch, read_events
from accelpilot.pilot.workloads.base import TrainingWorkload, load_factory

__all__ = ["RankFailed", "RendezvousError", "is_distributed", "run_distributed", "validate"]

PARALLEL = ("ddp", "fsdp")


def is_distributed(cfg: TrainConfig) -> bool:
    return bool(cfg.scaling) or cfg.nproc_per_node > 1 or cfg.nnodes > 1 or cfg.resume is not None


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
        raise ConfigError(
            "--scaling measures world sizes on one node",
            field="--scaling",
            fix="run --scaling 1,2,...,N without --nnodes on one node of the candidate, and the multi-node run at "
            "its world size (accelpilot launch writes both tasks; collect joins them as result and scaling_result)",
        )
    if cfg.resume is not None and cfg.scaling:
        raise ConfigError("--resume continues a checkpoint at one world size", field="--resume", fix="drop --scaling")
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


@dataclass(frozen=True)
class ResumeFrom:
    """A sharded checkpoint to continue: its folder, what wrote it (when it says), its full weights if kept."""

    path: Path
    saved: dict[str, Any]
    reference: Path | None


def resolve_resume(path: str) -> ResumeFrom:
    """``--resume`` names a DCP checkpoint (a folder with ``.metadata``) or a folder holding some: the newest."""
    root = Path(path)
    if not root.is_dir():
        raise ConfigError(
            f"no such folder: {path}", field="--resume", fix="give a step_N folder a distributed run kept"
        )
    found = [root] if (root / ".metadata").is_file() else [p.parent for p in root.rglob(".metadata") if p.is_file()]
    if not found:
        raise ConfigError(
            f"{path} holds no sharded checkpoint (no .metadata)",
            field="--resume",
            fix="give a step_N folder that a distributed run with --checkpoint-dir kept",
        )
    ckpt = max(found, key=lambda p: ((p / ".metadata").stat().st_mtime, str(p)))
    saved: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        saved = dict(json.loads((ckpt / "accelpilot.json").read_text(encoding="utf-8")))
    ref = ckpt.parent / f"full_{ckpt.name}.pt"
    return ResumeFrom(path=ckpt.resolve(), saved=saved, reference=ref.resolve() if ref.is_file() else None)


def _check_resume_matches(resume: ResumeFrom, workload: TrainingWorkload) -> None:
    """A checkpoint of another workload (or size) cannot be continued: say so before any rank starts."""
    saved = resume.saved.get("workload_name")
    if saved is not None and saved != workload.name:
        raise ConfigError(
            f"{resume.path} holds a {saved} checkpoint; this run trains {workload.name}",
            field="--resume",
            fix="give the --workload and --size of the run that kept it",
        )


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


@dataclass
class Measured:
    """What a distributed run has measured so far: enough to write a result, whole or partial."""

    launches: dict[int, Launch] = field(default_factory=dict)
    stats: dict[int, WorldStats] = field(default_factory=dict)
    portability: dict[str, Any] = field(default_factory=dict)
    interrupt: dict[str, Any] | None = None
    resume: dict[str, Any] | None = None
    failed: dict[str, Any] | None = None  # the launch a rank or the agent did not finish
    errors: list[str] = field(default_factory=list)


def _rank_config(cfg: TrainConfig, s: Settings, w: int, run_dir: Path, ckpt: str, **extra: Any) -> RankConfig:
    return RankConfig(
        workload=cfg.workload,
        workload_options=cfg.workload_factory_options(),
        device=cfg.device,
        parallel=cfg.parallel,
        batch_per_rank=cfg.global_batch // w if cfg.global_batch else s.batch_size,
        seq_len=s.seq_len,
        lr=s.lr,
        seed=cfg.seed,
        total_steps=cfg.warmup + cfg.steps,
        warmup=cfg.warmup,
        comm_pairs=cfg.comm_samples,
        run_dir=str(run_dir),
        checkpoint_dir=ckpt,
        tag=f"w{w}",
        **extra,
    )


def _partial_launch(world: int, run_dir: Path, reason: str) -> dict[str, Any]:
    """What a launch that did not finish logged before it ended: the steps every rank completed, rank 0's losses."""
    events = read_events(run_dir) if run_dir.is_dir() else []
    steps: dict[int, set[int]] = {}
    for e in events:
        if e.get("event") == "step":
            steps.setdefault(int(e["step"]), set()).add(int(e["rank"]))
    done = [k for k, ranks in steps.items() if len(ranks) == world]
    curve = sorted((int(e["step"]), float(e["loss"])) for e in events if e.get("event") == "step" and e["rank"] == 0)
    return {
        "world": world,
        "reason": reason,
        "steps_completed_by_all_ranks": max(done, default=0),
        "loss_curve_rank0": [v for _, v in curve],
    }


def run_distributed(cfg: TrainConfig, reporter: Reporter | None = None) -> tuple[PilotResult, Path | None]:
    """Measure every world size, write one result with all of them; returns it and where it was written.

    Only node rank 0 writes (None elsewhere): one job, one result. Ctrl-C, or a rank or the agent dying, ends the
    run with one line; what was measured until then is written first.
    """
    cfg.validate()
    validate(cfg)
    rep = reporter or Reporter()
    device = dev.resolve_device(cfg.device)
    out_dir = Path(cfg.out)
    check_out_dir(out_dir, cfg.checkpoint_dir)
    resume = resolve_resume(cfg.resume) if cfg.resume is not None else None
    workload = _workload(cfg)
    if resume is not None:
        _check_resume_matches(resume, workload)
    s = resolve_settings(cfg, workload, device)
    sizes = world_sizes(cfg)
    total = cfg.warmup + cfg.steps
    keep = cfg.checkpoint_dir is not None
    work = (
        Path(cfg.checkpoint_dir) if cfg.checkpoint_dir else Path(tempfile.mkdtemp(prefix=".distributed-", dir=out_dir))
    )
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    m = Measured()
    current = ""
    failure: BaseException | None = None
    try:
        previous: tuple[int, str] | None = None  # (world size, its sharded checkpoint folder)
        for w in sorted(sizes, reverse=True):  # largest first: smaller worlds then load its sharded checkpoint
            current = f"world size {w}"
            advance = rep.phase(f"torchrun: world size {w} ({cfg.parallel}, {total} steps)", 1)
            extra: dict[str, Any] = {}
            if previous is not None and previous[1]:
                extra["load_from"] = str(Path(previous[1]) / f"step_{total}")
                extra["reference_weights"] = str(Path(previous[1]) / f"full_step_{total}.pt")
            if w == min(sizes) and cfg.target_loss is not None:  # time to target at the world size of the summary
                extra.update(
                    target_loss=s.target_loss,
                    target_runs=cfg.runs,
                    max_steps=s.max_steps,
                    eval_every=s.eval_every,
                    eval_batches=s.eval_batches,
                )
            if resume is not None:
                extra["resume_from"] = str(resume.path)
                extra["resume_reference"] = str(resume.reference or "")
            run_dir = work / f"{stamp}-world{w}"
            rank_cfg = _rank_config(cfg, s, w, run_dir, _checkpoint_dir(cfg, work, stamp, w), **extra)
            try:
                run = launch(cfg, rank_cfg, run_dir, nproc=w // cfg.nnodes, max_restarts=cfg.max_restarts)
            except (RankFailed, KeyboardInterrupt) as exc:  # keep what the ranks logged before the end
                reason = exc.detail if isinstance(exc, RankFailed) else f"interrupted (Ctrl-C) at world size {w}"
                m.failed = _partial_launch(w, run_dir, reason)
                raise
            m.launches[w] = run
            m.stats[w] = world_stats(run, cfg.warmup, rank_cfg.batch_per_rank)
            if previous is not None and previous[1]:
                (other,) = run.of("loaded_other") or [{}]
                m.portability[f"world{previous[0]}_to_world{w}"] = {
                    "saved_at_world": previous[0],
                    "loaded_at_world": w,
                    "load_s": other.get("seconds"),
                    "identical_weights": other.get("identical"),
                }
            if resume is not None:
                m.resume = _resume_details(resume, run, cfg, w)
            previous = (w, rank_cfg.checkpoint_dir)
            advance(1)
        if cfg.interrupt_at:
            current = "interrupted rank"
            m.interrupt = _interrupted_rank(cfg, s, max(sizes), work, stamp, m.stats, rep)
    except (KeyboardInterrupt, RankFailed) as exc:
        failure = exc
    finally:
        rep.end_phase()
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    result = build_result(cfg, s, workload, device, sizes, m)
    if failure is None:
        return result, write_new_result(result, out_dir) if cfg.node_rank == 0 else None
    written: Path | None = None
    if cfg.node_rank == 0:
        with contextlib.suppress(Exception):  # the failure matters more than a failed partial write
            written = write_new_result(result, out_dir)
    done = [f"world size {w}" for w in sorted(m.stats)]
    if isinstance(failure, KeyboardInterrupt):
        raise TrainingInterrupted(current, done, written) from None
    if written is not None:
        steps = m.failed["steps_completed_by_all_ranks"] if m.failed else 0
        what = ", ".join(done) or f"{steps} step(s) of world size {m.failed['world'] if m.failed else '?'}"
        kept = f"partial result ({what}) kept in {written}"
    else:
        kept = "node 0 writes the result" if cfg.node_rank else "nothing kept (the partial result could not be written)"
    hint = f"; torchrun's log is in {work}" if keep else ""
    raise RankFailed(f"{failure.detail if isinstance(failure, RankFailed) else failure}; {kept}{hint}") from None


def _resume_details(resume: ResumeFrom, run: Launch, cfg: TrainConfig, world: int) -> dict[str, Any]:
    loads = run.of("resumed")
    identical = next((e["identical"] for e in loads if e["rank"] == 0), None)
    losses = sorted((e for e in run.of("step") if e["rank"] == 0), key=lambda e: e["step"])
    return {
        "from": str(resume.path),
        "saved": resume.saved,  # world, parallel, step of the run that wrote it (when it said)
        "loaded_at_world": world,
        "parallel": cfg.parallel,
        "load_s": max((float(e["seconds"]) for e in loads), default=None),
        "identical_weights": identical,
        "first_loss": float(losses[0]["loss"]) if losses else None,
        "how": "model and optimizer state loaded with torch.distributed.checkpoint into this world size's "
        "wrapped model (DCP reshards), then the measured steps continue from it",
    }


def build_result(
    cfg: TrainConfig,
    s: Settings,
    workload: TrainingWorkload,
    device: Any,
    sizes: list[int],
    m: Measured,
) -> PilotResult:
    """One result from what was measured: every world size, their efficiency, the summary at the smallest."""
    figs, unavailable, samples = scaling_figures(m.stats, cfg.global_batch is not None)
    errors = list(m.errors)
    if cfg.nnodes > 1 and not cfg.checkpoint_dir:
        unavailable["dcp"] = "several nodes: give --checkpoint-dir on a file system every node shares"
    for key, row in m.portability.items():
        if row["load_s"] is not None:
            figs[f"dcp_load_s_{key}"] = fig(
                row["load_s"],
                "s",
                f"sharded checkpoint of world {row['saved_at_world']} loaded at world {row['loaded_at_world']}",
            )
        if row["identical_weights"] is not True:
            errors.append(f"checkpoint {key}: weights not identical after loading at another world size")
    interrupt = dict(m.interrupt) if m.interrupt is not None else None
    if interrupt is not None:
        figs.update(interrupt.pop("_figures"))
        if not interrupt["matches"]:
            errors.append("the resumed loss curve does not match the uninterrupted one")
    if m.resume is not None:
        if m.resume["load_s"] is not None:
            figs["dcp_resume_load_s"] = fig(m.resume["load_s"], "s", "--resume: sharded checkpoint loaded")
        if m.resume["identical_weights"] is False:
            errors.append(f"--resume: the weights loaded from {m.resume['from']} differ from the ones saved")
    if m.failed is not None:
        errors.append(m.failed["reason"])
    platform = dev.fingerprint(device, "eager", s.precision)
    layout = {
        "nnodes": cfg.nnodes,
        "nproc_per_node": {w: w // cfg.nnodes for w in sizes},
        "world_sizes": sizes,
        "backend": dev.process_group_backend(device.type),
        "launcher": "torchrun (torch.distributed.run, c10d rendezvous)",
        "parallel": cfg.parallel,
    }
    platform = platform.model_copy(update={"topology": layout})
    base = min(m.stats) if m.stats else None
    topo, how = topology_of(platform, base or min(sizes), cfg.nnodes)
    summary: TrainingSummary | None = None
    accepted: bool | None = None
    details_tt: dict[str, Any] | None = None
    if base is not None:
        st = m.stats[base]
        figs["tokens_per_s"] = figs[f"tokens_per_s_world{base}"].with_label(
            f"training throughput, all {base} ranks (world size {base})"
        )
        figs["samples_per_s"] = figs[f"samples_per_s_world{base}"].with_label(
            f"training throughput, all {base} ranks (world size {base})"
        )
        per_accelerator(figs, topo, how, ("tokens_per_s", "samples_per_s"))
        summary = TrainingSummary(tokens_per_s=st.tokens_per_s, samples_per_s=st.samples_per_s)
        if cfg.target_loss is not None and s.target_loss is not None:
            tfigs, tsum, times = target_figures(st.target_runs, s.target_loss, base)
            figs.update(tfigs)
            samples["time_to_target_s"] = times
            summary = summary.model_copy(update={**tsum, "target_loss": s.target_loss})
            accepted = bool(st.target_runs) and tsum["accepted_runs"] == tsum["runs"]
            if not times:
                unavailable["time_to_target_s"] = (
                    f"no run reached eval loss {s.target_loss:g} within {s.max_steps} steps (runs not accepted)"
                )
            details_tt = {
                "target_loss": s.target_loss,
                "world_size": base,
                "max_steps": s.max_steps,
                "eval_every": s.eval_every,
                "eval_batches": s.eval_batches,
                "clock": "first touch of data until the eval loss (mean over ranks) <= target, eval included, "
                "model init outside; a run ends with its slowest rank",
                "runs": st.target_runs,
            }
    config = {k: v for k, v in vars(cfg).items()}
    config.update(
        batch_per_rank={w: (cfg.global_batch // w if cfg.global_batch else s.batch_size) for w in sizes},
        scaling="strong" if cfg.global_batch is not None else "weak",
        seq_len=s.seq_len,
        lr=s.lr,
        torch_threads_per_rank=1,
    )
    samples.update({f"step_time_s_world{w}": st.step_s for w, st in m.stats.items()})
    params = int(sum(p.numel() for p in workload.build_model().parameters()))
    details: dict[str, Any] = {
        "unavailable": unavailable,
        "topology": {"assumed": how, "summary_world_size": base},
        "distributed": {
            "topology": layout,
            "per_world": {
                str(w): {
                    "rank_median_step_s": {str(r): v for r, v in st.rank_median_step_s.items()},
                    "process_group_s": st.process_group_s,
                    "launch_wall_s": m.launches[w].wall_s,
                    "restarts": st.restarts,
                    "loss_curve_rank0": st.losses,
                }
                for w, st in m.stats.items()
            },
            "portability": m.portability,
            "interrupt": interrupt,
            "resume": m.resume,
            "failed": m.failed,
            "clock": "launch_to_first_step: wall clock from starting torchrun to rank 0's first step",
        },
    }
    if details_tt is not None:
        details["time_to_target"] = details_tt
    return PilotResult(
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
        samples=samples,
        training=summary,
        accepted=accepted,
        details=details,
        errors=errors,
        topology=topo if base is not None else None,
    )


def _interrupted_rank(
    cfg: TrainConfig, s: Settings, world: int, work: Path, stamp: str, stats: dict[int, WorldStats], rep: Reporter
) -> dict[str, Any]:
    """SIGKILL one rank mid-run; torchrun restarts the group, which resumes from the sharded checkpoint."""
    assert cfg.interrupt_at
    k: int = cfg.interrupt_at
    every = cfg.checkpoint_every or max(1, k - 1)
    advance = rep.phase(f"interrupted rank {cfg.interrupt_rank} at step {cfg.interrupt_at} (world {world})", 1)
    run_dir = work / f"{stamp}-interrupt-world{world}"
    rank_cfg = _rank_config(
        cfg,
        s,
        world,
        run_dir,
        str(run_dir / "ckpt"),
        checkpoint_every=every,
        interrupt_at=k,
        interrupt_rank=cfg.interrupt_rank,
    )
    rank_cfg.comm_pairs = 0
    rank_cfg.tag = f"interrupt-w{world}"
    # one restart recovers the kill; a second covers a restarted group that fails to reconnect on a loaded host
    restarts = max(2, cfg.max_restarts)
    run = launch(cfg, rank_cfg, run_dir, nproc=world // cfg.nnodes, max_restarts=restarts)
    advance(1)
    killed = run.of("killing_self", attempt=0)
    last = run.last_attempt  # the attempt that finished the job
    restored = [e for e in run.of("restored") if e["rank"] == 0]
    resumed = sorted((e for e in run.of("step") if e["rank"] == 0), key=lambda e: e["step"])
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
