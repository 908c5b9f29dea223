"""What the false-positive class tests read from a scan of a small tree (shared by their modules)."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path


def findings_in(root: Path, name: str) -> list[tuple[str, int, str | None]]:
    """(rule, line, context) of every finding of file ``name``, sorted."""
    log = scan_path(root, jobs=1)
    return sorted((f.rule, f.line or 0, f.context) for f in log.findings if f.file == name)


def item_lines(root: Path) -> list[tuple[str, list[int]]]:
    """(key, lines) of every item of the tree."""
    return [(i.key, [ln.line or 0 for ln in i.lines]) for i in scan_path(root, jobs=1).items]
