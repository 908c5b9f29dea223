"""Pruning must never change what is found: pruned and full parses agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelpilot.porting.scan import scan_python

FIXTURES = Path(__file__).parent.parent / "fixtures"
REPO = FIXTURES / "repo"
# cpp_extension builders and load() (triggers only in files naming cpp_extension), launches of kernels
SOURCES = [
    *sorted(REPO.glob("*.py")),
    *sorted((FIXTURES / "prune_ext").glob("*.py")),
    *sorted((FIXTURES / "extensions").rglob("*.py")),
    *sorted((FIXTURES / "launches").rglob("*.py")),
]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_pruned_scan_equals_full_parse(path: Path) -> None:
    src = path.read_bytes()
    # everything but the snippet (filled later from the source): rule, line, message, subject, reach context
    pruned = sorted((r, ln, m, str(sub), str(ctx)) for r, ln, m, _, sub, ctx in scan_python(src))
    full = sorted((r, ln, m, str(sub), str(ctx)) for r, ln, m, _, sub, ctx in scan_python(src, prune=False))
    assert pruned == full


def test_block_boundary_fallback_on_column0_string() -> None:
    # A column-0 line inside a triple-quoted string splits blocks wrongly; the scanner falls back to a full parse.
    src = 'import torch\nX = """\nclass Fake:\n"""\ndef f(x):\n    return x.cuda()\n'
    assert [(f[0], f[1]) for f in scan_python(src)] == [("cuda-call", 6)]
