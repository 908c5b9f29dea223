"""The report as Markdown: the same sections as the HTML, charts as small tables, numbered sources.

Every string that comes from a file (names, paths, commands, messages) reaches the Markdown through ``esc``,
so a name like ``<script>``, ``a|b``, a backtick or a newline reads as text in any renderer: it can neither end
a table cell, a code span or a paragraph nor inject HTML.
"""

from __future__ import annotations

import re

from accelpilot.decide.gates import QUESTIONS
from accelpilot.figures import FigureRef, fmt_number
from accelpilot.report.fmt import Footnotes, fmt_with_unit, kind_label
from accelpilot.report.model import Chart, Report
from accelpilot.termtext import _CONTROL as _TERM_CONTROL

_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_{}[]()#+!|~"})
# C0 and C1 controls, DEL, the Unicode line/paragraph separators and the bidirectional overrides that reorder a
# line: shown as visible escapes, never raw. The same set as the terminal's (``termtext``): one list of controls.
_CONTROL = _TERM_CONTROL
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_BLOCK_START = re.compile(r"^(\s*)(-|\d{1,9}[.)])(?=\s|$)")  # a list marker needs a space after it


def _visible_controls(text: str) -> str:
    def show(m: re.Match[str]) -> str:
        c = m.group()
        return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}")

    return _CONTROL.sub(show, text)


def esc(s: object, *, code: bool = False) -> str:
    """The one escaping function for user text in Markdown.

    Newlines and other control characters become visible escapes (``\\n``), so no string can end a table row,
    a list item or a code span. Plain text (the default) also escapes HTML (``&``, ``<``, ``>``) and Markdown's
    inline syntax, pipes and backticks included. ``code=True`` returns a whole code span for commands and paths
    outside tables: its fence is longer than any run of backticks inside, and a code span shows HTML as text.
    """
    text = _visible_controls(str(s))
    if code:
        fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
        pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) else ""
        return f"{fence}{pad}{text}{pad}{fence}"
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").translate(_MD_SPECIAL)
    # A leading "- " or "1. " would start a list if the text began a line ("19.00" and "-5" would not).
    return _BLOCK_START.sub(lambda m: m.group(1) + m.group(2)[:-1] + "\\" + m.group(2)[-1], text)


class _Md:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.notes = Footnotes()

    def num(self, f: FigureRef | None) -> str:
        if f is None:
            return "—"
        n = self.notes.ref(f)
        return f"{esc(fmt_with_unit(f))} *{kind_label(f.kind)}* [{n}]"

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def table(self, head: list[str], rows: list[list[str]]) -> None:
        self.add("| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|")
        for row in rows:
            self.add("| " + " | ".join(row) + " |")
        self.add("")


