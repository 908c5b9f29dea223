"""`accelpilot launch SCENARIO.toml --out tasks/`: one SkyPilot task (or shell script) per candidate machine."""

from __future__ import annotations

from pathlib import Path

import typer

from accelpilot.cli.app import app
from accelpilot.cli.common import console, err_console, print_json


def _pilot_is_distributed() -> bool:
    """Does this accelpilot's `run train` launch across nodes (torchrun flags)? Then tasks use every node."""
    import inspect

    from accelpilot.cli import run_train

    flags: set[str] = set()
    for p in inspect.signature(run_train.train).parameters.values():
        flags.update(getattr(p.default, "param_decls", None) or ())
    return {"--nnodes", "--nproc-per-node", "--node-rank", "--rdzv-endpoint"} <= flags


@app.command("launch")
def launch(
    scenario: Path = typer.Argument(..., help="Scenario TOML whose options to pilot."),
    out: Path = typer.Option(Path("tasks"), "--out", help="Folder for the task files and their README."),
    workload: str | None = typer.Option(None, "--workload", help="Training: your module:factory (from --workdir)."),
    workdir: str | None = typer.Option(None, "--workdir", help="Folder SkyPilot syncs to the machine (your code)."),
    pilot_args: str | None = typer.Option(
        None, "--pilot-args", help="Arguments for `accelpilot run train|serve`, replacing the stack's defaults."
    ),
    wheel: Path | None = typer.Option(
        None, "--wheel", help="The accelpilot wheel the tasks carry (default: built from this checkout)."
    ),
    endpoint: str | None = typer.Option(None, "--endpoint", help="Serving: drive this OpenAI-compatible URL."),
    server_cmd: str | None = typer.Option(None, "--server-cmd", help="Serving: start your server with this first."),
    bucket: str | None = typer.Option(None, "--bucket", help="Bucket the results are written to (mounted)."),
    image: str | None = typer.Option(None, "--image", help="Image for every task: ami-... or docker:IMAGE."),
    setup: Path | None = typer.Option(None, "--setup", help="A file whose bash replaces the stack's setup block."),
    stacks: list[Path] | None = typer.Option(None, "--stacks", help="Platform stack overrides (TOML); repeatable."),
    skip: list[str] | None = typer.Option(None, "--skip", help="Leave this option out; repeatable."),
    catalog: list[Path] | None = typer.Option(None, "--catalog", help="Extra catalog file; repeatable."),
    check: bool = typer.Option(True, "--check/--no-check", help="Check tasks with SkyPilot's schema if installed."),
    as_json: bool = typer.Option(False, "--json", help="Print what was written as JSON."),
) -> None:
    """Write ready-to-launch pilot tasks for every option of a scenario; launches nothing."""
    import shlex
    import tempfile

    from accelpilot.bill.scenario import load_scenario
    from accelpilot.catalog import load_catalog
    from accelpilot.errors import InputFileError
    from accelpilot.launch import plan_launch, render_tasks, write_tasks
    from accelpilot.launch.command import PilotSpec
    from accelpilot.launch.skypilot import check_task, skypilot_version
    from accelpilot.launch.stacks import load_stacks
    from accelpilot.launch.wheel import REMOTE_DIST, build_wheel

    sc = load_scenario(scenario)
    distributed = _pilot_is_distributed()
    targets = plan_launch(sc, load_catalog(catalog or []), load_stacks(stacks or []), skip or [], distributed)
    setup_text = None
    if setup is not None:
        try:
            setup_text = setup.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputFileError(
                f"cannot read setup block ({exc.strerror})", file=str(setup), field="--setup"
            ) from None
    staging = tempfile.TemporaryDirectory(prefix="accelpilot-wheel-")  # removed when launch returns
    built = build_wheel(Path(staging.name), wheel)  # before anything is written: refuse early if impossible
    spec = PilotSpec(
        kind=sc.workload,
        workload=workload,
        pilot_args=tuple(shlex.split(pilot_args)) if pilot_args is not None else None,
        wheel=built.name,
        endpoint=endpoint,
        server_cmd=server_cmd,
        distributed=distributed,
    )
    rendered = render_tasks(
        targets, spec, sc.name, str(scenario), out, image=image, setup=setup_text, workdir=workdir, bucket=bucket
    )
    version = skypilot_version() if check else None
    for w, _ in rendered:  # check everything before writing anything
        if w.task is not None and version is not None:
            # SkyPilot checks that a mounted folder exists: the wheel is staged until the folder is written
            mounts = {**w.task["file_mounts"], REMOTE_DIST: staging.name}
            check_task({**w.task, "file_mounts": mounts}, str(w.path))
    written = write_tasks(rendered, out, str(scenario), wheel=built)
    checked = (
        f"checked with SkyPilot {version}'s task schema and parser (offline)"
        if version
        else "not checked: SkyPilot is not installed (pip install 'accelpilot[launch]')"
        if check
        else "not checked (--no-check)"
    )
    if as_json:
        print_json(
            {
                "out": str(out),
                "checked": checked,
                "tasks": [
                    {
                        "file": str(w.path),
                        "launcher": w.target.launcher,
                        "options": w.target.options,
                        "accelerator": w.target.accelerator,
                        "num_nodes": w.target.num_nodes,
                        "stack": w.target.stack.name,
                        "fetch": w.fetch,
                        "warnings": w.warnings,
                    }
                    for w in written
                ],
            }
        )
        return
    from rich.table import Table

    table = Table(title=f"pilot tasks for {sc.name}", caption=f"{out / 'README.md'} says what to run; {checked}")
    for col in ("file", "options", "machine", "launcher"):
        table.add_column(col, overflow="fold")
    for w in written:
        t = w.target
        machine = t.instance_type or f"{t.accelerator} x {t.accelerators_per_node}"
        table.add_row(
            str(w.path), "; ".join(t.options), machine + (f" x {t.num_nodes}" if t.num_nodes > 1 else ""), t.launcher
        )
    console.print(table)
    for w in written:
        for warn in w.warnings:
            err_console.print(f"[yellow]warning:[/yellow] {w.path.name}: {warn}")
