"""`accelpilot export mlflow RESULT...`: log pilot results as MLflow runs."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from accelpilot.cli.app import app
from accelpilot.cli.common import console, print_json

export_app = typer.Typer(help="Send pilot results to an experiment tracker.", no_args_is_help=True)
app.add_typer(export_app, name="export")


@export_app.command("mlflow")
def export_mlflow(
    results: list[Path] = typer.Argument(..., help="Pilot result files."),
    tracking_uri: str | None = typer.Option(
        None, "--tracking-uri", help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db)."
    ),
    experiment: str = typer.Option("accelpilot", "--experiment", help="MLflow experiment name."),
    report: Path | None = typer.Option(None, "--report", help="A report folder to attach to every run."),
    as_json: bool = typer.Option(False, "--json", help="Print the runs as JSON."),
) -> None:
    """One MLflow run per result: params (platform, workload, config), a metric per figure, the files."""
    from accelpilot.tracking.mlflow_export import export_results

    uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or "sqlite:///mlflow.db"
    done = export_results(results, uri, experiment, report)
    rows = [{"file": str(e.path), "run_id": e.run_id, "status": e.status} for e in done]
    if as_json:
        print_json({"tracking_uri": uri, "experiment": experiment, "runs": rows})
        return
    from rich.table import Table

    table = Table(title=f"MLflow experiment {experiment!r} at {uri}")
    for col in ("file", "run id", "status"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r["file"], r["run_id"], r["status"])
    console.print(table)
