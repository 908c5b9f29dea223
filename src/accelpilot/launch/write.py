"""Write the task folder: one SkyPilot YAML or shell script per target, and a README saying what to run."""

from __future__ import annotations

import datetime as dt
import html
import os
import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelpilot import __version__
from accelpilot.errors import InputFileError
from accelpilot.launch.command import PilotSpec, pilot_args, processes_per_node, scaling_sizes
from accelpilot.launch.plan import LaunchTarget
from accelpilot.launch.script import build_script
from accelpilot.launch.skypilot import RESULTS_MOUNT, build_task, task_yaml
from accelpilot.launch.wheel import DIST


@dataclass(slots=True)
class WrittenTask:
    target: LaunchTarget
    path: Path
    task: dict[str, Any] | None = None  # the SkyPilot task as data (None for scripts)
    fetch: str = ""  # how the result comes home
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # facts about this task (processes per node)


def _header(target: LaunchTarget, scenario_path: str, extra: list[str]) -> list[str]:
    head = [
        f"Written by accelpilot {__version__} launch on {dt.date.today().isoformat()} from {scenario_path}.",
        f"Prices option(s): {'; '.join(target.options)}. Accelerator: {target.accelerator} x "
        f"{target.accelerators_per_node} per node, {target.num_nodes} node(s); platform stack {target.stack.name!r}.",
    ]
    # header lines become shell and YAML comments: a newline in an option name must not start a command
    return [" ".join(h.split()) for h in [*head, *target.notes, *extra]]


def render_tasks(
    targets: list[LaunchTarget],
    spec: PilotSpec,
    scenario_name: str,
    scenario_path: str,
    out: Path,
    *,
    image: str | None = None,
    setup: str | None = None,
    workdir: str | None = None,
    bucket: str | None = None,
    dist: Path | None = None,
) -> list[tuple[WrittenTask, str]]:
    """Every file's content, computed before anything is written.

    ``dist``: the local folder of the accelpilot wheel (default ``out/dist``); SkyPilot tasks name it by
    absolute path, so ``sky launch`` works from any folder.
    """
    dist_path = str((dist or out / DIST).resolve())
    rendered: list[tuple[WrittenTask, str]] = []
    for t in targets:
        warnings = []
        notes = []
        if spec.distributed and spec.kind == "training":
            if t.role == "scaling":
                sizes = scaling_sizes(processes_per_node(t)[0])
                why = processes_per_node(t)[1].replace("ACCELPILOT_NPROC_PER_NODE", "ACCELPILOT_SCALING")
                notes.append(f"{t.slug}: --scaling {sizes} on one node ({why})")
            else:
                notes.append(f"{t.slug}: {processes_per_node(t)[1]}")
        if t.stack.device == "neuron" and not t.stack.torch_install and setup is None:
            warnings.append(
                f"stack {t.stack.name!r} names no torch_install: setup stops on an image without TorchNeuron native"
            )
        if setup is not None and spec.wheel not in setup:
            warnings.append(
                f"--setup replaces the stack's setup block and installs no accelpilot: add "
                f'python3 -m pip install "<{DIST} folder>/{spec.wheel}[pilot]" (the wheel in {DIST}/)'
            )
        if t.launcher == "script" and any(a.split("=", 1)[0] == "--tokens" for a in pilot_args(t, spec)):
            notes.append(f"{t.slug}: copy the --tokens file to the machine at the path the pilot arguments give")
        if t.launcher == "skypilot" and t.use_spot and not bucket:
            notes.append(
                f"{t.slug}: spot without --bucket runs as a plain cluster (no recovery from preemption); with "
                "--bucket it becomes a SkyPilot managed job with job_recovery"
            )
        if t.launcher == "skypilot":
            task = build_task(
                t, spec, scenario_name, image=image, setup=setup, workdir=workdir, bucket=bucket, dist=dist_path
            )
            fetch = (
                f"results appear in bucket {bucket} under {t.slug}/ (mounted at {RESULTS_MOUNT}/{t.slug})"
                if bucket
                else f"rsync -Pavz accelpilot-{t.slug}:accelpilot-results/ results/{t.slug}/"
            )
            rendered.append(
                (
                    WrittenTask(t, out / f"{t.slug}.yaml", task, fetch, warnings, notes),
                    task_yaml(task, _header(t, scenario_path, notes)),
                )
            )
        else:
            text = build_script(t, spec, scenario_name, setup=setup, header=_header(t, scenario_path, notes))
            fetch = f"copy ~/accelpilot-results/*.json* from the machine into results/{t.slug}/"
            rendered.append((WrittenTask(t, out / f"{t.slug}.sh", None, fetch, warnings, notes), text))
    return rendered


