"""`accelpilot run train`: the training pilot on one device; parse, call run_training, render."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer

from accelpilot.cli.app import run_app
from accelpilot.cli.common import console, err_console, print_json

# torch-free: the CLI reads its option defaults from the config class, so each default is written once
from accelpilot.pilot.train.config import BUILTIN_WORKLOAD, INTERRUPT_AT_ON_CPU, TrainConfig, parse_shapes

if TYPE_CHECKING:
    from accelpilot.pilot.result import PilotResult

D = TrainConfig()  # the defaults of every option below


class _RichReporter:
    """Progress bars on stderr so `--json` keeps stdout clean."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(),
            console=err_console,
            transient=False,
        )
        self.task: Any = None
        self.started = False

    def phase(self, name: str, total: int | None = None) -> Callable[[int], None]:
        if not self.started:
            self.progress.start()
            self.started = True
        if self.task is not None:
            self.progress.update(self.task, completed=self.progress.tasks[-1].total)
        self.task = self.progress.add_task(name, total=total)
        task = self.task

        def advance(n: int = 1) -> None:
            self.progress.advance(task, n)

        return advance

    def end_phase(self) -> None:
        if self.started:
            if self.task is not None:
                self.progress.update(self.task, completed=self.progress.tasks[-1].total)
            self.progress.stop()
            self.started = False


def _fmt(value: float, unit: str) -> str:
    if unit == "byte":
        for u, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
            if abs(value) >= div:
                return f"{value / div:,.2f} {u}"
        return f"{value:,.0f} B"
    if unit == "s" and abs(value) < 1:
        return f"{value * 1e3:,.2f} ms"
    if abs(value) >= 1e5:
        return f"{value:,.4g} {unit}".strip() if abs(value) >= 1e9 else f"{value:,.0f} {unit}".strip()
    return f"{value:,.4g} {unit}".strip()


_SHOWN = [
    ("time_to_first_correct_run_s", "time to a correct first run"),
    ("compile_time_s", "compile time (main shape)"),
    ("recompilations", "recompilations over --shapes"),
    ("recompile_time_s", "recompile time over --shapes"),
    ("padding_cost_ratio", "padding to the largest shape costs (×)"),
    ("tokens_per_s", "throughput"),
    ("samples_per_s", "throughput"),
    ("step_time_p50_s", "step time p50"),
    ("step_time_p99_s", "step time p99"),
    ("mfu", "MFU vs catalog peak"),
    ("peak_device_memory_bytes", "peak device memory"),
    ("time_to_target_s", "time to target"),
    ("final_eval_loss", "final eval loss"),
    ("checkpoint_write_s", "checkpoint write"),
    ("checkpoint_bytes", "checkpoint size"),
    ("checkpoint_restore_s", "checkpoint restore"),
    ("interrupt_steps_lost", "steps lost at SIGKILL"),
    ("restart_s", "restart (spawn → restored)"),
    ("resume_loss_max_abs_diff", "resumed vs uninterrupted loss"),
    ("profile_top_ops_share", "top ops explain (share of step)"),
    ("parity_eval_loss_diff", "eval loss diff vs other"),
    ("parity_logits_max_abs_diff", "logits max diff vs other"),
]


def render_scaling(result: PilotResult, path: str) -> None:
    """One row per world size: throughput, efficiency against world size 1, communication, checkpoints."""
    # rich here, not at the top: every command imports this module to register it (issue 10's speed)
    from rich.table import Table

    dist = result.details["distributed"]
    topo = dist["topology"]
    table = Table(
        title=f"distributed training pilot: {result.workload.name}, {topo['parallel']} over {topo['backend']} "
        f"({topo['launcher']})",
        caption=f"written to {path}",
    )
    cols = [
        ("world", None, ""),
        ("tokens/s", "tokens_per_s", "token/s"),
        ("efficiency", "scaling_efficiency", ""),
        ("step p50", "step_time_p50_s", "s"),
        ("rank skew", "rank_step_skew", ""),
        ("comm share", "comm_share", ""),
        ("launch→1st step", "launch_to_first_step_s", "s"),
        ("DCP save", "dcp_save_s", "s"),
        ("DCP size", "dcp_bytes", "byte"),
    ]
    for name, _, _ in cols:
        table.add_column(name, justify="right")
    for w in topo["world_sizes"]:
        row = [str(w)]
        for _, key, unit in cols[1:]:
            f = result.figures.get(f"{key}_world{w}")
            row.append(_fmt(float(f.value), unit) if f is not None else "–")
        table.add_row(*row)
    console.print(table)
    for key, info in dist["portability"].items():
        console.print(f"checkpoint {key}: identical weights: {info['identical_weights']}")
    intr = dist.get("interrupt")
    if intr:
        console.print(
            f"rank {intr['interrupt_rank']} killed at step {intr['interrupt_at']}: {intr['restarts']} restart(s), "
            f"{intr['steps_lost']} step(s) lost, resumed curve matches: {intr['matches']}"
        )
    for e in result.errors:
        console.print(f"[red]error:[/red] {e}")


