"""Phases 1-5: first correct run, throughput, profiler coverage, time to target.

Each phase takes the run's ``Context``, the typed outcome of the phases before it, and the ``Measurements``
it adds figures to; it returns what later phases need.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from accelpilot.errors import UserError
from accelpilot.figures import Figure, assumption
from accelpilot.pilot import device as dev
from accelpilot.pilot.stats import Samples, olympic_mean
from accelpilot.pilot.train.config import FIRST_STEP_RTOL
from accelpilot.pilot.train.loop import Trainer, build_model, timed_steps
from accelpilot.pilot.train.profiling import profile_steps
from accelpilot.pilot.train.record import Context, Measurements, fig
from accelpilot.pilot.train.shapes import read_counters

_CACHE_ENV = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "NEURON_COMPILE_CACHE_URL", "NEURON_CC_FLAGS")

Batch = tuple[torch.Tensor, ...]


def train_batches(ctx: Context, seq_len: int, seed: int) -> Iterator[Sequence[torch.Tensor]]:
    return iter(ctx.workload.batches("train", ctx.settings.batch_size, seq_len, seed))


def eval_set(ctx: Context, trainer: Trainer, seq_len: int) -> list[Batch]:
    it = iter(ctx.workload.batches("eval", ctx.settings.batch_size, seq_len, ctx.cfg.seed))
    return [trainer.to_device(next(it)) for _ in range(ctx.settings.eval_batches)]


@dataclass
class FirstRun:
    """The trainer after warm-up, and what the first run measured that later phases build on."""

    trainer: Trainer
    batches: Iterator[Sequence[torch.Tensor]]  # the main training stream, positioned after warm-up
    params: int
    first_step_s: float
    eval_compile_s: float
    flops_per_token: float
    flops_note: str


def first_run(ctx: Context, m: Measurements) -> FirstRun:
    """Build, compile and take the first step; check it against a float32 CPU reference; warm up."""
    s = ctx.settings
    advance = ctx.reporter.phase("first correct run (build, compile, step 1)", 2)
    trainer = Trainer(ctx.workload, ctx.device, s.precision, s.backend, s.lr, ctx.cfg.seed)
    params = int(sum(p.numel() for p in trainer.model.parameters()))
    batches = train_batches(ctx, s.seq_len, ctx.cfg.seed)
    first_cpu = next(batches)
    with dev.timed_region(ctx.device) as first:
        loss = trainer.forward_backward(trainer.to_device(first_cpu))
        loss_value = float(loss.detach().float().item())
        finite = math.isfinite(loss_value) and trainer.grads_finite()
        trainer.optimizer_step()
    t_first = time.perf_counter()
    advance(1)
    # the check is not part of the run being timed: a float32 CPU reference of the same batch and weights
    ref_model = build_model(ctx.workload, ctx.cfg.seed)
    ref_model.load_state_dict(trainer.init_state)
    with torch.no_grad():
        ref = float(ctx.workload.loss(ref_model, first_cpu).item())
    del ref_model
    rtol = FIRST_STEP_RTOL[s.precision]
    rel = abs(loss_value - ref) / max(abs(ref), 1e-12)
    correct = finite and rel <= rtol
    m.details["first_run"] = {
        "loss": loss_value,
        "cpu_fp32_reference_loss": ref,
        "relative_difference": rel,
        "tolerance_relative": rtol,
        "finite": finite,
        "correct": correct,
        "first_step_s": first.seconds,
        "clock": "from the pilot's start (workload built, data ready) to the end of the first checked step",
    }
    m.figures["first_step_s"] = fig(first.seconds, "s", "first training step (includes compilation)")
    if correct:
        m.figures["time_to_first_correct_run_s"] = fig(
            t_first - ctx.t_start,
            "s",
            "time to a correct first run",
            note=f"loss within {rtol:g} (relative) of a float32 CPU reference of the same batch; "
            "loss and gradients finite",
        )
    else:
        m.unavailable["time_to_first_correct_run_s"] = (
            f"first step not correct: loss {loss_value:.6g} vs CPU fp32 reference {ref:.6g} "
            f"(relative {rel:.3g}, tolerance {rtol:g}, finite={finite})"
        )
        m.errors.append("first step did not match the float32 CPU reference")
    # warm-up: remaining warm-up steps, then the eval path's first call (compiles under no_grad)
    for _ in range(ctx.cfg.warmup - 1):
        trainer.step(trainer.to_device(next(batches)))
    dev.synchronize(ctx.device)
    evals = eval_set(ctx, trainer, s.seq_len)
    with dev.timed_region(ctx.device) as eval_first:
        trainer.eval_loss(evals)
    with dev.timed_region(ctx.device) as eval_steady:
        trainer.eval_loss(evals)
    advance(1)
    flops_fn = getattr(ctx.workload, "flops_per_token", None)
    if callable(flops_fn):
        fpt = float(flops_fn(trainer.model, s.seq_len))
        note = "workload's flops_per_token (GPT: 6N + 12·L·H·Q·T, PaLM appendix B)"
    else:
        fpt = 6.0 * params
        note = "6N with N = all parameters (the workload gives no flops_per_token)"
    return FirstRun(
        trainer=trainer,
        batches=batches,
        params=params,
        first_step_s=first.seconds,
        eval_compile_s=max(0.0, eval_first.seconds - eval_steady.seconds),
        flops_per_token=fpt,
        flops_note=note,
    )


@dataclass(frozen=True, slots=True)
class Throughput:
    steady_step_s: float  # median step time at the main shape
    graphs_after_warmup: int | None  # None: compile counters not available


def peak_flops(accelerator: str | None, precision: str) -> tuple[Figure | None, str]:
    """Peak FLOP/s from the catalog; (None, reason) when it cannot be had."""
    if accelerator is None:
        return None, "no catalog accelerator for this device (CPU or unrecognised device name)"
    try:
        from accelpilot.catalog import load_catalog

        spec = load_catalog().spec(accelerator)
    except (ImportError, AttributeError) as exc:
        return None, f"catalog not available ({exc.__class__.__name__})"
    except UserError as exc:
        return None, f"catalog could not be read: {exc}"
    if spec is None:
        return None, f"the catalog has no spec row for {accelerator}"
    peak = spec.peak_flops(precision)
    if peak is None:
        return None, f"the catalog lists no {precision} peak for {accelerator}"
    return peak, ""


def throughput(ctx: Context, m: Measurements, run: FirstRun) -> Throughput:
    """Timed steps at the global batch: tokens/s, samples/s, step-time percentiles, compile cost, MFU."""
    cfg, s = ctx.cfg, ctx.settings
    advance = ctx.reporter.phase(f"throughput ({cfg.steps} timed steps)", 1)
    dev.reset_peak_memory(ctx.device)
    times = timed_steps(run.trainer, run.batches, cfg.steps)
    losses = torch.stack(times.losses).float().cpu().tolist()
    advance(1)
    samples = Samples(list(times.step_s))
    tok_s = times.tokens / times.wall_s
    smp_s = times.samples / times.wall_s
    m.samples["step_time_s"] = list(times.step_s)
    m.samples["throughput_losses"] = losses
    note = f"global batch {s.batch_size}x{s.seq_len}, {cfg.steps} steps after {cfg.warmup} warm-up"
    m.figures["tokens_per_s"] = fig(tok_s, "token/s", "training throughput", note)
    m.figures["samples_per_s"] = fig(smp_s, "sample/s", "training throughput", note)
    for q, v in samples.percentiles((50.0, 90.0, 99.0)).items():
        m.figures[f"step_time_{q}_s"] = fig(v, "s", f"step time {q} after warm-up")
    m.figures["step_time_mean_s"] = fig(samples.mean(), "s", "step time mean after warm-up")
    steady = samples.percentile(50.0)
    m.summary.tokens_per_s = tok_s
    m.summary.samples_per_s = smp_s
    # compile cost at the main shape: first step minus a steady step
    c = read_counters()
    m.figures["compile_time_s"] = fig(
        max(0.0, run.first_step_s - steady),
        "s",
        "compile time at the main shape (first step minus median step; train + eval paths below)",
        note=f"backend {s.backend}",
    )
    m.figures["compile_time_eval_s"] = fig(run.eval_compile_s, "s", "first eval call minus second")
    m.details["compile"] = {
        "backend": s.backend,
        "graphs_after_warmup": c.graphs if c else None,
        "frames": c.frames if c else None,
        "inductor_cache_hits": c.cache_hits if c else None,
        "inductor_cache_misses": c.cache_misses if c else None,
        "cache_settings": {k: os.environ[k] for k in _CACHE_ENV if k in os.environ},
    }
    # model FLOPs utilisation against the catalog's peak
    fpt = assumption(run.flops_per_token, "FLOP/token", source=run.flops_note, label="model FLOPs per token")
    achieved = (m.figures["tokens_per_s"] * fpt).with_label("model FLOP/s achieved")
    m.figures["model_flops_per_s"] = achieved
    peak, why = peak_flops(ctx.platform.accelerator, s.precision)
    if peak is not None:
        m.figures["mfu"] = (achieved / peak).with_label(
            "model FLOPs utilisation", note=f"against the catalog's {s.precision} peak"
        )
        m.figures["peak_flops_per_s"] = peak
    else:
        m.unavailable["mfu"] = why
    mem = dev.peak_memory_bytes(ctx.device)
    if mem is not None:
        m.figures["peak_device_memory_bytes"] = fig(mem, "byte", "peak device memory allocated")
    else:
        m.unavailable["peak_device_memory_bytes"] = (
            f"{ctx.device.type} reports no device memory counter (see peak_host_rss_bytes)"
        )
    return Throughput(steady_step_s=steady, graphs_after_warmup=c.graphs if c else None)


def profile(ctx: Context, m: Measurements, run: FirstRun) -> None:
    """Top operators by self time and the share of step time they explain."""
    trainer = run.trainer
    advance = ctx.reporter.phase(f"profiler ({ctx.cfg.profile_steps} steps)", 1)
    batch = trainer.to_device(next(run.batches))

    def step() -> None:
        trainer.step(batch)

    prof = profile_steps(step, lambda: dev.synchronize(ctx.device), n_steps=ctx.cfg.profile_steps)
    advance(1)
    m.details["profile"] = prof
    if prof["top_share_of_step"] is not None:
        m.figures["profile_top_ops_share"] = fig(
            prof["top_share_of_step"],
            "",
            f"share of step time explained by the top {prof['top_k']} operators",
            note=f"{prof['time_basis']}; slowest: {prof['slowest_op']}",
        )
    m.figures["profile_time_to_identify_s"] = fig(
        prof["time_to_identify_s"], "s", "time to name the slowest operator (profile + analysis)"
    )


@dataclass(frozen=True, slots=True)
class TargetOutcome:
    final_eval_loss: float | None  # eval loss at the end of the last run; None when no run was made


def time_to_target(ctx: Context, m: Measurements, run: FirstRun) -> TargetOutcome:
    """MLPerf-style: per run the clock runs from the first touch of data until eval loss <= target."""
    trainer = run.trainer
    cfg, s = ctx.cfg, ctx.settings
    if s.target_loss is None:
        m.unavailable["time_to_target_s"] = "no --target-loss given and the workload names none"
        return TargetOutcome(final_eval_loss=None)
    target = s.target_loss
    runs: list[dict[str, Any]] = []
    advance = ctx.reporter.phase(f"time to target loss {target:g} ({cfg.runs} runs)", cfg.runs * s.max_steps)
    for r in range(cfg.runs):
        seed = cfg.seed + r
        trainer.reset(seed)  # model init is outside the clock, as in MLPerf
        dev.synchronize(ctx.device)
        t0 = time.perf_counter()
        batches = train_batches(ctx, s.seq_len, seed)  # first touch of data
        evals = eval_set(ctx, trainer, s.seq_len)
        curve: list[tuple[int, float]] = []
        reached_at = None
        eval_s = 0.0
        steps = 0
        for steps in range(1, s.max_steps + 1):
            trainer.step(trainer.to_device(next(batches)))
            if steps % s.eval_every == 0 or steps == s.max_steps:
                e0 = time.perf_counter()
                ev = trainer.eval_loss(evals)
                eval_s += time.perf_counter() - e0
                curve.append((steps, ev))
                if ev <= target:
                    reached_at = steps
                    break
            advance(1)
        dev.synchronize(ctx.device)
        elapsed = time.perf_counter() - t0
        advance(s.max_steps - steps)
        runs.append(
            {
                "run": r,
                "seed": seed,
                "accepted": reached_at is not None,
                "seconds": elapsed,
                "steps": steps,
                "eval_seconds": eval_s,
                "final_eval_loss": curve[-1][1] if curve else None,
                "eval_curve": curve,
            }
        )
    accepted = [r["seconds"] for r in runs if r["accepted"]]
    m.details["time_to_target"] = {
        "target_loss": target,
        "max_steps": s.max_steps,
        "eval_every": s.eval_every,
        "eval_batches": s.eval_batches,
        "clock": "first touch of data until eval loss <= target, eval included; compile excluded "
        "(compiled code is reused across runs; see compile_time_s)",
        "runs": runs,
    }
    m.samples["time_to_target_s"] = accepted
    m.summary.target_loss = target
    m.summary.runs = len(runs)
    m.summary.accepted_runs = len(accepted)
    m.accepted = len(accepted) == len(runs)
    if accepted:
        mean = olympic_mean(accepted)
        m.summary.time_to_target_s = mean
        how = "olympic mean (fastest and slowest dropped)" if len(accepted) >= 3 else "mean"
        m.figures["time_to_target_s"] = fig(
            mean, "s", f"time to eval loss <= {target:g}", note=f"{how} of {len(accepted)} accepted runs"
        )
        m.figures["steps_to_target"] = fig(
            olympic_mean([float(r["steps"]) for r in runs if r["accepted"]]), "step", "steps to target"
        )
    else:
        m.unavailable["time_to_target_s"] = (
            f"no run reached eval loss {target:g} within {s.max_steps} steps (runs not accepted)"
        )
    final = runs[-1]["final_eval_loss"]
    if final is not None:
        m.figures["final_eval_loss"] = fig(final, "", "eval loss at the end of the last run")
    return TargetOutcome(final_eval_loss=final)


def host_peak_rss_bytes() -> int | None:
    try:
        import resource  # POSIX only
    except ImportError:
        return None
    ru = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(ru if sys.platform == "darwin" else ru * 1024)