def _md_cell(text: str) -> str:
    """One Markdown table cell from a user's option name: one line, HTML escaped, Markdown punctuation literal."""
    flat = html.escape(" ".join(text.split()), quote=True)
    return re.sub(r"([\\`*_\[\]()#|!~>])", r"\\\1", flat)


def readme(written: list[WrittenTask], scenario_path: str) -> str:
    quoted = shlex.quote(scenario_path)  # pasted into a shell: a file named x$(cmd).toml stays a name
    lines = [
        "# Pilot tasks",
        "",
        f"Written by `accelpilot launch {quoted}`. Each file runs the same pilot on one candidate machine.",
        "Launch with your own SkyPilot and cloud credentials; bring the result files home; then collect them.",
        "",
        "| file | options it prices | machine | launch | bring the result home |",
        "| --- | --- | --- | --- | --- |",
    ]
    for w in written:
        t = w.target
        machine = t.instance_type or f"{t.accelerator} x {t.accelerators_per_node}"
        if t.num_nodes > 1:
            machine += f" x {t.num_nodes} nodes"
        if w.task is not None and "job_recovery" in w.task["resources"]:
            how = f"`sky jobs launch -n accelpilot-{t.slug} {w.path.name}` (managed: recovers from preemption)"
        elif t.launcher == "skypilot":
            how = f"`sky launch -c accelpilot-{t.slug} {w.path.name}`"
        else:
            how = f"copy `{w.path.name}` to the machine, `bash {w.path.name}`"
        opts = "; ".join(_md_cell(o) for o in t.options)  # one table cell, no raw HTML or Markdown
        lines.append(f"| {w.path.name} | {opts} | {machine} | {how} | `{w.fetch}` |")
    lines += [
        "",
        "Then, where the scenario lives:",
        "",
        "```sh",
        f"accelpilot collect results/ --scenario {quoted}            # writes a new scenario file",
        f"accelpilot collect results/ --scenario {quoted} --write    # or updates it in place",
        "accelpilot report --scenario <the collected scenario>",
        "```",
        "",
        f"Every task installs the accelpilot it was launched from: `{DIST}/` holds its wheel (SkyPilot mounts it "
        "on every node; copy it beside a shell script). No task installs accelpilot from a package index.",
        "Only node 0 runs the pilot; every result gets a `.sha256` file beside it, which `collect` checks.",
        "Stop what you launched: `sky down accelpilot-<name>`.",
    ]
    notes = sorted(
        {n for w in written for n in w.target.notes}
        | {x for w in written for x in w.warnings}
        | {x for w in written for x in w.notes}
    )
    if notes:
        lines += ["", "Notes:", "", *(f"- {n}" for n in notes)]
    return "\n".join(lines) + "\n"


def _check_out(out: Path) -> None:
    """Refuse a non-empty folder that no launch wrote: `--out .` would replace the project's README.md."""
    if not out.exists():
        return
    if not out.is_dir():
        raise InputFileError("--out is a file, not a folder", file=str(out), fix="choose a new folder for --out")
    names = {p.name for p in out.iterdir()}
    if not names:
        return
    readme_file = out / "README.md"
    ours = readme_file.is_file() and readme_file.read_text(encoding="utf-8", errors="replace").startswith(
        "# Pilot tasks\n"
    )
    if not ours:
        raise InputFileError(
            "--out is a non-empty folder that accelpilot launch did not write; its files would be replaced",
            file=str(out),
            fix="choose a new or empty folder for --out (e.g. launch-tasks/)",
        )


def write_tasks(
    rendered: list[tuple[WrittenTask, str]], out: Path, scenario_path: str, wheel: Path | None = None
) -> list[WrittenTask]:
    """Write every file (scripts executable), the carried wheel into ``out/dist`` and the README, only into a
    new, empty or earlier launch folder."""
    _check_out(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        if wheel is not None:
            dist = out / DIST
            dist.mkdir(exist_ok=True)
            for old in dist.glob("accelpilot-*.whl"):
                old.unlink()  # the tasks name one wheel; an earlier launch's would ride along unused
            shutil.copy2(wheel, dist / wheel.name)
        for w, text in rendered:
            w.path.write_text(text, encoding="utf-8")
            if w.path.suffix == ".sh":
                os.chmod(w.path, 0o755)
        (out / "README.md").write_text(readme([w for w, _ in rendered], scenario_path), encoding="utf-8")
    except OSError as exc:
        raise InputFileError(
            f"cannot write tasks ({exc.strerror})", file=str(out), fix="choose another --out"
        ) from None
    return [w for w, _ in rendered]