def render_summary(result: PilotResult, path: str) -> None:
    # rich here, not at the top: every command imports this module to register it (issue 10's speed)
    from rich.table import Table

    if "distributed" in result.details:
        render_scaling(result, path)
        return
    p = result.platform
    t = result.training
    table = Table(
        title=f"training pilot: {result.workload.name} on {p.device_name or p.device} "
        f"({p.compile_backend}, {p.precision})",
        caption=f"written to {path}",
    )
    table.add_column("measurement")
    table.add_column("value", justify="right")
    table.add_column("note", overflow="fold", max_width=60)
    for key, label in _SHOWN:
        f = result.figures.get(key)
        if f is None:
            why = result.details.get("unavailable", {}).get(key)
            if why:
                table.add_row(label, "n/a", str(why))
            continue
        note = f.note
        if key == "time_to_target_s" and t is not None:
            note = f"{t.accepted_runs}/{t.runs} runs accepted; {note}"
        if key == "profile_top_ops_share":
            note = f"slowest op: {result.details.get('profile', {}).get('slowest_op')}"
        if key == "resume_loss_max_abs_diff":
            intr = result.details.get("interrupt", {})
            note = f"bitwise equal: {intr.get('bitwise_equal')}; matches: {intr.get('matches')}"
        table.add_row(label, _fmt(float(f.value), f.unit), note)
    console.print(table)
    if t is not None and t.runs and t.accepted_runs < t.runs:
        console.print(f"[yellow]{t.runs - t.accepted_runs} of {t.runs} runs did not reach the target (not accepted)")
    for e in result.errors:
        console.print(f"[red]error:[/red] {e}")


def _command_line(ctx: typer.Context) -> str:
    """The command that reproduces this run: argv when called as `accelpilot`, else rebuilt from the options."""
    import os

    if os.path.basename(sys.argv[0]).startswith("accelpilot") and sys.argv[1:3] == ["run", "train"]:
        return shlex.join(["accelpilot", *sys.argv[1:]])
    words = ["accelpilot", "run", "train"]
    for param in ctx.command.params:
        if not getattr(param, "opts", None) or param.name is None:
            continue
        value = ctx.params.get(param.name)
        if value is None or value == param.default:
            continue
        flag = max(param.opts, key=len)
        words += [flag] if getattr(param, "is_flag", False) else [flag, str(value)]
    return shlex.join(words)


