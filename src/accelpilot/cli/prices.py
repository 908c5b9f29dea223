"""`accelpilot prices`: every price with its billing unit, derived per-accelerator-hour, date and source."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from accelpilot.cli.app import app
from accelpilot.cli.common import console, print_json
from accelpilot.termtext import cell

CatalogOpt = typer.Option(
    None, "--catalog", help="Extra catalog file (TOML, CSV, AWS offer JSON); repeatable, later wins."
)


def fmt_price(x: float) -> str:
    """At least two decimals (cents), up to five, no trailing zeros beyond the cents."""
    head, _, tail = f"{x:,.5f}".rstrip("0").partition(".")
    return f"{head}.{tail:0<2}"


@app.command("prices")
def prices(
    accelerator: str | None = typer.Option(None, "--accelerator", "-a", help="Filter: trainium, inferentia, h100..."),
    pricing: str | None = typer.Option(
        None, "--pricing", "-p", help="on_demand, reserved_1y, reserved_3y, capacity_block, spot, rental"
    ),
    instance: str | None = typer.Option(None, "--instance", help="Filter by instance name."),
    region: str | None = typer.Option(None, "--region", help="Filter by region code."),
    catalog: list[Path] | None = CatalogOpt,
    as_json: bool = typer.Option(False, "--json", help="Print rows as JSON."),
) -> None:
    """List prices, honest about billing units: the instance is billed whole; per-accelerator-hour is derived."""
    from accelpilot.catalog import load_catalog, parse_pricing
    from accelpilot.catalog.table import price_table

    if pricing:
        parse_pricing(pricing)  # validate early, with "did you mean"
    cat = load_catalog(catalog or [])
    rows = price_table(cat, accelerator=accelerator, pricing=pricing, instance=instance, region=region)
    if as_json:
        print_json(rows)
        return
    table = Table(
        title="accelpilot prices",
        caption="per-accel-h is derived: instance price / accelerator count. * = overrides an earlier catalog row.",
        show_lines=False,
    )
    for col, just in [
        ("instance", "left"),
        ("accelerator", "left"),
        ("count", "right"),
        ("pricing", "left"),
        ("USD/instance-h", "right"),
        ("USD/accel-h", "right"),
        ("region", "left"),
        ("as of", "left"),
        ("source", "left"),
    ]:
        table.add_column(col, justify=just, no_wrap=col != "source", overflow="fold")  # type: ignore[arg-type]
    for r in rows:
        table.add_row(  # catalog strings come from user files: shown with controls escaped, never as markup
            cell(r["instance"]) + (" *" if r["overrides"] else ""),
            cell(r["accelerator"]),
            str(r["accelerator_count"]),
            cell(r["pricing"]),
            fmt_price(r["price_per_hour"]),
            fmt_price(r["price_per_accelerator_hour"]),
            cell(r["region"] or "not named"),
            cell(r["as_of"]),
            cell(r["source"] if not r["overrides"] else f"{r['source']} (overrides {r['overrides']})"),
        )
    if not rows:
        console.print("[yellow]no prices match these filters[/]")
        return
    console.print(table)
