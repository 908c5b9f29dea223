"""A name bound only under a CUDA test and read after it (issue 27: what stops the default path).

    if torch.cuda.is_available():
        n_gpus = torch.cuda.device_count()
    max_memory = {i: m for i in range(n_gpus)}     # UnboundLocalError on a host without CUDA

Off CUDA the test is false, nothing binds the name, and the read raises (``UnboundLocalError`` in a function,
``NameError`` at module level). Each such read is a ``torch-cuda-api`` line at the test, so it joins the file's CUDA
item; ``entry.py`` makes it blocking on an entry point's lines like other CUDA placement. Another branch that binds
the name under a further test (``if is_ipex_available() and torch.xpu.is_available():``) does not bind it on a
Trainium host either; an ``else``, an earlier binding, a parameter or a binding outside any test does.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.post_kit import _tree

RULE = "torch-cuda-api"
# ``if ...cuda.is_available():`` then a binding on the next line: the files worth parsing.
_GATE = re.compile(rb"cuda\.is_available\(\)[ \t]*:[ \t]*\r?\n[ \t]+\w+[ \t]*=[^=]")
_FUNC = (ast.FunctionDef, ast.AsyncFunctionDef)


def _cuda_test(test: ast.expr) -> bool:
    """A test that is false on a host without CUDA: ``torch.cuda.is_available()`` (alone or joined by ``and``)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_cuda_test(v) for v in test.values)
    return isinstance(test, ast.Call) and "cuda" in ast.unparse(test.func) and "is_available" in ast.unparse(test)


def _bound(stmts: Iterable[ast.stmt]) -> set[str]:
    """Names a block binds by plain assignment (not in nested defs)."""
    out: set[str] = set()
    for st in stmts:
        for node in ast.walk(st):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
    return out


def _reads(stmt: ast.stmt) -> dict[str, int]:
    """First line of each name a statement reads when it runs: not in a nested def, class or lambda (run later, if
    at all), nor under a CUDA test (the name is bound there)."""
    out: dict[str, int] = {}
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        if node is not stmt and isinstance(node, (*_FUNC, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If) and _cuda_test(node.test):
            todo.extend(node.orelse)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.lineno < out.get(node.id, 1 << 30):
            out[node.id] = node.lineno
        todo.extend(ast.iter_child_nodes(node))
    return out


def _block(stmts: list[ast.stmt], safe: set[str]) -> Iterable[tuple[ast.If, str, int]]:
    """(test, name, line of the read) in one block of statements."""
    safe = set(safe)
    pending: dict[str, ast.If] = {}
    for st in stmts:
        if isinstance(st, (*_FUNC, ast.ClassDef)):
            safe.add(st.name)
            continue
        for name, line in _reads(st).items():
            if name in pending:
                yield pending.pop(name), name, line
        if isinstance(st, ast.If) and not st.orelse:
            only = _bound(st.body) - safe
            if _cuda_test(st.test):
                for name in only:
                    pending.setdefault(name, st)
            continue  # a binding under any other test (xpu, a flag) binds nothing for sure
        if isinstance(st, ast.If):
            both = _bound(st.body) & _bound(st.orelse)
            safe |= both
            for name in both:
                pending.pop(name, None)
            continue
        for name in _bound([st]):
            safe.add(name)
            pending.pop(name, None)


def unbound_off_cuda(data: bytes) -> list[RawFinding]:
    """A ``torch-cuda-api`` line at each CUDA test whose binding a later statement reads unconditionally."""
    if b"cuda.is_available()" not in data or _GATE.search(data) is None:
        return []
    try:
        tree = _tree(data)
    except SyntaxError:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    tests = {data.count(b"\n", 0, m.start()) + 1 for m in _GATE.finditer(data)}  # lines of the CUDA tests
    out: list[RawFinding] = []
    scopes: list[tuple[list[ast.stmt], set[str]]] = [(tree.body, set())]
    for fn in ast.walk(tree):
        # only the defs that hold such a test (a model file's hundreds of others hold none)
        if isinstance(fn, _FUNC) and any(fn.lineno <= t <= (fn.end_lineno or fn.lineno) for t in tests):
            params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
            params |= {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
            scopes.append((fn.body, params))
    for body, safe in scopes:
        for test, name, read in _block(body, safe):
            ln = test.lineno
            cond = ast.unparse(test.test)[:60]
            msg = f"`{name}` bound only under `if {cond}:` and read at line {read}: unbound without CUDA"
            out.append((RULE, ln, msg, lines[ln - 1] if 0 < ln <= len(lines) else "", None, None))
    return out
