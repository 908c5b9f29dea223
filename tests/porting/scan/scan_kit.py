"""What the scanner's tests write as a small tree and read from its scan (shared by their modules)."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.bringup import BRINGUP
from accelpilot.porting.scan.compile_step import COMPILE_STEP

# The repository's bring-up and compile items (``scan/bringup.py``, ``scan/compile_step.py``, their own tests) list
# model files of a tree with a README command; the false-positive class tests read the other rules.
_REPO_ITEMS = frozenset({BRINGUP, COMPILE_STEP})


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (path -> text) under ``root``, folders made; returns ``root``."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def findings_in(root: Path, name: str) -> list[tuple[str, int, str | None]]:
    """(rule, line, context) of every finding of file ``name``, sorted."""
    log = scan_path(root, jobs=1)
    return sorted(
        (f.rule, f.line or 0, f.context) for f in log.findings if f.file == name and f.rule not in _REPO_ITEMS
    )


def item_lines(root: Path) -> list[tuple[str, list[int]]]:
    """(key, lines) of every item of the tree."""
    return [
        (i.key, [ln.line or 0 for ln in i.lines]) for i in scan_path(root, jobs=1).items if i.rule not in _REPO_ITEMS
    ]


def rule_lines(root: Path, rule: str) -> list[tuple[str, int, str]]:
    """(file, line, severity) of every finding of ``rule`` in a scan of the tree, in the log's order."""
    return [(f.file or "", f.line or 0, f.severity) for f in scan_path(root, jobs=1).findings if f.rule == rule]
