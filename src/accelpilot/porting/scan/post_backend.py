"""Post passes on other backends' code: classes needing another accelerator, kernels under its probe, no fallback."""

from __future__ import annotations

import ast
import re

from accelpilot.porting.scan.nodes import walk
from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.post_kit import _defs, _stmt_walk, _tree, _tree_holding
from accelpilot.porting.scan.visitor import PyVisitor

# ``if not <probe naming another accelerator>(``: the cheap pre-check of ``_foreign_classes``.
_NOT_FOREIGN = re.compile(rb"^[ \t]+if not [\w.]*(?:mps|xpu|npu|hpu|mlu|musa|sdaa|gcu|ipu)[\w.]*\(", re.M)


# The same without its line anchor: it starts with a literal, which sre finds fast (the anchored form tries every
# line of the file); no match of it means no match of ``_NOT_FOREIGN``.
_NOT_FOREIGN_FAST = re.compile(rb"if not [\w.]*(?:mps|xpu|npu|hpu|mlu|musa|sdaa|gcu|ipu)[\w.]*\(")


# Porting contexts a foreign class's lines give way to (its requirement of its accelerator is that backend's too).
_OPEN = (None, "optional", "requirement")


def _foreign_classes(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """Lines in a class one of whose methods raises unless another accelerator is there (``if not
    torch.backends.mps.is_available(): ... raise``, perhaps after a dequantize fallback) are ``backend-branch``,
    unless a stronger context holds: nothing in the class runs on the port's device, as in an ``if
    is_torch_xpu_available():`` body; so is the class's own requirement of that accelerator. A class requiring CUDA
    is the port's work and stays. Read on the whole file (a pruned scan may parse one method of a large class
    alone), only when the pre-check matches."""
    if not any(ctx in _OPEN for *_, ctx in found) or not _NOT_FOREIGN_FAST.search(data):
        return found
    if not _NOT_FOREIGN.search(data):
        return found
    probe = PyVisitor(None, True)
    open_lines = {ln for _, ln, *_, ctx in found if ctx in _OPEN and ln is not None}
    spans = [  # only a class holding an open line can change one
        (c.lineno, c.end_lineno or c.lineno)
        for c in _stmt_walk(_tree_holding(data, open_lines))
        if isinstance(c, ast.ClassDef) and probe.requires_foreign(c)
    ]
    return _backend_spans(found, spans)


def _backend_spans(found: list[RawFinding], spans: list[tuple[int, int]]) -> list[RawFinding]:
    """``found`` with its open findings (no context, or a weaker one) inside ``spans`` set apart as
    ``backend-branch``: the code there runs only on another accelerator."""
    if not spans:
        return found
    return [
        (r, ln, msg, snip, sub, "backend-branch")
        if ctx in _OPEN and ln is not None and any(a <= ln <= b for a, b in spans)
        else (r, ln, msg, snip, sub, ctx)
        for r, ln, msg, snip, sub, ctx in found
    ]


# ``if <probe naming another accelerator>():`` at column 0 with an import right under it: ``_foreign_kernels``'s
# cheap pre-check.
_FOREIGN_IMPORT = re.compile(
    rb"^if [\w.]*(?:mps|xpu|npu|hpu|mlu|musa|sdaa|gcu|ipu)[\w.]*\(\)[ \t]*:[ \t]*\r?\n[ \t]+(?:from|import) ", re.M
)


# Its unanchored form, a literal first (found fast by sre): no match of it means no match of ``_FOREIGN_IMPORT``.
_FOREIGN_IMPORT_FAST = re.compile(
    rb"if [\w.]*(?:mps|xpu|npu|hpu|mlu|musa|sdaa|gcu|ipu)[\w.]*\(\)[ \t]*:[ \t]*\r?\n[ \t]+(?:from|import) "
)


def _foreign_kernels(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """Lines of a module-level def that calls, on every path, a name the module imports only under a probe of
    another accelerator (``if is_torch_npu_available(): from torch_npu import npu_fusion_attention``, then ``def
    npu_flash_attn_varlen_func(...)`` calling it in both branches) are ``backend-branch``, unless a stronger context
    holds: without that accelerator the name is unbound and the def cannot run, so it is that backend's kernel
    binding (a port takes the generic attention path). A kernel imported under a CUDA or flash-attn probe is the
    port's work and stays, and so does a def that calls the name on one branch only (its other path is generic;
    the probed branch is set apart by the visitor when its test is the probe). Whole file parsed only when the
    pre-check matches."""
    if not any(ctx in _OPEN for *_, ctx in found) or not _FOREIGN_IMPORT_FAST.search(data):
        return found
    if not _FOREIGN_IMPORT.search(data):
        return found
    tree = _tree(data)
    probe = PyVisitor(None, True)
    bound = {
        a.asname or a.name.split(".")[0]
        for st in tree.body
        if isinstance(st, ast.If) and probe._foreign_probe(st.test)
        for imp in st.body
        if isinstance(imp, (ast.Import, ast.ImportFrom))
        for a in imp.names
    }
    spans = [
        (d.lineno, d.end_lineno or d.lineno)
        for d in tree.body
        if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and _must_call(d.body, bound)
    ]
    return _backend_spans(found, spans)


def _must_call(body: list[ast.stmt], names: set[str]) -> bool:
    """Every path through ``body`` calls one of ``names``: a plain statement that calls it, or an ``if`` both of
    whose branches must (read in order; a statement that leaves first ends the path without the call)."""
    for st in body:
        if isinstance(st, ast.If):
            if _must_call(st.body, names) and _must_call(st.orelse, names):
                return True
            continue
        if isinstance(st, (ast.With, ast.AsyncWith)) and _must_call(st.body, names):
            return True
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.AsyncWith)):
            continue
        if _branches(st):
            continue
        if any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id in names for c in walk(st)):
            return True
        if isinstance(st, (ast.Return, ast.Raise)):
            return False
    return False


