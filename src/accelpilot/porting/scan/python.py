"""One Python source to findings: prune, parse the chosen blocks, visit them."""

from __future__ import annotations

import ast

from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.prune import parse_unit, trigger_lines, units
from accelpilot.porting.scan.visitor import PyVisitor


def scan_python(source: str | bytes, *, prune: bool = True) -> list[RawFinding]:
    """Findings for one Python source. ``prune=False`` parses and visits everything (the reference for tests)."""
    data = source.encode("utf-8") if isinstance(source, str) else source
    torch_file = b"torch" in data
    # A cpp_extension ``load(...)`` or ``CppExtension(...)`` call carries no trigger token of its own; files that
    # use cpp_extension are few, so they are visited whole.
    if not prune or b"cpp_extension" in data:
        v = PyVisitor(None, torch_file)
        v.visit(ast.parse(data))
        return v.found
    hits = trigger_lines(data)
    if not hits:
        return []
    v = PyVisitor(hits, torch_file)
    try:
        trees = [parse_unit(data, u) for u in units(data, hits)]
    except SyntaxError:
        trees = [ast.parse(data)]  # a block boundary guessed wrong (e.g. a column-0 line inside a string)
    for t in trees:
        v.visit(t)
    return v.found
