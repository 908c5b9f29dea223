"""`accelpilot spend import CUR...`: what the team already pays, from a Cost and Usage Report 2.0 export."""

from __future__ import annotations

from pathlib import Path

import typer

from accelpilot.cli.app import app
from accelpilot.cli.common import console, err_console, print_json

spend_app = typer.Typer(help="Current spend from an AWS Cost and Usage Report 2.0 export.", no_args_is_help=True)
app.add_typer(spend_app, name="spend")


@spend_app.command("import")
def spend_import(
    files: list[Path] = typer.Argument(..., help="CUR 2.0 export files or folders (Parquet or CSV, gzip or not)."),
    period: str | None = typer.Option(None, "--period", help="YYYY-MM or YYYY-MM..YYYY-MM (default: all months)."),
    tag: list[str] | None = typer.Option(None, "--tag", help="KEY=VALUE on resource_tags (e.g. user_team=ml)."),
    account: list[str] | None = typer.Option(None, "--account", help="Usage account id; repeatable."),
    instance_type: list[str] | None = typer.Option(None, "--instance-type", help="Only these instance types."),
    resources: bool = typer.Option(False, "--resources", help="Also list each resource's share of the month."),
    service: list[str] | None = typer.Option(
        None, "--service", help="line_item_product_code to read (default AmazonEC2); 'all' reads every service."
    ),
    as_baseline: Path | None = typer.Option(
        None, "--as-baseline", help='Write a "current deployment" option into this scenario TOML (created if new).'
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Per instance type and month: instance-hours, effective cost (on-demand, reservation and Savings Plan
    effective cost; credits and refunds), and the share of the month each resource ran."""
    # rich here, not at the top: every command imports this module to register it (issue 10's speed)
    from rich.table import Table

    from accelpilot.spend.baseline import baseline_option, write_baseline
    from accelpilot.spend.cur import summarise

    with err_console.status("scanning the CUR export with DuckDB"):
        summary, res = summarise(
            files,
            period=period,
            tags=tag or [],
            accounts=account or [],
            instance_types=instance_type or [],
            resources=resources,
            services=[] if service and "all" in service else (service or ["AmazonEC2"]),
        )
    option = None
    if as_baseline is not None:
        option = baseline_option(summary, instance_type or None)
        replaced = write_baseline(as_baseline, option)
    if as_json:
        data = summary.model_dump(mode="json")
        if resources:
            data["resources"] = [r.model_dump(mode="json") for r in res]
        if option is not None:
            data["baseline_option"] = {**option, "spend": {**option["spend"], "as_of": str(option["spend"]["as_of"])}}
        print_json(data)
        return
    cur = summary.currency
    t = Table(title=f"current spend, {summary.source}", caption=summary.currency_note or None)
    for col in (
        "month",
        "instance",
        "instance-h",
        "resources",
        "peak running",
        "mean share of month",
        f"usage {cur}",
        f"credits {cur}",
        f"effective {cur}",
    ):
        t.add_column(col, justify="left" if col in ("month", "instance") else "right")
    for r in summary.rows:
        t.add_row(
            r.month,
            r.instance_type,
            f"{r.instance_hours:,.1f}",
            str(r.resources),
            str(r.concurrent),
            f"{r.mean_share_of_month:.0%}",
            f"{r.usage_cost:,.2f}",
            f"{r.credits:,.2f}",
            f"{r.effective_cost:,.2f}",
        )
    console.print(t)
    if summary.unattributed:
        shown = ", ".join(f"{k} {v:,.2f}" for k, v in summary.unattributed.items())
        console.print(f"not attributed to an instance type (not in the table): {shown} {cur}")
    if summary.unused_commitment:
        shown = ", ".join(f"{k} {v:,.2f}" for k, v in summary.unused_commitment.items())
        console.print(f"commitment paid for and unused (included in the fees above): {shown} {cur}")
    for m, c in summary.partial_months.items():
        console.print(f"{m} is partial: the export covers {c:.0%} of it (a monthly average counts it as {c:.2f})")
    if resources and res:
        rt = Table(title="share of the month each resource ran")
        for col in ("month", "instance", "resource", "hours", "share"):
            rt.add_column(col, justify="right" if col in ("hours", "share") else "left")
        for rr in res:
            rt.add_row(
                rr.month, rr.instance_type, rr.resource_id, f"{rr.instance_hours:,.1f}", f"{rr.share_of_month:.0%}"
            )
        console.print(rt)
    if option is not None:
        verb = "replaced" if replaced else "added"
        console.print(
            f'{verb} option "{option["name"]}" in {as_baseline}: {option["spend"]["monthly_cost"]} {cur}/month '
            f"measured over {option['spend']['period']}"
        )
