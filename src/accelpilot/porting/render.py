"""Rendering of a PortabilityLog: rich terminal tables and Markdown, grouped by the seed's five record
categories and four portability dimensions. (JSON is ``PortabilityLog.to_json``.)"""

from __future__ import annotations

from collections import defaultdict

from rich.console import Console
from rich.table import Table

from accelpilot.porting.effort import FAMILY_NOTE, REVALIDATION_DAYS
from accelpilot.porting.log import Finding, Item, ItemLine, OpInventory, PortabilityLog
from accelpilot.porting.rules import DIMENSIONS, RECORD_CATEGORIES, SEVERITY_RANK
from accelpilot.termtext import cell as _cell
from accelpilot.termtext import visible as plain

_LINES_SHOWN = 3  # lines folded under an item in the terminal (Markdown and JSON list them all)
_SEV_STYLE = {"blocking": "bold red", "warning": "yellow", "info": "cyan"}


_CAPTURE = {"torch.export": "torch.export", "dispatch-trace": "fallback trace"}
_OP_SET_NAME = {"core_aten": "core ATen", "aten": "ATen (as traced)"}


def inventory_title(inv: OpInventory) -> str:
    """What the inventory's names are and how they were captured: "core ATen operators (captured by torch.export)"."""
    names = f"{_OP_SET_NAME.get(inv.op_set, inv.op_set)} operators" if inv.op_set else "ATen operators"
    if inv.method == "failed":
        return f"{names} (capture failed)"
    return f"{names} (captured by {_CAPTURE.get(inv.method, inv.method)})"


def _grouped(log: PortabilityLog) -> dict[str, list[Finding]]:
    groups: dict[str, list[Finding]] = defaultdict(list)
    for f in log.findings:
        groups[f.record_category].append(f)
    for fs in groups.values():
        fs.sort(key=lambda f: (-SEVERITY_RANK.get(f.severity, 0), f.file or "", f.line or 0))
    return groups


def _where(f: Finding) -> str:
    if not f.file:
        return "(model)" if f.source == "model" else "-"
    file = f"{f.file} cell {f.cell}" if f.cell is not None else f.file
    return f"{file}:{f.line}" if f.line else file


def _line_where(ln: ItemLine) -> str:
    if not ln.file:
        return "(model)"
    file = f"{ln.file} cell {ln.cell}" if ln.cell is not None else ln.file
    return f"{file}:{ln.line}" if ln.line else file


def _line_reason(ln: ItemLine, item: Item) -> str:
    """A line reached otherwise than its item (an optional import under a main-path kernel) says how."""
    return f" [{ln.reason}]" if ln.reason and ln.reason != item.reason else ""


def _not_porting(log: PortabilityLog) -> str:
    np = log.summary.not_porting
    if not np:
        return ""
    return "not porting work (never blocking): " + ", ".join(f"{n} {k}" for k, n in np.items())


def _headline(log: PortabilityLog) -> str:
    s = log.summary
    sev = ", ".join(f"{s.items_by_severity.get(k, 0)} {k}" for k in ("blocking", "warning", "info"))
    eff = ", ".join(f"{s.items_by_effort.get(k, 0)} {k}" for k in ("weeks", "days", "hours"))
    parts = [f"{s.items} porting items ({sev}; effort {eff}) from {s.total} findings in {log.files_scanned} files"]
    if s.items:
        parts.append(
            f"effort {_days(s.days_low, s.days_high)} engineer-days (blocking items "
            f"{_days(s.blocking_days_low, s.blocking_days_high)}), assuming {log.effort_model.neuron_stack}"
        )
    if s.not_porting:
        parts.append(f"{sum(s.not_porting.values())} not porting work")
    if log.skipped:
        parts.append(f"{len(log.skipped)} skipped")
    if log.suppressed:
        parts.append(f"{log.suppressed} suppressed")
    if log.baseline:
        parts.append(f"new since baseline {log.baseline} ({log.baseline_known} already known)")
    if log.targets:
        parts.append("targets: " + ", ".join(log.targets))
    return "; ".join(parts)


def _days(low: float, high: float) -> str:
    return f"{low:g}-{high:g}"


