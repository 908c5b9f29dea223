"""From the ranks' events to figures: pure functions over plain data, tested on hand-made events.

Per world size: throughput of all ranks, the slowest rank per step and the skew between ranks, the communication
share (the all-reduce timed in DDP's comm hook, kept raw, judged by its spread), sharded-checkpoint times;
scaling efficiency derived from the measured throughputs; time to target from the ranks' target runs.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from accelpilot.figures import Figure, Kind
from accelpilot.pilot.stats import olympic_mean
from accelpilot.pilot.train.record import fig
from accelpilot.pilot.train.torchrun import Launch


@dataclass(frozen=True)
class CommShare:
    """The communication share of forward+backward, from the all-reduce timed in DDP's comm hook.

    Per sample (the slowest rank): ``allreduce_s`` the buckets' all-reduce, ``busy_s`` the pass's compute (its
    wall time less what the hook held it up) plus that all-reduce; ``shares`` = allreduce_s / busy_s, a ratio
    of two parts of one pass. ``share`` is their median, ``spread`` their interquartile range: with the spread
    larger than the share (or a share <= 0) it is not measured. ``sync_s`` / ``nosync_s`` are the interleaved
    passes with DDP's overlapped all-reduce and under no_sync, kept raw beside it.
    """

    sync_s: list[float]
    nosync_s: list[float]
    allreduce_s: list[float]
    busy_s: list[float]
    shares: list[float]
    share: float
    spread: float

    @property
    def measured(self) -> bool:
        return self.share > 0 and self.spread <= self.share


def comm_share(samples: list[dict[str, float]]) -> CommShare | None:
    """``samples``: per sample, the slowest rank's ``sync_s``, ``nosync_s``, ``allreduce_s`` and ``busy_s``
    (seconds); None with fewer than 4 samples that timed the all-reduce."""
    good = [s for s in samples if s.get("busy_s", 0.0) > 0 and s.get("allreduce_s", -1.0) >= 0]
    if len(good) < 4:
        return None
    shares = [s["allreduce_s"] / s["busy_s"] for s in good]
    q = statistics.quantiles(shares, n=4, method="inclusive")
    return CommShare(
        sync_s=[s["sync_s"] for s in good],
        nosync_s=[s["nosync_s"] for s in good],
        allreduce_s=[s["allreduce_s"] for s in good],
        busy_s=[s["busy_s"] for s in good],
        shares=shares,
        share=statistics.median(shares),
        spread=q[2] - q[0],
    )


def comm_samples(events: list[dict[str, Any]]) -> list[dict[str, float]]:
    """The ranks' ``comm_pair`` events, one sample per pair: the slowest rank of each measure."""
    by_pair: dict[int, list[dict[str, Any]]] = {}
    for e in events:
        by_pair.setdefault(int(e["pair"]), []).append(e)
    out = []
    for _, evs in sorted(by_pair.items()):
        row = {k: max(float(e[k]) for e in evs) for k in ("sync_s", "nosync_s")}
        if all("allreduce_s" in e for e in evs):
            n = max(1, int(evs[0].get("timed_passes", 1)))  # per pass: a sample times n passes together
            row["allreduce_s"] = max(float(e["allreduce_s"]) for e in evs) / n
            # the passes' own compute: wall time less what the hook held backward up (barriers, all-reduce)
            row["busy_s"] = max(float(e["timed_s"]) - float(e["hook_s"]) + float(e["allreduce_s"]) for e in evs) / n
        out.append(row)
    return out


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
    comm: CommShare | None
    grad_bytes: int | None
    ckpt_save_s: float | None
    ckpt_bytes: int | None
    ckpt_load_s: float | None
    losses: list[float]  # rank 0, every step
    restarts: int = 0
    target_runs: list[dict[str, Any]] = field(default_factory=list)


def _target_runs(run: Launch) -> list[dict[str, Any]]:
    """One row per time-to-target run: a run ends when its slowest rank ends."""
    by_run: dict[int, list[dict[str, Any]]] = {}
    for e in run.of("target_run"):
        by_run.setdefault(int(e["run"]), []).append(e)
    rows = []
    for r, evs in sorted(by_run.items()):
        first = min(evs, key=lambda e: int(e["rank"]))
        rows.append(
            {
                "run": r,
                "seed": first["seed"],
                "accepted": all(bool(e["accepted"]) for e in evs),
                "seconds": max(float(e["seconds"]) for e in evs),
                "ranks": sorted(int(e["rank"]) for e in evs),
                "steps": int(first["steps"]),
                "final_eval_loss": first["final_eval_loss"],
                "eval_curve": first["eval_curve"],
            }
        )
    return rows


