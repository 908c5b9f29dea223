"""`accelpilot prices`: every price with its billing unit, derived per-accelerator-hour, date and source."""

from __future__ import annotations

from pathlib import Path

import typer

from accelpilot.cli.app import app
from accelpilot.cli.common import console, print_json

CatalogOpt = typer.Option(
    None, "--catalog", help="Extra catalog file (TOML, CSV, AWS offer JSON); repeatable, later wins."
)


def fmt_price(x: float) -> str:
    """At least two decimals (cents), up to five, no trailing zeros beyond the cents."""
    head, _, tail = f"{x:,.5f}".rstrip("0").partition(".")
    return f"{head}.{tail:0<2}"


def _fetch(provider: str, instance: str | None, region: str | None, out: Path | None) -> Path:
    """Fetch live list prices into an offer file (read back through the catalog like any --catalog file)."""
    from accelpilot.cli.common import err_console
    from accelpilot.errors import ConfigError
    from accelpilot.evidence.pricing import fetch_offer

    if provider.lower() != "aws":
        raise ConfigError(f"cannot fetch prices from {provider!r}", field="--fetch", fix="use --fetch aws")
    if not region or not instance:
        raise ConfigError(
            "--fetch aws needs --region and --instance",
            field="--fetch",
            fix="e.g. --region us-east-1 --instance trn1.32xlarge,p5.48xlarge",
        )
    names = [s.strip() for s in instance.split(",") if s.strip()]
    path = out or Path(f"prices-aws-{region}.json")
    with err_console.status("AWS Price List") as status:
        fetch_offer(region, names, path, progress=lambda m: status.update(m))
    err_console.print(f"wrote {path} (use it later with --catalog {path})")
    return path


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
    fetch: str | None = typer.Option(
        None, "--fetch", help="aws: fetch live list prices (Price List API, boto3) for --instance in --region."
    ),
    out: Path | None = typer.Option(None, "--out", help="With --fetch: the offer file to write."),
) -> None:
    """List prices, honest about billing units: the instance is billed whole; per-accelerator-hour is derived."""
    from accelpilot.catalog import load_catalog, parse_pricing
    from accelpilot.catalog.table import price_table

    if pricing:
        parse_pricing(pricing)  # validate early, with "did you mean"
    fetched: Path | None = None
    if fetch is not None:
        path = _fetch(fetch, instance, region, out)
        fetched = path
        catalog = [*(catalog or []), path]
        instance = None  # a comma-separated list here; the rows are picked by origin below
    cat = load_catalog(catalog or [])
    rows = price_table(cat, accelerator=accelerator, pricing=pricing, instance=instance, region=region)
    if fetched is not None:  # only what was just fetched (it overrides bundled rows of the same key)
        rows = [r for r in rows if r["origin"] == str(fetched)]
    if as_json:
        print_json(rows)
        return
    # rich here, not at the top: every command imports this module to register it (issue 10's speed)
    from rich.table import Table

    from accelpilot.termtext import cell

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
