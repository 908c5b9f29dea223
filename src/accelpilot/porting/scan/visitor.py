"""The Python visitor: one pass over a (pruned) syntax tree, at most one finding per rule and line."""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable
from typing import Any

from accelpilot.porting.scan.patterns import (
    CUDA_GRAPH_NAMES,
    DATA_DEPENDENT_METHODS,
    DEFAULT_ALIASES,
    DEVICE,
    DEVICE_RULE,
    EXACT_STRINGS,
    HOST_SYNC_METHODS,
    HUB_CALLS,
    NON_TORCH_MODULES,
    STRING_RULES,
    STRING_TRIGGER,
    TENSOR_VALUE_METHODS,
    RawFinding,
    lib_rule,
)


def _is_masky(node: ast.AST, top: bool = True) -> bool:
    """A subscript index that is a boolean mask: a comparison, ``.bool()``, ``~``/``&``/``|`` of those, or a
    name ending in ``mask`` (only as the whole index, so ``tuple[Tensor | BlockMask]`` annotations do not count)."""
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)):
        return _is_masky(node.operand, top)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return _is_masky(node.left, False) or _is_masky(node.right, False)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "bool":
        return True
    if not top:
        return False
    if isinstance(node, ast.Name):
        return node.id.lower().endswith("mask")
    if isinstance(node, ast.Attribute):
        return node.attr.lower().endswith("mask")
    return False


