"""`accelpilot run train`: the training pilot on one device; parse, call run_training, render."""

from __future__ import annotations

import dataclasses
import inspect
import shlex
import sys
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer

from accelpilot.cli.app import run_app
from accelpilot.cli.common import console, err_console, print_json

# torch-free: the CLI reads its option defaults from the config class, so each default is written once
from accelpilot.pilot.train.config import TrainConfig, parse_shapes

if TYPE_CHECKING:
    from accelpilot.pilot.result import PilotResult

D = TrainConfig()  # the defaults of every option (generated from the fields below)


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
    if result.topology is not None:
        t = result.topology
        console.print(
            f"summary (training.tokens_per_s): all {t.world_size} rank(s) of world size {t.world_size}, "
            f"{t.nnodes} node(s), {t.accelerators:g} accelerator(s)"
        )
    for w in topo["world_sizes"]:
        why = result.details.get("unavailable", {}).get(f"comm_share_world{w}")
        if why and why.startswith("not measured"):
            console.print(f"comm share at world size {w}: {why}")
    tr = result.training
    if tr is not None and tr.runs:
        ttt = f"{_fmt(tr.time_to_target_s, 's')}" if tr.time_to_target_s is not None else "not reached"
        console.print(f"time to eval loss <= {tr.target_loss:g}: {ttt} ({tr.accepted_runs}/{tr.runs} runs accepted)")
    resume = dist.get("resume")
    if resume:
        saved = resume.get("saved") or {}
        console.print(
            f"resumed {resume['from']} (saved at world size {saved.get('world', '?')}, {saved.get('parallel', '?')}) "
            f"at world size {resume['loaded_at_world']} with {resume['parallel']}: identical weights: "
            f"{resume['identical_weights']}"
        )
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


def _option_params() -> list[inspect.Parameter]:
    """One typer option per ``TrainConfig`` field declared with ``option``: flag, help and default from there."""
    hints = typing.get_type_hints(TrainConfig)
    params = []
    for f in dataclasses.fields(TrainConfig):
        if "flag" not in f.metadata:
            continue
        meta = f.metadata
        default = meta.get("cli_default", getattr(D, f.name))
        annotation = (str | None) if meta["text"] else hints[f.name]
        params.append(
            inspect.Parameter(
                f.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=typer.Option(None if meta["text"] else default, meta["flag"], help=meta["help"]),
                annotation=annotation,
            )
        )
    return params


def train(ctx: typer.Context, as_json: bool = False, **options: Any) -> None:
    """Train a workload on one device and write a result with every proof-of-concept measurement."""
    from accelpilot.pilot.train.pilot import TrainingInterrupted, run_training
    from accelpilot.pilot.train.record import Reporter

    values: dict[str, Any] = {}
    for f in dataclasses.fields(TrainConfig):
        if f.name in options:
            v = options[f.name]
            if f.metadata["text"]:  # typed as text, parsed into the field's list
                v = parse_shapes(v, f.metadata["flag"], "1,2,4" if f.name == "scaling" else "128,256,512")
            values[f.name] = v
    cfg = TrainConfig(**values, command=_command_line(ctx))
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


_ctx = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)
_json = inspect.Parameter(
    "as_json",
    inspect.Parameter.KEYWORD_ONLY,
    default=typer.Option(False, "--json", help="Print the result JSON on stdout (progress stays on stderr)."),
    annotation=bool,
)
_params = [_ctx, *_option_params(), _json]
train.__signature__ = inspect.Signature(_params)  # type: ignore[attr-defined]
train.__annotations__ = {p.name: p.annotation for p in _params} | {"return": None}
run_app.command("train")(train)