def _branches(st: ast.stmt) -> bool:
    """A compound statement whose body may not run, or not to its end (a loop, ``try``, ``match``)."""
    return isinstance(st, (ast.For, ast.AsyncFor, ast.While, ast.Try, ast.Match))


# Tensor factories a function returns in place of a kernel's result when the kernel is missing: a placeholder
# (zeros, uninitialised memory), not a computation of the same result.
_PLACEHOLDERS = frozenset({"zeros_like", "zeros", "empty_like", "empty", "full_like", "ones_like"})


def _no_fallback(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """A hub kernel bound to a module global (``global k; k = get_kernel(...)``) where the file answers that global
    being None with ``return torch.zeros_like(...)``: without the kernel the model runs and returns placeholders, no
    fallback computes the result, so the kernel's line is ``no-fallback`` (blocking). A kernel whose absence is met
    by another computation (or by a raise) stays as it was. The whole file is parsed, only when it has a hub kernel
    on the main path."""
    lines = {ln for r, ln, _, _, _, ctx in found if r == "hub-kernel" and ctx is None}
    if not lines or b"global" not in data:  # no ``global`` statement: no kernel bound to a module global
        return found
    tree = _tree(data)
    bound: dict[int, set[str]] = {}  # kernel line -> the module globals its def binds
    for d in _defs(data):
        names = {n for g in _stmt_walk(d) if isinstance(g, ast.Global) for n in g.names}
        if names:
            for c in walk(d):
                if isinstance(c, ast.Call) and c.lineno in lines:
                    bound.setdefault(c.lineno, set()).update(names)
    if not bound:
        return found
    empty: set[str] = set()  # globals whose None is answered by returning a placeholder
    for node in _stmt_walk(tree):
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name)
            and len(node.test.ops) == 1
            and isinstance(node.test.ops[0], ast.Is)
            and isinstance(node.test.comparators[0], ast.Constant)
            and node.test.comparators[0].value is None
            and isinstance(node.body[0], ast.Return)
            and _placeholder(node.body[0].value)
        ):
            empty.add(node.test.left.id)
    return [
        (r, ln, msg, snip, sub, "no-fallback")
        if r == "hub-kernel" and ctx is None and ln is not None and bound.get(ln, set()) & empty
        else (r, ln, msg, snip, sub, ctx)
        for r, ln, msg, snip, sub, ctx in found
    ]


def _placeholder(value: ast.expr | None) -> bool:
    """``torch.zeros_like(q)``, also through methods chained on it (``.requires_grad_()``, ``.to(...)``)."""
    while isinstance(value, ast.Call):
        f = value.func
        if isinstance(f, ast.Attribute) and f.attr in _PLACEHOLDERS and isinstance(f.value, ast.Name):
            return True
        value = f.value if isinstance(f, ast.Attribute) else None
    return False


def _helper_name(name: str, data: bytes) -> bool:
    """Cheap pre-check of ``FileReach.sole_caller``'s helpers: a ``_private`` name or a module-level def."""
    if name.startswith("_") and not name.startswith("__"):
        return True
    head = name.encode() + b"("
    return data.startswith(b"def " + head) or b"\ndef " + head in data or b"\nasync def " + head in data
