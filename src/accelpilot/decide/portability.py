"""Read the portability log defensively and answer the questions the gates ask of it.

The log (porting/log.py) is the scanner's output; decide/ only needs each finding's rule, severity, effort,
targets and location. Findings are accepted as PortabilityLog models or plain dicts (a log written by an
older or newer scanner still decides), and each gets a stable id the report and the reasons cite.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from accelpilot.porting.log import load_log

NEURON_FAMILY = frozenset({"trainium", "inferentia"})
_TARGET_WORDS = {
    "trainium": "trainium",
    "trn": "trainium",
    "inferentia": "inferentia",
    "inf": "inferentia",
    "neuron": "trainium",
    "gpu": "gpu",
    "cuda": "gpu",
}


class FindingView(BaseModel):
    """The part of a finding the gates and the report use."""

    model_config = ConfigDict(frozen=True)

    id: str
    rule: str
    category: str = ""
    record_category: str = ""
    dimension: str = ""
    severity: str = "info"
    effort: str = "hours"
    targets: list[str] = Field(default_factory=list)  # empty: concerns every platform
    file: str | None = None
    line: int | None = None
    message: str = ""
    why: str = ""
    lines: list[str] = Field(default_factory=list)  # an item's evidence, "file:line: message" each
    reason: str = ""  # how the item is reached when that lowers its severity ("in a benchmark script", ...)
    # engineer-days of the item by the log's effort model (porting/effort.py), None for logs written before it
    days_low: float | None = None
    days_high: float | None = None

    @property
    def where(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or "model"

    def concerns(self, target: str) -> bool:
        return not self.targets or target in self.targets


class LogView(BaseModel):
    """A portability log reduced to what decide/ and report/ read."""

    model_config = ConfigDict(frozen=True)

    path: str | None = None
    root: str | None = None
    targets: list[str] | None = None
    files_scanned: int = 0
    findings: list[FindingView] = Field(default_factory=list)
    summary: dict[str, Any] = Field(default_factory=dict)

    def blocking_for(self, target: str) -> list[FindingView]:
        return [f for f in self.findings if f.severity == "blocking" and f.concerns(target)]

    def items_by_record_category(self) -> list[tuple[str, int, int]]:
        """(record category, porting items, lines under them) for a log read item by item, in the summary's
        order; empty for an older log of findings. Items are what effort and the gates count."""
        order = self.summary.get("items_by_record_category")
        if not order or not self.findings or not self.findings[0].id.startswith("I"):
            return []
        counts = {k: [0, 0] for k in order}
        for f in self.findings:
            c = counts.setdefault(f.record_category, [0, 0])
            c[0] += 1
            c[1] += len(f.lines)
        return [(k, n, lines) for k, (n, lines) in counts.items()]

    def covers(self, target: str) -> bool:
        """Whether the scan looked for this target (a log filtered to other targets says nothing about it)."""
        return self.targets is None or target in self.targets


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _targets_of(f: Any) -> list[str]:
    t = _get(f, "targets")
    if t:
        return sorted(str(x) for x in t)
    rule = _get(f, "rule")
    if rule:
        try:
            from accelpilot.porting.rules import RULES

            r = RULES.get(str(rule))
            if r is not None:
                return sorted(r.targets)
        except ImportError:  # pragma: no cover - porting/ always ships with the package
            pass
    return []


def _line_text(ln: Any, item_reason: str = "") -> str:
    """``file:line: message``; a line reached otherwise than its item (an import behind an ImportError fallback
    in an item that is on the main path) says how, in brackets."""
    file, line, cell = _get(ln, "file"), _get(ln, "line"), _get(ln, "cell")
    where = f"{file} cell {cell}" if cell is not None else str(file or "model")
    text = f"{where}:{line}: {_get(ln, 'message', '')}" if line else f"{where}: {_get(ln, 'message', '')}"
    reason = str(_get(ln, "reason", "") or "")
    return f"{text} [{reason}]" if reason and reason != item_reason else text


def _days_of(f: Any, name: str) -> float | None:
    """An item's effort-model days; None for a finding, an older item, or an item the model gave no range."""
    v = _get(f, name)
    high = _get(f, "days_high")
    return float(v) if isinstance(v, (int, float)) and isinstance(high, (int, float)) and high > 0 else None


def view_log(log: Any, path: str | None = None) -> LogView:
    """Reduce a PortabilityLog (model or dict) to a LogView. A log with porting items (issue 12) is read item by
    item (ids I1, I2, ...: effort, the exit test and the blocking gate count items, each with its lines); an
    older log finding by finding (F1, F2, ...), leaving out lines marked as not porting work."""
    items = _get(log, "items", []) or []
    if items:
        entries = list(items)
        ids = [str(_get(it, "id", "") or f"I{i}") for i, it in enumerate(entries, start=1)]
    else:
        entries = [f for f in _get(log, "findings", []) or [] if _get(f, "porting", True) is not False]
        ids = [f"F{i}" for i in range(1, len(entries) + 1)]
    findings = []
    for fid, f in zip(ids, entries, strict=True):
        line = _get(f, "line")
        title = _get(f, "title")
        reason = str(_get(f, "reason", "") or "")
        findings.append(
            FindingView(
                id=fid,
                rule=str(_get(f, "rule", "?")),
                category=str(_get(f, "category", "") or ""),
                record_category=str(_get(f, "record_category", "") or ""),
                dimension=str(_get(f, "dimension", "") or ""),
                severity=str(_get(f, "severity", "info") or "info"),
                effort=str(_get(f, "effort", "hours") or "hours"),
                targets=_targets_of(f),
                file=_get(f, "file"),
                line=int(line) if isinstance(line, int) else None,
                message=f"{title}: {_get(f, 'message', '')}" if title else str(_get(f, "message", "") or ""),
                why=str(_get(f, "why", "") or ""),
                lines=[_line_text(ln, reason) for ln in _get(f, "lines", []) or []],
                reason=reason,
                days_low=_days_of(f, "days_low"),
                days_high=_days_of(f, "days_high"),
            )
        )
    summary = _get(log, "summary", {}) or {}
    if isinstance(summary, BaseModel):
        summary = summary.model_dump(mode="json")
    targets = _get(log, "targets")
    return LogView(
        path=path,
        root=_get(log, "root"),
        targets=list(targets) if targets else None,
        files_scanned=int(_get(log, "files_scanned", 0) or 0),
        findings=findings,
        summary=dict(summary),
    )


def read_log(path: Path | str) -> LogView:
    """Load a log file written by `accelpilot scan --json`; one clear line when it is not one."""
    return view_log(load_log(path), str(path))


def target_key(target_platform: str) -> str:
    """The scenario's target_platform as a rule target: trainium, inferentia or gpu."""
    t = (target_platform or "trainium").strip().lower()
    for word, key in _TARGET_WORDS.items():
        if t.startswith(word):
            return key
    return t


def family_of(accelerator: str | None, instance: str | None, device_type: str | None = None) -> str:
    """``trainium``, ``inferentia`` or ``gpu`` (anything else that is not Neuron counts as GPU/other)."""
    acc = (accelerator or "").lower()
    inst = (instance or "").lower()
    dev = (device_type or "").lower()
    if acc.startswith("trainium") or inst.startswith("trn"):
        return "trainium"
    if acc.startswith("inferentia") or inst.startswith("inf"):
        return "inferentia"
    if dev == "neuron" and not acc:
        return "trainium"
    if dev == "cpu" and not acc:
        return "cpu"
    return "gpu"
