"""The portability log: findings, skipped files, summary counts, the op inventory, and the baseline diff.

Kept free of torch so a log can be read, diffed and rendered anywhere. A finding's ``fingerprint`` is
rule + file + the normalised source line (not the line number), so edits above a finding do not make it
"new" against a baseline.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from accelpilot.jsonfile import check_header, read_model
from accelpilot.porting.rules import DIMENSIONS, RECORD_CATEGORIES, SEVERITY_RANK, Rule

SCHEMA_VERSION = 1
_WS = re.compile(r"\s+")


def normalise_snippet(text: str) -> str:
    """Whitespace-collapsed source text; what a baseline matches on besides rule and file."""
    return _WS.sub(" ", text).strip()[:200]


def fingerprint(rule: str, file: str | None, snippet: str) -> str:
    return hashlib.sha1(f"{rule}\0{file or ''}\0{normalise_snippet(snippet)}".encode()).hexdigest()[:16]


class Finding(BaseModel):
    """One entry of the log: where (file, line), what (rule, message), why, and how much work (effort)."""

    model_config = ConfigDict(extra="ignore")

    rule: str
    category: str
    record_category: str
    dimension: str
    severity: str
    effort: str
    targets: list[str]
    file: str | None = None
    line: int | None = None
    message: str
    why: str
    snippet: str = ""
    source: str = "static"  # "static" (scanner) or "model" (op inventory)
    fingerprint: str = ""

    @classmethod
    def from_rule(
        cls, rule: Rule, *, file: str | None, line: int | None, message: str, snippet: str = "", source: str = "static"
    ) -> Finding:
        snip = normalise_snippet(snippet)
        return cls(
            rule=rule.id,
            category=rule.category,
            record_category=rule.record_category,
            dimension=rule.dimension,
            severity=rule.severity,
            effort=rule.effort,
            targets=sorted(rule.targets),
            file=file,
            line=line,
            message=message,
            why=rule.why,
            snippet=snip,
            source=source,
            fingerprint=fingerprint(rule.id, file, snip),
        )


class Skipped(BaseModel):
    path: str
    reason: str


class Summary(BaseModel):
    total: int = 0
    by_category: dict[str, int] = Field(default_factory=dict)
    by_record_category: dict[str, int] = Field(default_factory=dict)
    by_dimension: dict[str, int] = Field(default_factory=dict)
    by_severity: dict[str, int] = Field(default_factory=dict)
    by_rule: dict[str, int] = Field(default_factory=dict)

    @classmethod
    def of(cls, findings: list[Finding]) -> Summary:
        rec = Counter(f.record_category for f in findings)
        dim = Counter(f.dimension for f in findings)
        return cls(
            total=len(findings),
            by_category=dict(sorted(Counter(f.category for f in findings).items())),
            by_record_category={k: rec.get(k, 0) for k in RECORD_CATEGORIES},
            by_dimension={k: dim.get(k, 0) for k in DIMENSIONS},
            by_severity={k: Counter(f.severity for f in findings).get(k, 0) for k in SEVERITY_RANK},
            by_rule=dict(sorted(Counter(f.rule for f in findings).items())),
        )


class OpCount(BaseModel):
    op: str  # normalised "aten::name"
    count: int
    supported: bool | None = None  # None: no supported-ops list given
    call_site: str | None = None  # "file:line" of the first occurrence, when known


class GraphBreak(BaseModel):
    reason: str
    location: str | None = None


class OpInventory(BaseModel):
    """What the model actually runs: ATen operators with counts, graph breaks, data-dependent ops, dtypes."""

    model: str
    method: str  # "torch.export", "dispatch-trace" (fallback) or "failed"
    export_error: str | None = None
    ops: list[OpCount] = Field(default_factory=list)
    graph_breaks: list[GraphBreak] = Field(default_factory=list)
    graph_count: int | None = None
    data_dependent_ops: list[str] = Field(default_factory=list)
    dtypes: list[str] = Field(default_factory=list)
    supported_ops_file: str | None = None
    support_percentage: float | None = None  # of distinct ops, or the analyze dict's figure
    unsupported_ops: list[str] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)


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
    inventory: OpInventory | None = None
    baseline: str | None = None  # when set, findings are only those new against this baseline
    baseline_known: int = 0  # findings hidden because the baseline already had them
    elapsed_s: float | None = None

    def refresh(self) -> PortabilityLog:
        """Sort findings and recompute the summary; call after changing ``findings``."""
        self.findings.sort(key=lambda f: (f.record_category, f.file or "", f.line or 0, f.rule))
        self.summary = Summary.of(self.findings)
        return self

    def with_inventory(self, inv: OpInventory) -> PortabilityLog:
        """Merge an op inventory and its findings into this log."""
        self.inventory = inv
        self.findings.extend(inv.findings)
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
