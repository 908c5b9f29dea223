"""The portability log: summary counts, the op inventory, the log itself and the baseline diff.

Kept free of torch so a log can be read, diffed and rendered anywhere. A finding's ``fingerprint`` is
rule + file + the normalised source line (not the line number), so edits above a finding do not make it
"new" against a baseline.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from accelpilot.jsonfile import check_header, read_model
from accelpilot.porting.effort import NEURON_STACK, SPECIAL_ROWS, XLA_ERA_NOTE, row_for
from accelpilot.porting.findings import (
    FILE_WIDE,
    NOT_PORTING,
    Finding,
    Item,
    ItemLine,
    Skipped,
    context_of_path,
    generated_twin,
    host_side,
    normalise_snippet,
    promoted_folders,
)
from accelpilot.porting.items import SERVES, build_items
from accelpilot.porting.rules import DIMENSIONS, EFFORT_RANK, RECORD_CATEGORIES, SEVERITY_RANK

# The log module is where the rest of accelpilot reads findings from; the models and item grouping live in
# findings.py and items.py.
__all__ = [
    "FILE_WIDE",
    "NOT_PORTING",
    "SCHEMA_VERSION",
    "SERVES",
    "Finding",
    "GraphBreak",
    "Item",
    "ItemLine",
    "OpCount",
    "OpInventory",
    "PortabilityLog",
    "Skipped",
    "Summary",
    "build_items",
    "context_of_path",
    "generated_twin",
    "host_side",
    "load_log",
    "promoted_folders",
]

SCHEMA_VERSION = 1


class Summary(BaseModel):
    total: int = 0
    by_category: dict[str, int] = Field(default_factory=dict)
    by_record_category: dict[str, int] = Field(default_factory=dict)
    by_dimension: dict[str, int] = Field(default_factory=dict)
    by_severity: dict[str, int] = Field(default_factory=dict)
    by_rule: dict[str, int] = Field(default_factory=dict)
    # Porting items (what effort, the exit test and the blocking gate count) and the lines that are not porting work.
    items: int = 0
    items_by_severity: dict[str, int] = Field(default_factory=dict)
    items_by_effort: dict[str, int] = Field(default_factory=dict)
    items_by_record_category: dict[str, int] = Field(default_factory=dict)
    not_porting: dict[str, int] = Field(default_factory=dict)
    # The effort model's totals over the porting items (engineer-days, low-high), and those of the blocking items.
    days_low: float = 0.0
    days_high: float = 0.0
    blocking_days_low: float = 0.0
    blocking_days_high: float = 0.0

    @classmethod
    def of(cls, findings: list[Finding], items: list[Item] | None = None) -> Summary:
        rec = Counter(f.record_category for f in findings)
        dim = Counter(f.dimension for f in findings)
        its = items or []
        return cls(
            items=len(its),
            days_low=round(sum(i.days_low for i in its), 2),
            days_high=round(sum(i.days_high for i in its), 2),
            blocking_days_low=round(sum(i.days_low for i in its if i.severity == "blocking"), 2),
            blocking_days_high=round(sum(i.days_high for i in its if i.severity == "blocking"), 2),
            items_by_severity={k: sum(i.severity == k for i in its) for k in SEVERITY_RANK},
            items_by_effort={k: sum(i.effort == k for i in its) for k in EFFORT_RANK},
            items_by_record_category={k: sum(i.record_category == k for i in its) for k in RECORD_CATEGORIES},
            not_porting=dict(sorted(Counter(f.context or "" for f in findings if not f.porting).items())),
            total=len(findings),
            by_category=dict(sorted(Counter(f.category for f in findings).items())),
            by_record_category={k: rec.get(k, 0) for k in RECORD_CATEGORIES},
            by_dimension={k: dim.get(k, 0) for k in DIMENSIONS},
            by_severity={k: Counter(f.severity for f in findings).get(k, 0) for k in SEVERITY_RANK},
            by_rule=dict(sorted(Counter(f.rule for f in findings).items())),
        )


class OpCount(BaseModel):
    op: str  # normalised "aten::name" (a custom op keeps its namespace: "mylib::name")
    count: int
    supported: bool | None = None  # None: no supported-ops list given, or one not compared (another op set)
    core: bool | None = None  # in the inventory's op set (core ATen); False: kept as is (custom op, no decomposition)
    call_site: str | None = None  # "file:line" of the first occurrence, when known


class GraphBreak(BaseModel):
    reason: str
    location: str | None = None


class OpInventory(BaseModel):
    """What the model actually runs: ATen operators with counts, graph breaks, data-dependent ops, dtypes."""

    model: str
    method: str  # capture path: "torch.export", "dispatch-trace" (the fallback trace) or "failed"
    op_set: str | None = None  # what the op names are in: "core_aten" (None: a log written before op sets)
    export_error: str | None = None
    ops: list[OpCount] = Field(default_factory=list)
    graph_breaks: list[GraphBreak] = Field(default_factory=list)
    graph_count: int | None = None
    data_dependent_ops: list[str] = Field(default_factory=list)
    dtypes: list[str] = Field(default_factory=list)
    supported_ops_file: str | None = None
    supported_ops_op_set: str | None = None  # the op set the list is in
    support_percentage: float | None = None  # of distinct ops, or the analyze dict's figure
    unsupported_ops: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # how the capture was made when that matters (cache off)
    findings: list[Finding] = Field(default_factory=list)


class EffortModelRow(BaseModel):
    rule: str
    days_low: float
    days_high: float
    assumption: str
    basis: str


class EffortModel(BaseModel):
    """What the log's engineer-days assume: the Neuron stack, and the table rows its items used."""

    neuron_stack: str = NEURON_STACK
    xla_era: str = XLA_ERA_NOTE
    rows: list[EffortModelRow] = Field(default_factory=list)

    @classmethod
    def of(cls, items: list[Item]) -> EffortModel:
        used = sorted({i.rule for i in items})
        out = []
        for rule in used:
            eff = next(i.effort for i in items if i.rule == rule)
            r = row_for(rule, eff)
            out.append(
                EffortModelRow(rule=rule, days_low=r.low, days_high=r.high, assumption=r.assumption, basis=r.basis)
            )
        for name, r in SPECIAL_ROWS.items():  # rows items took instead of their rule's
            if any((i.assumption or "").startswith(r.assumption) for i in items):
                out.append(
                    EffortModelRow(rule=name, days_low=r.low, days_high=r.high, assumption=r.assumption, basis=r.basis)
                )
        return cls(rows=out)


