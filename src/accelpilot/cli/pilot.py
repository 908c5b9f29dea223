"""`accelpilot pilot`: scan, run the training and serving pilots, price, decide, write the report directory."""

from __future__ import annotations

from pathlib import Path

import typer

from accelpilot.cli.app import app
from accelpilot.cli.common import console, err_console, print_json


@app.command("pilot")
def pilot(
    repo: Path | None = typer.Option(None, "--repo", help="Repository to scan (default: the reference workloads)."),
    workload: str | None = typer.Option(
        None, "--workload", help="Training workload module:factory (default built in)."
    ),
    serve_workload: str | None = typer.Option(None, "--serve-workload", help="Serving workload (default minilm)."),
    scenario: Path | None = typer.Option(
        None, "--scenario", help="Scenario TOML (default: the bundled worked example)."
    ),
    results: list[Path] | None = typer.Option(None, "--results", help="Results from other platforms; repeatable."),
    catalog: list[Path] | None = typer.Option(None, "--catalog", help="Extra catalog file; repeatable, later wins."),
    device: str = typer.Option("cpu", "--device", help="torch device for the local pilots: cpu, cuda, neuron, ..."),
    out: Path = typer.Option(Path("report"), "--out", help="Report directory."),
    skip_train: bool = typer.Option(False, "--skip-train", help="Do not run the training pilot."),
    skip_serve: bool = typer.Option(False, "--skip-serve", help="Do not run the serving pilot."),
    skip_scan: bool = typer.Option(False, "--skip-scan", help="Do not scan the repository."),
    as_json: bool = typer.Option(False, "--json", help="Print the report's JSON on stdout."),
    portfolio: Path | None = typer.Option(None, "--portfolio", help="Portfolio TOML: report its estates instead."),
) -> None:
    """The whole procedure on this machine: scan, train, serve, bill, gates, report."""
    if portfolio is not None:  # the estates of a portfolio, from its scenarios' results (runs no pilot)
        from accelpilot.cli.portfolio import report_portfolio_cli

        return report_portfolio_cli(portfolio, scenario, catalog, out, as_json)
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from accelpilot.procedure import PilotPlan, run_procedure
    from accelpilot.report.terminal import print_summary

    plan = PilotPlan(
        repo=repo,
        workload=workload,
        serve_workload=serve_workload,
        scenario=scenario,
        results=list(results or []),
        catalog=list(catalog or []),
        device=device,
        out=out,
        skip_train=skip_train,
        skip_serve=skip_serve,
        skip_scan=skip_scan,
    )
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=err_console, transient=True
    ) as prog:
        task = prog.add_task("starting", total=None)
        outcome = run_procedure(plan, lambda m: prog.update(task, description=m))
    if as_json:
        print_json(outcome.report.model_dump(mode="json"))
        return
    print_summary(outcome.report, console, outcome.paths)
    phases = ", ".join(f"{k} {v:.1f} s" for k, v in outcome.phases.items())
    console.print(
        f"Done in {outcome.elapsed_s:.1f} s ({phases}). Rebuild without running: {outcome.reproduce}",
        markup=False,
        highlight=False,
    )
