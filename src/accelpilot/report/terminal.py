"""A short terminal summary with rich: the verdict, its reasons, the bill's headline numbers, where the files are.

Every string from a file goes through ``termtext.cell``: control characters visible, markup escaped.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from accelpilot.report.fmt import fmt_with_unit, kind_label
from accelpilot.report.model import Report
from accelpilot.termtext import cell

STYLE = {
    "qualify_trainium": "green",
    "prefer_portable_gpu": "blue",
    "keep_working_deployment": "magenta",
    "not_enough_evidence": "yellow",
}


def print_summary(report: Report, console: Console, paths: dict[str, Path] | None = None) -> None:
    d = report.decision
    lines = [f"[bold]{cell(d.headline)}[/bold]  ({d.verdict})"]
    for reason in d.reasons[:8]:
        lines.append(f"• {cell('[' + reason.status + ']')} {cell(reason.gate)}: {cell(reason.text)}")
    if len(d.reasons) > 8:
        lines.append(f"… and {len(d.reasons) - 8} more in the report")
    console.print(Panel("\n".join(lines), title=cell(report.scenario.name), border_style=STYLE[d.verdict]))
    t = Table(title=f"{report.scenario.per_output_name} ({report.scenario.currency})", show_lines=False)
    t.add_column("option")
    t.add_column(report.scenario.per_output_name, justify="right")
    t.add_column("provenance")
    t.add_column("36 months", justify="right")
    for o in report.options:
        f = report.per_output(o)
        t.add_row(
            cell(o.name) + (" (baseline)" if o.is_baseline else ""),
            cell(fmt_with_unit(f)) if f else "—",
            kind_label(f.kind) + (", measured hours" if o.measured else "") if f else "",
            cell(fmt_with_unit(o.total_36_months)),
        )
    console.print(t)
    if report.pilots:
        console.print(
            "Measured pilots: "
            + ", ".join(
                cell(f"{p.kind} on {p.platform.get('device_name') or p.platform.get('device')}") for p in report.pilots
            )
        )
    if paths:
        console.print("Report: " + ", ".join(cell(str(p)) for p in paths.values()))
