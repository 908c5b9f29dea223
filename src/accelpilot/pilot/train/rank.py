"""One rank of the distributed training pilot, started by torchrun (``torch.distributed.run``).

``python -m torch.distributed.run ... -m accelpilot.pilot.train.rank CONFIG.json``: torchrun's elastic agent
sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/PORT and TORCHELASTIC_RESTART_COUNT; this module joins the
process group (backend from the device table), wraps the workload's model in DDP or FSDP2 ``fully_shard``,
trains ``total_steps`` steps timing each one, times interleaved forward+backward passes with and without
gradient synchronisation (DDP's ``no_sync``) and with the all-reduce timed in DDP's comm hook (the communication
share), writes and reads a sharded checkpoint
with ``torch.distributed.checkpoint``, runs time-to-target runs when asked, and appends one JSON line per event
to ``{run_dir}/rank{R}.jsonl``; at the end every node's local rank 0 writes all ranks' events (gathered).
``resume_from`` first loads another run's sharded checkpoint (model and optimizer; DCP reshards it to this world
size and strategy).

With ``interrupt_at`` the rank ``interrupt_rank`` SIGKILLs itself after that step on the first attempt only;
torchrun (``--max-restarts``) restarts the whole group, which resumes from the newest sharded checkpoint.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

COMM_TIMED_PASSES = 4  # forward+backward passes per communication-share sample, all-reduce timed in the hook


@dataclass
class RankConfig:
    workload: str
    workload_options: dict[str, Any] = field(default_factory=dict)
    device: str = "cpu"
    parallel: str = "ddp"  # ddp | fsdp
    batch_per_rank: int = 4
    seq_len: int = 16
    lr: float = 1e-3
    seed: int = 0
    total_steps: int = 8
    warmup: int = 2
    comm_pairs: int = 20  # interleaved samples (synchronised, no_sync, all-reduce timed): communication share (DDP)
    run_dir: str = ""
    checkpoint_dir: str = ""  # sharded checkpoints go here (DCP)
    checkpoint_every: int = 0  # 0: one checkpoint at the end only
    load_from: str = ""  # a DCP checkpoint written at another world size, loaded and compared
    reference_weights: str = ""  # full weights (torch.save) of the model in ``load_from``
    interrupt_at: int = 0
    interrupt_rank: int = 0
    threads: int = 1
    t_launch: float = 0.0  # wall clock when the parent started torchrun
    tag: str = ""  # names the launch in the rendezvous id (several launches of one job meet apart)
    resume_from: str = ""  # a DCP checkpoint (step_N folder) to continue: model and optimizer, any world size
    resume_reference: str = ""  # full weights saved beside it (full_step_N.pt), to prove the load
    # time to target (MLPerf-style) after the measured steps: None = not asked
    target_loss: float | None = None
    target_runs: int = 0
    max_steps: int = 0
    eval_every: int = 1
    eval_batches: int = 2

    def to_json(self) -> str:
        return json.dumps(asdict(self))


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _attempt_store(dist: Any, rank: int, world: int, attempt: int) -> Any:
    """The rendezvous store torchrun hands the ranks, with keys prefixed by the restart attempt.

    torchrun shares its agent's TCPStore with the ranks and keeps it across restarts, and the default process
    group writes the same keys on every attempt: a restarted rank could read a dead peer's gloo address and fail
    with "connectFullMesh ... Connection refused". The prefix gives each attempt keys of its own; otherwise
    this is what ``init_process_group("env://")`` builds (torch.distributed.rendezvous._create_c10d_store).
    """
    agent_store = os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True"
    store = dist.TCPStore(
        host_name=os.environ["MASTER_ADDR"],
        port=int(os.environ["MASTER_PORT"]),
        world_size=world,
        is_master=rank == 0 and not agent_store,
        multi_tenant=not agent_store,
    )
    return dist.PrefixStore(f"accelpilot/attempt{attempt}", store)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    with open(args[0], encoding="utf-8") as fh:
        cfg = RankConfig(**json.load(fh))

    import torch
    import torch.distributed as dist
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        get_model_state_dict,
        get_state_dict,
        set_model_state_dict,
        set_state_dict,
    )

    from accelpilot.pilot import device as dev
    from accelpilot.pilot.workloads.base import load_factory

    torch.set_num_threads(cfg.threads)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    log = open(Path(cfg.run_dir) / f"rank{rank}.jsonl", "a", encoding="utf-8")  # noqa: SIM115

    mine: list[dict[str, Any]] = []  # gathered on rank 0 at the end: other nodes' logs are not on this disk

    def emit(rec: dict[str, Any]) -> None:
        full = {"t": time.time(), "rank": rank, "attempt": attempt, **rec}
        mine.append(full)
        log.write(json.dumps(full) + "\n")
        log.flush()

    from accelpilot.pilot.train.launch import die_with_parent
    from accelpilot.pilot.train.worker import watch_parent

    die_with_parent()  # the kernel kills this rank when its torchrun agent dies, even if Python is stuck in C++
    watch_parent()  # and where there is no prctl (not Linux), a watchdog thread
    emit({"event": "started", "world": world})
    kind = cfg.device.split(":")[0]
    device = torch.device(f"{kind}:{local_rank}") if kind == "cuda" else dev.resolve_device(cfg.device)
    t_pg = time.perf_counter()
    dist.init_process_group(
        dev.process_group_backend(device.type),
        store=_attempt_store(dist, rank, world, attempt),
        rank=rank,
        world_size=world,
    )
    emit({"event": "process_group", "seconds": time.perf_counter() - t_pg, "backend": dist.get_backend()})

    workload = load_factory(cfg.workload, **cfg.workload_options)
    torch.manual_seed(cfg.seed)  # the same initial weights on every rank
    model = workload.build_model().to(device)
    grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
    if cfg.parallel == "fsdp":
        from torch.distributed.fsdp import fully_shard

        for sub in model.modules():  # shard each repeated block, then the root (FSDP2's usual recipe)
            if isinstance(sub, torch.nn.ModuleList):
                for blk in sub:
                    fully_shard(blk)
        wrapped: torch.nn.Module = fully_shard(model)
    else:
        from torch.nn.parallel import DistributedDataParallel as DDP

        wrapped = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None)
    opt = torch.optim.AdamW(wrapped.parameters(), lr=cfg.lr)

    ckpt_root = Path(cfg.checkpoint_dir) if cfg.checkpoint_dir else None
    start = 0
    if attempt > 0 and ckpt_root is not None and ckpt_root.is_dir():  # restarted: newest complete checkpoint
        done = sorted(int(p.name.split("_")[1]) for p in ckpt_root.glob("step_*") if (p / ".metadata").exists())
        if done:
            start = done[-1]
            t0 = time.perf_counter()
            msd, osd = get_state_dict(wrapped, opt)
            dcp.load({"model": msd, "optim": osd}, checkpoint_id=str(ckpt_root / f"step_{start}"))  # in place
            set_state_dict(wrapped, opt, model_state_dict=msd, optim_state_dict=osd)
            emit({"event": "restored", "step": start, "seconds": time.perf_counter() - t0})

    def _same_as(reference: str, rank: int) -> bool | None:
        """Rank 0: do the weights now held equal the full weights saved beside the checkpoint?"""
        full = get_model_state_dict(wrapped, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        if rank != 0 or not reference or not Path(reference).is_file():
            return None
        ref = torch.load(reference, map_location="cpu", weights_only=True)
        return set(ref) == set(full) and all(torch.equal(ref[k], torch.as_tensor(full[k])) for k in ref)

    def save(step: int) -> None:
        assert ckpt_root is not None
        path = ckpt_root / f"step_{step}"
        dist.barrier()
        t0 = time.perf_counter()
        msd, osd = get_state_dict(wrapped, opt)
        dcp.save({"model": msd, "optim": osd}, checkpoint_id=str(path))
        dist.barrier()
        seconds = time.perf_counter() - t0
        emit({"event": "checkpoint", "step": step, "seconds": seconds, "bytes": _dir_bytes(path) if rank == 0 else 0})
        if rank == 0:  # what wrote it, for `run train --resume` (DCP ignores files it did not write)
            meta = {"world": world, "parallel": cfg.parallel, "step": step, "workload": cfg.workload}
            meta["workload_name"] = workload.name
            (path / "accelpilot.json").write_text(json.dumps(meta), encoding="utf-8")

    if cfg.resume_from and start == 0:  # `run train --resume`: another run's sharded checkpoint, resharded here
        msd, osd = get_state_dict(wrapped, opt)
        dist.barrier()
        t0 = time.perf_counter()
        dcp.load({"model": msd, "optim": osd}, checkpoint_id=cfg.resume_from)
        set_state_dict(wrapped, opt, model_state_dict=msd, optim_state_dict=osd)
        dist.barrier()
        load_s = time.perf_counter() - t0
        emit({"event": "resumed", "seconds": load_s, "identical": _same_as(cfg.resume_reference, rank), "world": world})

    batches = workload.batches("train", cfg.batch_per_rank, cfg.seq_len, cfg.seed * 1000 + rank)
    for _ in range(start):  # replay this rank's data stream to the checkpoint
        next(batches)
    sync = dev.ops_for(device).synchronize

    def step(batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
        loss = workload.loss(wrapped, batch)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()

    emit({"event": "ready", "step": start})
    for i in range(start + 1, cfg.total_steps + 1):
        batch = tuple(t.to(device) for t in next(batches))
        sync(device)
        t0 = time.perf_counter()
        loss = step(batch)
        sync(device)
        dt = time.perf_counter() - t0
        emit(
            {"event": "step", "step": i, "seconds": dt, "loss": float(loss.item()), "tokens": workload.tokens_in(batch)}
        )
        if ckpt_root is not None and cfg.checkpoint_every and i % cfg.checkpoint_every == 0 and i < cfg.total_steps:
            save(i)
        if cfg.interrupt_at and i == cfg.interrupt_at and rank == cfg.interrupt_rank and attempt == 0:
            emit({"event": "killing_self", "step": i})
            os.kill(os.getpid(), signal.SIGKILL)

    # communication share: per sample, three passes of forward+backward on the same batch in rotating order
    # (so drift of a shared machine hits each alike): with DDP's overlapped all-reduce, under no_sync, and with
    # each bucket's all-reduce timed in the comm hook (comm_timer.py: the share comes from this one, a ratio
    # within the same passes, COMM_TIMED_PASSES of them per sample so one preempted pass on a shared machine
    # moves a sample less). No optimizer step, so the weights stay as trained. Every sample is kept: the parent
    # judges the spread.
    if cfg.parallel == "ddp" and cfg.comm_pairs:
        from accelpilot.pilot.train.comm_timer import CommTimer

        batch = tuple(t.to(device) for t in next(batches))
        timer = CommTimer(lambda: sync(device))
        kinds: tuple[str, ...] = ("sync", "nosync", "timed")
        try:  # a backend whose DDP takes no Python comm hook keeps the pairs, and the share says not measured
            wrapped.register_comm_hook(None, timer.hook)  # type: ignore[operator]
        except (RuntimeError, ValueError, NotImplementedError, AttributeError) as exc:
            emit({"event": "comm_hook_refused", "why": f"{type(exc).__name__}: {exc}"[:300]})
            kinds = ("sync", "nosync")

        def fwd_bwd(how: str) -> float:
            dist.barrier()  # every side starts together: a straggler's wait is not counted as communication
            sync(device)
            timer.reset()
            timer.on = how == "timed"
            t0 = time.perf_counter()
            if how == "nosync":
                with wrapped.no_sync():  # type: ignore[operator]
                    workload.loss(wrapped, batch).backward()
            else:
                for _ in range(COMM_TIMED_PASSES if how == "timed" else 1):  # gradients accumulate: harmless here
                    workload.loss(wrapped, batch).backward()
            sync(device)
            seconds = time.perf_counter() - t0
            timer.on = False
            opt.zero_grad(set_to_none=True)
            return seconds

        for how in kinds:  # untimed first passes: buffers and hooks set up
            fwd_bwd(how)
        for i in range(cfg.comm_pairs):
            k = i % len(kinds)
            order = kinds[k:] + kinds[:k]
            t: dict[str, float] = {}
            timed: dict[str, float] = {}
            for how in order:
                t[how] = fwd_bwd(how)
                if how == "timed":
                    timed = {"allreduce_s": timer.allreduce_s, "hook_s": timer.hook_s, "buckets": timer.buckets}
            emit(
                {
                    "event": "comm_pair",
                    "pair": i,
                    "sync_s": t["sync"],
                    "nosync_s": t["nosync"],
                    **({"timed_s": t["timed"], **timed} if "timed" in t else {}),
                    **({"timed_passes": COMM_TIMED_PASSES} if "timed" in t else {}),
                    "grad_bytes": grad_bytes,
                }
            )

    if ckpt_root is not None:
        save(cfg.total_steps)
        full = get_model_state_dict(wrapped, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        if rank == 0:
            torch.save(full, ckpt_root / f"full_step_{cfg.total_steps}.pt")
        msd, osd = get_state_dict(wrapped, opt)
        dist.barrier()
        t0 = time.perf_counter()
        dcp.load({"model": msd, "optim": osd}, checkpoint_id=str(ckpt_root / f"step_{cfg.total_steps}"))
        set_state_dict(wrapped, opt, model_state_dict=msd, optim_state_dict=osd)
        dist.barrier()
        emit({"event": "loaded_own", "seconds": time.perf_counter() - t0})
    if cfg.load_from:  # portability: a checkpoint written at another world size, loaded here
        msd = get_model_state_dict(wrapped)
        dist.barrier()
        t0 = time.perf_counter()
        dcp.load({"model": msd}, checkpoint_id=cfg.load_from)
        set_model_state_dict(wrapped, msd)
        dist.barrier()
        load_s = time.perf_counter() - t0
        full = get_model_state_dict(wrapped, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        identical = None
        if rank == 0 and cfg.reference_weights:
            ref = torch.load(cfg.reference_weights, map_location="cpu", weights_only=True)
            identical = set(ref) == set(full) and all(torch.equal(ref[k], torch.as_tensor(full[k])) for k in ref)
        emit({"event": "loaded_other", "seconds": load_s, "identical": identical, "path": cfg.load_from})
    if cfg.target_loss is not None and cfg.target_runs:
        _time_to_target(cfg, wrapped, workload, device, rank, emit)
    emit({"event": "done"})
    gathered: list[Any] = [None] * world
    dist.all_gather_object(gathered, mine)
    if local_rank == 0:  # every node: c10d does not give global rank 0 to --node-rank 0, so each node keeps it all
        tmp = Path(cfg.run_dir) / ".all-ranks.json.tmp"
        tmp.write_text(json.dumps([rec for recs in gathered for rec in recs]), encoding="utf-8")
        os.replace(tmp, Path(cfg.run_dir) / "all-ranks.json")
    log.close()
    # Leave without tearing the group down: a gloo teardown was seen to hang a rank after the last collective,
    # holding the GIL (so no Python watchdog could run). Every result is already on disk.
    os._exit(0)


def _time_to_target(cfg: RankConfig, wrapped: Any, workload: Any, device: Any, rank: int, emit: Any) -> None:
    """MLPerf-style runs at this world size: from the first touch of data until eval loss <= target.

    Each run starts from fresh weights (seed + run, outside the clock) and a fresh optimizer; every rank evaluates
    the same eval batches and the mean loss is all-reduced, so every rank stops at the same step.
    """
    import torch
    import torch.distributed as dist
    from torch.distributed.checkpoint.state_dict import get_model_state_dict, set_model_state_dict
    from torch.distributed.tensor import DTensor, distribute_tensor

    from accelpilot.pilot import device as dev

    sync = dev.ops_for(device).synchronize
    for r in range(cfg.target_runs):
        seed = cfg.seed + r
        torch.manual_seed(seed)
        fresh = workload.build_model().state_dict()
        # fresh weights in the wrapped model's own layout: FSDP's shards (DTensors) cut from the full tensors
        msd = get_model_state_dict(wrapped)
        for k, v in msd.items():
            full = fresh[k].to(device)
            msd[k] = distribute_tensor(full, v.device_mesh, v.placements) if isinstance(v, DTensor) else full
        set_model_state_dict(wrapped, msd)
        opt = torch.optim.AdamW(wrapped.parameters(), lr=cfg.lr)
        dist.barrier()
        sync(device)
        t0 = time.perf_counter()
        batches = workload.batches("train", cfg.batch_per_rank, cfg.seq_len, seed * 1000 + rank)  # first touch
        ev_it = workload.batches("eval", cfg.batch_per_rank, cfg.seq_len, cfg.seed)
        evals = [tuple(t.to(device) for t in next(ev_it)) for _ in range(cfg.eval_batches)]
        curve: list[tuple[int, float]] = []
        reached: int | None = None
        steps = 0
        for steps in range(1, cfg.max_steps + 1):
            loss = workload.loss(wrapped, tuple(t.to(device) for t in next(batches)))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            if steps % cfg.eval_every == 0 or steps == cfg.max_steps:
                with torch.no_grad():
                    total = sum(workload.loss(wrapped, b).detach().float() for b in evals) / len(evals)
                total = total.reshape(1).to(device)
                dist.all_reduce(total)  # the mean over ranks: the same decision on every rank
                ev = float(total.item()) / dist.get_world_size()
                curve.append((steps, ev))
                if ev <= cfg.target_loss:  # type: ignore[operator]
                    reached = steps
                    break
        sync(device)
        seconds = time.perf_counter() - t0
        emit(
            {
                "event": "target_run",
                "run": r,
                "seed": seed,
                "seconds": seconds,
                "steps": steps,
                "accepted": reached is not None,
                "final_eval_loss": curve[-1][1] if curve else None,
                "eval_curve": curve,
            }
        )


if __name__ == "__main__":
    sys.exit(main())
