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
6. checkpoint write time and size, restore time; reference outputs for quality parity;
7. interrupted worker: a real child process is SIGKILLed at a step and restarted from its checkpoint;
8. shapes: first call and steady step time per sequence length, recompilations counted, and the cost of
   padding everything to the largest shape instead (last, so dynamic graphs never time the main shape).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import torch

from accelpilot.errors import ConfigError, InputFileError, UserError
from accelpilot.figures import Figure, Kind, assumption, measured
from accelpilot.pilot import checkpoint as ckpt
from accelpilot.pilot import device as dev
from accelpilot.pilot.profiling import profile_steps
from accelpilot.pilot.result import PilotResult, TrainingSummary, WorkloadInfo, read_result, write_result
from accelpilot.pilot.stats import Samples, olympic_mean
from accelpilot.pilot.train_loop import Trainer, build_model, timed_steps
from accelpilot.pilot.train_worker import WorkerConfig, run_worker
from accelpilot.pilot.workloads.base import TrainingWorkload, load_factory

BUILTIN_WORKLOAD = "accelpilot.pilot.workloads.gpt:factory"
SOURCE = "accelpilot run train"

# Relative tolerance of the first step's loss against the float32 CPU reference, per precision.
FIRST_STEP_RTOL = {"fp32": 1e-3, "bf16": 3e-2, "fp16": 1e-2}
DEFAULT_BACKEND = {"cuda": "inductor", "xla": "openxla"}


# --- configuration ---------------------------------------------------------------------------------


@dataclass(kw_only=True)
class TrainConfig:
    """Everything `accelpilot run train` accepts; None means "the workload's or device's default"."""

    device: str = "cpu"
    workload: str = BUILTIN_WORKLOAD
    workload_options: dict[str, Any] = field(default_factory=dict)
    size: str | None = None
    tokens: str | None = None
    compile: str | None = None
    precision: str | None = None
    batch_size: int | None = None
    seq_len: int | None = None
    steps: int = 20
    warmup: int = 3
    shapes: list[int] | None = None
    target_loss: float | None = None
    max_steps: int | None = None
    eval_every: int | None = None
    eval_batches: int | None = None
    runs: int = 3
    interrupt_at: int | None = None  # None: automatic on the CPU, off elsewhere; 0: off
    checkpoint_every: int | None = None
    checkpoint_dir: str | None = None
    compare_to: str | None = None
    out: str = "pilot-results"
    seed: int = 0
    lr: float | None = None
    profile_steps: int = 3
    shape_steps: int = 3
    command: str = ""

    def validate(self) -> None:
        """Checks without side effects; every error names the option."""
        positive = {
            "--steps": self.steps,
            "--runs": self.runs,
            "--batch-size": self.batch_size,
            "--seq-len": self.seq_len,
            "--max-steps": self.max_steps,
            "--eval-every": self.eval_every,
            "--checkpoint-every": self.checkpoint_every,
        }
        for name, v in positive.items():
            if v is not None and v < 1:
                raise ConfigError(f"must be at least 1, got {v}", field=name)
        if self.warmup < 1:
            raise ConfigError(f"must be at least 1, got {self.warmup}", field="--warmup")
        if self.interrupt_at is not None and self.interrupt_at < 0:
            raise ConfigError("must be a step number >= 1 (0 turns the test off)", field="--interrupt-at")
        if self.shapes is not None and (not self.shapes or any(s < 1 for s in self.shapes)):
            raise ConfigError("give positive sequence lengths, e.g. 128,256,512", field="--shapes")
        if self.target_loss is not None and not math.isfinite(self.target_loss):
            raise ConfigError("must be a finite number", field="--target-loss")
        if self.precision is not None:
            dev.check_precision(self.precision)
        if self.compile is not None:
            dev.check_backend(self.compile)


def parse_shapes(text: str | None) -> list[int] | None:
    """``"128,256,512"`` -> [128, 256, 512]."""
    if text is None or not text.strip():
        return None
    try:
        return [int(s) for s in text.replace(" ", "").split(",") if s]
    except ValueError:
        raise ConfigError(f"not a list of integers: {text!r}", field="--shapes", fix="e.g. 128,256,512") from None


# --- progress --------------------------------------------------------------------------------------


class Reporter:
    """Progress callbacks; the CLI supplies a rich one, library callers get silence."""

    def phase(self, name: str, total: int | None = None) -> Callable[[int], None]:
        def advance(n: int = 1) -> None:
            return None

        return advance

    def end_phase(self) -> None:
        return None


# --- helpers ---------------------------------------------------------------------------------------


def _defaults(workload: TrainingWorkload) -> dict[str, Any]:
    get = getattr(workload, "training_defaults", None)
    return dict(get()) if callable(get) else {}


def _workload_info(workload: TrainingWorkload, spec: str, options: dict[str, Any], params: int) -> WorkloadInfo:
    describe = getattr(workload, "describe", None)
    cfg = dict(describe()) if callable(describe) else {}
    factory = f"builtin:{workload.name}" if spec == BUILTIN_WORKLOAD else spec
    return WorkloadInfo(name=workload.name, factory=factory, params=params, config={**cfg, "options": options})