def _effort(item: Item) -> str:
    era = "; XLA-era hazard" if item.era == "xla" else ""
    return f"{item.effort}, {_days(item.days_low, item.days_high)} d{era}"


def render_table(log: PortabilityLog, console: Console, max_rows: int = 40) -> None:
    """A summary matrix (record category x dimension), then one table per record category."""
    console.print(f"[bold]Portability log[/bold] {_cell(log.root or '')}: {_cell(_headline(log))}")
    matrix = Table(title="Findings by record category and portability dimension", show_lines=False)
    matrix.add_column("record category")
    for d in DIMENSIONS:
        matrix.add_column(d, justify="right")
    matrix.add_column("total", justify="right")
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for f in log.findings:
        counts[(f.record_category, f.dimension)] += 1
    for rc in RECORD_CATEGORIES:
        row = [str(counts[(rc, d)] or "") for d in DIMENSIONS]
        matrix.add_row(rc, *row, str(log.summary.by_record_category.get(rc, 0)))
    console.print(matrix)
    by_rc: dict[str, list[Item]] = defaultdict(list)
    for item in log.items:
        by_rc[item.record_category].append(item)
    for rc in RECORD_CATEGORIES:
        items = by_rc.get(rc, [])
        if not items:
            continue
        n_lines = sum(len(i.lines) for i in items)
        t = Table(title=f"{rc} ({len(items)} items, {n_lines} lines)", title_justify="left", expand=False)
        for col in ("id", "severity", "item", "effort", "lines (where: what)"):
            t.add_column(col, overflow="fold")
        shown = items if max_rows <= 0 else items[:max_rows]
        for item in shown:
            folded = [f"{_line_where(ln)}: {ln.message}{_line_reason(ln, item)}" for ln in item.lines[:_LINES_SHOWN]]
            if len(item.lines) > _LINES_SHOWN:
                folded.append(f"... {len(item.lines) - _LINES_SHOWN} more lines")
            title = item.title + (f" [{item.reason}]" if item.reason else "")
            t.add_row(
                item.id,
                f"[{_SEV_STYLE.get(item.severity, '')}]{item.severity}[/]",
                _cell(title),
                _effort(item),
                "\n".join(_cell(x) for x in folded),
            )
        console.print(t)
        if len(items) > len(shown):
            console.print(f"  ... {len(items) - len(shown)} more (--max-rows 0, --format md or --format json for all)")
    if log.summary.not_porting:
        console.print(_not_porting(log))
    if log.inventory is not None:
        inv = log.inventory
        console.print(
            f"[bold]Op inventory[/bold] {_cell(inv.model)}: {len(inv.ops)} distinct {inventory_title(inv)}, "
            f"{sum(o.count for o in inv.ops)} calls; dtypes {', '.join(inv.dtypes) or '-'}; "
            f"graph breaks {len(inv.graph_breaks)}"
            + (
                f"; outside core ATen: {_cell(', '.join(o.op for o in inv.ops if o.core is False))}"
                if any(o.core is False for o in inv.ops)
                else ""
            )
            + (
                f"; support {inv.support_percentage:.1f}% vs {_cell(inv.supported_ops_file or '')}"
                f" ({_OP_SET_NAME.get(inv.supported_ops_op_set or '', inv.supported_ops_op_set)})"
                if inv.support_percentage is not None
                else ""
            )
        )
    if log.skipped:
        reasons: dict[str, int] = defaultdict(int)
        for s in log.skipped:
            reasons[s.reason.split(":")[0]] += 1
        console.print("skipped: " + "; ".join(f"{n} {_cell(r)}" for r, n in sorted(reasons.items())))
    if not log.findings:
        console.print("[green]No findings.[/green]")


def _md(text: str) -> str:
    return plain(text.replace("|", "\\|").replace("\n", " "))


