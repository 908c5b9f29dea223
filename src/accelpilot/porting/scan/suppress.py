"""Suppression comments: ``# accelpilot: ignore[rule-a, rule-b]`` on the line or the line above; bare ``ignore``
silences every rule there."""

from __future__ import annotations

import re

from accelpilot.porting.scan.patterns import RawFinding

SUPPRESS = re.compile(r"#\s*accelpilot:\s*ignore(?:\[([^\]]*)\])?")


def _suppressions(text: str) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for i, line in enumerate(text.splitlines(), start=1):
        m = SUPPRESS.search(line)
        if m:
            ids = {s.strip() for s in (m.group(1) or "*").split(",") if s.strip()} or {"*"}
            out[i] = ids
    return out


def apply_suppressions(found: list[RawFinding], text: str) -> tuple[list[RawFinding], int]:
    if "accelpilot:" not in text:
        return found, 0
    sup = _suppressions(text)
    kept: list[RawFinding] = []
    dropped = 0
    for f in found:
        line = f[1] or 1
        ids = sup.get(line, set()) | sup.get(line - 1, set())
        if f[0] in ids or "*" in ids:
            dropped += 1
        else:
            kept.append(f)
    return kept, dropped