def _fig(value: float, unit: str, label: str, note: str = "") -> Figure:
    return measured(value, unit, SOURCE, label=label, note=note)


def _tensor_to_jsonable(t: torch.Tensor) -> dict[str, Any]:
    return {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape), "data": t.flatten().tolist()}


def _tensor_from_jsonable(d: dict[str, Any]) -> torch.Tensor:
    return torch.tensor(d["data"], dtype=getattr(torch, d["dtype"])).reshape(d["shape"])


@torch.no_grad()
def reference_outputs(
    model: torch.nn.Module, inputs: Sequence[Any], device: torch.device, precision: str, k: int = 1024
) -> dict[str, Any]:
    """Outputs of ``model(*inputs)`` at ``k`` fixed positions plus the argmax per row: small enough to store."""
    model.eval()
    try:
        args = [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]
        with dev.autocast(device, precision):
            out = model(*args)
    finally:
        model.train()
    if not isinstance(out, torch.Tensor):
        out = out[0] if isinstance(out, (tuple, list)) else getattr(out, "logits", None)
    if not isinstance(out, torch.Tensor):
        raise ConfigError("the model's forward on example_inputs() does not return a tensor", field="--workload")
    out = out.detach().float().cpu()
    flat = out.flatten()
    idx = torch.linspace(0, flat.numel() - 1, min(k, flat.numel())).long()
    argmax = out.reshape(-1, out.shape[-1]).argmax(-1) if out.dim() >= 2 else out.round()
    return {
        "shape": list(out.shape),
        "index": idx.tolist(),
        "values": [round(float(v), 6) for v in flat[idx]],
        "argmax": [int(v) for v in argmax.flatten()[:4096]],
    }


def compare_outputs(mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, float]:
    """Max/mean absolute difference of stored output values and the share of rows with the same argmax."""
    if mine["shape"] != theirs["shape"] or mine["index"] != theirs["index"]:
        raise ConfigError(
            f"outputs have shape {mine['shape']} here and {theirs['shape']} in the other result",
            field="--compare-to",
            fix="compare results of the same workload and size",
        )
    a = torch.tensor(mine["values"], dtype=torch.float64)
    b = torch.tensor(theirs["values"], dtype=torch.float64)
    diff = (a - b).abs()
    am, bm = mine["argmax"], theirs["argmax"]
    agree = sum(int(x == y) for x, y in zip(am, bm, strict=False)) / max(1, min(len(am), len(bm)))
    scale = float(b.abs().max()) or 1.0
    return {
        "max_abs_diff": float(diff.max()),
        "mean_abs_diff": float(diff.mean()),
        "max_rel_diff": float(diff.max()) / scale,
        "argmax_agreement": agree,
    }


def _counters() -> dict[str, int]:
    """Dynamo's compile counters (unique graphs, frames) and inductor's FX-graph cache hits/misses."""
    try:
        from torch._dynamo.utils import counters
    except Exception:
        return {"graphs": 0, "frames": 0, "cache_hits": 0, "cache_misses": 0}
    return {
        "graphs": int(counters["stats"].get("unique_graphs", 0)),
        "frames": int(counters["frames"].get("ok", 0)),
        "cache_hits": int(counters["inductor"].get("fxgraph_cache_hit", 0)),
        "cache_misses": int(counters["inductor"].get("fxgraph_cache_miss", 0)),
    }


_CACHE_ENV = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "NEURON_COMPILE_CACHE_URL", "NEURON_CC_FLAGS")


def _peak_flops(accelerator: str | None, precision: str) -> tuple[Figure | None, str]:
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


def _host_peak_rss_bytes() -> int | None:
    try:
        import resource  # POSIX only
    except ImportError:
        return None
    ru = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(ru if sys.platform == "darwin" else ru * 1024)


# --- the pilot -------------------------------------------------------------------------------------


