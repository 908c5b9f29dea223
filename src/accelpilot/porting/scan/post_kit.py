"""What the post passes share: the file's tree (whole or only the blocks holding some lines), its defs and headers."""

from __future__ import annotations

import ast
import functools
from collections import deque
from collections.abc import Collection, Iterator

from accelpilot.porting.scan.literals import is_main_test
from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.reach import FileReach
from accelpilot.porting.scan.units import parse_unit, string_spans, top_units, units


@functools.lru_cache(maxsize=1)
def _tree(data: bytes) -> ast.Module:
    """The whole file's syntax tree, parsed once for all the post passes that need it (each used to parse it again:
    a third of the scan's time on transformers). Read-only: no pass changes it."""
    return ast.parse(data)


def unit_trees(data: bytes, lines: Collection[int]) -> list[ast.Module]:
    """The trees of only the top-level blocks (or methods) holding ``lines`` (a model file is large and the lines a
    whole-file pass looks at are few); the whole file when a block boundary was guessed wrong; none when the file
    does not parse."""
    try:
        return [parse_unit(data, u) for u in units(data, sorted(lines))]
    except SyntaxError:
        try:
            return [_tree(data)]
        except SyntaxError:
            return []


# The fields that hold statements (and the handlers and cases that hold them): no expression holds one.
_STMT_FIELDS = frozenset({"body", "handlers", "orelse", "finalbody", "cases"})


def _stmt_walk(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` over statements only (with the except handlers and match cases between them), in the same order:
    the defs, classes, ``if``s and ``with``s a pass looks for are all statements, and skipping expressions skips
    most of the tree's nodes."""
    todo = deque([node])
    while todo:
        n = todo.popleft()
        for f in n._fields:
            if f in _STMT_FIELDS:
                v = getattr(n, f, None)
                if isinstance(v, list):
                    todo.extend(c for c in v if isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case)))
        yield n


def _tree_holding(data: bytes, lines: Collection[int]) -> ast.Module:
    """The file's top-level statements that hold any of ``lines``, each parsed alone: for a pass that reads only the
    classes or defs holding some findings, a fraction of a large model file's parse (the whole file if a block's
    boundary is guessed wrong)."""
    try:
        units = top_units(data, sorted(lines), string_spans(data))
        return ast.Module(body=[st for u in units for st in parse_unit(data, u).body], type_ignores=[])
    except SyntaxError:
        return _tree(data)


@functools.lru_cache(maxsize=1)
def _reach(data: bytes) -> FileReach:
    """The file's def/class headers, read once for all the post passes (each used to read them again). Its only
    state is what it memoises (``line_starts``), so sharing it changes no answer."""
    return FileReach(data)


@functools.lru_cache(maxsize=1)
def _defs(data: bytes) -> tuple[_Def, ...]:
    """Every def of the file, in ``ast.walk`` order."""
    return tuple(d for d in _stmt_walk(_tree(data)) if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _held_lines(funcs: list[_Def], lines: Collection[int]) -> Iterator[tuple[int, _Def]]:
    """Each of ``lines`` held by a def of ``funcs``, with the innermost def holding it (lines outside every def are
    skipped)."""
    for ln in lines:
        holders = [d for d in funcs if d.lineno <= ln <= (d.end_lineno or d.lineno)]
        if holders:
            yield ln, max(holders, key=lambda h: h.lineno)


_Def = ast.FunctionDef | ast.AsyncFunctionDef


class LineSink:
    """The raw findings a whole-file pass adds: each with its line's text, and ``main-block`` for a line under a
    module-level ``if __name__ == "__main__":`` (an entry script's own main is its default path: ``run.py``)."""

    def __init__(self, data: bytes, tree: ast.Module) -> None:
        self.lines = data.decode("utf-8", "replace").splitlines()
        self.demo = [
            (n.lineno, n.end_lineno or n.lineno) for n in tree.body if isinstance(n, ast.If) and is_main_test(n.test)
        ]
        self.out: list[RawFinding] = []
        self.tree = tree

    @classmethod
    def of(cls, data: bytes) -> LineSink | None:
        """A sink over the whole file parsed (``tree``), or None when it does not parse."""
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            return None
        return cls(data, tree)

    def add(self, rule: str, node: ast.AST, msg: str, subject: str | None = None) -> None:
        ln = getattr(node, "lineno", 0)
        snip = self.lines[ln - 1] if 0 < ln <= len(self.lines) else ""
        ctx = "main-block" if any(a <= ln <= b for a, b in self.demo) else None
        self.out.append((rule, ln, msg, snip, subject, ctx))


UNUSED_DEF = "unused-def"


def unused_nested(data: bytes, found: list[RawFinding], nested: list[tuple[int, int]]) -> list[RawFinding]:
    """Findings inside a def nested in another def that nothing in the outer def names (DeepSDF's
    ``empirical_stat``, defined in ``main`` and never called) run on no path: context ``unused-def``. ``nested``:
    the line spans of the undecorated defs the visitor met inside a def (most files have none); only the blocks
    holding a finding in one are parsed. A decorated nested def (registered by its decorator) counts as used."""
    if not nested:
        return found
    candidates = {ln for _, ln, _, _, _, ctx in found if ctx is None and ln and any(a <= ln <= b for a, b in nested)}
    if not candidates:
        return found
    tree = _tree_holding(data, candidates)
    parent = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    dead: list[tuple[int, int]] = []
    for inner in ast.walk(tree):
        if not isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)) or inner.decorator_list:
            continue
        span = (inner.lineno, inner.end_lineno or inner.lineno)
        if not any(span[0] <= ln <= span[1] for ln in candidates):
            continue
        outer = parent.get(id(inner))
        while outer is not None and not isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            outer = parent.get(id(outer))
        if not isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue  # a method of a class (QLoRA's callback defined inside ``train``): its framework calls it
        named = any(
            isinstance(n, ast.Name) and n.id == inner.name and not (span[0] <= n.lineno <= span[1])
            for n in ast.walk(outer)
        )
        if not named:
            dead.append(span)
    if not dead:
        return found
    return [
        (r, ln, m, snip, sub, UNUSED_DEF if ctx is None and ln and any(a <= ln <= b for a, b in dead) else ctx)
        for r, ln, m, snip, sub, ctx in found
    ]
