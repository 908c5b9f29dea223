"""`accelpilot bill SCENARIO.toml`: price every option from measured or assumed hours."""

from __future__ import annotations

from pathlib import Path

import typer

from accelpilot.cli.app import app
from accelpilot.cli.common import console, gc_paused, print_json


@app.command("bill")
def bill(
    scenario: Path | None = typer.Argument(
        None, help="Scenario TOML (default: the bundled seed 004 worked example, examples/worked-example.toml)."
    ),
    catalog: list[Path] | None = typer.Option(None, "--catalog", help="Extra catalog file; repeatable, later wins."),
    as_json: bool = typer.Option(False, "--json", help="Print the bill as JSON."),
) -> None:
    """Cost per run and per accepted run, savings, payback and 36-month cost for every option."""
    from accelpilot.bill.compute import make_bill
    from accelpilot.bill.model import bill_to_json
    from accelpilot.bill.scenario import load_scenario
    from accelpilot.catalog import load_catalog
    from accelpilot.portfolio.read import is_portfolio

    if scenario is not None and is_portfolio(scenario):  # a [portfolio] of scenarios: priced per estate
        from accelpilot.cli.portfolio import bill_portfolio_cli

        return bill_portfolio_cli(scenario, catalog, as_json)
    with gc_paused():
        if scenario is None:
            from importlib import resources

            with resources.as_file(resources.files("accelpilot.bill") / "examples" / "worked-example.toml") as p:
                sc = load_scenario(p)
        else:
            sc = load_scenario(scenario)
        # the scenario's [evidence] files, read once: the Spot Advisor's bands price spot interruptions
        files = [sc.resolve(f) for f in sc.evidence.files]
        evidence = None
        if files:  # the evidence readers (~40 ms of imports) only for a scenario that names files
            from accelpilot.evidence import read_evidence

            evidence = read_evidence(files)
        result = make_bill(sc, load_catalog(catalog or []), evidence)
        if as_json:
            print_json(bill_to_json(result), plain=True)  # plain data: see print_json
        else:
            from accelpilot.bill.render import render_bill  # tables only: --json need not import them

            render_bill(result, console)
