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
