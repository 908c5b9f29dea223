"""The portfolio paths of `bill` and `report`: a file with a [portfolio] table (issue 31)."""

from __future__ import annotations

from pathlib import Path

from accelpilot.cli.common import console, print_json


def bill_portfolio_cli(path: Path, catalog: list[Path] | None, as_json: bool) -> None:
    from accelpilot.portfolio.price import to_json
    from accelpilot.portfolio.procedure import bill_portfolio

    priced = bill_portfolio(path, catalog)
    if as_json:
        print_json(to_json(priced), plain=True)
        return
    from accelpilot.portfolio.render import render_portfolio

    render_portfolio(priced, console)


def report_portfolio_cli(
    portfolio: Path | None, scenario: Path | None, catalog: list[Path] | None, out: Path, as_json: bool
) -> None:
    from accelpilot.errors import ConfigError

    if portfolio is None:
        raise ConfigError("give --scenario S.toml or --portfolio P.toml", field="--scenario")
    if scenario is not None:
        raise ConfigError("give --scenario or --portfolio, not both", field="--portfolio")
    from accelpilot.portfolio.procedure import run_portfolio
    from accelpilot.report.portfolio import portfolio_json, write_portfolio_report
    from accelpilot.report.write import check_report_dir

    check_report_dir(out)  # before any input is read, as the scenario report does
    run = run_portfolio(portfolio, catalog)
    paths = write_portfolio_report(run, out)
    if as_json:
        print_json(portfolio_json(run))
        return
    from accelpilot.portfolio.render import render_portfolio

    render_portfolio(run.price, console)
    console.print(f"Verdict: {run.verdict.headline}", markup=False, highlight=False)
    console.print(f"Report: {paths['report.html']}", markup=False, highlight=False)