def _chart_table(md: _Md, c: Chart, max_rows: int = 12) -> None:
    md.add(f"**{esc(c.title)}** ({esc(c.note)})", "")
    if c.type == "bar":
        md.table(["option", esc(c.y_label)], [[esc(s.name), fmt_number(s.y[0] if s.y else None, 2)] for s in c.series])
        return
    if not c.series:
        return
    # rows keyed by the x value, so series measured at different x (two sweeps of different loads) stay in their rows
    xs = sorted({x for s in c.series for x in s.x})
    step = max(1, len(xs) // max_rows)
    idx = list(range(0, len(xs), step))
    if idx[-1] != len(xs) - 1:
        idx.append(len(xs) - 1)
    head = [esc(c.x_label)] + [esc(s.name) for s in c.series]
    at = [dict(zip(s.x, s.y, strict=False)) for s in c.series]
    rows = []
    for i in idx:
        row = [fmt_number(xs[i])]
        for ys in at:
            row.append(fmt_number(ys[xs[i]], 2) if xs[i] in ys else "—")
        rows.append(row)
    md.table(head, rows)


def _capacity_md(md: _Md, r: Report) -> None:
    """Per option and region: zones offered, quota headroom, capacity blocks found, spot score."""
    if not r.decision.capacity:
        return
    md.add("## Capacity from the AWS account", "")
    rows = []
    for c in r.decision.capacity:
        if not c.regions:
            rows.append([esc(c.option), esc(c.status), "", esc(c.reason), "", "", "", ""])
        for rc in c.regions:
            # Region, zone and spot strings come from evidence files (issue 28: a zone named "# x" or
            # "<img onerror=...>" reached report.md raw): every one through ``esc``.
            rows.append(
                [
                    f"{esc(c.option)} ({esc(c.instance_type)}, {esc(c.pricing)})",
                    esc(c.status),
                    esc(rc.region),
                    ", ".join(esc(z) for z in rc.zones_offered) or "—",
                    str(rc.vcpus_needed) if rc.vcpus_needed is not None else "—",
                    f"{rc.quota.value} ({esc(rc.quota_name)})" if rc.quota else "—",
                    "; ".join(esc(b) for b in rc.blocks) or "—",
                    "; ".join(esc(x) for x in rc.spot_scores) or "—",
                ]
            )
    md.table(
        ["option", "status", "region", "zones offered", "vCPUs needed", "quota (vCPUs)", "capacity blocks", "spot"],
        rows,
    )
    for c in r.decision.capacity:
        md.add(f"- {esc(c.option)}: {esc(c.status)}: {esc(c.reason)}")
    md.add("")


def render_md(report: Report) -> str:
    r = report
    md = _Md()
    d = r.decision
    md.add(f"# {esc(r.title)}", "")
    md.add(
        f"Scenario **{esc(r.scenario.name)}**"
        + (f" ({esc(r.scenario.path, code=True)})" if r.scenario.path else "")
        + f" · {r.scenario.workload} workload · target {esc(d.target)} · generated {r.generated} · "
        f"accelpilot {r.accelpilot_version}",
        "",
    )
    if r.scenario.description:
        md.add(esc(r.scenario.description), "")
    md.add(
        "Each number is followed by its provenance (*measured*, *listed*, *derived*, *assumed*, *vendor claim*) and "
        "a [n] pointing at its source under *Sources of the numbers*.",
        "",
    )
    md.add(
        f"## Verdict: {esc(d.headline)}",
        "",
        f"`{d.verdict}`"
        + (f" · GPU baseline: {esc(d.baseline)}" if d.baseline else "")
        + f" · lifetime {d.lifetime_months} months"
        + ("" if d.lifetime_answered else " (scenario horizon)"),
        "",
    )
    md.add("### Reasons", "")
    questions = {k: q for k, (_, q) in QUESTIONS.items()}
    for reason in d.reasons:
        ev = reason.evidence
        bits = [f"{esc(f.label)} {md.num(f)}" for f in ev.figures]
        if ev.finding_ids:
            bits.append("findings " + ", ".join(esc(x) for x in ev.finding_ids))
        if ev.results:
            bits.append("results " + ", ".join(esc(x) for x in ev.results))
        md.add(f"- **[{reason.status}] {esc(questions.get(reason.gate, reason.gate))}**: {esc(reason.text)}")
        if bits:
            md.add(f"  - evidence: {'; '.join(bits)}")
    md.add("")
    if d.missing:
        md.add("### What is missing", "")
        for m in d.missing:
            md.add(f"- **{esc(m.what)}**: {esc(m.fix)}")
        md.add("")
    md.add("## Decision gates", "")
    md.table(
        ["group", "gate", "status", "why"],
        [
            [
                "Trainium (all)" if g.group == "trainium_all" else "portable GPU (any)",
                esc(g.question),
                g.status,
                esc(g.reason)
                + "".join(f" (caveat: {esc(c)})" for c in g.caveats)
                + "".join(f"<br>account evidence: {esc(ln)}" for ln in g.evidence.lines),
            ]
            for g in d.gates
        ],
    )
    _capacity_md(md, r)
    md.add("## The bill per option", "")
    for o in r.options:
        if o.pricing == "measured_spend":
            md.add(
                f"**Current spend: {esc(o.name)}** — {md.num(o.monthly_cost)} per month, measured: "
                f"{esc(o.monthly_cost.source)} ({esc(o.monthly_cost.note)})",
                "",
            )
    if r.scenario.workload == "training":
        head = [
            "option",
            "pricing",
            "instance",
            "hours/run",
            "cost/run",
            "accepted",
            "cost/accepted run",
            "porting",
            "maint./month",
            "36 months",
        ]
        rows = [
            [
                esc(o.name) + (" (baseline)" if o.is_baseline else ""),
                o.pricing,
                esc(o.instance or "—"),
                md.num(o.hours_per_run),
                md.num(o.cost_per_run),
                md.num(o.accepted_share),
                md.num(o.cost_per_accepted_run),
                md.num(o.one_off_cost),
                md.num(o.maintenance_per_month),
                md.num(o.total_36_months),
            ]
            for o in r.options
        ]
    else:
        head = [
            "option",
            "pricing",
            "instance",
            "accepted",
            "per 1k accepted requests",
            "per 1M accepted tokens",
            "monthly",
            "porting",
            "maint./month",
            "36 months",
        ]
        rows = [
            [
                esc(o.name) + (" (baseline)" if o.is_baseline else ""),
                o.pricing,
                esc(o.instance or "—"),
                md.num(o.accepted_share),
                md.num(o.cost_per_1k_accepted_requests),
                md.num(o.cost_per_million_accepted_tokens),
                md.num(o.monthly_cost),
                md.num(o.one_off_cost),
                md.num(o.maintenance_per_month),
                md.num(o.total_36_months),
            ]
            for o in r.options
        ]
    md.table(head, rows)
    if r.comparisons:
        md.table(
            [
                "candidate",
                "baseline",
                "saving/accepted run",
                "saving %",
                "saving/month",
                "porting",
                "break-even run",
                "break-even months",
            ],
            [
                [
                    esc(c.candidate),
                    esc(c.baseline),
                    md.num(c.saving_per_run),
                    "—" if c.saving_percent is None else f"{c.saving_percent:.1f}%",
                    md.num(c.saving_per_month),
                    md.num(c.one_off_cost),
                    "never" if c.break_even_runs is None else str(c.break_even_runs),
                    "never" if c.break_even_months is None else f"{c.break_even_months:.1f}",
                ]
                for c in r.comparisons
            ],
        )
    for o in r.options:
        md.add(f"### Line items: {esc(o.name)}", "")
        md.table(
            ["item", "per", "amount", "rests on"],
            [
                [
                    esc(li.name),
                    li.per,
                    md.num(li.figure),
                    "; ".join(f"{esc(lf.label or 'input')} {md.num(lf)}" for lf in li.figure.leaves),
                ]
                for li in o.line_items
            ],
        )
        for n in o.notes:
            md.add(f"- {esc(n)}")
        if o.notes:
            md.add("")
    md.add("## Payback, 36-month cost and sensitivity", "", "(Charts are drawn in report.html; the data follows.)", "")
    for c in r.charts:
        _chart_table(md, c)
    md.add("## Exit test: running the workload elsewhere", "")
    md.table(
        ["leaving", "destination", "engineer-days", "weeks", "engineering cost", "egress fee", "total", "findings"],
        [
            [
                esc(e.option),
                esc(e.destination),
                md.num(e.engineer_days),
                md.num(e.weeks),
                md.num(e.cost),
                md.num(e.egress_fee),
                md.num(e.total),
                ", ".join(f"{v} × {esc(k)}" for k, v in e.by_effort.items())
                or ("none relevant" if e.from_log else "no log"),
            ]
            for e in d.exit_tests
        ],
    )
    md.add("## Measured pilots", "")
    if not r.pilots:
        md.add("No pilot results were given.", "")
    for p in r.pilots:
        dev = p.platform.get("device_name") or p.platform.get("device")
        md.add(f"### {p.kind.capitalize()} pilot on {esc(dev)}: workload {esc(p.workload)}", "")
        status = {True: "reached its target", False: "did not reach its target", None: "no quality target"}[p.accepted]
        if p.errors:
            status = "failed (errors below)"
        use = (
            ("prices: " + ", ".join(esc(x) for x in p.priced_by))
            if p.priced_by
            else ("shown beside the bill" if p.shown_beside else "not priced by any option")
        )
        md.add(f"{esc(p.path, code=True)} · {p.created} · {status} · {use}", "")
        if p.throughput_basis:
            md.add(f"Throughput: {esc(p.throughput_basis)}", "")
        if p.command:
            md.add(f"Reproduce: {esc(p.command, code=True)}", "")
        if p.errors:
            md.add(f"**This pilot recorded {len(p.errors)} error(s); no run of it is priced as accepted:**", "")
            md.add(*(f"- {esc(e)}" for e in p.errors), "")
        md.table(["figure", "key", "value"], [[esc(f.figure.label), esc(f.key), md.num(f.figure)] for f in p.figures])
        if p.samples:
            md.table(
                ["raw samples", "n", "p50", "p90", "p99"],
                [[esc(s.name), str(s.n), fmt_number(s.p50), fmt_number(s.p90), fmt_number(s.p99)] for s in p.samples],
            )
        if p.sweep_rows:
            md.table(
                ["load", "req/s", "goodput req/s", "goodput share", "TTFT p99 ms", "E2E p99 ms", "errors", "requests"],
                [[esc(c) for c in row] for row in p.sweep_rows],
            )
        if p.operating_point:
            md.add(esc(p.operating_point), "")
        if p.parity_rows:
            md.table(["output parity", "value"], [[esc(c) for c in row] for row in p.parity_rows])
    md.add("## Portability log", "")
    if r.portability is None:
        md.add("No portability log was given (`accelpilot scan PATH --json`, then `--scan-log`).", "")
    else:
        lg = r.portability
        items = bool(lg.findings) and lg.findings[0].id.startswith("I")
        md.add(f"{len(lg.findings)} {'porting item(s)' if items else 'finding(s)'} in {lg.files_scanned} file(s).", "")
        per_rc = lg.items_by_record_category()
        if per_rc:  # items, not lines: what effort and the gates count
            md.add(" · ".join(f"{esc(k)}: {n} item(s) ({lines} lines)" for k, n, lines in per_rc), "")
        md.table(
            ["id", "severity", "rule", "record category", "dimension", "effort", "where", "what"],
            [
                [
                    esc(f.id),
                    esc(f.severity),
                    esc(f.rule),
                    esc(f.record_category),
                    esc(f.dimension),
                    esc(f.effort),
                    esc(f.where),
                    esc(f.message + (f" [{f.reason}]" if f.reason else "")),
                ]
                for f in lg.findings
            ],
        )
        folded = [f for f in lg.findings if f.lines]
        if folded:  # each porting item's lines, under its id
            md.add("Lines under each item:", "")
            for f in folded:
                md.add(f"- {f.id}: " + "; ".join(esc(ln) for ln in f.lines))
            md.add("")
    md.add("## Vendor claims, shown apart", "", "Displayed for context; never used in any figure above.", "")
    md.table(
        ["claim", "vendor", "headline figure", "source"],
        [
            [esc(c.text), esc(c.vendor), "—" if c.value is None else fmt_number(c.value), f"{esc(c.source)}, {c.as_of}"]
            for c in r.vendor_claims
        ],
    )
    md.add("## Assumptions and notes", "")
    for a in [*r.assumptions, *r.notes]:
        md.add(f"- {esc(a)}")
    md.add("", "## Sources of the numbers", "")
    for i, s in enumerate(md.notes.items, start=1):
        md.add(f"{i}. {esc(s)}")
    md.add("")
    return "\n".join(md.lines)