class PortabilityLog(BaseModel):
    """The log a team keeps during the trial (seed 000), one JSON file."""

    kind: Literal["portability_log"] = "portability_log"  # what this file is; checked before use
    schema_version: int = SCHEMA_VERSION
    root: str | None = None
    targets: list[str] | None = None  # filter applied, None = all
    files_scanned: int = 0
    findings: list[Finding] = Field(default_factory=list)
    skipped: list[Skipped] = Field(default_factory=list)
    suppressed: int = 0
    summary: Summary = Field(default_factory=Summary)
    items: list[Item] = Field(default_factory=list)
    effort_model: EffortModel = Field(default_factory=EffortModel)
    inventory: OpInventory | None = None
    baseline: str | None = None  # when set, findings are only those new against this baseline
    baseline_known: int = 0  # findings hidden because the baseline already had them
    elapsed_s: float | None = None

    def refresh(self) -> PortabilityLog:
        """Sort findings and recompute the summary; call after changing ``findings``."""
        self.findings.sort(key=lambda f: (f.record_category, f.file or "", f.cell or 0, f.line or 0, f.rule))
        self.items = build_items(self.findings)
        self.summary = Summary.of(self.findings, self.items)
        self.effort_model = EffortModel.of(self.items)
        return self

    def with_inventory(self, inv: OpInventory) -> PortabilityLog:
        """Merge an op inventory and its findings into this log."""
        self.inventory = inv
        # The same line found statically and by capture is one finding: keep the static one, say it was confirmed.
        static = {(f.rule, f.line): f for f in self.findings if f.source == "static" and f.file}
        for f in inv.findings:
            twin = static.get((f.rule, f.line)) if f.file else None
            if twin is not None and twin.file and f.file and (f.file.endswith(twin.file) or twin.file.endswith(f.file)):
                if "confirmed by" not in twin.message:
                    twin.message += " (confirmed by the op inventory)"
                continue
            self.findings.append(f)
        return self.refresh()

    def only_targets(self, targets: frozenset[str] | None) -> PortabilityLog:
        if targets is not None:
            self.targets = sorted(targets)
            self.findings = [f for f in self.findings if targets.intersection(f.targets)]
        return self.refresh()

    def new_since(self, baseline: PortabilityLog, baseline_path: str | None = None) -> PortabilityLog:
        """Keep only findings the baseline did not have (multiset match on rule + file + snippet)."""
        known = Counter(_key(f) for f in baseline.findings)
        fresh: list[Finding] = []
        hidden = 0
        for f in self.findings:
            k = _key(f)
            if known[k] > 0:
                known[k] -= 1
                hidden += 1
            else:
                fresh.append(f)
        self.findings = fresh
        self.baseline = baseline_path
        self.baseline_known = hidden
        return self.refresh()

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)


def _key(f: Finding) -> tuple[str, str, str]:
    return (f.rule, f.file or "", normalise_snippet(f.snippet) if f.snippet else f.message)


def load_log(path: str | Path) -> PortabilityLog:
    """Read a log written by ``accelpilot scan --format json`` (e.g. a ``--baseline``)."""
    fix = "write one with `accelpilot scan --json --out`"

    def header(data: dict[str, Any]) -> None:
        # Every field has a default, so `{}` or a pilot result would validate as an empty log and the gate would
        # read "no blocking finding". Logs written before `kind` existed still carry findings and files_scanned.
        if "kind" not in data and {"findings", "files_scanned"} <= data.keys():
            data = {**data, "kind": "portability_log"}
        check_header(data, path, "portability log", SCHEMA_VERSION, kinds=("portability_log",), fix=fix)

    return read_model(path, PortabilityLog, "portability log", fix=fix, check=header)
