"""Attention written out by hand (rule ``manual-attention``, issue 27's held-out labels: latent-diffusion's
``einsum('b i d, b j d -> b i j', q, k)``, minGPT's ``q @ k.transpose(-2, -1)``, segment-anything's encoder, edm's
fp32 einsum in an autograd Function).

A function that multiplies queries by keys (``q @ k.transpose(...)``, ``einsum(..., q, k)``, ``bmm(q, k)``) and takes
a softmax materialises the whole (heads, L, L) score matrix in the device's memory and leaves the compiler a chain of
ops where ``F.scaled_dot_product_attention`` is one. It runs; the port's memory at the default sequence length and
its speed depend on it. A function that also calls ``scaled_dot_product_attention`` keeps the hand-written path as a
fallback for an old torch (nanoGPT) and is no item. Read from a whole file behind byte gates; only the blocks holding
a line that multiplies a query-named tensor are parsed."""

from __future__ import annotations

import ast
import re

from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.post_kit import unit_trees

RULE = "manual-attention"
_Q = frozenset({"q", "qs", "q_", "query", "queries", "xq"})
_K = frozenset({"k", "ks", "k_", "key", "keys", "xk"})
_PRODUCTS = frozenset({"einsum", "bmm", "baddbmm", "matmul"})
_PRODUCT_TOKENS = (b" @ ", b"einsum(", b"bmm(", b"matmul(")
_QUERY_WORD = re.compile(rb"\b(?:q|qs|q_|query|queries|xq)\b")
_KEY_WORD = re.compile(rb"\b(?:k|ks|k_|key|keys|xk)\b")
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _lines(data: bytes) -> list[int]:
    """Lines that multiply (``" @ "``, ``einsum(``, ``bmm(``, ``matmul(``) with a query-named and a key-named word on
    them or on the next three (a call split over lines). Found with ``bytes.find``: a regex over every line of a
    model library costs more than the parse it saves."""
    out: set[int] = set()
    for token in _PRODUCT_TOKENS:
        i = data.find(token)
        while i != -1:
            start = data.rfind(b"\n", 0, i) + 1
            end = i
            for _ in range(4):
                nxt = data.find(b"\n", end + 1)
                end = len(data) if nxt == -1 else nxt
            if (
                data.find(b"#", start, i) == -1
                and _QUERY_WORD.search(data, start, end)
                and _KEY_WORD.search(data, start, end)
            ):
                out.add(data.count(b"\n", 0, i) + 1)
            i = data.find(token, i + len(token))
    return sorted(out)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _callee(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _scores(node: ast.AST) -> bool:
    """A product of a query-named tensor by a key-named one."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return bool(_names(node.left) & _Q) and bool(_names(node.right) & _K)
    name = _callee(node)
    if name not in _PRODUCTS or not isinstance(node, ast.Call):
        return False
    args = [a for a in node.args if not (isinstance(a, ast.Constant) and isinstance(a.value, str))]
    if name == "baddbmm":
        args = args[1:]  # the input added to the product
    return len(args) >= 2 and bool(_names(args[0]) & _Q) and bool(_names(args[1]) & _K)


def _functions_around(trees: list[ast.Module], lines: list[int]) -> list[ast.AST]:
    """The innermost functions whose span holds one of ``lines``."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(trees)
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            lo, hi = getattr(child, "lineno", None), getattr(child, "end_lineno", None)
            if lo is None or hi is None or not any(lo <= ln <= hi for ln in lines):
                continue
            inner = [c for c in ast.walk(child) if c is not child and isinstance(c, _FUNCS)]
            if isinstance(child, _FUNCS) and not any(
                any(c.lineno <= ln <= (c.end_lineno or c.lineno) for ln in lines) for c in inner
            ):
                out.append(child)
            else:
                todo.append(child)
    return out


def manual_attention(data: bytes) -> list[RawFinding]:
    """The findings of ``manual-attention`` in one Python source: one per function."""
    if b"softmax" not in data or b"torch" not in data:
        return []
    lines = _lines(data)
    if not lines:
        return []
    trees = unit_trees(data, lines)
    if not trees:
        return []
    text = data.decode("utf-8", "replace").splitlines()
    out: list[RawFinding] = []
    for fn in _functions_around(trees, lines):
        nodes = list(ast.walk(fn))
        callees = {_callee(n) for n in nodes}
        if "softmax" not in callees or "scaled_dot_product_attention" in callees:
            continue
        site = next((n for n in nodes if _scores(n)), None)
        if site is None:
            continue
        ln = getattr(site, "lineno", 0)
        snippet = text[ln - 1] if 0 < ln <= len(text) else ""
        name = getattr(fn, "name", "?")
        out.append((RULE, ln, f"attention scores materialised by hand in {name}()", snippet, None, None))
    return out
