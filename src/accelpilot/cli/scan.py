"""`accelpilot scan`: the portability log of a repository (static) and, on request, of a model's operators."""

from __future__ import annotations

import math
import os
import sys
import tempfile
from pathlib import Path

import typer

from accelpilot.cli.app import app
from accelpilot.cli.common import console
from accelpilot.errors import ConfigError, InputFileError


@app.command("scan")
def scan(
    path: Path | None = typer.Argument(None, help="Repository, directory or file to scan (never imported or run)."),
    model: str | None = typer.Option(None, "--model", help="module:factory whose model to inventory (imports it)."),
    supported_ops: Path | None = typer.Option(
        None, "--supported-ops", help="Supported aten ops: a list (text/JSON) or torch_neuronx.analyze output."
    ),
    baseline: Path | None = typer.Option(None, "--baseline", help="A previous JSON log: show only what is new."),
    target: list[str] = typer.Option([], "--target", help="Only findings for trainium, inferentia, gpu (or neuron)."),
    fmt: str | None = typer.Option(None, "--format", help="table, md or json (default: table, or from --out)."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    out: Path | None = typer.Option(None, "--out", help="Write the log to this file instead of stdout."),
    jobs: int | None = typer.Option(None, "--jobs", min=1, help="Worker processes (default: CPU count)."),
    max_file_mb: float = typer.Option(10.0, "--max-file-mb", help="Skip files larger than this."),
    follow_symlinks: bool = typer.Option(
        False, "--follow-symlinks", help="Follow links that stay inside the root (links leading out never are)."
    ),
    max_rows: int = typer.Option(40, "--max-rows", help="Rows per table in the terminal view (0 = all)."),
    fail_on: str = typer.Option("none", "--fail-on", help="Exit 1 if a finding is at least: info, warning, blocking."),
    list_rules: bool = typer.Option(False, "--list-rules", help="Print the rule registry and exit."),
    explain: str | None = typer.Option(None, "--explain", help="Print one rule's explanation and exit."),
) -> None:
    """Write the portability log: device-specific code paths, container differences, unsupported operators,
    data movement steps and operational integrations, each with file, line, why and effort."""
    # imported here, not at the top: every command's start pays for the CLI's top-level imports
    from accelpilot.porting.log import load_log
    from accelpilot.porting.render import plain, render_markdown, render_table
    from accelpilot.porting.rules import RULES, SEVERITY_RANK, get_rule, resolve_targets
    from accelpilot.porting.scan import scan_path

    if explain is not None:
        r = get_rule(explain)
        sys.stdout.write(
            f"{r.id}: {r.title}\n  record category: {r.record_category} ({r.category}); dimension: {r.dimension}; "
            f"severity: {r.severity}; effort: {r.effort}; targets: {', '.join(sorted(r.targets))}\n  {r.why}\n"
        )
        return
    if list_rules:
        for r in RULES.values():
            sys.stdout.write(
                f"{r.id}\t{r.record_category}\t{r.dimension}\t{r.severity}\t{','.join(sorted(r.targets))}"
                f"\t{r.effort}\t{r.title}\n"
            )
        return
    form = "json" if as_json else fmt
    if form is None:
        form = {".json": "json", ".md": "md"}.get(out.suffix.lower(), "table") if out else "table"
    if form not in ("table", "md", "json"):
        raise ConfigError(f"unknown format {form!r}", field="--format", fix="use table, md or json")
    if fail_on != "none" and fail_on not in SEVERITY_RANK:
        raise ConfigError(f"unknown severity {fail_on!r}", field="--fail-on", fix="use none, info, warning or blocking")
    if path is None and model is None:
        raise ConfigError("nothing to scan", field="PATH", fix="give a repository path, --model module:factory or both")
    if not (math.isfinite(max_file_mb) and max_file_mb > 0):
        raise ConfigError(
            f"must be a positive number of megabytes, got {max_file_mb}",
            field="--max-file-mb",
            fix="give e.g. --max-file-mb 10",
        )
    if out is not None:
        check_out_file(out)  # before the scan: a bad location must not cost a whole run
    targets = resolve_targets(target)
    base = load_log(baseline) if baseline else None
    sup = None
    if supported_ops is not None:
        from accelpilot.porting.supported import load_supported_ops

        sup = load_supported_ops(supported_ops)
    if path is not None:
        log = scan_path(path, jobs=jobs, max_bytes=int(max_file_mb * 1024 * 1024), follow_symlinks=follow_symlinks)
    else:
        from accelpilot.porting.log import PortabilityLog

        log = PortabilityLog()
    if model is not None:
        from accelpilot.porting.ops import inventory

        log.with_inventory(inventory(model, sup))
    log.only_targets(targets)
    if base is not None:
        log.new_since(base, str(baseline))
    if form == "json":
        text = log.to_json() + "\n"
    elif form == "md":
        text = render_markdown(log)
    else:
        text = ""
    if out is not None:
        if form == "table":
            import io

            from rich.console import Console

            buf = io.StringIO()
            render_table(log, Console(file=buf, width=160), max_rows=max_rows)
            text = buf.getvalue()
        write_out_file(out, text)
        sys.stderr.write(f"accelpilot: wrote {plain(str(out))} ({log.summary.total} findings)\n")
    elif form == "table":
        render_table(log, console, max_rows=max_rows)
    else:
        sys.stdout.write(text)
    if fail_on != "none" and any(SEVERITY_RANK[f.severity] >= SEVERITY_RANK[fail_on] for f in log.findings):
        raise SystemExit(1)  # main() turns SystemExit into the exit status


def check_out_file(out: Path) -> None:
    """``--out`` must name a file in an existing, writable folder; said before any work is done."""
    if out.is_dir():
        raise ConfigError(f"{out} is a folder", field="--out", fix="name a file, e.g. --out scan.json")
    parent = out.parent
    if not parent.is_dir():
        raise ConfigError(f"folder {parent} does not exist", field="--out", fix=f"create it first: mkdir -p {parent}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"folder {parent} is not writable", field="--out", fix="choose a folder you can write to")


def write_out_file(out: Path, text: str) -> None:
    """Write via a temporary file and a rename: a failed write (a full disk) leaves no partial log behind."""
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, out)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputFileError(
            f"cannot write the log: {exc.strerror or exc}", file=str(out), fix="free space or choose another --out"
        ) from None
