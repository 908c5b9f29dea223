"""The false-positive classes of the scan as data: one row per class, what the scan makes of it, its tests.

The README's list of classes is generated from these rows (``python -m accelpilot.porting.fp_classes README.md``
rewrites it; ``--check`` exits 1 when they disagree, and ``tests/porting/test_fp_classes_table.py`` fails then).
A new class is a new row of ``fp_rows.py`` and its test: the rule code lives in ``porting/scan``, the sentence here.
"""

from __future__ import annotations

import sys
from pathlib import Path

from accelpilot.porting.fp_rows_guards import CLASSES

BEGIN = "<!-- fp-classes:begin (generated from src/accelpilot/porting/fp_classes.py; do not edit) -->"
END = "<!-- fp-classes:end -->"


def render() -> str:
    """The README block: one bullet per class, its outcome, its sentence and its test."""
    out = [BEGIN, ""]
    for c in CLASSES:
        tests = ", ".join(f"`{x}`" for x in c.tests)
        out.append(f"- `{c.id}` → **{c.outcome}**: {c.text} ({tests})")
    out += ["", END]
    return "\n".join(out)


def rewrite(readme: str) -> str:
    """``readme`` with its generated block replaced by ``render()`` (the markers must be there, once each)."""
    head, sep, rest = readme.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise ValueError(f"README has no {BEGIN!r} ... {END!r} block")
    return head + render() + tail


def main(argv: list[str]) -> int:
    """``python -m accelpilot.porting.fp_classes README.md [--check]``: rewrite the block, or say if it is stale."""
    check = "--check" in argv
    paths = [a for a in argv if a != "--check"] or ["README.md"]
    path = Path(paths[0])
    text = path.read_text(encoding="utf-8")
    new = rewrite(text)
    if check:
        if new != text:
            print(f"{path}: the false-positive class list differs from porting/fp_classes.py; run without --check")
            return 1
        return 0
    if new != text:
        path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
