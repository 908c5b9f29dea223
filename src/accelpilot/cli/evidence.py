"""`accelpilot evidence import FILE...` and `evidence collect`: capacity and quota evidence from an AWS account."""

from __future__ import annotations

from pathlib import Path

import typer

from accelpilot.cli.app import app
from accelpilot.cli.common import console, err_console, print_json

evidence_app = typer.Typer(
    help="Capacity, quota, capacity-block and spot evidence from your AWS account (AWS CLI JSON).",
    no_args_is_help=True,
)
app.add_typer(evidence_app, name="evidence")


def _render(ev: object) -> None:
    # rich's tables here, not at the top: every command imports this module to register it (issue 10's speed)
    from rich.table import Table

    from accelpilot.evidence.model import EvidenceSet
    from accelpilot.evidence.quotas import kind_of
    from accelpilot.termtext import cell

    assert isinstance(ev, EvidenceSet)
    files = Table(title="evidence files")
    for col in ("file", "shape", "items", "regions", "as of", "command"):
        files.add_column(col, overflow="fold")
    for f in ev.files:
        files.add_row(
            cell(f.path) + (" (cut short: NextToken)" if f.truncated else ""),
            f.shape,
            str(f.items),
            cell(", ".join(f.regions)) or "not named",
            str(f.as_of),
            f.command,
        )
    console.print(files)
    if ev.offerings:
        t = Table(title="instance types offered")
        for col in ("instance", "region", "zones"):
            t.add_column(col)
        seen: dict[tuple[str, str], list[str]] = {}
        for o in ev.offerings:
            seen.setdefault((o.instance_type, o.region or "?"), []).append(o.location)
        for (it, region), zones in sorted(seen.items()):
            t.add_row(cell(it), cell(region), cell(", ".join(sorted(zones))))
        console.print(t)
    if ev.blocks:
        t = Table(title="capacity block offerings")
        for col in ("offering", "instance", "count", "zone", "start (UTC)", "hours", "upfront fee", "per instance-h"):
            t.add_column(col, justify="right" if col in ("count", "hours", "upfront fee", "per instance-h") else "left")
        for b in ev.blocks:
            per = b.per_instance_hour()
            t.add_row(
                cell(b.offering_id),
                cell(b.instance_type),
                str(b.instance_count),
                cell(b.zone),
                f"{b.start:%Y-%m-%d %H:%M}",
                f"{b.duration_hours}",
                f"{b.upfront_fee} {b.currency}",
                f"{per.value:.2f} {per.unit} (derived)",
            )
        console.print(t)
    running = [q for q in ev.quotas if kind_of(q)]
    if running:
        t = Table(title=f"EC2 running-instance quotas (vCPUs; {len(ev.quotas) - len(running)} other quotas not shown)")
        for col in ("region", "code", "name", "vCPUs"):
            t.add_column(col, justify="right" if col == "vCPUs" else "left")
        for q in running:
            name = cell(q.quota_name) + (" (AWS default, not this account's)" if q.default else "")
            t.add_row(cell(q.region or "?"), cell(q.quota_code), name, f"{q.value}")
        console.print(t)
    if ev.scores:
        t = Table(title="spot placement scores (1-10, advisory)")
        for col in ("region", "zone id", "instance types", "score"):
            t.add_column(col)
        for s in ev.scores:
            t.add_row(
                cell(s.region), cell(s.zone_id or ""), cell(", ".join(s.instance_types)) or "(not named)", str(s.score)
            )
        console.print(t)
    if ev.running:
        t = Table(title="running instances (their vCPUs count against the quota)")
        for col in ("instance", "type", "zone", "vCPUs", "spot"):
            t.add_column(col)
        for r in ev.running:
            t.add_row(
                cell(r.instance_id), cell(r.instance_type), cell(r.zone), str(r.vcpus or "?"), "yes" if r.spot else ""
            )
        console.print(t)
    if ev.reservations:
        t = Table(title="capacity held (capacity reservations, bought blocks included)")
        for col in ("reservation", "kind", "state", "type", "zone", "free / total", "end (UTC)"):
            t.add_column(col)
        for h in ev.reservations:
            end = f"{h.end:%Y-%m-%d %H:%M}" if h.end else ""
            t.add_row(
                cell(h.reservation_id), cell(h.kind), cell(h.state), cell(h.instance_type), cell(h.zone),
                f"{h.available} / {h.total}", end,
            )  # fmt: skip
        console.print(t)
    for a in ev.advisors:
        rows = sum(len(v) for v in a.linux.values())
        console.print(
            f"Spot Instance Advisor {cell(a.file)} ({a.as_of}): {rows} Linux rows in {len(a.linux)} region(s); "
            "bands " + ", ".join(f"{cell(b.label)} (up to {b.max}%)" for b in a.bands)
        )


@evidence_app.command("import")
def evidence_import(
    files: list[Path] = typer.Argument(..., help="AWS CLI JSON outputs (see `accelpilot evidence --help`)."),
    as_json: bool = typer.Option(False, "--json", help="Print what was read as JSON."),
) -> None:
    """Read describe-instance-type-offerings, describe-capacity-block-offerings, list-service-quotas /
    get-service-quota and get-spot-placement-scores outputs; every figure is measured, sourced to its file."""
    from accelpilot.evidence import read_files

    ev = read_files(files)
    if as_json:
        print_json(ev.model_dump(mode="json"))
    else:
        _render(ev)


@evidence_app.command("collect")
def evidence_collect(
    region: str = typer.Option(..., "--region", help="AWS region code, e.g. us-east-1."),
    instances: str = typer.Option(
        ..., "--instances", help="Comma-separated instance types, e.g. trn1.32xlarge,p5.48xlarge."
    ),
    out: Path = typer.Option(Path("evidence"), "--out", help="Folder for the JSON files (the AWS CLI's shapes)."),
    count: int = typer.Option(1, "--count", min=1, help="Instances wanted (capacity blocks, spot scores)."),
    block_hours: int = typer.Option(24, "--block-hours", min=1, help="Capacity block duration to ask for, hours."),
    profile: str | None = typer.Option(None, "--profile", help="AWS profile (default: the usual credential chain)."),
    as_json: bool = typer.Option(False, "--json", help="Print what was collected as JSON."),
) -> None:
    """Read the same four sources live with your AWS credentials (boto3) and write them as files to import."""
    from accelpilot.evidence.collect import collect, make_clients

    names = [s.strip() for s in instances.split(",") if s.strip()]
    with err_console.status("collecting from AWS") as status:
        paths, ev = collect(
            region,
            names,
            out,
            clients=make_clients(region, profile),
            block_hours=block_hours,
            instance_count=count,
            progress=lambda m: status.update(f"AWS: {m}"),
        )
    if as_json:
        print_json({"files": [str(p) for p in paths], "evidence": ev.model_dump(mode="json")})
        return
    _render(ev)
    console.print(f"wrote {len(paths)} files to {out}: add them to the scenario's [evidence] files")