def world_stats(run: Launch, warmup: int, batch_per_rank: int) -> WorldStats:
    """The figures' inputs, from the attempt that finished the launch (after any torchrun restart)."""
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
        comm=comm_share(comm_samples(run.of("comm_pair"))),
        grad_bytes=next((int(e["grad_bytes"]) for e in run.of("comm_pair")), None),
        ckpt_save_s=max(e["seconds"] for e in saves) if saves else None,
        ckpt_bytes=max(e["bytes"] for e in saves) if saves else None,
        ckpt_load_s=max(loads) if loads else None,
        losses=[float(e["loss"]) for e in sorted((e for e in steps if e["rank"] == 0), key=lambda e: e["step"])],
        restarts=run.last_attempt,
        target_runs=_target_runs(run),
    )


def scaling_figures(
    stats: dict[int, WorldStats], strong: bool
) -> tuple[dict[str, Figure], dict[str, str], dict[str, list[float]]]:
    """Per world size: throughput, step times, stragglers, communication, checkpoints; efficiency against 1.

    Returns figures, what could not be measured (and why), and raw samples to keep in the result.
    """
    figs: dict[str, Figure] = {}
    unavailable: dict[str, str] = {}
    samples: dict[str, list[float]] = {}
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
        _comm_figures(st, figs, unavailable, samples)
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
    return figs, unavailable, samples


def _comm_figures(
    st: WorldStats, figs: dict[str, Figure], unavailable: dict[str, str], samples: dict[str, list[float]]
) -> None:
    sfx, note = f"_world{st.world}", f"world size {st.world}"
    c = st.comm
    if c is None:
        unavailable["comm_share" + sfx] = (
            "not measured: timed in DDP's comm hook only (FSDP shards need their collectives; a DDP that refused "
            "the hook is named in the ranks' comm_hook_refused event), from 4 or more samples"
        )
        return
    samples["comm_allreduce_s" + sfx] = c.allreduce_s
    samples["comm_busy_s" + sfx] = c.busy_s
    samples["comm_share_samples" + sfx] = c.shares
    samples["comm_sync_s" + sfx] = c.sync_s
    samples["comm_nosync_s" + sfx] = c.nosync_s
    n = len(c.shares)
    figs["fwd_bwd_sync_s" + sfx] = fig(
        statistics.median(c.sync_s), "s", "forward+backward with DDP's overlapped all-reduce (median)", note
    )
    figs["fwd_bwd_nosync_s" + sfx] = fig(
        statistics.median(c.nosync_s), "s", "forward+backward without synchronisation (DDP no_sync, median)", note
    )
    if st.world == 1:  # nothing is exchanged: whatever the hook timed there is its own cost, not traffic
        unavailable["comm_share" + sfx] = (
            f"not measured: world size 1 exchanges nothing (the all-reduce timed there, median share {c.share:.3g} "
            f"over {n} samples, is the call's own cost; kept in samples as comm_share_samples{sfx})"
        )
        return
    figs["allreduce_s" + sfx] = fig(
        statistics.median(c.allreduce_s), "s", "gradient all-reduce per step, timed in DDP's comm hook (median)", note
    )
    if c.measured:
        figs["comm_share" + sfx] = fig(
            c.share,
            "",
            "share of forward+backward spent on gradient communication",
            f"median over {n} samples of all-reduce / (compute + all-reduce) within one pass, the all-reduce timed "
            f"bucket by bucket in DDP's comm hook, not overlapped with backward (the most overlap can hide); "
            f"interquartile range {c.spread:.3g}; raw samples kept",
        )
    else:
        unavailable["comm_share" + sfx] = (
            f"not measured: the spread of {n} samples (interquartile range {c.spread:.3g}) is larger than the median "
            f"share {c.share:.3g}; the raw samples are kept (comm_allreduce_s{sfx}, comm_busy_s{sfx})"
        )


def target_figures(
    rows: list[dict[str, Any]], target: float, world: int
) -> tuple[dict[str, Figure], dict[str, float | int | None], list[float]]:
    """Time to target from the target runs: olympic mean of the accepted runs (mean below three).

    Returns figures, the summary's fields (time_to_target_s, runs, accepted_runs) and the accepted times.
    """
    accepted = [float(r["seconds"]) for r in rows if r["accepted"]]
    figs: dict[str, Figure] = {}
    summary: dict[str, float | int | None] = {"runs": len(rows), "accepted_runs": len(accepted)}
    summary["time_to_target_s"] = None
    if accepted:
        mean = olympic_mean(accepted)
        how = "olympic mean (fastest and slowest dropped)" if len(accepted) >= 3 else "mean"
        summary["time_to_target_s"] = mean
        figs["time_to_target_s"] = fig(
            mean,
            "s",
            f"time to eval loss <= {target:g}",
            note=f"{how} of {len(accepted)} accepted runs, all {world} ranks (a run ends with its slowest rank)",
        )
        figs["steps_to_target"] = fig(
            olympic_mean([float(r["steps"]) for r in rows if r["accepted"]]), "step", "steps to target"
        )
    if rows and rows[-1]["final_eval_loss"] is not None:
        figs["final_eval_loss"] = fig(rows[-1]["final_eval_loss"], "", "eval loss at the end of the last run")
    return figs, summary, accepted