class PyVisitor:
    """One pass over the (pruned) tree; records RawFindings, at most one per rule and line."""

    def __init__(self, hits: list[int] | None, torch_file: bool) -> None:
        self.hits = hits  # sorted trigger lines, or None for "visit everything"
        self.torch_file = torch_file
        self.aliases: dict[str, str] = dict(DEFAULT_ALIASES)
        self.found: list[RawFinding] = []
        self._seen: set[tuple[str, int]] = set()
        self._consumed: set[int] = set()
        self.forward_depth = 0

    # -- plumbing --
    def add(self, rule: str, line: int, message: str) -> None:
        key = (rule, line)
        if key not in self._seen:
            self._seen.add(key)
            self.found.append((rule, line, message, ""))

    def _hit(self, start: int, end: int) -> bool:
        hits = self.hits
        if hits is None:
            return True
        i = bisect.bisect_left(hits, start)
        return i < len(hits) and hits[i] <= end

    def visit(self, node: ast.AST) -> None:
        ln = getattr(node, "lineno", None)
        if ln is not None and self.hits is not None:
            end = getattr(node, "end_lineno", None) or ln
            decorators = getattr(node, "decorator_list", None)
            if decorators:
                ln = min(ln, decorators[0].lineno)
            if not self._hit(ln, end):
                return
        handler = _HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node)
        else:
            self.generic(node)

    def generic(self, node: ast.AST) -> None:
        visit = self.visit
        for name in node._fields:
            v = getattr(node, name, None)
            if v.__class__ is list:
                for x in v:
                    if isinstance(x, ast.AST):
                        visit(x)
            elif isinstance(v, ast.AST):
                visit(v)

    def dotted(self, node: ast.AST) -> str | None:
        """``a.b.c`` with the root name resolved through import aliases; None if the root is not a name."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))

    # -- handlers --
    def v_expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstrings and bare strings are documentation, not code paths
        self.visit(node.value)

    def v_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """ "Inside forward" means: the innermost enclosing def (or class) is ``def forward``."""
        saved = self.forward_depth
        self.forward_depth = 1 if node.name == "forward" else 0
        try:
            self.generic(node)
        finally:
            self.forward_depth = saved

    def v_class(self, node: ast.ClassDef) -> None:
        saved = self.forward_depth
        self.forward_depth = 0
        try:
            self.generic(node)
        finally:
            self.forward_depth = saved

    def v_import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.asname:
                self.aliases[a.asname] = a.name
            rule = lib_rule(a.name)
            if rule:
                self.add(rule, node.lineno, f"import {a.name}")

    def v_importfrom(self, node: ast.ImportFrom) -> None:
        mod = node.module or ""
        if node.level:
            return  # relative import: the project's own code
        flagged = False
        for a in node.names:
            full = f"{mod}.{a.name}"
            self.aliases[a.asname or a.name] = full
            if mod.startswith("torch.cuda"):
                self.check_dotted(full, node.lineno)
            rule = lib_rule(full)
            if rule and not flagged:
                self.add(rule, node.lineno, f"from {mod} import {a.name}")
                flagged = rule == lib_rule(mod)
        if mod == "torch.utils.cpp_extension":
            for a in node.names:
                if a.name in ("CUDAExtension", "load_inline", "load"):
                    self.add("cpp-extension-cuda", node.lineno, f"from {mod} import {a.name}")
                    break

    def v_attribute(self, node: ast.Attribute) -> None:
        d = self.dotted(node)
        if d is None:
            base: ast.AST = node
            while isinstance(base, ast.Attribute):
                base = base.value
            self.visit(base)
            return
        self.check_dotted(d, node.lineno)

    def check_dotted(self, d: str, line: int) -> None:
        if d.startswith("torch."):
            if d.startswith("torch.cuda."):
                if d.startswith("torch.cuda.amp"):
                    self.add("amp-cuda", line, d)
                elif d.startswith(CUDA_GRAPH_NAMES):
                    self.add("cuda-graphs", line, d)
                else:
                    self.add("torch-cuda-api", line, d)
            elif d.startswith(("torch.backends.cudnn", "torch.backends.cuda")):
                self.add("cudnn-tf32-flag", line, d)
            elif d.startswith(("torch.backends.mps", "torch.mps")):
                self.add("mps-device", line, d)
            elif d.startswith("torch.backends."):
                self.add("torch-backends", line, d)
            elif d.startswith("torch.neuron"):
                self.add("neuron-api", line, d)
            elif d in ("torch.float64", "torch.double"):
                self.add("float64-dtype", line, d)
            elif d.startswith(
                (
                    "torch.complex",
                    "torch.cfloat",
                    "torch.cdouble",
                    "torch.chalf",
                    "torch.polar",
                    "torch.view_as_complex",
                )
            ):
                self.add("complex-dtype", line, d)
            elif d.startswith("torch.utils.cpp_extension.") and d.rsplit(".", 1)[1] in (
                "CUDAExtension",
                "load_inline",
                "load",
            ):
                self.add("cpp-extension-cuda", line, d)
        elif d.startswith(("triton.jit", "triton.autotune")):
            self.add("triton-kernel", line, f"@{d}")
        elif d.startswith(("neuronxcc.nki.jit", "nki.jit")):
            self.add("nki-kernel", line, f"@{d}")
        elif d.startswith("numba.cuda."):
            self.add("numba-cuda", line, d)

    def v_call(self, node: ast.Call) -> None:
        f = node.func
        line = node.lineno
        name: str | None = None
        recv: str | None = None
        if isinstance(f, ast.Attribute):
            name = f.attr
            recv = self.dotted(f.value)
            line = f.end_lineno or line  # method calls: report the line holding ".name("
        elif isinstance(f, ast.Name):
            name = f.id
        if name is not None:
            root = (recv or "").split(".", 1)[0]
            is_module = root in ("torch", "numba") or root in NON_TORCH_MODULES
            if isinstance(f, ast.Attribute):
                if name == "cuda" and not is_module:
                    self.add("cuda-call", line, ".cuda()")
                elif name == "double" and self.torch_file and not is_module:
                    self.add("float64-dtype", line, ".double()")
                elif name in HOST_SYNC_METHODS and self.forward_depth and self.torch_file:
                    self.add("item-in-forward", line, f".{name}() inside forward")
                elif name == "long" and self.forward_depth and self.torch_file and not is_module:
                    self.add("int64-index", line, ".long() inside forward")
                elif name in DATA_DEPENDENT_METHODS and self.torch_file and root not in NON_TORCH_MODULES:
                    self.add("data-dependent-op", line, f"{name}()")
                elif name == "where" and root == "torch" and len(node.args) == 1 and not node.keywords:
                    self.add("data-dependent-op", line, "torch.where(condition) with one argument")
            if name in ("autocast", "GradScaler"):
                self._amp(node, name)
            elif name in ("load_inline", "CUDAExtension"):
                self.add("cpp-extension-cuda", node.lineno, f"{name}(...)")
            elif name in HUB_CALLS or (name == "load" and recv == "torch.hub"):
                self.add("hub-download", node.lineno, f"{name}(...)")
        self.generic(node)

    def _amp(self, node: ast.Call, name: str) -> None:
        cands: list[ast.expr] = list(node.args[:1]) + [k.value for k in node.keywords if k.arg == "device_type"]
        for c in cands:
            if isinstance(c, ast.Constant) and c.value == "cuda":
                self._consumed.add(id(c))
                self.add("amp-cuda", node.lineno, f'{name}("cuda")')

    def v_subscript(self, node: ast.Subscript) -> None:
        sl = node.slice
        # one-line rule (like the trigger): the index starts on the line of its "["
        if self.torch_file and sl.lineno == (node.value.end_lineno or node.lineno):
            elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
            if any(_is_masky(e) for e in elts):
                self.add("boolean-mask-index", sl.lineno, "boolean-mask indexing")
        self.generic(node)

    def _cond(self, test: ast.expr, keyword_line: int) -> None:
        """A tensor-value method called on the line of the ``if``/``while``/``assert`` keyword (one-line rule)."""
        if self.forward_depth and self.torch_file:
            for sub in ast.walk(test):
                if (
                    isinstance(sub, ast.Call)
                    and isinstance(sub.func, ast.Attribute)
                    and sub.func.attr in TENSOR_VALUE_METHODS
                    and (sub.func.end_lineno or sub.lineno) == keyword_line
                ):
                    self.add("tensor-control-flow", keyword_line, f"branch on .{sub.func.attr}() inside forward")
                    break

    def v_if(self, node: ast.If | ast.While | ast.Assert) -> None:
        self._cond(node.test, node.lineno)
        self.generic(node)

    def v_ifexp(self, node: ast.IfExp) -> None:
        self._cond(node.test, node.test.lineno)
        self.generic(node)

    def v_constant(self, node: ast.Constant) -> None:
        v = node.value
        if not isinstance(v, str) or id(node) in self._consumed or len(v) > 20000:
            return
        line = node.lineno
        m = DEVICE.match(v)
        if m:
            self.add(DEVICE_RULE[m.group(1)], line, f"device string {v!r}")
            return
        rule = EXACT_STRINGS.get(v)
        if rule:
            self.add(rule, line, f"string {v!r}")
            return
        if STRING_TRIGGER.search(v):
            for rid, pat, template in STRING_RULES:
                mm = pat.search(v)
                if mm:
                    self.add(rid, line, template.format(m=mm.group(0)))


_HANDLERS: dict[type, Callable[[PyVisitor, Any], None]] = {
    ast.Expr: PyVisitor.v_expr,
    ast.FunctionDef: PyVisitor.v_function,
    ast.ClassDef: PyVisitor.v_class,
    ast.AsyncFunctionDef: PyVisitor.v_function,
    ast.Import: PyVisitor.v_import,
    ast.ImportFrom: PyVisitor.v_importfrom,
    ast.Attribute: PyVisitor.v_attribute,
    ast.Call: PyVisitor.v_call,
    ast.Subscript: PyVisitor.v_subscript,
    ast.If: PyVisitor.v_if,
    ast.While: PyVisitor.v_if,
    ast.IfExp: PyVisitor.v_ifexp,
    ast.Assert: PyVisitor.v_if,
    ast.Constant: PyVisitor.v_constant,
}
