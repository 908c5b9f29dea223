"""`accelpilot report`: build the report directory from existing files; runs nothing."""

from __future__ import annotations

from pathlib import Path

import typer

from accelpilot.cli.app import app
from accelpilot.cli.common import console, print_json


@app.command("report")
def report(
    scenario: Path | None = typer.Option(
        None, "--scenario", help="Scenario TOML: options, volumes, engineering, [gates]."
    ),
    portfolio: Path | None = typer.Option(None, "--portfolio", help="Portfolio TOML: workloads and estates."),
    results: list[Path] | None = typer.Option(
        None, "--results", help="Pilot result JSON measuring the scenario's workload; repeatable."
    ),
    beside: list[Path] | None = typer.Option(
        None, "--beside", help="Pilot results of another workload (serving beside a training bill): shown, not priced."
    ),
    scan_log: Path | None = typer.Option(None, "--scan-log", help="Portability log from `accelpilot scan --json`."),
    catalog: list[Path] | None = typer.Option(None, "--catalog", help="Extra catalog file; repeatable, later wins."),
    evidence: list[Path] | None = typer.Option(
        None,
        "--evidence",
        help="AWS CLI JSON (offerings, quotas, capacity blocks, spot scores); with [evidence] files.",
    ),
    out: Path = typer.Option(Path("report"), "--out", help="Report directory (report.html, report.md, report.json)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report's JSON on stdout as well."),
) -> None:
    """Verdict, bill, charts, pilots, portability log and vendor claims, from files you already have."""
    from accelpilot.pilot.result import read_result
    from accelpilot.procedure import make_report
    from accelpilot.report.terminal import print_summary
    from accelpilot.report.write import check_report_dir, write_report

    if portfolio is not None or scenario is None:
        from accelpilot.cli.portfolio import report_portfolio_cli

        return report_portfolio_cli(portfolio, scenario, catalog, out, as_json)
    check_report_dir(out)  # an existing file or a read-only folder fails before any input is read
    shown = [(str(p), read_result(p)) for p in beside or []]
    rep = make_report(
        scenario, results=results or [], scan_log=scan_log, catalog=catalog or [], beside=shown, evidence=evidence or []
    )
    paths = write_report(rep, out)
    if as_json:
        print_json(rep.model_dump(mode="json"))
    else:
        print_summary(rep, console, paths)
