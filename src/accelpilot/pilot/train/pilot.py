"""The training pilot: run one workload on one device and measure what a proof of concept must show.

Phases, in order (each adds figures; a failure keeps what earlier phases measured):

1. first correct run: wall time from the pilot's start to the first step whose loss and gradients are
   finite and whose loss matches a float32 CPU reference of the same batch within a stated tolerance;
2. warm-up and compile: the first call at the main shape (and the first eval call) minus steady time;
3. throughput at the global batch: per-step times (synchronised), tokens/s, samples/s, MFU against the
   catalog's peak, peak device memory;
4. profiler coverage: top operators by self time and the share of step time they explain;
5. time to target, MLPerf-style: per run the clock runs from the first touch of data until eval loss
   <= target (eval included; compiled code is reused, so compile is reported apart); olympic mean;
6. checkpoint write time and size, restore time;
7. interrupted worker: a real child process is SIGKILLed at a step and restarted from its checkpoint;
8. shapes: first call and steady step time per sequence length, recompilations counted, and the cost of
   padding everything to the largest shape instead (last, so dynamic graphs never time the main shape);
9. parity: reference outputs stored, and compared with another platform's result when given.

Phases hand each other small typed objects (``FirstRun``, ``Throughput``, ``TargetOutcome``,
``CheckpointRoot``); the figures go into one ``Measurements``.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from accelpilot.atomic import WriteFailedError
from accelpilot.errors import ConfigError, InputFileError, UserError
from accelpilot.pilot import device as dev
from accelpilot.pilot.result import PilotResult, WorkloadInfo, read_result, write_new_result
from accelpilot.pilot.train import checkpoint as ckpt
from accelpilot.pilot.train import measure, parity, resilience
from accelpilot.pilot.train.config import BUILTIN_WORKLOAD, TrainConfig, resolve_settings
from accelpilot.pilot.train.record import Context, Measurements, Reporter, fig, per_accelerator, topology_of
from accelpilot.pilot.train.shapes import MainShape, run_shapes
from accelpilot.pilot.workloads.base import TrainingWorkload, load_factory


class TrainingInterrupted(UserError):
    """Ctrl-C during a run: one line saying which phase was cut short and what was kept; exit 130."""

    exit_code = 130

    def __init__(self, phase: str, completed: list[str], kept: Path | None) -> None:
        done = f"{len(completed)} completed phase(s) ({', '.join(completed)})" if completed else "no completed phase"
        if kept is not None:
            where = f"partial result with {done} kept in {kept}"
        elif phase:
            where = "nothing kept (the partial result could not be written)"
        else:
            where = "nothing measured yet, nothing written"
        super().__init__(f"interrupted (Ctrl-C) during the {phase or 'setup'} phase; {where}")


def check_out_dir(out_dir: Path, checkpoint_dir: str | None = None) -> None:
    """Create the result folder (and ``--checkpoint-dir``) and prove a file can be written there, before any
    measurement: an unusable checkpoint folder used to be found 10-42 s into the run (issue 28)."""
    ckpt.check_writable(out_dir, "cannot write results here", "--out", "give a writable folder")
    if checkpoint_dir is not None:
        if not checkpoint_dir.strip():
            raise ConfigError("empty folder name", field="--checkpoint-dir", fix="give a folder, or drop the option")
        ckpt.check_writable(checkpoint_dir)


def _workload_info(workload: TrainingWorkload, spec: str, options: dict[str, Any], params: int) -> WorkloadInfo:
    describe = getattr(workload, "describe", None)
    cfg = dict(describe()) if callable(describe) else {}
    factory = f"builtin:{workload.name}" if spec == BUILTIN_WORKLOAD else spec
    return WorkloadInfo(name=workload.name, factory=factory, params=params, config={**cfg, "options": options})


class TrainingPilot:
    """Prepares a run (everything checked before measuring), runs the phases, writes the result."""

    def __init__(self, cfg: TrainConfig, reporter: Reporter | None = None) -> None:
        cfg.validate()
        t_start = time.perf_counter()
        device = dev.resolve_device(cfg.device)
        self.out_dir = Path(cfg.out)
        check_out_dir(self.out_dir, cfg.checkpoint_dir)
        options = cfg.workload_factory_options()
        workload = load_factory(cfg.workload, **options)
        if not isinstance(workload, TrainingWorkload):
            raise ConfigError(
                f"{cfg.workload} returned {type(workload).__name__}, which lacks the TrainingWorkload methods "
                "(name, build_model, example_inputs, batches, loss, tokens_in)",
                field="--workload",
            )
        settings = resolve_settings(cfg, workload, device)
        for s in settings.shapes:  # fail before measuring anything when a shape cannot be served
            next(iter(workload.batches("train", 1, s, cfg.seed)))
        # read --compare-to before measuring anything, so a bad path costs nothing
        self.other: PilotResult | None = read_result(cfg.compare_to) if cfg.compare_to else None
        self.ctx = Context(
            cfg=cfg,
            settings=settings,
            device=device,
            workload=workload,
            options=options,
            platform=dev.fingerprint(device, settings.backend, settings.precision),
            reporter=reporter or Reporter(),
            t_start=t_start,
        )
        self.m = Measurements()
        self.params = 0
        self.fused: bool | None = None
        self.written: Path | None = None
        self.stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())

    # --- the result -------------------------------------------------------------------------------

    def resolved_config(self) -> dict[str, Any]:
        s = self.ctx.settings
        c = asdict(self.ctx.cfg)
        c.update(
            compile=s.backend,
            precision=s.precision,
            batch_size=s.batch_size,
            seq_len=s.seq_len,
            lr=s.lr,
            target_loss=s.target_loss,
            max_steps=s.max_steps,
            eval_every=s.eval_every,
            eval_batches=s.eval_batches,
            shapes=s.shapes,
            interrupt_at=s.interrupt_at,
            checkpoint_every=s.checkpoint_every,
            optimizer=f"AdamW(lr={s.lr}, fused={self.fused})",
            global_batch_tokens=s.batch_size * s.seq_len,
            torch_threads=torch.get_num_threads(),
        )
        return c

    def result(self) -> PilotResult:
        m, ctx = self.m, self.ctx
        rss = measure.host_peak_rss_bytes()
        if rss is not None:
            m.figures["peak_host_rss_bytes"] = fig(rss, "byte", "peak host memory (RSS)")
        topo, how = topology_of(ctx.platform, world=1)  # one process on one device
        figures = dict(m.figures)
        per_accelerator(figures, topo, how, ("tokens_per_s", "samples_per_s"))
        return PilotResult(
            kind="training",
            command=ctx.cfg.command,
            platform=ctx.platform,
            workload=_workload_info(ctx.workload, ctx.cfg.workload, ctx.options, self.params),
            config=self.resolved_config(),
            figures=figures,
            samples=dict(m.samples),
            training=m.summary,
            accepted=m.accepted,
            details={**m.details_out(), "topology": {"assumed": how}},
            errors=list(m.errors),
            topology=topo,
        )

    # --- the phases -------------------------------------------------------------------------------

    def run(self) -> PilotResult:
        """All phases; on any error the completed measurements are written, then the error propagates."""
        ctx, m = self.ctx, self.m
        if ctx.settings.backend != "eager":
            import torch._dynamo

            torch._dynamo.reset()
        current = ""
        root: resilience.CheckpointRoot | None = None

        def timed(name: str, fn: Callable[[], Any]) -> Any:
            nonlocal current
            current = name
            t0 = time.perf_counter()
            out = fn()
            m.phase_seconds[name] = time.perf_counter() - t0
            return out

        try:
            first: measure.FirstRun = timed("first correct run", lambda: measure.first_run(ctx, m))
            self.params, self.fused = first.params, first.trainer.fused
            thr: measure.Throughput = timed("throughput", lambda: measure.throughput(ctx, m, first))
            timed("profiler", lambda: measure.profile(ctx, m, first))
            target: measure.TargetOutcome = timed("time to target", lambda: measure.time_to_target(ctx, m, first))

            def checkpoint() -> resilience.CheckpointRoot:
                nonlocal root
                root = resilience.checkpoint_root(ctx, self.out_dir)
                resilience.run_checkpoint(ctx, m, first.trainer, root)
                return root

            ck_root: resilience.CheckpointRoot = timed("checkpoint", checkpoint)
            timed("interrupted worker", lambda: resilience.run_interrupt(ctx, m, ck_root, self.stamp))
            main = MainShape(
                first_call_s=first.first_step_s,
                step_s=thr.steady_step_s,
                new_graphs=thr.graphs_after_warmup,
                compile_s=max(0.0, first.first_step_s - thr.steady_step_s),
            )
            timed("shapes", lambda: run_shapes(ctx, m, first.trainer, main))
            timed("parity", lambda: parity.run_parity(ctx, m, first.trainer, target.final_eval_loss, self.other))
        except BaseException as exc:
            m.errors.append(f"{current}: {exc.__class__.__name__}: {exc}".replace("\n", " "))
            with contextlib.suppress(Exception):  # the original error matters more than a failed partial write
                self.written = write_new_result(self.result(), self.out_dir)
            if isinstance(exc, KeyboardInterrupt):
                raise TrainingInterrupted(current, list(m.phase_seconds), self.written) from None
            raise
        finally:
            ctx.reporter.end_phase()
            if root is not None and root.temporary:
                shutil.rmtree(root.path, ignore_errors=True)
        res = self.result()
        try:
            self.written = write_new_result(res, self.out_dir)  # removes its temp file when it fails
        except OSError as exc:  # a full disk or a folder made read-only during the run
            where = exc.where() if isinstance(exc, WriteFailedError) else "nothing was written"
            raise InputFileError(
                f"cannot write the result ({exc.strerror or exc.__class__.__name__}); {where}",
                file=str(self.out_dir),
                field="--out",
                fix="free space or give a writable folder, then run again",
            ) from None
        return res


def run_training(cfg: TrainConfig, reporter: Reporter | None = None) -> tuple[PilotResult, Path]:
    """Run the pilot; returns the result and where it was written."""
    pilot = TrainingPilot(cfg, reporter)
    result = pilot.run()
    assert pilot.written is not None
    return result, pilot.written