class TrainingPilot:
    """Runs the phases and accumulates figures; ``result()`` can be called at any point."""

    def __init__(self, cfg: TrainConfig, reporter: Reporter | None = None) -> None:
        cfg.validate()
        self.cfg = cfg
        self.rep = reporter or Reporter()
        self.t_start = time.perf_counter()
        self.figures: dict[str, Figure] = {}
        self.samples: dict[str, list[float]] = {}
        self.details: dict[str, Any] = {"unavailable": {}, "phase_seconds": {}}
        self.errors: list[str] = []
        self.summary = TrainingSummary()
        self.accepted: bool | None = None
        self.device = dev.resolve_device(cfg.device)
        self.out_dir = Path(cfg.out)
        self._check_out_dir()
        options = dict(cfg.workload_options)
        if cfg.size is not None:
            options["size"] = cfg.size
        if cfg.tokens is not None:
            options["tokens"] = cfg.tokens
        self.options = options
        self.workload: TrainingWorkload = load_factory(cfg.workload, **options)
        if not isinstance(self.workload, TrainingWorkload):
            raise ConfigError(
                f"{cfg.workload} returned {type(self.workload).__name__}, which lacks the TrainingWorkload methods "
                "(name, build_model, example_inputs, batches, loss, tokens_in)",
                field="--workload",
            )
        d = _defaults(self.workload)
        self.backend = dev.check_backend(cfg.compile or DEFAULT_BACKEND.get(self.device.type, "eager"))
        self.precision = dev.check_precision(cfg.precision or ("fp32" if self.device.type == "cpu" else "bf16"))
        self.batch_size = int(cfg.batch_size or d.get("batch_size", 8))
        self.seq_len = int(cfg.seq_len or d.get("seq_len", 128))
        self.lr = float(cfg.lr or d.get("learning_rate", 1e-3))
        tl = cfg.target_loss if cfg.target_loss is not None else d.get("target_loss")
        self.target_loss = float(tl) if tl is not None else None
        self.max_steps = int(cfg.max_steps or d.get("max_steps", 500))
        self.eval_every = int(cfg.eval_every or d.get("eval_every", 10))
        self.eval_batches = int(cfg.eval_batches or d.get("eval_batches", 2))
        self.shapes = list(cfg.shapes) if cfg.shapes else [self.seq_len, max(1, self.seq_len // 2)]
        self.interrupt_at = (
            cfg.interrupt_at if cfg.interrupt_at is not None else (12 if self.device.type == "cpu" else 0)
        )
        self.checkpoint_every = int(cfg.checkpoint_every or max(1, min(5, self.interrupt_at or 5)))
        for s in self.shapes:  # fail before measuring anything when a shape cannot be served
            next(iter(self.workload.batches("train", 1, s, cfg.seed)))
        # read --compare-to before measuring anything, so a bad path costs nothing
        self.other: PilotResult | None = read_result(cfg.compare_to) if cfg.compare_to else None
        self.platform = dev.fingerprint(self.device, self.backend, self.precision)
        self.trainer: Trainer | None = None
        self.written: Path | None = None
        self.params = 0
        self.stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())

    # --- bookkeeping ------------------------------------------------------------------------------

    def _check_out_dir(self) -> None:
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".write-test-", dir=self.out_dir)
            os.close(fd)
            os.unlink(tmp)
        except OSError as exc:
            raise InputFileError(
                f"cannot write results here ({exc.strerror or exc.__class__.__name__})",
                file=str(self.out_dir),
                field="--out",
                fix="give a writable folder",
            ) from None

    def resolved_config(self) -> dict[str, Any]:
        c = asdict(self.cfg)
        c.update(
            compile=self.backend,
            precision=self.precision,
            batch_size=self.batch_size,
            seq_len=self.seq_len,
            lr=self.lr,
            target_loss=self.target_loss,
            max_steps=self.max_steps,
            eval_every=self.eval_every,
            eval_batches=self.eval_batches,
            shapes=self.shapes,
            interrupt_at=self.interrupt_at,
            checkpoint_every=self.checkpoint_every,
            optimizer=f"AdamW(lr={self.lr}, fused={getattr(self.trainer, 'fused', None)})",
            global_batch_tokens=self.batch_size * self.seq_len,
            torch_threads=torch.get_num_threads(),
        )
        return c

    def result(self) -> PilotResult:
        rss = _host_peak_rss_bytes()
        if rss is not None:
            self.figures["peak_host_rss_bytes"] = _fig(rss, "byte", "peak host memory (RSS)")
        return PilotResult(
            kind="training",
            command=self.cfg.command,
            platform=self.platform,
            workload=_workload_info(self.workload, self.cfg.workload, self.options, self.params),
            config=self.resolved_config(),
            figures=dict(self.figures),
            samples=dict(self.samples),
            training=self.summary,
            accepted=self.accepted,
            details=self.details,
            errors=list(self.errors),
        )

    def result_path(self, result: PilotResult) -> Path:
        return self.out_dir / result.default_filename()

    # --- phases -----------------------------------------------------------------------------------

    def run(self) -> PilotResult:
        """All phases; on any error the completed measurements are written, then the error propagates."""
        phases: list[tuple[str, Callable[[], None]]] = [
            ("first correct run", self.phase_first_run),
            ("throughput", self.phase_throughput),
            ("profiler", self.phase_profile),
            ("time to target", self.phase_time_to_target),
            ("checkpoint", self.phase_checkpoint),
            ("interrupted worker", self.phase_interrupt),
            ("shapes", self.phase_shapes),
            ("parity", self.phase_parity),
        ]
        if self.backend != "eager":
            import torch._dynamo

            torch._dynamo.reset()
        self.current_phase = ""
        try:
            for name, fn in phases:
                self.current_phase = name
                t0 = time.perf_counter()
                fn()
                self.details["phase_seconds"][name] = time.perf_counter() - t0
        except BaseException as exc:
            self.errors.append(f"{self.current_phase}: {exc.__class__.__name__}: {exc}".replace("\n", " "))
            with contextlib.suppress(Exception):  # the original error matters more than a failed partial write
                partial = self.result()
                self.written = write_result(partial, self.result_path(partial))
            raise
        finally:
            self.rep.end_phase()
        res = self.result()
        self.written = write_result(res, self.result_path(res))
        return res

    def _train_batches(self, seq_len: int, seed: int) -> Iterator[Sequence[torch.Tensor]]:
        return iter(self.workload.batches("train", self.batch_size, seq_len, seed))

    def phase_first_run(self) -> None:
        advance = self.rep.phase("first correct run (build, compile, step 1)", 2)
        cfg = self.cfg
        trainer = Trainer(self.workload, self.device, self.precision, self.backend, self.lr, cfg.seed)
        self.trainer = trainer
        flops_fn = getattr(self.workload, "flops_per_token", None)
        model = trainer.model
        self.params = int(sum(p.numel() for p in model.parameters()))
        batches = self._train_batches(self.seq_len, cfg.seed)
        first_cpu = next(batches)
        self._batches = batches
        t0 = time.perf_counter()
        loss = trainer.forward_backward(trainer.to_device(first_cpu))
        loss_value = float(loss.detach().float().item())
        finite = math.isfinite(loss_value) and trainer.grads_finite()
        trainer.optimizer_step()
        dev.synchronize(self.device)
        t_first = time.perf_counter()
        first_step_s = t_first - t0
        advance(1)
        # the check is not part of the run being timed: a float32 CPU reference of the same batch and weights
        ref_model = build_model(self.workload, cfg.seed)
        ref_model.load_state_dict(trainer.init_state)
        with torch.no_grad():
            ref = float(self.workload.loss(ref_model, first_cpu).item())
        del ref_model
        rtol = FIRST_STEP_RTOL[self.precision]
        rel = abs(loss_value - ref) / max(abs(ref), 1e-12)
        correct = finite and rel <= rtol
        self.details["first_run"] = {
            "loss": loss_value,
            "cpu_fp32_reference_loss": ref,
            "relative_difference": rel,
            "tolerance_relative": rtol,
            "finite": finite,
            "correct": correct,
            "first_step_s": first_step_s,
            "clock": "from the pilot's start (workload built, data ready) to the end of the first checked step",
        }
        self.figures["first_step_s"] = _fig(first_step_s, "s", "first training step (includes compilation)")
        if correct:
            self.figures["time_to_first_correct_run_s"] = _fig(
                t_first - self.t_start,
                "s",
                "time to a correct first run",
                note=f"loss within {rtol:g} (relative) of a float32 CPU reference of the same batch; "
                "loss and gradients finite",
            )
        else:
            self.details["unavailable"]["time_to_first_correct_run_s"] = (
                f"first step not correct: loss {loss_value:.6g} vs CPU fp32 reference {ref:.6g} "
                f"(relative {rel:.3g}, tolerance {rtol:g}, finite={finite})"
            )
            self.errors.append("first step did not match the float32 CPU reference")
        # warm-up: remaining warm-up steps, then the eval path's first call (compiles under no_grad)
        for _ in range(self.cfg.warmup - 1):
            trainer.step(trainer.to_device(next(batches)))
        dev.synchronize(self.device)
        self._eval_set = self._make_eval_set(self.seq_len)
        c0 = _counters()
        t0 = time.perf_counter()
        trainer.eval_loss(self._eval_set)
        eval_first = time.perf_counter() - t0
        t0 = time.perf_counter()
        trainer.eval_loss(self._eval_set)
        eval_steady = time.perf_counter() - t0
        self._eval_compile_s = max(0.0, eval_first - eval_steady)
        self._eval_graphs = _counters()["graphs"] - c0["graphs"]
        advance(1)
        if callable(flops_fn):
            self._flops_per_token = float(flops_fn(model, self.seq_len))
            self._flops_note = "workload's flops_per_token (GPT: 6N + 12·L·H·Q·T, PaLM appendix B)"
        else:
            self._flops_per_token = 6.0 * self.params
            self._flops_note = "6N with N = all parameters (the workload gives no flops_per_token)"

    def _make_eval_set(self, seq_len: int) -> list[tuple[torch.Tensor, ...]]:
        assert self.trainer is not None
        it = iter(self.workload.batches("eval", self.batch_size, seq_len, self.cfg.seed))
        return [self.trainer.to_device(next(it)) for _ in range(self.eval_batches)]

    def phase_throughput(self) -> None:
        assert self.trainer is not None
        advance = self.rep.phase(f"throughput ({self.cfg.steps} timed steps)", 1)
        dev.reset_peak_memory(self.device)
        times = timed_steps(self.trainer, self._batches, self.cfg.steps)
        losses = torch.stack(times.losses).float().cpu().tolist()
        advance(1)
        s = Samples(list(times.step_s))
        tok_s = times.tokens / times.wall_s
        smp_s = times.samples / times.wall_s
        self.samples["step_time_s"] = list(times.step_s)
        self.samples["throughput_losses"] = losses
        note = f"global batch {self.batch_size}x{self.seq_len}, {self.cfg.steps} steps after {self.cfg.warmup} warm-up"
        self.figures["tokens_per_s"] = _fig(tok_s, "token/s", "training throughput", note)
        self.figures["samples_per_s"] = _fig(smp_s, "sample/s", "training throughput", note)
        for q, v in s.percentiles((50.0, 90.0, 99.0)).items():
            self.figures[f"step_time_{q}_s"] = _fig(v, "s", f"step time {q} after warm-up")
        self.figures["step_time_mean_s"] = _fig(s.mean(), "s", "step time mean after warm-up")
        self._steady_step_s = s.percentile(50.0)
        self.summary.tokens_per_s = tok_s
        self.summary.samples_per_s = smp_s
        # compile cost at the main shape: first step minus a steady step
        first = self.details["first_run"]["first_step_s"]
        c = _counters()
        self.figures["compile_time_s"] = _fig(
            max(0.0, first - self._steady_step_s),
            "s",
            "compile time at the main shape (first step minus median step; train + eval paths below)",
            note=f"backend {self.backend}",
        )
        self.figures["compile_time_eval_s"] = _fig(self._eval_compile_s, "s", "first eval call minus second")
        self.details["compile"] = {
            "backend": self.backend,
            "graphs_after_warmup": c["graphs"],
            "frames": c["frames"],
            "inductor_cache_hits": c["cache_hits"],
            "inductor_cache_misses": c["cache_misses"],
            "cache_settings": {k: os.environ[k] for k in _CACHE_ENV if k in os.environ},
        }
        # model FLOPs utilisation against the catalog's peak
        fpt = assumption(self._flops_per_token, "FLOP/token", source=self._flops_note, label="model FLOPs per token")
        achieved = (self.figures["tokens_per_s"] * fpt).with_label("model FLOP/s achieved")
        self.figures["model_flops_per_s"] = achieved
        peak, why = _peak_flops(self.platform.accelerator, self.precision)
        if peak is not None:
            self.figures["mfu"] = (achieved / peak).with_label(
                "model FLOPs utilisation", note=f"against the catalog's {self.precision} peak"
            )
            self.figures["peak_flops_per_s"] = peak
        else:
            self.details["unavailable"]["mfu"] = why
        mem = dev.peak_memory_bytes(self.device)
        if mem is not None:
            self.figures["peak_device_memory_bytes"] = _fig(mem, "byte", "peak device memory allocated")
        else:
            self.details["unavailable"]["peak_device_memory_bytes"] = (
                f"{self.device.type} reports no device memory counter (see peak_host_rss_bytes)"
            )

    def phase_profile(self) -> None:
        assert self.trainer is not None
        trainer = self.trainer
        advance = self.rep.phase(f"profiler ({self.cfg.profile_steps} steps)", 1)
        batch = trainer.to_device(next(self._batches))

        def step() -> None:
            trainer.step(batch)

        prof = profile_steps(step, lambda: dev.synchronize(self.device), n_steps=self.cfg.profile_steps)
        advance(1)
        self.details["profile"] = prof
        if prof["top_share_of_step"] is not None:
            self.figures["profile_top_ops_share"] = _fig(
                prof["top_share_of_step"],
                "",
                f"share of step time explained by the top {prof['top_k']} operators",
                note=f"{prof['time_basis']}; slowest: {prof['slowest_op']}",
            )
        self.figures["profile_time_to_identify_s"] = _fig(
            prof["time_to_identify_s"], "s", "time to name the slowest operator (profile + analysis)"
        )

    def phase_time_to_target(self) -> None:
        assert self.trainer is not None
        trainer = self.trainer
        if self.target_loss is None:
            self.details["unavailable"]["time_to_target_s"] = "no --target-loss given and the workload names none"
            return
        runs: list[dict[str, Any]] = []
        total = self.cfg.runs * self.max_steps
        advance = self.rep.phase(f"time to target loss {self.target_loss:g} ({self.cfg.runs} runs)", total)
        for r in range(self.cfg.runs):
            seed = self.cfg.seed + r
            trainer.reset(seed)  # model init is outside the clock, as in MLPerf
            dev.synchronize(self.device)
            t0 = time.perf_counter()
            batches = self._train_batches(self.seq_len, seed)  # first touch of data
            eval_set = self._make_eval_set(self.seq_len)
            curve: list[tuple[int, float]] = []
            reached_at = None
            eval_s = 0.0
            steps = 0
            for steps in range(1, self.max_steps + 1):
                trainer.step(trainer.to_device(next(batches)))
                if steps % self.eval_every == 0 or steps == self.max_steps:
                    e0 = time.perf_counter()
                    ev = trainer.eval_loss(eval_set)
                    eval_s += time.perf_counter() - e0
                    curve.append((steps, ev))
                    if ev <= self.target_loss:
                        reached_at = steps
                        break
                advance(1)
            dev.synchronize(self.device)
            elapsed = time.perf_counter() - t0
            advance(self.max_steps - steps)
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
        self.details["time_to_target"] = {
            "target_loss": self.target_loss,
            "max_steps": self.max_steps,
            "eval_every": self.eval_every,
            "eval_batches": self.eval_batches,
            "clock": "first touch of data until eval loss <= target, eval included; compile excluded "
            "(compiled code is reused across runs; see compile_time_s)",
            "runs": runs,
        }
        self.samples["time_to_target_s"] = accepted
        self.summary.target_loss = self.target_loss
        self.summary.runs = len(runs)
        self.summary.accepted_runs = len(accepted)
        self.accepted = len(accepted) == len(runs)
        if accepted:
            mean = olympic_mean(accepted)
            self.summary.time_to_target_s = mean
            how = "olympic mean (fastest and slowest dropped)" if len(accepted) >= 3 else "mean"
            self.figures["time_to_target_s"] = _fig(
                mean, "s", f"time to eval loss <= {self.target_loss:g}", note=f"{how} of {len(accepted)} accepted runs"
            )
            self.figures["steps_to_target"] = _fig(
                olympic_mean([float(r["steps"]) for r in runs if r["accepted"]]), "step", "steps to target"
            )
        else:
            self.details["unavailable"]["time_to_target_s"] = (
                f"no run reached eval loss {self.target_loss:g} within {self.max_steps} steps (runs not accepted)"
            )
        final = runs[-1]["final_eval_loss"]
        if final is not None:
            self.figures["final_eval_loss"] = _fig(final, "", "eval loss at the end of the last run")

    def _checkpoint_root(self) -> tuple[Path, bool]:
        if self.cfg.checkpoint_dir:
            return ckpt.check_writable(self.cfg.checkpoint_dir), False
        return Path(tempfile.mkdtemp(prefix=".checkpoints-", dir=self.out_dir)), True

    def phase_checkpoint(self) -> None:
        assert self.trainer is not None
        trainer = self.trainer
        advance = self.rep.phase("checkpoint write and restore", 1)
        root, temporary = self._checkpoint_root()
        self._ckpt_root, self._ckpt_temporary = root, temporary
        try:
            w = ckpt.save_checkpoint(root / "pilot", 0, trainer.model, trainer.optimizer, self.device)
            before = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
            with torch.no_grad():
                for p in trainer.model.parameters():
                    p.add_(1.0)  # prove the restore really replaces the weights
            _, _, restore_s = ckpt.load_checkpoint(w.path, trainer.model, trainer.optimizer, self.device)
            same = all(torch.equal(before[k], v) for k, v in trainer.model.state_dict().items())
        finally:
            if temporary:
                shutil.rmtree(root / "pilot", ignore_errors=True)
        advance(1)
        self.figures["checkpoint_write_s"] = _fig(w.seconds, "s", "checkpoint write (serialise + fsync + rename)")
        self.figures["checkpoint_bytes"] = _fig(w.bytes, "byte", "checkpoint size (model + optimizer)")
        self.figures["checkpoint_restore_s"] = _fig(restore_s, "s", "checkpoint restore (load + copy in place)")
        self.details["checkpoint"] = {"restored_bitwise": same, "path": str(w.path) if not temporary else None}
        if not same:
            self.errors.append("checkpoint restore did not reproduce the saved weights")

    def phase_interrupt(self) -> None:
        if not self.interrupt_at:
            self.details["unavailable"]["interrupt"] = "not requested (--interrupt-at STEP)"
            return
        k = self.interrupt_at
        total = k + 2 * self.checkpoint_every
        advance = self.rep.phase(f"interrupted worker (SIGKILL at step {k}, restart)", 3)
        root = self._ckpt_root / f"interrupt-{self.stamp}"
        if root.exists():
            shutil.rmtree(root)
        root.mkdir(parents=True)
        base = WorkerConfig(
            workload=self.cfg.workload,
            workload_options=self.options,
            device=self.cfg.device,
            precision=self.precision,
            backend=self.backend,
            batch_size=self.batch_size,
            seq_len=self.seq_len,
            lr=self.lr,
            seed=self.cfg.seed,
            total_steps=total,
            checkpoint_every=self.checkpoint_every,
            checkpoint_dir=str(root / "ckpt"),
            num_threads=torch.get_num_threads(),
        )
        try:
            killed = _run_child(base, root, "killed", pause_at=k)
            advance(1)
            resumed = _run_child(base, root, "resumed", resume=True)
            advance(1)
            # the uninterrupted curve: same code in this process, no checkpoints
            ref_cfg = WorkerConfig(**{**asdict(base), "checkpoint_every": 0, "checkpoint_dir": ""})
            reference = run_worker(ref_cfg, lambda rec: None)
            advance(1)
        finally:
            if self._ckpt_temporary:
                shutil.rmtree(root, ignore_errors=True)
        restored_step = resumed["restored_step"]
        lost = k - restored_step
        resumed_losses = resumed["losses"]  # steps restored_step+1 .. total
        expected = reference[restored_step:]
        diffs = [abs(a - b) for a, b in zip(resumed_losses, expected, strict=False)]
        bitwise = len(resumed_losses) == len(expected) and all(
            a == b for a, b in zip(resumed_losses, expected, strict=True)
        )
        tol = 0.0 if (self.device.type == "cpu" and self.backend == "eager" and self.precision == "fp32") else 1e-2
        max_diff = max(diffs) if diffs else float("nan")
        self.details["interrupt"] = {
            "interrupt_at": k,
            "checkpoint_every": self.checkpoint_every,
            "total_steps": total,
            "kill_signal": "SIGKILL",
            "killed_returncode": killed["returncode"],
            "killed_pid": killed["pid"],
            "restored_step": restored_step,
            "steps_lost": lost,
            "restart_s": resumed["ready_s"],
            "first_resumed_step_s": resumed["first_step_s"],
            "restore_s": resumed["restore_s"],
            "loss_curve_uninterrupted": reference,
            "loss_curve_before_kill": killed["losses"],
            "loss_curve_resumed": resumed_losses,
            "max_abs_loss_diff": max_diff,
            "bitwise_equal": bitwise,
            "tolerance_abs": tol,
            "matches": bool(diffs) and max_diff <= tol,
            "how": "the child pauses after logging the step, is SIGKILLed, and a new process resumes",
        }
        self.figures["interrupt_steps_lost"] = _fig(lost, "step", f"steps lost when killed at step {k}")
        self.figures["restart_s"] = _fig(
            resumed["ready_s"], "s", "restart: new process spawned until checkpoint restored and ready"
        )
        self.figures["restart_to_first_step_s"] = _fig(
            resumed["first_step_s"], "s", "restart: new process spawned until its first resumed step"
        )
        if diffs:
            self.figures["resume_loss_max_abs_diff"] = _fig(max_diff, "", "resumed vs uninterrupted loss (max abs)")
        if killed["returncode"] != -signal.SIGKILL:
            self.errors.append(f"the killed worker exited with {killed['returncode']}, not SIGKILL")

    def phase_shapes(self) -> None:
        assert self.trainer is not None
        trainer = self.trainer
        advance = self.rep.phase(f"shapes {','.join(map(str, self.shapes))}", len(self.shapes))
        per: dict[int, dict[str, Any]] = {}
        main = self.seq_len
        per[main] = {
            "first_call_s": self.details["first_run"]["first_step_s"],
            "step_s": self._steady_step_s,
            "new_graphs": self.details["compile"]["graphs_after_warmup"],
            "compile_s": float(self.figures["compile_time_s"].value),
        }
        for s in self.shapes:
            if s in per:
                advance(1)
                continue
            batches = self._train_batches(s, self.cfg.seed + 1000 + s)
            batch = trainer.to_device(next(batches))
            c0 = _counters()
            dev.synchronize(self.device)
            t0 = time.perf_counter()
            trainer.step(batch)
            dev.synchronize(self.device)
            first = time.perf_counter() - t0
            c1 = _counters()
            times = timed_steps(trainer, batches, self.cfg.shape_steps)
            steady = Samples(times.step_s).percentile(50.0)
            per[s] = {
                "first_call_s": first,
                "step_s": steady,
                "new_graphs": c1["graphs"] - c0["graphs"],
                "compile_s": max(0.0, first - steady),
            }
            self.samples[f"shape_{s}_step_s"] = list(times.step_s)
            advance(1)
        extra = [s for s in self.shapes if s != main]
        recompiles = sum(per[s]["new_graphs"] for s in extra)
        recompile_s = sum(per[s]["compile_s"] for s in extra)
        for s in self.shapes:
            self.figures[f"shape_{s}_first_call_s"] = _fig(per[s]["first_call_s"], "s", f"first step at seq len {s}")
            self.figures[f"shape_{s}_step_s"] = _fig(per[s]["step_s"], "s", f"median step at seq len {s}")
        self.figures["recompilations"] = _fig(
            recompiles, "", "new compiled graphs when the sequence length changes", note="dynamo unique_graphs counter"
        )
        self.figures["recompile_time_s"] = _fig(recompile_s, "s", "compile time spent on new shapes")
        # padding/bucketing alternative: pad every shape to the largest (one compiled graph, more work per step)
        largest = max(self.shapes)
        t_pad = self.figures[f"shape_{largest}_step_s"]
        mix = [self.figures[f"shape_{s}_step_s"] for s in self.shapes]
        t_mix = sum(mix[1:], mix[0]) if len(mix) > 1 else mix[0]
        n = Figure(value=len(self.shapes), unit="", kind=Kind.DERIVED, label="shapes in the mix")
        overhead = ((t_pad * n) / t_mix).with_label(
            "padding cost: step time of an equal shape mix padded to the largest / unpadded",
            note="derived from measured step times; 1.0 means padding is free",
        )
        self.figures["padding_cost_ratio"] = overhead
        waste_per_mix = (t_pad * n) - t_mix  # seconds lost per round of the mix by padding
        if recompile_s > 0 and float(waste_per_mix.value) > 0:
            self.figures["padding_break_even_rounds"] = (self.figures["recompile_time_s"] / waste_per_mix).with_label(
                "rounds of the shape mix after which compiling each shape beats padding",
                note="recompile time / (padded - unpadded time per round)",
            )
        self.details["shapes"] = {
            "main": main,
            "per_shape": {str(k): v for k, v in per.items()},
            "automatic_dynamic_shapes": _dynamic_shapes_setting(),
            "alternative": f"pad every batch to {largest} tokens: one compiled graph",
        }

    def phase_parity(self) -> None:
        assert self.trainer is not None
        trainer = self.trainer
        advance = self.rep.phase("quality parity (reference outputs)", 1)
        inputs = tuple(self.workload.example_inputs())
        stored_inputs = [_tensor_to_jsonable(x) for x in inputs if isinstance(x, torch.Tensor)]
        storable = len(stored_inputs) == len(inputs) and sum(len(x["data"]) for x in stored_inputs) <= 65536
        trained = reference_outputs(trainer.model, inputs, self.device, self.precision)
        trained_state = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
        trainer.reset()
        init = reference_outputs(trainer.model, inputs, self.device, self.precision)
        ref: dict[str, Any] = {
            "inputs": stored_inputs if storable else None,
            "precision": self.precision,
            "trained": trained,
            "init": init,
            "eval_loss": float(self.figures["final_eval_loss"].value) if "final_eval_loss" in self.figures else None,
            "note": "outputs of the eager model on example_inputs(): 'init' at the seeded initial weights "
            "(numerics parity), 'trained' after the last time-to-target run (quality parity)",
        }
        self.details["reference_outputs"] = ref
        if self.cfg.compare_to and self.other is not None:
            other = self.other
            theirs = other.details.get("reference_outputs")
            if other.kind != "training" or not theirs:
                raise InputFileError(
                    "not a training result with reference outputs", file=self.cfg.compare_to, field="--compare-to"
                )
            if other.workload.name != self.workload.name:
                raise ConfigError(
                    f"the other result is for workload {other.workload.name!r}, this run is {self.workload.name!r}",
                    field="--compare-to",
                )
            their_inputs = tuple(_tensor_from_jsonable(x) for x in theirs["inputs"]) if theirs.get("inputs") else inputs
            mine_init = reference_outputs(trainer.model, their_inputs, self.device, self.precision)
            with torch.no_grad():
                trainer.model.load_state_dict(trained_state)
            mine_trained = reference_outputs(trainer.model, their_inputs, self.device, self.precision)
            parity: dict[str, Any] = {
                "other": str(self.cfg.compare_to),
                "other_platform": other.platform.slug(),
                "init": compare_outputs(mine_init, theirs["init"]),
                "trained": compare_outputs(mine_trained, theirs["trained"]),
            }
            their_eval = theirs.get("eval_loss")
            if their_eval is not None and ref["eval_loss"] is not None:
                parity["eval_loss_diff"] = float(Decimal(str(ref["eval_loss"])) - Decimal(str(their_eval)))
                self.figures["parity_eval_loss_diff"] = _fig(
                    parity["eval_loss_diff"], "", f"eval loss here minus {other.platform.slug()}"
                )
            self.figures["parity_logits_max_abs_diff"] = _fig(
                parity["trained"]["max_abs_diff"], "", "trained-model outputs vs other platform (max abs)"
            )
            self.figures["parity_init_logits_max_abs_diff"] = _fig(
                parity["init"]["max_abs_diff"], "", "initial-weights outputs vs other platform (max abs)"
            )
            self.figures["parity_argmax_agreement"] = _fig(
                parity["trained"]["argmax_agreement"], "", "share of positions with the same top-1 output"
            )
            self.details["parity"] = parity
        else:
            self.details["unavailable"]["parity"] = "no --compare-to OTHER_RESULT.json given"
        with torch.no_grad():
            trainer.model.load_state_dict(trained_state)
        advance(1)