@run_app.command("train")
def train(
    ctx: typer.Context,
    device: str = typer.Option(D.device, "--device", help="torch device: cpu, cuda, cuda:1, neuron, xla, mps."),
    workload: str = typer.Option(
        "builtin:gpt" if D.workload == BUILTIN_WORKLOAD else D.workload,
        "--workload",
        help="builtin:gpt or a user's module:factory (or path/file.py:factory).",
    ),
    size: str | None = typer.Option(D.size, "--size", help="Built-in GPT size: tiny, small, gpt2-124m (default tiny)."),
    tokens: str | None = typer.Option(D.tokens, "--tokens", help="Token file for the GPT: .npy or raw uint16 .bin."),
    compile_: str | None = typer.Option(
        D.compile, "--compile", help="eager, inductor, neuron, openxla (default: inductor on cuda, eager on cpu)."
    ),
    precision: str | None = typer.Option(
        D.precision, "--precision", help="fp32, bf16, fp16 (default bf16 off the CPU)."
    ),
    batch_size: int | None = typer.Option(D.batch_size, "--batch-size", help="Global batch size (sequences)."),
    seq_len: int | None = typer.Option(D.seq_len, "--seq-len", help="Sequence length of the main shape."),
    steps: int = typer.Option(D.steps, "--steps", help="Timed steps for throughput, after warm-up."),
    warmup: int = typer.Option(D.warmup, "--warmup", help="Warm-up steps before timing (the first compiles)."),
    shapes: str | None = typer.Option(None, "--shapes", help="Sequence lengths to test recompiling, e.g. 128,256,512."),
    target_loss: float | None = typer.Option(
        D.target_loss, "--target-loss", help="Eval loss that ends a time-to-target run."
    ),
    max_steps: int | None = typer.Option(
        D.max_steps, "--max-steps", help="Give up a time-to-target run after N steps."
    ),
    eval_every: int | None = typer.Option(
        D.eval_every, "--eval-every", help="Evaluate every N steps in time-to-target runs."
    ),
    runs: int = typer.Option(D.runs, "--runs", help="Time-to-target runs; >= 3 gives an olympic mean."),
    interrupt_at: int | None = typer.Option(
        D.interrupt_at,
        "--interrupt-at",
        help=f"SIGKILL a worker at this step and restart it (default {INTERRUPT_AT_ON_CPU} on cpu; 0 = off).",
    ),
    checkpoint_every: int | None = typer.Option(
        D.checkpoint_every, "--checkpoint-every", help="Checkpoint interval of the worker."
    ),
    checkpoint_dir: str | None = typer.Option(
        D.checkpoint_dir, "--checkpoint-dir", help="Keep checkpoints here (default: temp)."
    ),
    compare_to: str | None = typer.Option(
        D.compare_to, "--compare-to", help="Another platform's result: quality parity."
    ),
    out: str = typer.Option(D.out, "--out", help="Folder for the result file."),
    seed: int = typer.Option(D.seed, "--seed", help="Seed for weights and data order."),
    lr: float | None = typer.Option(D.lr, "--lr", help="Learning rate (default: the workload's)."),
    nproc_per_node: int = typer.Option(
        D.nproc_per_node, "--nproc-per-node", help="Processes (devices) per node: > 1 launches torchrun."
    ),
    nnodes: int = typer.Option(D.nnodes, "--nnodes", help="Nodes joining the rendezvous (run the command on each)."),
    node_rank: int = typer.Option(D.node_rank, "--node-rank", help="This node's rank (0 writes the result)."),
    rdzv_endpoint: str | None = typer.Option(D.rdzv_endpoint, "--rdzv-endpoint", help="HOST:PORT of the rendezvous."),
    rdzv_timeout_s: float = typer.Option(
        D.rdzv_timeout_s, "--rdzv-timeout-s", help="Give up when the nodes have not met after this long."
    ),
    scaling: str | None = typer.Option(None, "--scaling", help="World sizes to measure in turn, e.g. 1,2,4,8."),
    parallel: str = typer.Option(D.parallel, "--parallel", help="ddp (DistributedDataParallel) or fsdp (FSDP2)."),
    global_batch: int | None = typer.Option(
        D.global_batch, "--global-batch", help="Fixed global batch (strong scaling); default: fixed per-rank batch."
    ),
    max_restarts: int = typer.Option(D.max_restarts, "--max-restarts", help="torchrun restarts after a failure."),
    interrupt_rank: int = typer.Option(
        D.interrupt_rank, "--interrupt-rank", help="Distributed: the rank SIGKILLed at --interrupt-at."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result JSON on stdout (progress stays on stderr)."),
) -> None:
    """Train a workload on one device and write a result with every proof-of-concept measurement."""
    from accelpilot.pilot.train.pilot import TrainingInterrupted, run_training
    from accelpilot.pilot.train.record import Reporter

    cfg = TrainConfig(
        device=device,
        workload=workload,
        size=size,
        tokens=tokens,
        compile=compile_,
        precision=precision,
        batch_size=batch_size,
        seq_len=seq_len,
        steps=steps,
        warmup=warmup,
        shapes=parse_shapes(shapes),
        target_loss=target_loss,
        max_steps=max_steps,
        eval_every=eval_every,
        runs=runs,
        interrupt_at=interrupt_at,
        checkpoint_every=checkpoint_every,
        checkpoint_dir=checkpoint_dir,
        compare_to=compare_to,
        out=out,
        seed=seed,
        lr=lr,
        command=_command_line(ctx),
        nproc_per_node=nproc_per_node,
        nnodes=nnodes,
        node_rank=node_rank,
        rdzv_endpoint=rdzv_endpoint,
        rdzv_timeout_s=rdzv_timeout_s,
        scaling=parse_shapes(scaling, "--scaling", "1,2,4"),
        parallel=parallel,
        global_batch=global_batch,
        max_restarts=max_restarts,
        interrupt_rank=interrupt_rank,
    )
    reporter: Reporter = _RichReporter() if err_console.is_terminal else Reporter()  # type: ignore[assignment]
    from accelpilot.pilot.train.distributed import is_distributed, run_distributed

    try:
        result, path = run_distributed(cfg, reporter) if is_distributed(cfg) else run_training(cfg, reporter)
    except KeyboardInterrupt:  # before the first phase: the pilot itself turns a later one into the same error
        raise TrainingInterrupted("", [], None) from None
    if path is None:  # another node of a multi-node job: node rank 0 writes the result
        err_console.print(f"node {cfg.node_rank}: ranks finished; node 0 writes the result")
        return
    if as_json:
        print_json(result.model_dump(mode="json"))
    else:
        render_summary(result, str(path))