def render_markdown(log: PortabilityLog) -> str:
    """The whole log as Markdown: summary, one section per record category, rule explanations, inventory."""
    out = [f"# Portability log{': ' + _md(log.root) if log.root else ''}", "", _md(_headline(log)), ""]
    out += [
        "| record category | " + " | ".join(DIMENSIONS) + " | total |",
        "| --- | " + " | ".join("---:" for _ in DIMENSIONS) + " | ---: |",
    ]
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for f in log.findings:
        counts[(f.record_category, f.dimension)] += 1
    for rc in RECORD_CATEGORIES:
        out.append(
            f"| {rc} | "
            + " | ".join(str(counts[(rc, d)]) for d in DIMENSIONS)
            + f" | {log.summary.by_record_category.get(rc, 0)} |"
        )
    why: dict[str, str] = {}
    by_rc: dict[str, list[Item]] = defaultdict(list)
    for item in log.items:
        by_rc[item.record_category].append(item)
    for rc in RECORD_CATEGORIES:
        items = by_rc.get(rc, [])
        if not items:
            continue
        out += ["", f"## {rc} ({len(items)} items)", ""]
        for item in items:
            why.setdefault(item.rule, item.why)
            reason = f" ({_md(item.reason)})" if item.reason else ""
            out.append(
                f"- **{item.id}** {item.severity}, {_effort(item)}: `{item.rule}` {_md(item.title)}{reason}; "
                f"{item.dimension}; {_md(item.message)}"
            )
            for ln in item.lines:
                out.append(f"  - `{_md(_line_where(ln))}`: {_md(ln.message + _line_reason(ln, item))}")
    lines_apart = [f for f in log.findings if not f.porting]
    if lines_apart:
        out += ["", "## Not porting work (never blocking)", ""]
        out += [f"- `{_md(_where(f))}` ({f.context}): {_md(f.message)}" for f in lines_apart]
    if log.items:
        m, s = log.effort_model, log.summary
        out += [
            "",
            "## Effort model",
            "",
            f"Neuron stack assumed: {_md(m.neuron_stack)}.",
            "",
            _md(m.xla_era) + ".",
            "",
        ]
        out.append(
            f"Total: {_days(s.days_low, s.days_high)} engineer-days over {s.items} items; blocking items "
            f"{_days(s.blocking_days_low, s.blocking_days_high)}. Per item of each rule:"
        )
        out.append("")
        out += [
            f"- `{r.rule}`: {_days(r.days_low, r.days_high)} d, assuming {_md(r.assumption)} ({_md(r.basis)})"
            for r in m.rows
        ]
        mid = REVALIDATION_DAYS + (s.days_low + s.days_high) / 2
        out += [
            f"- kernel families: the row of their first kernel, then {_md(FAMILY_NOTE)}",
            "",
            f"Exit test from these (as `accelpilot decide` builds it): {REVALIDATION_DAYS:g} d re-validation + the "
            f"midpoint of {_days(s.days_low, s.days_high)} = {mid:.1f} engineer-days.",
        ]
    if why:
        out += ["", "## Why these matter", ""]
        out += [f"- `{rule}`: {_md(text)}" for rule, text in sorted(why.items())]
    if log.inventory is not None:
        inv = log.inventory
        out += ["", f"## Op inventory: `{_md(inv.model)}`: {inventory_title(inv)}", ""]
        if inv.export_error:
            out.append(f"torch.export failed: {_md(inv.export_error)}")
            out.append("")
        out += [
            f"dtypes: {', '.join(inv.dtypes) or '-'}; data-dependent ops: "
            f"{', '.join(inv.data_dependent_ops) or 'none'}; graph breaks: {len(inv.graph_breaks)}",
            "",
        ]
        if inv.supported_ops_file:
            op_set = _OP_SET_NAME.get(inv.supported_ops_op_set or "", inv.supported_ops_op_set)
            out += [f"supported-operator list: {_md(inv.supported_ops_file)} ({op_set})", ""]
        out += [f"- {_md(n)}" for n in inv.notes] + ([""] if inv.notes else [])
        out += ["| op | count | supported | first call site |", "| --- | ---: | --- | --- |"]
        for o in inv.ops:
            sup = "-" if o.supported is None else ("yes" if o.supported else "**no**")
            outside = " (not core ATen)" if o.core is False else ""
            out.append(f"| `{o.op}`{outside} | {o.count} | {sup} | {_md(o.call_site or '')} |")
        for br in inv.graph_breaks:
            out.append(f"- graph break at {br.location or '?'}: {_md(br.reason)}")
    if log.skipped:
        out += ["", "## Skipped", ""] + [f"- `{_md(s.path)}`: {_md(s.reason)}" for s in log.skipped]
    return "\n".join(out) + "\n"