def _dynamic_shapes_setting() -> bool | None:
    with contextlib.suppress(Exception):
        import torch._dynamo.config as dcfg

        return bool(dcfg.automatic_dynamic_shapes)
    return None


def _run_child(
    base: WorkerConfig, root: Path, tag: str, pause_at: int | None = None, resume: bool = False
) -> dict[str, Any]:
    """Run one worker process; with ``pause_at`` SIGKILL it once it logs that step."""
    log = root / f"{tag}.log"
    cfg = WorkerConfig(**{**asdict(base), "log_path": str(log), "pause_at": pause_at, "resume": resume})
    cfg_path = root / f"{tag}.json"
    cfg_path.write_text(cfg.to_json(), encoding="utf-8")
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    t_spawn = time.time()
    proc = subprocess.Popen(
        [sys.executable, "-m", "accelpilot.pilot.train_worker", str(cfg_path)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    records: list[dict[str, Any]] = []
    pos = 0
    deadline = time.monotonic() + 600
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
                raise RuntimeError(f"worker {tag} did not finish within 600 s")
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
    return {
        "pid": proc.pid,
        "returncode": proc.returncode,
        "losses": [float(r["loss"]) for r in steps],
        "restored_step": int(restored["step"]) if restored else 0,
        "restore_s": float(restored["restore_s"]) if restored else None,
        "ready_s": (ready["t"] - t_spawn) if ready else None,
        "first_step_s": (steps[0]["t"] - t_spawn) if steps else None,
    }


def run_training(cfg: TrainConfig, reporter: Reporter | None = None) -> tuple[PilotResult, Path]:
    """Run the pilot; returns the result and where it was written."""
    pilot = TrainingPilot(cfg, reporter)
    result = pilot.run()
    assert pilot.written is not None
    return result, pilot.written
