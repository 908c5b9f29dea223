"""The Python visitor: one pass over a (pruned) syntax tree, at most one finding per rule and line."""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable
from typing import Any

from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.nodes import walk
from accelpilot.porting.scan.patterns import (
    BENCHMARK_MODULES,
    CUDA_GRAPH_NAMES,
    DATA_DEPENDENT_METHODS,
    DEFAULT_ALIASES,
    DEVICE,
    DEVICE_RULE,
    DISPATCHED_BY_DEFAULT,
    EXACT_STRINGS,
    HOST_SYNC_METHODS,
    HUB_CALLS,
    KERNEL_RULES,
    NON_TORCH_MODULES,
    STRING_RULES,
    STRING_TRIGGER,
    TENSOR_VALUE_METHODS,
    RawFinding,
    lib_rule,
    package_of,
    probe_kind,
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


# Compile-hazard rules grouped per file: their subject is the innermost enclosing def (``name:line``), so that the
# log can make the hazards one rewrite of one function fixes one item (``build_items``).
FUNCTION_RULES = frozenset(r.id for r in RULES.values() if r.category == "compile_hazard" and r.item == "file")


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
        # Reach: "probe"/"skip-guard"/"benchmark-tool" (not porting work) or "optional" (a guarded path), set by
        # the enclosing call, ``if`` or ``try``; the innermost def names the kernel a decorator belongs to.
        self.context: str | None = None
        self.def_name: str | None = None
        self.def_node: ast.FunctionDef | ast.AsyncFunctionDef | None = None  # the innermost def, for data flow
        self.loop_depth = 0
        self.if_depth = 0
        # The backend whose branch of a per-backend dispatch is being visited, and every chain link read so far.
        self.backend_branch: str | None = None
        self._dispatch: dict[int, tuple[ast.If, str | None]] = {}
        self._given_ok: set[int] = set()  # placement calls that select a device already chosen (see _places)
        self._apple: set[int] = set()  # chain links whose body runs only on MPS, beside a generic branch
        self._loop_vars: list[frozenset[str]] = []  # names bound by each enclosing ``for``, innermost last
        # per enclosing loop (pushed with ``_loop_vars``): its trip count is fixed by the module (``_module_trips``)
        self._unrolled: list[bool] = []
        # per enclosing loop: its body and its own target names (read by ``_fresh_names`` only for a candidate)
        self._fresh: list[tuple[list[ast.stmt], dict[str, int]]] = []
        self._once_at = -1  # loop depth whose body we are in only once (``if i == k:``), else -1
        self._default_of: tuple[str, str] | None = None  # (def, parameter) whose default is being visited
        self._target_links: set[int] = set()  # links of chains read by ``_visit_target_chain``
        self._tables: set[int] = set()  # literal containers already read as a whole (device or dtype tables)
        # classes of this file handed to a default dispatcher by a call (python.py sets their bodies apart)
        self.dispatched: set[str] = set()
        # per def read by ``_not_a_mask_read``: its bindings, and (every parameter, the host-typed ones)
        self._def_names: dict[int, tuple[dict[str, list[ast.expr] | None], tuple[frozenset[str], frozenset[str]]]] = {}
        self._binds: dict[int, dict[str, list[ast.expr] | None]] = {}  # id(def) -> its ``_bindings``
        self._varlen_defs: dict[int, tuple[frozenset[int], bool]] = {}  # per def: ``_add_varlen``'s reading of it
        self._nccl_of: dict[int, frozenset[str]] = {}  # per def: ``_library_nccl_vars``

    # -- plumbing --
    def add(self, rule: str, line: int, message: str, subject: str | None = None, context: str | None = None) -> None:
        key = (rule, line)
        if key not in self._seen:
            self._seen.add(key)
            if subject is None and rule in KERNEL_RULES:
                subject = self.def_name
            elif subject is None and rule in FUNCTION_RULES and self.def_node is not None:
                subject = f"{self.def_name}:{self.def_node.lineno}"  # the function one rewrite changes (log.py)
            elif subject is None and rule in DEFAULT_RULES and self._default_of is not None:
                subject = default_subject(*self._default_of)
            self.found.append((rule, line, message, "", subject, context or self.context))

    def _within(self, context: str, node: ast.AST) -> None:
        """Visit ``node``'s children with ``context`` unless an outer, stronger context already holds."""
        saved = self.context
        if saved is None or (saved == "optional" and context != "optional"):
            self.context = context
        try:
            self.generic(node)
        finally:
            self.context = saved

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
        saved = (self.forward_depth, self.def_name, self.loop_depth, self.def_node, self.backend_branch)
        saved_vars, saved_once, saved_fresh = self._loop_vars, self._once_at, self._fresh
        self.forward_depth = 1 if node.name == "forward" else 0
        self.def_name, self.def_node = node.name, node
        self.loop_depth = 0  # a def inside a loop is not run per iteration
        self._loop_vars, self._once_at, self._fresh = [], -1, []
        self.backend_branch = None  # nor is a def inside a backend's branch run by that branch
        try:
            saved_context = self.context
            if _PROBE_DEF.match(node.name) and saved_context in (None, "optional"):
                # a def that answers whether something can run here (``is_x_available``, ``is_x_loadable``: what
                # its callers ask, a probe by its name) only asks: ``torch.cuda.get_device_capability()`` after its
                # own ``if not torch.cuda.is_available(): return False`` is part of the question
                self.context = "probe"
            try:
                for d in node.decorator_list:
                    self.visit(d)
                self._visit_parameters(node)  # not ``returns``: a type, not code (v_arg)
                for x in node.body:
                    self.visit(x)
            finally:
                self.context = saved_context
        finally:
            self.forward_depth, self.def_name, self.loop_depth, self.def_node, self.backend_branch = saved
            self._loop_vars, self._once_at, self._fresh = saved_vars, saved_once, saved_fresh

    def _visit_parameters(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """The parameters, then each default with the parameter it belongs to (``self._default_of``): a device
        default (``device="cuda:0"``) is named ``default <def>(<param>)`` in its subject, so that the scan can set it
        apart when every call in the repository passes that argument (``run.py``, ``defaults.py``)."""
        a = node.args
        positional = [*a.posonlyargs, *a.args]
        for x in (*positional, a.vararg, *a.kwonlyargs, a.kwarg):
            if x is not None:
                self.visit(x)
        tail = positional[len(positional) - len(a.defaults) :]
        pairs = [*zip(tail, a.defaults, strict=True), *zip(a.kwonlyargs, a.kw_defaults, strict=True)]
        for param, default in pairs:
            if default is None:
                continue
            saved, self._default_of = self._default_of, (node.name, param.arg)
            try:
                self.visit(default)
            finally:
                self._default_of = saved

    def v_class(self, node: ast.ClassDef) -> None:
        saved = self.forward_depth
        self.forward_depth = 0
        try:
            dispatcher = next((d for d in node.decorator_list if _decorator_name(d) in DISPATCHED_BY_DEFAULT), None)
            if dispatcher is None:
                self.generic(node)
                return
            # the library's dispatcher runs by default: one repository item; this body is its eager reference
            self.add("moe-experts-dispatch", dispatcher.lineno, f"@{_decorator_name(dispatcher)} class {node.name}")
            self._within("reference-fallback", node)
        finally:
            self.forward_depth = saved

    def requires_foreign(self, node: ast.ClassDef) -> bool:
        """A method of the class begins a top-level ``if not <probe of one accelerator other than CUDA/the target>:``
        whose body raises (on some path, after perhaps falling back to dequantizing first): nothing in the class
        runs on the port's device unless that accelerator is there. A CUDA requirement is not this (it is the work)."""
        for m in node.body:
            if not isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for st in m.body:
                if (
                    isinstance(st, ast.If)
                    and isinstance(st.test, ast.UnaryOp)
                    and isinstance(st.test.op, ast.Not)
                    and self._foreign_probe(st.test.operand)
                    and any(isinstance(x, ast.Raise) for b in st.body for x in walk(b))
                ):
                    return True
        return False

    def _import_reach(self) -> str | None:
        """An import inside a def runs only when that def is called (a lazy import), one under an ``if`` only on
        that branch: neither is shown to be on the model's forward path, so at most a warning."""
        if self.context is not None:
            return None  # an outer context (probe, optional, ...) already says how it is reached
        if self.def_name is not None:
            return f"lazy-import:{self.def_name}"
        return "optional" if self.if_depth else None

    def v_import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.asname:
                self.aliases[a.asname] = a.name
            rule = lib_rule(a.name)
            if rule:
                bench = "benchmark-tool" if a.name.startswith(BENCHMARK_MODULES) else self._import_reach()
                self.add(rule, node.lineno, f"import {a.name}", subject=package_of(rule, a.name), context=bench)

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
                bench = "benchmark-tool" if full.startswith(BENCHMARK_MODULES) else self._import_reach()
                self.add(
                    rule, node.lineno, f"from {mod} import {a.name}", subject=package_of(rule, full), context=bench
                )
                flagged = rule == lib_rule(mod)
        if mod == "torch.utils.cpp_extension":
            for a in node.names:
                if a.name in ("CUDAExtension", "CppExtension", "load_inline", "load"):
                    self.add("cpp-extension-cuda", node.lineno, f"from {mod} import {a.name}")
                    break

    def v_attribute(self, node: ast.Attribute) -> None:
        if id(node) in self._consumed:
            return  # a dtype named in a dtype table (``"F64": torch.float64``): a name, not a use
        d = self.dotted(node)
        if d is None:
            base: ast.AST = node
            while isinstance(base, ast.Attribute):
                base = base.value
            self.visit(base)
            return
        if "cu_seqlens" in d and id(node) not in self._consumed:
            root: ast.AST = node
            while isinstance(root, ast.Attribute):
                root = root.value
            self._add_varlen(root, node.lineno, d)
        self.check_dotted(d, node.lineno)

    def check_dotted(self, d: str, line: int) -> None:
        if d.startswith("torch."):
            if d.startswith("torch.cuda."):
                if d.startswith("torch.cuda.amp"):
                    self.add("amp-cuda", line, d)
                elif d.startswith(CUDA_GRAPH_NAMES):
                    self.add("cuda-graphs", line, d)
                elif d in _CUDA_NO_OPS:
                    self.add("torch-cuda-api", line, d, context="no-op-elsewhere")
                else:
                    self.add("torch-cuda-api", line, d, context=self._backend_call("cuda"))
            elif d.startswith(("torch.backends.cudnn", "torch.backends.cuda")) or (
                # TF32 switches of any backend (``fp32_precision``, MUSA's ``mudnn.allow_tf32``) are the same
                # numerics setting as cuDNN's: one item, not a second ``torch.backends`` one
                d.startswith("torch.backends.") and d.endswith((".allow_tf32", ".fp32_precision"))
            ):
                self.add("cudnn-tf32-flag", line, d)
            elif d.startswith(("torch.backends.mps", "torch.mps")):
                self.add("mps-device", line, d, context=self._backend_call("mps"))
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
                if name == "cuda" and not is_module and not _delegates(self.def_name, node):
                    # inside a ``def cuda`` (``Rigid.cuda()`` mirroring ``Tensor.cuda()``) it is delegation: the
                    # placement is the caller's ``.cuda()``, itself a finding where it is called (``_delegates``)
                    self.add("cuda-call", line, ".cuda()")
                elif name == "double" and self.torch_file and not is_module:
                    self.add("float64-dtype", line, ".double()")
                elif name in HOST_SYNC_METHODS and self.forward_depth and self.torch_file:
                    if not self._host_built(f.value, node.lineno, 6):
                        self.add("item-in-forward", line, f".{name}() inside forward")
                elif name == "long" and self.forward_depth and self.torch_file and not is_module:
                    if not self._fits_int32(node, f.value):
                        self.add("int64-index", line, ".long() inside forward")
                elif name in DATA_DEPENDENT_METHODS and self.torch_file and root not in NON_TORCH_MODULES:
                    self.add("data-dependent-op", line, f"{name}()")
                elif name == "where" and root == "torch" and len(node.args) == 1 and not node.keywords:
                    self.add("data-dependent-op", line, "torch.where(condition) with one argument")
            if name in ("startswith", "endswith") and isinstance(f, ast.Attribute):
                # ``device.startswith("mps")`` compares a device string, like ``== "mps"`` (``v_compare``)
                for a in node.args[:1]:
                    for e in a.elts if isinstance(a, ast.Tuple) else [a]:
                        if isinstance(e, ast.Constant) and _COMPARED_DEVICE.match(str(e.value)):
                            self._consumed.add(id(e))
            if name == "get" and isinstance(f, ast.Attribute) and node.args and _device_kind(node.args[0]) == "cuda":
                # ``components.get("cuda", {})`` (a CUDA toolkit's version.json): the first argument of a mapping
                # lookup is a key of the data, not a device; a device as the default (``.get("device", "cuda")``) stays
                self._consumed.add(id(node.args[0]))
            if name in ("getattr", "hasattr") and len(node.args) >= 2 and self.dotted(node.args[0]) == "torch.version":
                # ``getattr(torch.version, "cuda", None)``: the version of the toolkit torch was built with, as
                # ``torch.version.cuda`` reads it (no finding either): an attribute's name, not a device
                self._consumed.add(id(node.args[1]))
            if name in DISPATCHED_BY_DEFAULT:
                self._dispatched_class(node, name)
            if name in ("add", "append") and isinstance(f, ast.Attribute) and self._inventory(node, f):
                self._consumed.add(id(node.args[0]))
            if name in ("autocast", "GradScaler"):
                self._amp(node, name)
            elif name in _EXT_BUILDERS or (name == "load" and self.dotted(f) == "torch.utils.cpp_extension.load"):
                ext = self._ext_name(node)
                self.add("cpp-extension-cuda", node.lineno, f"{name}({ext!r})" if ext else f"{name}(...)", subject=ext)
            elif name in HUB_CALLS or (name == "load" and recv == "torch.hub"):
                if not _local_source(node):
                    self.add("hub-download", node.lineno, f"{name}(...)")
            else:
                self._more_calls(node, name)
            for kw in node.keywords:
                if kw.arg == "help" and isinstance(kw.value, ast.Constant):
                    self._consumed.add(id(kw.value))  # a URI in help text is documentation, not data movement
            guard = probe_kind(name, recv)
            if guard is not None:
                self._within(guard, node)
                return
            if recv is not None and recv.startswith(BENCHMARK_MODULES):
                self._within("benchmark-tool", node)
                return
        self.generic(node)

    def _inventory(self, node: ast.Call, f: ast.Attribute) -> bool:
        """``devices.add("cuda")`` where the same def also adds another device type to ``devices``: a vocabulary of
        backends built one call at a time (``get_available_devices``), like a literal naming two device types
        (``_read_table``), not a choice of CUDA. Stays: one device type added alone."""
        arg = node.args[0] if len(node.args) == 1 and not node.keywords else None
        if arg is None or _device_kind(arg) is None or self.def_node is None:
            return False
        target = ast.unparse(f.value)
        for sub in walk(self.def_node):
            if (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and sub.func.attr in ("add", "append")
                and len(sub.args) == 1
                and _device_kind(sub.args[0]) not in (None, _device_kind(arg))
                and ast.unparse(sub.func.value) == target
            ):
                return True
        return False

    def _dispatched_class(self, node: ast.Call, name: str) -> None:
        """``use_experts_implementation(experts_class=FP8Experts, ...)``: the call form of the decorator, wrapping a
        class of this file; its body is then the eager reference, like a decorated class's (the call may come after
        the class, so python.py's ``_dispatched_bodies`` sets the body apart once the file is visited)."""
        given = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "experts_class")]
        for a in given:
            if isinstance(a, ast.Name):
                self.dispatched.add(a.id)
                self.add("moe-experts-dispatch", node.lineno, f"{name}({a.id})")

    def _host_built(self, value: ast.expr, line: int, depth: int) -> bool:
        """``value`` is a tensor built from Python values: ``torch.as_tensor([n])``/``torch.tensor([n, m])`` of a
        list/tuple/constant, through one-input ops (``torch.clamp(t, min=1)``, ``t.float()``) and through the last
        assignment of a name earlier in the same def. Reading it back (``.item()``) returns a number the host already
        had, not a value of the model's data (the loss's ``num_boxes = torch.as_tensor([num_boxes]).clamp(min=1)
        .item()``)."""
        if depth == 0:
            return False
        if isinstance(value, ast.Name) and self.def_node is not None:
            last = max(
                (
                    a
                    for a in walk(self.def_node)
                    if isinstance(a, ast.Assign)
                    and a.lineno < line
                    and any(isinstance(t, ast.Name) and t.id == value.id for t in a.targets)
                ),
                key=lambda a: a.lineno,
                default=None,
            )
            return last is not None and self._host_built(last.value, last.lineno, depth - 1)
        if isinstance(value, ast.BinOp) and isinstance(value.op, _ARITH):
            # ``num_boxes / world_size``: a host count scaled by a number the inputs do not decide
            a, b = value.left, value.right
            return (self._host_built(a, line, depth - 1) and self._host_number(b)) or (
                self._host_built(b, line, depth - 1) and self._host_number(a)
            )
        if isinstance(value, ast.Call) and _call_name(value) in _COLLECTIVES and value.args:
            # ``reduce(num_boxes)``: every rank gives its host count; the sum is still no value of the model's data
            return self._host_built(value.args[0], line, depth - 1)
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
            return False
        name, recv = value.func.attr, value.func.value
        if isinstance(recv, ast.Name) and self.aliases.get(recv.id, recv.id) == "torch":
            if name in ("as_tensor", "tensor"):
                return bool(value.args) and isinstance(value.args[0], (ast.List, ast.Tuple, ast.Constant))
            return name in _ONE_INPUT and bool(value.args) and self._host_built(value.args[0], line, depth - 1)
        return name in _ONE_INPUT and self._host_built(recv, line, depth - 1)

    def _host_number(self, value: ast.expr) -> bool:
        """A number the function's inputs do not decide: a constant, or a local name assigned in the def, every
        assignment of which reads neither a parameter nor ``self`` (``world_size = 1`` / ``dist.get_world_size()``)."""
        if isinstance(value, ast.Constant):
            return isinstance(value.value, (int, float)) and not isinstance(value.value, bool)
        node = self.def_node
        if not isinstance(value, ast.Name) or node is None:
            return False
        a = node.args
        params = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x is not None}
        sources = [
            x.value
            for x in walk(node)
            if isinstance(x, ast.Assign) and any(isinstance(t, ast.Name) and t.id == value.id for t in x.targets)
        ]
        return bool(sources) and not any(
            isinstance(n, ast.Name) and n.id in params for src in sources for n in walk(src)
        )

    def _ext_name(self, node: ast.Call) -> str | None:
        """The module name a cpp_extension builder gives its build (first argument or ``name=``): what the
        project's Python files import."""
        cands = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "name")]
        for c in cands:
            if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value:
                self._consumed.add(id(c))
                return c.value
        return None

    def _more_calls(self, node: ast.Call, name: str) -> None:
        """Calls added for real code: hub kernels and datasets, HTTP downloads, torch.compile's backend. Each
        needs its trigger token literally on the call's line (``torch.compile``, ``requests.``), which keeps the
        pruned scan exact."""
        f = node.func
        base = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None
        first = node.args[0] if node.args else None
        if name == "get_kernel":
            repo = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
            if first is not None and repo is not None:
                self._consumed.add(id(first))
            # a kernel built for Apple's Metal/MLX runs only on MPS: like an XPU-only branch, the port leaves it be
            apple = repo is not None and bool(_APPLE_KERNEL & set(re.split(r"[/_.-]", repo.lower())))
            context = "backend-branch" if apple and self.context in (None, "optional") else None
            label = f"get_kernel({repo!r})" if repo else "get_kernel(...)"
            self.add("hub-kernel", node.lineno, label, subject=repo, context=context)
        elif name in ("load_dataset", "cached_file"):
            if not _local_source(node):
                self.add("hub-download", node.lineno, f"{name}(...)")
        elif base == "requests" and name in ("get", "request", "urlopen"):
            # ``requests.post/put/patch`` (and ``request("POST", ...)``) send a body: an upload or telemetry, not
            # data moved into the workload
            if not (name == "request" and _upload_method(first)):
                self.add("http-download", node.lineno, f"requests.{name}(...)")
        elif name in ("urlopen", "urlretrieve") and _root_name(f) == "urllib":
            if name == "urlretrieve" or not self._urlopen_sends(node):
                self.add("http-download", node.lineno, f"urllib {name}(...)")
        elif name == "compile" and base == "torch":
            backend = next((k.value for k in node.keywords if k.arg == "backend"), None)
            if isinstance(backend, ast.Constant):
                self._consumed.add(id(backend))  # a backend name, not a device string
            if backend is None or (isinstance(backend, ast.Constant) and backend.value == "inductor"):
                self.add("compile-backend", node.lineno, "torch.compile without the target's backend")

    def _urlopen_sends(self, node: ast.Call) -> bool:
        """``urlopen`` that sends a body: ``urlopen(url, data)``, or of a ``Request`` built with ``data=`` or
        ``method="POST"/"PUT"/"PATCH"`` (inline, or bound to a name by every assignment of it in the enclosing
        def). Sending trainer status or uploading a file is not a download: nothing the workload reads comes in."""
        data = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "data"), None)
        if data is not None and not _is_none(data):
            return True
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "url"), None)
        if isinstance(first, ast.Call):
            return self._request_sends(first)
        if not (isinstance(first, ast.Name) and self.def_node is not None):
            return False
        values = [
            a.value
            for a in walk(self.def_node)
            if isinstance(a, (ast.Assign, ast.AnnAssign))
            and a.value is not None
            and any(isinstance(t, ast.Name) and t.id == first.id for t in _targets(a))
        ]
        return bool(values) and all(isinstance(v, ast.Call) and self._request_sends(v) for v in values)

    def _request_sends(self, call: ast.Call) -> bool:
        """``urllib.request.Request(url, data, ...)``: a POST unless ``method=`` says otherwise (urllib's rule)."""
        if self.dotted(call.func) != "urllib.request.Request":
            return False
        method = next((k.value for k in call.keywords if k.arg == "method"), None)
        if method is not None:
            return _upload_method(method)
        data = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "data"), None)
        return data is not None and not _is_none(data)

    def _fits_int32(self, call: ast.Call, value: ast.expr) -> bool:
        """``value.long()`` whose values are bounded by a tensor's size, so computing it as int32 (what Trn1
        does with int64) cannot overflow: a boolean made 0/1 (``(ids != pad).long()``, ``mask.ne(0).long()``), a
        count of one (``(ids != pad).sum(-1).long()``), or lengths whose maximum the same def uses as a tensor's
        extent (``lengths = ....long()`` then ``torch.arange(lengths.max())``: every value is at most a length the
        code materialises), or the index argument of an op that requires int64 indices (``x.scatter(-1,
        idx.long(), v)``, ``gather``, ``index_select``): an index past the indexed dimension is an error, so its
        values are below that size. Any other ``.long()``, such as indices computed from data, stays a finding."""
        if _is_boolean(value) or _counts_booleans(value):
            return True
        if self.def_node is None:
            return False
        for sub in walk(self.def_node):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _INDEX_OPS:
                at = 2 if self.dotted(sub.func.value) == "torch" else 1  # torch.gather(x, dim, i) / x.gather(dim, i)
                if (len(sub.args) > at and sub.args[at] is call) or any(
                    k.arg == "index" and k.value is call for k in sub.keywords
                ):
                    return True
        names = {
            t.id
            for a in walk(self.def_node)
            if isinstance(a, (ast.Assign, ast.AnnAssign)) and a.value is call
            for t in _targets(a)
            if isinstance(t, ast.Name)
        }
        if not names:
            return False
        for sub in walk(self.def_node):
            if isinstance(sub, ast.Call) and self.dotted(sub.func) == "torch.arange":
                ends = [*sub.args[:1], *(k.value for k in sub.keywords if k.arg == "end")]
                if len(sub.args) <= 1 and any(_extent_of(e) in names for e in ends):
                    return True
        return False

    def _amp(self, node: ast.Call, name: str) -> None:
        cands: list[ast.expr] = list(node.args[:1]) + [k.value for k in node.keywords if k.arg == "device_type"]
        for c in cands:
            if isinstance(c, ast.Constant) and c.value == "cuda":
                self._consumed.add(id(c))
                self.add("amp-cuda", node.lineno, f'{name}("cuda")')

    def v_subscript(self, node: ast.Subscript) -> None:
        sl = node.slice
        # one-line rule (like the trigger): the index starts on the line of its "["; an assignment through a mask
        # (``x[mask] = 0``) keeps the shape, only a read changes it
        store = isinstance(node.ctx, ast.Store)
        if self.torch_file and not store and sl.lineno == (node.value.end_lineno or node.lineno):
            elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
            if any(_is_masky(e) and not self._not_a_mask_read(e) for e in elts):
                self.add("boolean-mask-index", sl.lineno, "boolean-mask indexing")
        self.generic(node)

    def _not_a_mask_read(self, index: ast.expr) -> bool:
        """A masky index whose read keeps a shape fixed: a name the function builds only as integers
        (``cls_mask = attention_mask.argmax(-1)``: a gather, not a mask), or a mask made only from the module's own
        state, constants and host-typed arguments (``self._vocab_map != SUPPRESS``, a config-only noise schedule):
        its count is the same on every call, decided before any input tensor is seen."""
        node = self.def_node
        if node is None:
            return False
        known = self._def_names.get(id(node))
        if known is None:
            a = node.args
            every = frozenset(x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x)
            known = self._def_names[id(node)] = (self._bindings_of(node), (every, _host_params(node)))
        binds, params = known
        if isinstance(index, ast.Name) and index.id in binds:
            values = binds[index.id]
            if values and all(_integer_valued(v) for v in values):
                return True
        return _fixed_by_module(index, binds, params, set(), 6)

    def _cond(self, test: ast.expr, keyword_line: int) -> None:
        """A tensor-value method called on the line of the ``if``/``while``/``assert`` keyword (one-line rule)."""
        if self.forward_depth and self.torch_file:
            for sub in walk(test):
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
        if isinstance(node, ast.If):
            self._refuses_packing(node)
        if isinstance(node, ast.While):
            self.loop_depth += 1
            self._loop_vars.append(frozenset())  # no loop variable: an ``if`` in it is not shown to run once
            self._unrolled.append(False)
            self._fresh.append((node.body, {}))
            try:
                self.generic(node)
            finally:
                self.loop_depth -= 1
                self._loop_vars.pop()
                self._unrolled.pop()
                self._fresh.pop()
            return
        if isinstance(node, ast.If) and self.context in (None, "optional") and self._only_asks_cuda(node):
            # ``if torch.cuda.is_available(): major, minor = torch.cuda.get_device_capability()`` (or ``if
            # len(torch.cuda.default_generators) > 0: seed = ...[torch.cuda.current_device()].seed() else: <generic>``):
            # the body only reads facts of the CUDA device the test found and refuses nothing; without CUDA the code
            # after it (or the else) runs, so the body is part of the probe
            self._visit_if_under(node, "probe", test_too=True)
            return
        if isinstance(node, ast.If) and self.context in (None, "optional") and _asks_gpu_only_runtime(node.test):
            # ``elif is_sagemaker_mp_enabled(): device = torch.device("cuda", smp.local_rank())``: only SageMaker's
            # model/data-parallel library runs this body, and it runs only on NVIDIA GPU instances
            self._visit_if_under(node, "other-runtime", test_too=False)
            return
        if isinstance(node, ast.If) and self.context in (None, "optional") and self._has_target_arm(node):
            self._visit_target_chain(node)
            return
        if isinstance(node, ast.If) and self._is_probe(node.test):
            if self.context is None and any(isinstance(x, ast.Raise) for x in node.body):
                # ``if not torch.cuda.is_available(): raise ...``: not a question but a requirement of this path
                self.context = "requirement"
                try:
                    self.visit(node.test)
                finally:
                    self.context = None
            else:
                self.visit(node.test)
            saved, saved_branch = self.context, self.backend_branch
            self.context = saved or "optional"  # the guarded body (and its else) is an optional path
            try:
                self.backend_branch = self._dispatch_backend(node) or saved_branch
                if saved in (None, "optional") and (self._foreign_probe(node.test) or id(node) in self._apple):
                    # ``if is_torch_xpu_available(): ...``: only another accelerator ever runs this body (an
                    # ``elif`` link is visited inside the chain's ``optional`` else: that is no stronger context)
                    self.context = "backend-branch"
                for x in node.body:
                    self.visit(x)
                self.context = saved or "optional"
                self.backend_branch = saved_branch
                for x in node.orelse:
                    self.visit(x)
            finally:
                self.context, self.backend_branch = saved, saved_branch
            return
        if isinstance(node, ast.If) and self.context in (None, "optional") and _asks_flash(node.test):
            # ``if is_flash_attention_requested(config): <cu_seqlens for flash_attn_varlen_func>``: the body is the
            # flash-attn package's path (its own item); a port runs sdpa/eager, the code after or the else
            self._visit_if_under(node, "backend-branch", test_too=False)
            return
        if isinstance(node, ast.If) and self.context is None and not node.orelse and all(map(_only_logs, node.body)):
            # the test only decides whether to print a message (``if torch.cuda.device_count() > 1: logger.warning``):
            # it asks, and no code path changes, so it is a probe
            self.context = "probe"
            try:
                self.visit(node.test)
            finally:
                self.context = None
            for x in node.body:
                self.visit(x)
            return
        if isinstance(node, ast.If):
            self.if_depth += 1
            saved_branch = self.backend_branch
            try:
                if self._compared(node.test) is not None:
                    # ``if device.type == "cuda": ... elif device.type == "xpu": ... else: ...``
                    self.visit(node.test)
                    self.backend_branch = self._dispatch_backend(node) or saved_branch
                    saved_context = self.context
                    if id(node) in self._apple and saved_context in (None, "optional"):
                        self.context = "backend-branch"  # only an Apple GPU runs it: another backend's branch
                    try:
                        for x in node.body:
                            self.visit(x)
                    finally:
                        self.context = saved_context
                    self.backend_branch = saved_branch
                    for x in node.orelse:
                        self.visit(x)
                elif self._loop_vars and _once_per_loop(node.test, self._loop_vars[-1]):
                    # ``if idx == k:`` inside ``for idx ...``: its body runs once per loop, its else every other time
                    self.visit(node.test)
                    saved_once, self._once_at = self._once_at, self.loop_depth
                    try:
                        for x in node.body:
                            self.visit(x)
                    finally:
                        self._once_at = saved_once
                    for x in node.orelse:
                        self.visit(x)
                else:
                    self.generic(node)
            finally:
                self.if_depth -= 1
                self.backend_branch = saved_branch
            return
        self.generic(node)

    def _has_target_arm(self, node: ast.If) -> bool:
        """``node`` heads an ``if``/``elif`` chain one link of which probes the port's own device
        (``elif is_torch_neuron_available(): device = torch.device("neuron:0")``, or XLA's) and refuses nothing."""
        if id(node) in self._target_links:
            return False
        links = _chain(node)
        return len(links) > 1 and any(
            self._probed_backend(link.test) in _TARGET_DEVICES | {"neuroncore"}
            and not any(isinstance(sub, ast.Raise) for stmt in link.body for sub in walk(stmt))
            for link in links
        )

    def _visit_target_chain(self, node: ast.If) -> None:
        """A chain with an arm for the port's device (``_has_target_arm``): on the target that arm runs, so the
        links probing another backend and the final ``else`` (``device = torch.device("cuda:0" ...)``) are other
        backends' branches: the code already supports the port. Links that probe no backend (``if self.use_cpu:``,
        ``elif state.distributed_type == NO:``) run as they stand (an inner chain is read on its own); the target's
        arm is an optional path, as any probed body."""
        links = _chain(node)
        self._target_links.update(id(link) for link in links)
        saved = self.context
        self.if_depth += 1
        try:
            for link in links:
                self.visit(link.test)
                backend = self._probed_backend(link.test)
                target = backend in _TARGET_DEVICES | {"neuroncore"}
                if target or backend is None:
                    self.context = saved or "optional" if self._is_probe(link.test) else saved
                else:
                    self.context = "backend-branch"
                try:
                    for x in link.body:
                        self.visit(x)
                finally:
                    self.context = saved
            self.context = "backend-branch"
            for x in links[-1].orelse:
                self.visit(x)
        finally:
            self.context = saved
            self.if_depth -= 1

    def _visit_if_under(self, node: ast.If, context: str, test_too: bool) -> None:
        """The body of ``node`` (and its test when ``test_too``) under ``context``; its else as it stands."""
        if not test_too:
            self.visit(node.test)
        saved_context, self.context = self.context, context
        try:
            if test_too:
                self.visit(node.test)
            for x in node.body:
                self.visit(x)
        finally:
            self.context = saved_context
        for x in node.orelse:
            self.visit(x)

    def _refuses_packing(self, node: ast.If) -> None:
        """``if kwargs.get("cu_seqlens") is not None: raise ValueError("can't keep packed sequences apart")``: the
        test names the packing input only to refuse it, and the body raises without touching it. Nothing is packed
        there, so the names in the test are not a varlen use (the consumed nodes are skipped by the varlen checks)."""
        body = node.body
        if not (body and isinstance(body[-1], ast.Raise)) or any(_names_varlen(x) for x in body):
            return
        for sub in walk(node.test):
            if isinstance(sub, (ast.Constant, ast.Name, ast.Attribute)) and _names_varlen(sub):
                self._consumed.add(id(sub))

    def _dispatch_backend(self, node: ast.If) -> str | None:
        """The backend whose branch ``node``'s body is, when ``node`` is a link of a per-backend dispatch.

        A dispatch is an ``if``/``elif`` chain whose links probe at least two different backends (``if
        is_torch_xpu_available(): ... elif torch.cuda.is_available(): ... else: ...``) and that ends in a fallback
        ``else`` that does not raise. Such code is already portable: a port adds its branch, or the fallback runs.
        The chain is read once, from its head; every link is remembered (the node kept alive with its id).

        An MPS link of a chain that also has a generic branch (a link testing no backend, as ``elif len(gpus) > 0``,
        or a fallback ``else`` that does not raise) runs only on an Apple GPU, whatever it does there (placement
        included): a port takes the generic branch, so the body is set apart as another backend's (``_apple``)."""
        known = self._dispatch.get(id(node))
        if known is not None:
            return known[1]
        links = [node]
        while len(links[-1].orelse) == 1 and isinstance(links[-1].orelse[0], ast.If):
            links.append(links[-1].orelse[0])
        backends = [self._probed_backend(link.test) or self._compared(link.test) for link in links]
        fallback = links[-1].orelse
        dispatch = (
            len({b for b in backends if b is not None}) >= 2
            and bool(fallback)
            and not any(isinstance(x, ast.Raise) for x in fallback)
        ) or _tunes_given_device(links, backends)
        dispatch = dispatch or (len(links) == 1 and _early_exit_dispatch(self.def_node, node))
        dispatch = dispatch or (len(links) == 1 and self._refines_by_query(node))
        generic = None in backends or (bool(fallback) and not any(isinstance(x, ast.Raise) for x in fallback))
        for link, b in zip(links, backends, strict=True):
            if b == "mps" and generic:
                self._apple.add(id(link))
            # a branch chosen by the device's own type may select that device (``torch.cuda.device(self.device)``)
            given = self._compared(link.test) is not None
            keep = dispatch and b is not None and not self._places(link.body, b, given)
            self._dispatch[id(link)] = (link, b if keep else None)
        return self._dispatch[id(node)][1]

    def _refines_by_query(self, node: ast.If) -> bool:
        """``if weight.device.type == "cuda": return torch.cuda.get_device_capability(weight.device) >= (8, 0)``, then
        a generic ``return hasattr(torch, "_grouped_mm")``: a lone leaving branch on a held device's type whose body
        uses nothing of its backend but device queries (``_CUDA_QUERIES``) and raises nothing refines a generic answer
        for that backend; every other device (Neuron) takes the statements after it, which must exist and raise
        nothing. It is the one-backend case of ``_early_exit_dispatch``; a body that does work on the backend
        (``with torch.cuda.device(d): return f()``, scanfp2's ``only_cuda``) is a CUDA-only alternative, kept."""
        backend = _compared_backend(node.test)
        if backend is None or not _leaving_branch(node):
            return False
        after = _block_after(self.def_node, node)
        if not after or any(isinstance(x, ast.Raise) for x in after):
            return False
        queries = {f"torch.{backend}.{d.rsplit('.', 1)[1]}" for d in _CUDA_QUERIES}
        used = False
        for sub in (sub for stmt in node.body for sub in walk(stmt)):
            if isinstance(sub, ast.Raise):
                return False
            d = self.dotted(sub) if isinstance(sub, ast.Attribute) else None
            if d is not None and d.startswith(f"torch.{backend}."):
                if d not in queries:
                    return False
                used = True
            elif isinstance(sub, ast.Attribute) and sub.attr in (backend, "to") and d != f"torch.{backend}":
                return False  # ``x.cuda()``: placement
        return used

    def _places(self, body: list[ast.stmt], backend: str, given: bool = False) -> bool:
        """The branch places work on its backend (``torch.device("cuda")``, ``"cuda:0"``, ``.cuda()``,
        ``torch.cuda.set_device``): then it is not a branch a port leaves alone. On Trainium the chain would take its
        fallback and place the work on the CPU, so the branch is the code a port changes and its calls stay porting
        work (``device = "cuda" if torch.cuda.is_available() else "cpu"`` likewise stays, as placement).

        ``given``: the branch was chosen by comparing a device's type, so the device is already chosen elsewhere;
        selecting it by a name (``torch.cuda.device(self.device)``) places nothing new, a literal still does."""
        for stmt in body:
            for sub in walk(stmt):
                if (
                    given
                    and isinstance(sub, ast.Call)
                    and isinstance(sub.func, ast.Attribute)
                    and sub.func.attr in _PLACEMENT
                    and (self.dotted(sub.func) or "").startswith(f"torch.{backend}.")
                    and not any(isinstance(a, ast.Constant) for a in sub.args)
                ):
                    self._given_ok.add(id(sub.func))
                    continue
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    if sub.value.split(":", 1)[0] == backend:
                        return True
                elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == backend:
                    return True  # ``model.cuda()``
                elif (
                    isinstance(sub, ast.Attribute)
                    and sub.attr in _PLACEMENT
                    and id(sub) not in self._given_ok
                    and (self.dotted(sub) or "").startswith(f"torch.{backend}.")
                ):
                    return True
        return False

    def _probe_backends(self, f: ast.expr) -> set[str] | None:
        """The backends a probe name names (``torch.cuda.is_available`` -> {cuda}, ``is_torch_xpu_available`` ->
        {xpu}, ``find_spec`` -> empty), or None when ``f`` is not a probe's name."""
        name = _name_of(f)
        if name is None or probe_kind(name, None) != "probe":
            return None
        return {w for w in re.split(r"[._]", self.dotted(f) or name) if w in _BACKENDS}

    def _foreign_probe(self, test: ast.expr) -> bool:
        """``test`` is one availability probe (called or its cached result, ``_is_torch_xpu_available``) of an
        accelerator that is neither CUDA nor the target's (Neuron runs through XLA), or an ``and`` with such a probe
        as one operand (``torch.backends.mps.is_available() and hasattr(torch.mps, "x")``): the body runs only
        there. An ``or`` is not: either side alone opens the body."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return any(self._foreign_probe(v) for v in test.values)
        named = self._probe_backends(test.func if isinstance(test, ast.Call) else test)
        return named is not None and len(named) == 1 and not named & {"cuda", "xla", "neuron", "neuroncore"}

    def _probed_backend(self, test: ast.expr) -> str | None:
        """The one backend a test's availability probes name (``torch.cuda.is_available()`` -> cuda,
        ``is_torch_xpu_available()`` -> xpu), or None (no probe, or probes of several backends)."""
        found: set[str] = set()
        for sub in walk(test):
            if isinstance(sub, ast.Call):
                found |= self._probe_backends(sub.func) or set()
        return found.pop() if len(found) == 1 else None

    def _compared(self, test: ast.expr) -> str | None:
        """``_compared_backend``, or for a flag (``if is_mps:``) whose only assignment in the def compares device
        types with exactly one backend's name (``is_mps = any(d.type == "mps" for d in device_map.values())``): the
        flag is that comparison."""
        found = _compared_backend(test)
        if found is not None or not isinstance(test, ast.Name) or self.def_node is None:
            return found
        values = [
            a.value
            for a in walk(self.def_node)
            if isinstance(a, ast.Assign) and any(isinstance(t, ast.Name) and t.id == test.id for t in a.targets)
        ]
        if len(values) != 1:
            return None
        named = {
            c.value
            for sub in walk(values[0])
            if isinstance(sub, ast.Compare) and all(isinstance(op, (ast.Eq, ast.In)) for op in sub.ops)
            for c in (sub.left, *sub.comparators)
            if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value in _BACKENDS
        }
        return named.pop() if len(named) == 1 else None

    def _backend_call(self, backend: str) -> str | None:
        """``backend-branch`` for a call of ``backend``'s own API (memory statistics, caches, seeds,
        synchronisation) inside that backend's branch of a dispatch, the branch placing nothing (``_places``)."""
        if self.backend_branch != backend:
            return None
        return "backend-branch" if self.context in (None, "optional") else None

    def _only_asks_cuda(self, node: ast.If) -> bool:
        """``node`` tests for CUDA alone (``torch.cuda.is_available()``, ``is_torch_cuda_available()``, possibly as an
        operand of an ``and``, or a count of CUDA devices/generators compared with zero) and its body uses nothing of
        CUDA but device queries (``_CUDA_QUERIES``), places nothing and raises nothing: a body that raises (``if
        major < 9: raise``) is a requirement of this path, one that places work (``x.cuda()``,
        ``torch.cuda.synchronize()``, ``device_map = {"": torch.cuda.current_device()}``) is a use. The current
        device's index is a query only where it picks that device's generator (``default_generators[idx]``)."""
        test = node.test
        values = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        if not any(self._asks_cuda(v) for v in values):
            return False
        subs = [sub for stmt in node.body for sub in walk(stmt)]
        # what indexes the generators (a call, or a name), and the names the current device's index is bound to
        slices = [
            sub.slice
            for sub in subs
            if isinstance(sub, ast.Subscript) and self.dotted(sub.value) == "torch.cuda.default_generators"
        ]
        picks = {id(x) for x in slices}
        picked = {x.id for x in slices if isinstance(x, ast.Name)}
        for sub in subs:  # ``idx = torch.cuda.current_device()`` then only ``default_generators[idx]``
            if (
                isinstance(sub, ast.Assign)
                and isinstance(sub.value, ast.Call)
                and all(isinstance(t, ast.Name) and t.id in picked for t in sub.targets)
            ):
                picks.add(id(sub.value))
        used = False
        for sub in subs:
            if isinstance(sub, ast.Raise) and not _refuses_a_package(sub):
                return False
            if (
                isinstance(sub, ast.Name)
                and isinstance(sub.ctx, ast.Load)
                and sub.id in picked
                and id(sub) not in picks
            ):
                return False  # the generator's index also used otherwise
            if (
                isinstance(sub, ast.Call)
                and self.dotted(sub.func) == "torch.cuda.current_device"
                and id(sub) not in picks
            ):
                return False  # ``{"": torch.cuda.current_device()}``: the device placed on
            if not isinstance(sub, ast.Attribute):
                continue
            d = self.dotted(sub)
            if d is not None and d.startswith("torch.cuda."):
                if d not in _CUDA_QUERIES:
                    return False
                used = True
            elif d != "torch.cuda" and sub.attr in ("cuda", "to"):
                return False  # ``x.cuda()``: placement under the probe
        return used

    def _asks_cuda(self, test: ast.expr) -> bool:
        """A called CUDA availability probe, or ``len(torch.cuda.default_generators) > 0`` /
        ``torch.cuda.device_count() > 0``, or a local flag holding a CUDA probe's answer (``_cached_cuda_probe``)."""
        if isinstance(test, ast.Call):
            return self._probe_backends(test.func) == {"cuda"}
        if isinstance(test, ast.Name):
            return self._cached_cuda_probe(test.id)
        if not (
            isinstance(test, ast.Compare)
            and isinstance(test.ops[0], (ast.Gt, ast.NotEq))
            and len(test.ops) == 1
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == 0
            and isinstance(test.left, ast.Call)
        ):
            return False
        left = test.left
        if _name_of(left.func) == "len" and len(left.args) == 1:
            return self.dotted(left.args[0]) == "torch.cuda.default_generators"
        return self.dotted(left.func) == "torch.cuda.device_count"

    def _bindings_of(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, list[ast.expr] | None]:
        """``_bindings`` of a def, walked once per def (a def with many ``if flag:`` tests asked once per test)."""
        binds = self._binds.get(id(node))
        if binds is None:
            binds = self._binds[id(node)] = _bindings(node)
        return binds

    def _cached_cuda_probe(self, name: str) -> bool:
        """``pt_cuda_available = torch.cuda.is_available()`` then ``if pt_cuda_available:``: a local name of the
        def every assignment of which is a called CUDA availability probe or a constant placeholder (``= "NA"``,
        ``= False`` before the probe runs), at least one the probe: the flag is the probe's answer. A name also bound
        another way (a loop target, ``+=``, an argument) or assigned anything else is not followed."""
        if self.def_node is None:
            return False
        bound = self._bindings_of(self.def_node).get(name)
        if not bound or name in {a.arg for a in walk(self.def_node.args) if isinstance(a, ast.arg)}:
            return False
        probes = [v for v in bound if isinstance(v, ast.Call) and self._probe_backends(v.func) == {"cuda"}]
        return bool(probes) and all(isinstance(v, ast.Constant) or v in probes for v in bound)

    def _is_probe(self, test: ast.expr) -> bool:
        if isinstance(test, (ast.Name, ast.Attribute)):  # ``if _is_torch_xpu_available:``, a cached probe result
            return self._probe_backends(test) is not None
        return any(isinstance(sub, ast.Call) and self._probe_backends(sub.func) is not None for sub in walk(test))

    def v_try(self, node: ast.Try) -> None:
        """``try: import x`` / ``except ImportError``: what the try body needs is an optional dependency."""
        optional = any(_catches_import_error(h.type) for h in node.handlers)
        if self.context is None and self._asks_cuda_or_no(node):
            self._within("probe", node)
            return
        if not optional:
            self.generic(node)
            return
        saved = self.context
        self.context = saved or "optional"
        try:
            for stmt in node.body:
                self.visit(stmt)
        finally:
            self.context = saved
        for h in node.handlers:
            self.visit(h)
        for x in (*node.orelse, *node.finalbody):
            self.visit(x)

    def _asks_cuda_or_no(self, node: ast.Try) -> bool:
        """``try: return torch.cuda.is_current_stream_capturing()`` / ``except Exception: return False``: a yes/no
        question to CUDA (``torch.cuda.is_*``) whose every failure answers a constant. Without CUDA (a CPU or Neuron
        build of torch) the query raises and the handler answers "no", so the def is a probe its callers branch on,
        not a use: ``probe``. The body may only import and return the question; every handler must catch broadly
        (bare, ``Exception``) and only return a constant. The bare question (no ``try``) raises on the target and
        stays, as do a body that does CUDA work before answering and a handler that raises or computes."""
        if node.orelse or node.finalbody or not node.handlers:
            return False
        for h in node.handlers:
            if not (h.type is None or _name_of(h.type) in ("Exception", "BaseException")):
                return False
            if not (len(h.body) == 1 and isinstance(h.body[0], ast.Return)):
                return False
            if not isinstance(h.body[0].value, ast.Constant):
                return False
        *imports, last = node.body
        if not all(isinstance(x, (ast.Import, ast.ImportFrom)) for x in imports):
            return False
        call = last.value if isinstance(last, ast.Return) else None
        if not isinstance(call, ast.Call):
            return False
        name = self.dotted(call.func) or ""
        return name.startswith("torch.cuda.is_") and name.count(".") == 2

    def v_compare(self, node: ast.Compare) -> None:
        """``device.type == "mps"``, ``d in ("cpu", "mps")``, ``device_map != "cuda"``: a branch on which backend
        is in use selects nothing (the placement, if any, is its own line), so the device string is not a finding.
        Likewise a torch dtype compared with (``x.dtype == torch.float64``, ``t.dtype in (torch.float32,
        torch.float64)``) is a test of which dtype is in use: it converts nothing, so it is not a float64 or complex
        use (a conversion in the branch is its own line)."""
        dtype_test = all(isinstance(op, _DTYPE_TESTS) for op in node.ops)
        for operand in (node.left, *node.comparators):
            elts = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
            for e in elts:
                device = isinstance(e, ast.Constant) and isinstance(e.value, str) and _COMPARED_DEVICE.match(e.value)
                # ``backend == "nccl"``: a branch on which collective backend is in use, like a device test
                backend = isinstance(e, ast.Constant) and e.value == "nccl"
                if device or backend or (dtype_test and _is_dtype(e)):
                    self._consumed.add(id(e))
        self.generic(node)

    def v_ifexp(self, node: ast.IfExp) -> None:
        self._cond(node.test, node.test.lineno)
        if self.context in (None, "optional") and (self._uses_given_cuda_object(node) or self._made_for_given(node)):
            # ``torch.cuda.stream(s) if s is not None else nullcontext()``: the call only enters a CUDA object made
            # elsewhere (its creation is that line's finding); without one the no-op fallback runs. Or the object is
            # made only for a held device of that type, None elsewhere (``_made_for_given``)
            self.visit(node.test)
            saved, self.context = self.context, "backend-branch"
            try:
                self.visit(node.body)
            finally:
                self.context = saved
            self.visit(node.orelse)
            return
        self.generic(node)

    def _made_for_given(self, node: ast.IfExp) -> bool:
        """``torch.cuda.Stream(device=d) if d.type == "cuda" else None``: an object of one backend made only when the
        device the code already holds is of that type, with nothing (``None``) on any other device: the expression
        form of ``_tunes_given_device``'s lone branch. A body that places work anew (``"cuda:0"``, ``.cuda()``) stays
        (``_places``, the device given)."""
        backend = _compared_backend(node.test)
        return (
            backend is not None
            and _is_none(node.orelse)
            and not self._places([ast.Expr(node.body)], backend, given=True)
        )

    def _uses_given_cuda_object(self, node: ast.IfExp) -> bool:
        """``torch.cuda.<f>(x) if x is not None else nullcontext()`` (or ``if x``): a ``torch.cuda`` call whose only
        argument is the object the test finds present, with a no-op context as the fallback."""
        test, body, other = node.test, node.body, node.orelse
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot):
            if not _is_none(test.comparators[0]):
                return False
            test = test.left
        if not isinstance(test, (ast.Name, ast.Attribute)) or self.dotted(test) is None:
            return False
        return (
            isinstance(other, ast.Call)
            and _name_of(other.func) == "nullcontext"
            and not other.args
            and isinstance(body, ast.Call)
            and (self.dotted(body.func) or "").startswith("torch.cuda.")
            and not body.keywords
            and len(body.args) == 1
            and self.dotted(body.args[0]) == self.dotted(test)
        )

    def v_loop(self, node: ast.For | ast.AsyncFor) -> None:
        self.loop_depth += 1
        names = frozenset(n.id for n in walk(node.target) if isinstance(n, ast.Name))
        self._loop_vars.append(names)
        self._unrolled.append(_module_trips(node.iter))
        self._fresh.append((node.body, dict.fromkeys(names, node.lineno)))
        try:
            self.generic(node)
        finally:
            self.loop_depth -= 1
            self._loop_vars.pop()
            self._unrolled.pop()
            self._fresh.pop()

    def v_assign(self, node: ast.Assign) -> None:
        """``seq = torch.cat([seq, tok], ...)`` inside a loop: the sequence grows a step at a time."""
        v = node.value
        if (
            self.loop_depth
            and self._once_at != self.loop_depth  # under ``if i == k:`` the concat runs once: nothing grows
            and len(node.targets) == 1
            and isinstance(node.targets[0], (ast.Name, ast.Attribute))
            and isinstance(v, ast.Call)
            and v.lineno == node.lineno  # one-line rule, like its trigger (``name = torch.cat(``)
            and isinstance(v.func, ast.Attribute)
            and v.func.attr == "cat"
            and isinstance(v.func.value, ast.Name)
            and v.func.value.id == "torch"
            and v.args
            and isinstance(v.args[0], (ast.List, ast.Tuple))
        ):
            targets = {ast.unparse(t) for t in node.targets}
            fresh = _fresh_on_path(*self._fresh[-1], node) if self._fresh else {}
            # a name set afresh earlier in the same iteration (``x = rows[i]``, ``for x in items``, also inside the
            # ``if`` that holds the concat) is joined once per item: nothing is carried from one iteration to the
            # next, so nothing grows
            carried = not any(fresh.get(t, node.lineno) < node.lineno for t in targets)
            # every loop around it in this def runs once per submodule (``for layer in self.layers``,
            # ``range(len(self.layers))``), a count the module's structure fixes, not the generated length: a trace
            # unrolls it, each concat has a shape fixed by the input's, and no decode step adds a new length
            unrolled = bool(self._loop_vars) and all(self._unrolled[-len(self._loop_vars) :])
            if carried and not unrolled and any(ast.unparse(e) in targets for e in v.args[0].elts):
                self.add("growing-sequence", v.lineno, "torch.cat onto the sequence inside a loop")
        self.generic(node)

    def v_literal(self, node: ast.Dict | ast.List | ast.Tuple | ast.Set) -> None:
        if id(node) not in self._tables:
            self._read_table(node)
        self.generic(node)

    def _read_table(self, root: ast.Dict | ast.List | ast.Tuple | ast.Set) -> None:
        """A literal read as a whole, with the containers nested in it as elements, keys or values. Device names
        it lists as a table or vocabulary of backends (a dict keyed only by device names, or lists naming two or
        more device types) are not a choice of CUDA/MPS; torch dtypes in a table of dtypes are names, not uses."""
        listed: list[ast.Constant] = []  # device strings that are elements of a list/tuple/set
        keyed: list[ast.Constant] = []  # device strings that key a dict whose string keys are all device names
        kinds: set[str] = set()
        listed_backends: list[ast.Constant] = []  # string elements of a list/tuple/set (collective backend names)
        stack: list[ast.expr] = [root]
        while stack:
            n = stack.pop()
            self._tables.add(id(n))
            if isinstance(n, ast.Dict):
                keys = [k for k in n.keys if k is not None]
                named = _device_keys(keys)
                for k in keys:
                    if isinstance(k, ast.Constant) and _device_kind(k) is not None:
                        kinds.add(_device_kind(k) or "")
                        if named:
                            keyed.append(k)
                    elif named and isinstance(k, ast.Call):
                        keyed.extend(_device_type_args(k))
                    elif isinstance(k, _CONTAINERS):
                        stack.append(k)
                stack.extend(v for v in n.values if isinstance(v, _CONTAINERS))
                if named and any(_device_kind(k) in _TARGET_DEVICES for k in keys):
                    # a device -> backend table that already gives the target its own entry (``"neuron": "neuron"``
                    # beside ``"cuda": "nccl"``): the port picks the target's row, it edits nothing; a table with no
                    # row for the target stays a finding (adding that row is the work)
                    self._consumed.update(id(v) for v in n.values if isinstance(v, ast.Constant))
                if _dtype_table(n):
                    names = [*n.keys, *n.values]
                    self._consumed.update(id(x) for x in names if _is_dtype(x))
            elif isinstance(n, (ast.List, ast.Tuple, ast.Set)):
                for e in n.elts:
                    if isinstance(e, ast.Constant) and isinstance(e.value, str):
                        listed_backends.append(e)
                    if isinstance(e, ast.Constant) and _device_kind(e) is not None:
                        kinds.add(_device_kind(e) or "")
                        listed.append(e)
                    elif isinstance(e, _CONTAINERS):
                        stack.append(e)
        table = keyed + listed if len(kinds) >= 2 else keyed
        # a list naming two or more collective backends (``choices=["nccl", "gloo", "mpi"]``) is a vocabulary too
        collectives = [e for e in listed_backends if e.value in _COLLECTIVE_BACKENDS]
        if len({e.value for e in collectives}) >= 2:
            self._consumed.update(id(e) for e in collectives)
        self._consumed.update(id(c) for c in table if _COMPARED_DEVICE.match(str(c.value)))

    def v_name(self, node: ast.Name) -> None:
        if "cu_seqlens" in node.id and id(node) not in self._consumed:
            self._add_varlen(node, node.lineno, node.id)

    def v_arg(self, node: ast.arg) -> None:
        if "cu_seqlens" in node.arg:
            self._add_varlen(node, node.lineno, node.arg)
        # its annotation (``stream: torch.cuda.Stream``) names a type: it places and runs nothing (``v_annassign``)

    def _add_varlen(self, node: ast.AST, line: int, detail: str) -> None:
        """A ``cu_seqlens`` mention, unless its def reads the offsets only for their count or a check
        (``_unpacked_offsets``: nothing is packed there); ``host-side`` in a def that fills its caller's inputs
        (``_fills_given_inputs``). Each def is read once, when its first mention is met."""
        fn, context = self.def_node, None
        if fn is not None:
            known = self._varlen_defs.get(id(fn))
            if known is None:
                known = self._varlen_defs[id(fn)] = (_unpacked_offsets(fn), _fills_given_inputs(fn))
            if id(node) in known[0]:
                return
            if known[1] and self.context is None:
                context = "host-side"
        self.add("varlen-packing", line, detail, context=context)

    def _nccl_defaults(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
        """``_library_nccl_vars`` of ``fn``, read once per def."""
        got = self._nccl_of.get(id(fn))
        if got is None:
            got = self._nccl_of[id(fn)] = _library_nccl_vars(fn)
        return got

    def v_annassign(self, node: ast.AnnAssign) -> None:
        """``self.h2d_stream: torch.cuda.Stream = create_device_stream(device)``: the annotation names a type (under
        ``from __future__ import annotations`` it is not even evaluated), so only the target and the value are code."""
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def v_constant(self, node: ast.Constant) -> None:
        v = node.value
        if not isinstance(v, str) or id(node) in self._consumed or len(v) > 20000:
            return
        line = node.lineno
        if "cu_seqlens" in v:
            self._add_varlen(node, line, f"string {v!r}")
        m = DEVICE.match(v)
        if m and self.def_name == "cuda" and v == "cuda":
            return  # a wrapper's own ``def cuda`` defaulting to "cuda" (``kwargs.get("device", "cuda")``): delegation
        if m:
            self.add(DEVICE_RULE[m.group(1)], line, f"device string {v!r}")
            return
        rule = EXACT_STRINGS.get(v)
        if rule:
            # a kernel library named in a string is loaded lazily, by name, as a fast path with a fallback
            # (unless an outer context, such as the probe call naming it, already says how it is reached)
            lazy = "optional" if rule == "cuda-kernel-library" and self.context is None else None
            self.add(rule, line, f"string {v!r}", subject=v, context=lazy)
            return
        if STRING_TRIGGER.search(v):
            for rid, pat, template in STRING_RULES:
                mm = pat.search(v)
                if mm:
                    ctx = None
                    if rid == "nccl-backend" and self.def_node is not None:
                        ctx = "no-op-elsewhere" if mm.group(0) in self._nccl_defaults(self.def_node) else None
                    self.add(rid, line, template.format(m=mm.group(0)), subject=mm.group(0), context=ctx)


# Backends an availability probe can name (``is_torch_<b>_available``, ``torch.<b>.is_available``).
_BACKENDS = frozenset(
    {"cuda", "xpu", "mps", "npu", "mlu", "hpu", "musa", "xla", "tpu", "neuron", "neuroncore", "sdaa", "gcu", "ipu"}
)


def _asks_flash(test: ast.expr) -> bool:
    """``is_flash_attention_requested(...)``, alone or as an operand of an ``and``: true only when a flash-attention
    implementation was asked for (a ``not`` of it is the other path)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_asks_flash(v) for v in test.values)
    return isinstance(test, ast.Call) and _FLASH_REQUESTED.match(_name_of(test.func) or "") is not None


# Calls that only check a condition (``torch_compilable_check(cond, msg)``, ``torch._check(cond)``): a value read there
# decides whether the code goes on, and shapes nothing.
_CHECKS = frozenset({"torch_compilable_check", "_check", "_check_with", "_check_is_size", "_assert", "_assert_async"})


def _unpacked_offsets(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[int]:
    """The nodes of each ``cu_seqlens`` parameter of ``fn`` (the parameter and its uses) when every use reads only
    how many segments there are (``cu_seqlens.shape[0]``, ``len(cu_seqlens)``, ``.size(0)``) or feeds a check, also
    through one local (``lengths = cu_seqlens[1:] - cu_seqlens[:-1]`` then ``torch_compilable_check((lengths ==
    lengths[0]).all(), ...)``). Such a def runs one fixed-shape computation per segment count (an export-safe
    attention that reshapes equal segments into a batch): the offsets' values never shape a tensor, nothing is packed
    there. A use of the values themselves (a slice, a split, ``.tolist()``, a kernel argument) keeps every mention."""
    params = [a for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs) if "cu_seqlens" in a.arg]
    if not params:
        return frozenset()
    parent = {id(c): p for p in walk(fn) for c in ast.iter_child_nodes(p)}
    names = [n for n in walk(fn) if isinstance(n, ast.Name)]
    out: set[int] = set()
    for a in params:
        uses = [n for n in names if n.id == a.arg]
        if uses and all(
            isinstance(u.ctx, ast.Load) and (_counts_segments(u, parent) or _only_checked(u, parent, names))
            for u in uses
        ):
            out |= {id(a), *map(id, uses)}
    return frozenset(out)


def _counts_segments(u: ast.Name, parent: dict[int, ast.AST]) -> bool:
    """``u.shape``, ``len(u)``, ``u.size(...)``, ``u.numel()``: a read of how many offsets there are."""
    p = parent.get(id(u))
    if isinstance(p, ast.Attribute) and p.attr == "shape":
        return True
    if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id == "len" and p.args == [u]:
        return True
    call = parent.get(id(p)) if isinstance(p, ast.Attribute) and p.attr in ("size", "numel") else None
    return isinstance(call, ast.Call) and call.func is p


def _only_checked(u: ast.Name, parent: dict[int, ast.AST], names: list[ast.Name]) -> bool:
    """``u`` is read inside a check (``_CHECKS``, ``assert``), or assigned to one local whose every read is."""
    stmt = _in_check(u, parent)
    if stmt is None:
        return True
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    local = stmt.targets[0].id
    reads = [n for n in names if n.id == local and isinstance(n.ctx, ast.Load)]
    stores = [n for n in names if n.id == local and isinstance(n.ctx, ast.Store)]
    return len(stores) == 1 and bool(reads) and all(_in_check(n, parent) is None for n in reads)


def _in_check(node: ast.AST, parent: dict[int, ast.AST]) -> ast.AST | None:
    """None when ``node`` lies in a check call or an ``assert``; else the statement holding it."""
    while (p := parent.get(id(node))) is not None:
        if isinstance(p, ast.Assert) or (isinstance(p, ast.Call) and _name_of(p.func) in _CHECKS):
            return None
        if isinstance(p, ast.stmt):
            return p
        node = p
    return node


def _fills_given_inputs(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``def prepare(model, inputs): inputs["cu_seqlens"] = ...`` returning nothing: the def writes named entries
    into a mapping its caller handed it, to prepare the inputs of a call the caller makes next (export input
    preparation, precomputing packing offsets from ``grid_thw`` outside the traced graph). Its packing lines run
    eagerly before that call; the consumer of the offsets (the model's packed attention) is its own finding.
    A def that returns or yields a value, or writes only its own locals or ``self``, is not this."""
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)} - {"self", "cls"}
    writes = False
    for n in walk(fn):
        if isinstance(n, (ast.Yield, ast.YieldFrom)) or (isinstance(n, ast.Return) and n.value is not None):
            return False
        if isinstance(n, ast.Assign):
            for t in n.targets:
                for e in t.elts if isinstance(t, ast.Tuple) else [t]:
                    writes = writes or (
                        isinstance(e, ast.Subscript)
                        and isinstance(e.value, ast.Name)
                        and e.value.id in params
                        and isinstance(e.slice, ast.Constant)
                        and isinstance(e.slice.value, str)
                    )
    return writes


def _names_varlen(node: ast.AST) -> bool:
    """``node`` mentions ``cu_seqlens`` (a name, an attribute or a string), what the varlen rule reads."""
    for sub in walk(node):
        if isinstance(sub, ast.Name) and "cu_seqlens" in sub.id:
            return True
        if isinstance(sub, ast.Attribute) and "cu_seqlens" in sub.attr:
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and "cu_seqlens" in sub.value:
            return True
    return False


def _name_of(f: ast.expr) -> str | None:
    """The last name of ``name`` or ``a.b.name``; None for anything else."""
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _decorator_name(d: ast.expr) -> str | None:
    """``@name``, ``@mod.name`` or ``@name(...)``: the decorator's own name."""
    return _name_of(d.func if isinstance(d, ast.Call) else d)


# Device rules whose line, when it is only a parameter's default, is set apart if every call overrides it.
DEFAULT_RULES = frozenset({"cuda-device-literal", "torch-cuda-api"})


def default_subject(func: str, param: str) -> str:
    """The subject of a finding in the default of ``func``'s parameter ``param`` (read back by ``defaults.py``)."""
    return f"default {func}({param})"


def _chain(node: ast.If) -> list[ast.If]:
    """The links of the ``if``/``elif`` chain ``node`` heads."""
    links = [node]
    while len(links[-1].orelse) == 1 and isinstance(links[-1].orelse[0], ast.If):
        links.append(links[-1].orelse[0])
    return links


# SageMaker's distributed-training libraries (smdistributed model/data parallel) run only on NVIDIA GPU instances:
# a branch taken only when one of them is enabled is that runtime's path.
_GPU_ONLY_RUNTIME = re.compile(r"^_?is_sagemaker_(mp|dp)_enabled$")


def _asks_gpu_only_runtime(test: ast.expr) -> bool:
    """``is_sagemaker_mp_enabled()`` alone or as an operand of an ``and`` (an ``or`` opens the body without it)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_asks_gpu_only_runtime(v) for v in test.values)
    return isinstance(test, ast.Call) and _GPU_ONLY_RUNTIME.match(_name_of(test.func) or "") is not None


def _tunes_given_device(links: list[ast.If], backends: list[str | None]) -> bool:
    """``if comm_device.type == "cuda": torch.cuda.synchronize()`` with no ``else``: a lone branch chosen by the type
    of a device the code already holds. On another device the test is false and the code goes on, so the branch
    only tunes for the backend it names (a port leaves it alone); it is read as a dispatch whose fallback is to do
    nothing, and ``_places`` (with the device given) still keeps a branch that places work anew (``"cuda:0"``).
    A body that leaves (``return``, ``raise``, ``yield``, ``break``) is not tuning but a CUDA-only alternative of what
    follows, with its own result: it stays porting work."""
    if not (len(links) == 1 and not links[0].orelse and _compared_backend(links[0].test) is not None):
        return False
    return not any(isinstance(n, _LEAVES) for stmt in links[0].body for n in walk(stmt))


def _early_exit_dispatch(fn: ast.FunctionDef | ast.AsyncFunctionDef | None, node: ast.If) -> bool:
    """``if device_type == "cuda": with torch.cuda.device(device): yield; return``, then ``if device_type == "xpu":
    <its twin>``, then a generic ``yield``: a per-backend dispatch written as consecutive lone branches on a device's
    type whose bodies leave (``return``/``yield``), instead of an ``if``/``elif``/``else`` chain. When the run names
    two or more backends and what follows it raises nothing, the code after the run is the chain's fallback (Neuron
    takes it), so each body is one backend's branch, as in a chain. One lone leaving branch stays porting work
    (a CUDA-only alternative with its own result, ``_tunes_given_device``), as does a run whose fall-through raises."""
    if fn is None or not _leaving_branch(node):
        return False
    block = _block_of(fn, node)
    if block is None:
        return False
    i = next(k for k, x in enumerate(block) if x is node)
    lo, hi = i, i
    while lo > 0 and _leaving_branch(block[lo - 1]):
        lo -= 1
    while hi + 1 < len(block) and _leaving_branch(block[hi + 1]):
        hi += 1
    backends = {_compared_backend(x.test) for x in block[lo : hi + 1] if isinstance(x, ast.If)}
    return len(backends) >= 2 and not any(isinstance(x, ast.Raise) for x in block[hi + 1 :])


def _block_of(fn: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.stmt) -> list[ast.stmt] | None:
    """The statement list of ``fn`` that holds ``node``."""
    return next(
        (
            lst
            for n in walk(fn)
            for field in ("body", "orelse", "finalbody")
            if isinstance(lst := getattr(n, field, None), list) and any(x is node for x in lst)
        ),
        None,
    )


def _block_after(fn: ast.FunctionDef | ast.AsyncFunctionDef | None, node: ast.stmt) -> list[ast.stmt]:
    """The statements after ``node`` in its block of ``fn`` (empty when there are none or ``node`` is not there)."""
    block = _block_of(fn, node) if fn is not None else None
    if block is None:
        return []
    return block[next(k for k, x in enumerate(block) if x is node) + 1 :]


def _leaving_branch(stmt: ast.stmt) -> bool:
    """A lone ``if`` (no ``else``) on a device's type whose body leaves (``_early_exit_dispatch``)."""
    return (
        isinstance(stmt, ast.If)
        and not stmt.orelse
        and _compared_backend(stmt.test) is not None
        and any(isinstance(n, _LEAVES) for x in stmt.body for n in walk(x))
    )


# Statements and expressions by which a branch's body leaves or hands back control (``_tunes_given_device``).
_LEAVES = (ast.Return, ast.Raise, ast.Yield, ast.YieldFrom, ast.Break, ast.Continue)


def _compared_backend(test: ast.expr) -> str | None:
    """The backend a test compares a device's type with (``x.device.type == "cuda"``, ``device_type == "xpu"``), or
    whose name it looks up among devices (``"mps" in gpus``); in an ``and`` of tests, the one backend they compare
    (``x.type == "cuda" and x.index is not None``: the body runs only there)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        backends = {b for b in map(_compared_backend, test.values) if b is not None}
        return backends.pop() if len(backends) == 1 else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    if isinstance(test.ops[0], ast.In):
        named = test.left
        if isinstance(named, ast.Constant) and isinstance(named.value, str) and named.value in _BACKENDS:
            return named.value
        return None
    if not isinstance(test.ops[0], ast.Eq):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Constant):
        left, right = right, left
    name = left.attr if isinstance(left, ast.Attribute) else left.id if isinstance(left, ast.Name) else ""
    if not (name == "type" or name.endswith("device_type")):
        return None
    if isinstance(right, ast.Constant) and isinstance(right.value, str) and right.value in _BACKENDS:
        return right.value
    return None


# A def answering whether something can run here (``is_torch_xla_available``, ``is_sonicmoe_loadable``).
_PROBE_DEF = re.compile(r"^_?is_\w+_(available|loadable)$")
# A question whether a flash-attention implementation was requested (transformers' ``is_flash_attention_requested``).
_FLASH_REQUESTED = re.compile(r"^_?is_flash_\w*requested$")
# Ops of one tensor that keep a host-built tensor host-built (``_host_built``).
_ONE_INPUT = frozenset({"clamp", "clamp_min", "clamp_max", "float", "double", "int", "long", "to", "round", "abs"})
# Ops whose result is integer positions, not a mask (``_integer_valued``), and integer dtypes of a factory's dtype=.
_POSITION_OPS = frozenset({"argmax", "argmin", "argsort", "arange", "long", "int", "searchsorted", "bucketize"})
_INT_DTYPES = frozenset({"long", "int", "int64", "int32", "int16", "int8", "short"})
# Ops that move or reshape a tensor without changing its values (an integer index stays one through them).
_KEEPS_VALUES = frozenset(
    {"to", "view", "reshape", "expand", "expand_as", "unsqueeze", "squeeze", "flatten", "contiguous", "clone"}
)
# Annotation names of a host value: a parameter so typed is never a tensor input (``_host_params``).
_HOST_TYPES = frozenset({"int", "float", "bool", "str", "None", "device", "dtype", "Optional", "Union"})
# Arithmetic that keeps a host-built tensor host-built when the other operand is a number the inputs do not decide.
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv)
# Collectives (torch.distributed, accelerate.utils): of a host-built tensor, their result is still host values.
_COLLECTIVES = frozenset({"reduce", "all_reduce", "all_gather", "gather", "broadcast", "reduce_scatter"})
# Words of a hub kernel's repo id that name Apple's GPU stack: such a kernel only ever runs on MPS.
_APPLE_KERNEL = frozenset({"mlx", "metal"})
# Backend calls that place work on a device: a dispatch branch holding one is not set apart.
_PLACEMENT = frozenset({"set_device", "device", "current_device"})
# torch.cuda calls that return nothing and do nothing where no CUDA device is initialised (measured on a CPU-only
# torch: ``empty_cache`` checks ``is_initialized()``, the seeds are queued lazily): on the target they run and change
# nothing, so nothing is ported. ``synchronize``, ``mem_get_info``, ``reset_peak_memory_stats`` raise there, and the
# memory statistics return 0 that the code then uses: those stay findings.
_CUDA_NO_OPS = frozenset(
    f"torch.cuda.{n}" for n in ("empty_cache", "manual_seed", "manual_seed_all", "seed", "seed_all")
)
# torch.cuda calls that only read facts of the device a CUDA probe found (``_only_asks_cuda``).
_CUDA_QUERIES = frozenset(
    f"torch.cuda.{n}"
    for n in (
        "get_device_capability",
        "get_device_name",
        "get_device_properties",
        "current_device",
        "default_generators",
        "is_bf16_supported",
    )
)
# Device strings that name a backend in a comparison (not placement); xla/neuron branches stay findings, since a
# Neuron port runs them.
_COMPARED_DEVICE = re.compile(r"^(cuda|mps)(?::\d+)?$")
# Names of device types (torch's, and other runtimes' such as ONNX Runtime's dml/webgpu): a literal naming two or more
# of them, or a dict keyed only by them, is a table of backends.
_DEVICE_NAME = re.compile(
    r"^(cpu|cuda|mps|xpu|xla|neuron|npu|hpu|mlu|musa|rocm|hip|tpu|meta|dml|webgpu|supa|ipu|mtia|vulkan|metal"
    r"|privateuseone|sdaa|gcu)(?::\d+)?$"
)
_CONTAINERS = (ast.Dict, ast.List, ast.Tuple, ast.Set)
# Device types of the port's target (Neuron, and XLA through which it runs).
_TARGET_DEVICES = frozenset({"neuron", "xla"})
# Backends of torch.distributed (torch's and other accelerators'): a list naming two or more is a vocabulary.
_COLLECTIVE_BACKENDS = frozenset({"nccl", "gloo", "mpi", "ucc", "ccl", "xccl", "hccl", "cncl", "mccl", "neuron", "xla"})
# Comparison operators that test which dtype a value has (``==``, ``in``, ``is``), not order it.
_DTYPE_TESTS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)
# torch dtype attribute names (``torch.float64``, ``torch.double``, ``torch.cfloat``, ``torch.float8_e4m3fn``).
_DTYPE_NAME = re.compile(
    r"^(q?u?int\d+\w*|float\d*(_\w+)?|bfloat16|half|double|long|int|short|bool|complex\d+|c(half|float|double))$"
)


def _device_kind(node: ast.expr) -> str | None:
    """The device type a string constant names (``"cuda:0"`` -> ``cuda``), or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        m = _DEVICE_NAME.match(node.value)
        return m.group(1) if m else None
    return None


def _device_keys(keys: list[ast.expr]) -> bool:
    """A dict keyed by device names: it has string keys or ``Device(...)`` keys (as the ``kernels`` package writes
    them), and every string key names a device."""
    strings = [k for k in keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    devices = [k for k in keys if isinstance(k, ast.Call) and _call_name(k) == "Device"]
    return bool(strings or devices) and all(_device_kind(k) is not None for k in strings)


def _device_type_args(call: ast.Call) -> list[ast.Constant]:
    """``Device(type="cuda", ...)`` / ``Device("cuda")`` as a dict key: the device string it names."""
    if _call_name(call) != "Device":
        return []
    cands = [*call.args[:1], *(k.value for k in call.keywords if k.arg == "type")]
    return [c for c in cands if isinstance(c, ast.Constant) and _device_kind(c) is not None]


def _bindings(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, list[ast.expr] | None]:
    """Every name the def binds, with the values of its plain assignments; None for a name also bound another way
    (a loop or comprehension target, ``+=``, ``with ... as``, a walrus, a tuple target), whose values are not
    followed. One walk: an ``Assign`` is met before the names it stores."""
    out: dict[str, list[ast.expr] | None] = {}
    direct: set[int] = set()
    for x in walk(node):
        if isinstance(x, ast.Assign):
            for t in x.targets:
                if isinstance(t, ast.Name):
                    direct.add(id(t))
                    vals = out.setdefault(t.id, [])
                    if vals is not None:
                        vals.append(x.value)
        elif isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store) and id(x) not in direct:
            out[x.id] = None
    return out


def _host_params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """Parameters annotated as host values (``int | None``, ``torch.device``, ``str``): never a tensor input."""
    a = node.args
    out = set()
    for x in (*a.posonlyargs, *a.args, *a.kwonlyargs):
        ann = x.annotation
        if ann is not None and all(
            (isinstance(n, ast.Name) and n.id in _HOST_TYPES)
            or (isinstance(n, ast.Attribute) and n.attr in _HOST_TYPES)
            or (isinstance(n, ast.Constant) and n.value is None)
            for n in walk(ann)
            if isinstance(n, (ast.Name, ast.Attribute, ast.Constant))
            and not (isinstance(n, ast.Name) and n.id == "torch")
        ):
            out.add(x.arg)
    return frozenset(out)


def _fixed_by_module(
    e: ast.expr,
    binds: dict[str, list[ast.expr] | None],
    params: tuple[frozenset[str], frozenset[str]],
    seen: set[str],
    depth: int,
) -> bool:
    """``e`` reads only ``self``/``cls`` state, constants, names of the module and host-typed parameters
    (``params`` = every parameter, the host-typed ones), through the def's plain assignments (``depth`` deep)."""
    every, host = params
    for n in walk(e):
        if not isinstance(n, ast.Name) or n.id in ("self", "cls") or n.id in seen:
            continue
        if n.id in every:
            if n.id in host and n.id not in binds:
                continue
            return False  # an input of the function: maybe a tensor
        if n.id not in binds:
            continue  # a module-level name (``torch``, a constant)
        values = binds[n.id]
        if not values or depth == 0:
            return False
        seen.add(n.id)
        if not all(_fixed_by_module(v, binds, params, seen, depth - 1) for v in values):
            return False
    return True


def _integer_valued(v: ast.expr) -> bool:
    """``v`` is built as integers: an index op (``argmax``, ``arange``, ``.long()``), a factory with an integer
    ``dtype=``, an int constant, through ops that keep values (``.to(device)``, ``.view``, ``.unsqueeze``)."""
    if isinstance(v, ast.Constant):
        return isinstance(v.value, int) and not isinstance(v.value, bool)
    if not isinstance(v, ast.Call):
        return False
    name = _call_name(v)
    if name in _POSITION_OPS:
        return True
    dtype = next((k.value for k in v.keywords if k.arg == "dtype"), None)
    if dtype is not None:
        return _is_dtype(dtype) and isinstance(dtype, ast.Attribute) and dtype.attr in _INT_DTYPES
    if name in _KEEPS_VALUES and isinstance(v.func, ast.Attribute):
        return not any(_is_dtype(a) for a in v.args) and _integer_valued(v.func.value)
    return False


def _call_name(call: ast.Call) -> str | None:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _is_dtype(node: ast.expr | None) -> bool:
    """``torch.<dtype>`` spelt out (the root is the name ``torch``)."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "torch"
        and _DTYPE_NAME.match(node.attr) is not None
    )


def _dtype_table(node: ast.Dict) -> bool:
    """Two or more entries, each pairing a torch dtype with something (``"F64": torch.float64``,
    ``torch.float64: DataType.DOUBLE``): a table that names dtypes, and computes nothing in them."""
    pairs = zip(node.keys, node.values, strict=True)
    return len(node.keys) >= 2 and all(_is_dtype(k) or _is_dtype(v) for k, v in pairs)


def _delegates(def_name: str | None, call: ast.Call) -> bool:
    """``.cuda()`` in a wrapper's own ``def cuda`` is delegation (whoever calls the wrapper chose CUDA); in
    ``def to`` only when it forwards an argument (``module.cuda(device)``): a bare ``.cuda()`` there ignores the
    requested device, which is hard-coded placement."""
    if def_name == "cuda":
        return True
    return def_name == "to" and bool(call.args or call.keywords)


def _module_trips(it: ast.expr, counted: bool = False) -> bool:
    """A ``for`` iterable whose length the module's structure fixes: its submodules (``self.layers``,
    ``self.a.layers``), ``enumerate`` of them, ``range(len(...))`` of them. A number is not, even a config one:
    ``range(self.config.prediction_length)`` is a generated length."""
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and len(it.args) == 1 and not it.keywords:
        arg = it.args[0]
        if it.func.id == "enumerate" and not counted:
            return _module_trips(arg)
        if it.func.id == "range" and not counted:
            return _module_trips(arg, counted=True)
        if it.func.id == "len" and counted:
            return _module_trips(arg)
        return False
    if counted or not isinstance(it, ast.Attribute):
        return False
    base: ast.expr = it
    while isinstance(base, ast.Attribute):
        base = base.value
    return isinstance(base, ast.Name) and base.id == "self"


def _fresh_names(body: list[ast.stmt], fresh: dict[str, int], tests: frozenset[str] = frozenset()) -> dict[str, int]:
    """``fresh`` plus the names the loop body's top-level statements assign without reading them (``x = rows[i]``):
    each iteration starts them anew from that line. A name whose first top-level assignment reads it
    (``x = torch.cat([x, t])``) is carried from the iteration before, and is not added.

    An ``if`` whose body and ``else`` both set a name afresh sets it on every path (``if sample: t = multinomial(..)
    else: t = argmax(..)``); so does an ``if`` with no else whose test (``tests``, unparsed) is also the test of an
    ``if`` holding the concat: the concat runs only when that body ran."""
    out = dict(fresh)
    seen: set[str] = set(out)
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            t = stmt.targets[0]
            if isinstance(t, (ast.Name, ast.Attribute)):
                name = ast.unparse(t)
                if name not in seen:
                    seen.add(name)
                    if not _reads(stmt.value, t):
                        out[name] = stmt.lineno
        elif isinstance(stmt, ast.If):
            sets = set(_fresh_names(stmt.body, {}, tests))
            if stmt.orelse:
                sets &= set(_fresh_names(stmt.orelse, {}, tests))
            elif ast.unparse(stmt.test) not in tests:
                continue
            for name in sets - seen:
                seen.add(name)
                out[name] = stmt.end_lineno or stmt.lineno  # set once the whole ``if`` has run
    return out


def _fresh_on_path(body: list[ast.stmt], fresh: dict[str, int], node: ast.stmt) -> dict[str, int]:
    """``_fresh_names`` of the loop body, then of each ``if``/``with``/``try`` block on the way down to ``node``:
    a name set afresh earlier in a block that holds the concat is set afresh before it on every iteration that
    reaches it."""
    path: list[list[ast.stmt]] = [body]
    tests: set[str] = set()
    while True:
        holder = next((s for s in path[-1] if s.lineno <= node.lineno <= (s.end_lineno or s.lineno)), None)
        if holder is None or holder is node:
            break
        inner = next(
            (b for b in _blocks(holder) if any(s.lineno <= node.lineno <= (s.end_lineno or 0) for s in b)), None
        )
        if inner is None:
            break
        if isinstance(holder, ast.If) and inner is holder.body:
            tests.add(ast.unparse(holder.test))
        path.append(inner)
    out = _fresh_names(body, fresh, frozenset(tests))
    for block in path[1:]:
        for name, line in _fresh_names(block, {}, frozenset(tests)).items():
            if line < node.lineno:
                out[name] = line
    return out


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists an ``if``/``with``/``try`` runs within one iteration (not a nested loop's or def's)."""
    if isinstance(stmt, ast.If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [stmt.body]
    if isinstance(stmt, ast.Try):
        return [stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody]
    return []


def _reads(value: ast.expr, target: ast.Name | ast.Attribute) -> bool:
    """``value`` mentions ``target`` (a name, or the same ``obj.attr``)."""
    if isinstance(target, ast.Name):
        return any(isinstance(n, ast.Name) and n.id == target.id for n in walk(value))
    want = ast.unparse(target)
    attrs = (n for n in walk(value) if isinstance(n, ast.Attribute) and n.attr == target.attr)
    return any(ast.unparse(n) == want for n in attrs)


def _once_per_loop(test: ast.expr, loop_vars: frozenset[str]) -> bool:
    """``i == k`` (alone or in an ``and``) with ``i`` bound by the innermost ``for`` and ``k`` not using it: true on
    at most one iteration."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    for p in parts:
        if isinstance(p, ast.Compare) and len(p.ops) == 1 and isinstance(p.ops[0], (ast.Eq, ast.Is)):
            sides = (p.left, p.comparators[0])
            for a, b in (sides, sides[::-1]):
                if (
                    isinstance(a, ast.Name)
                    and a.id in loop_vars
                    and not any(isinstance(n, ast.Name) and n.id in loop_vars for n in walk(b))
                ):
                    return True
    return False


# torch.utils.cpp_extension's builders of a native module (``load`` only when it resolves to cpp_extension's).
_EXT_BUILDERS = frozenset({"CUDAExtension", "CppExtension", "load_inline"})
_DATASET_BUILDERS = frozenset({"json", "csv", "parquet", "text", "arrow", "imagefolder", "audiofolder", "webdataset"})


def _local_source(node: ast.Call) -> bool:
    """The first argument is a literal local path or a local dataset builder, not a hub id."""
    first = node.args[0] if node.args else None
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return False
    v = first.value
    return v.startswith(("/", "./", "../", "~")) or v in _DATASET_BUILDERS


_LOG_CALLS = frozenset({"warning", "warning_once", "warn", "info", "info_once", "debug", "print"})


_NCCL_VAR = re.compile(r"\bNCCL_[A-Z_]+\b")


def _env_key(node: ast.expr, parent: dict[int, ast.AST]) -> str | None:
    """How the string ``node`` is used as an environment variable's name: ``"read"`` (``os.environ.get(k)``,
    ``os.getenv(k)``, ``os.environ[k]`` loaded, ``k in os.environ``), ``"default"`` (``os.environ.setdefault(k,
    v)``), or None (an assignment ``os.environ[k] = v``, ``update``, anything else)."""
    p = parent.get(id(node))
    if isinstance(p, ast.Call) and p.args and p.args[0] is node and isinstance(p.func, ast.Attribute):
        recv = p.func.value
        env = isinstance(recv, ast.Attribute) and recv.attr == "environ"
        if (env and p.func.attr == "get") or (p.func.attr == "getenv" and _name_of(recv) == "os"):
            return "read"
        if env and p.func.attr == "setdefault":
            return "default"
    if isinstance(p, ast.Subscript) and p.slice is node and isinstance(p.ctx, ast.Load):
        return "read" if _name_of(p.value) == "environ" else None
    if isinstance(p, ast.Compare) and p.left is node and len(p.ops) == 1 and isinstance(p.ops[0], (ast.In, ast.NotIn)):
        return "read" if _name_of(p.comparators[0]) == "environ" else None
    return None


def _library_nccl_vars(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The NCCL variables (``NCCL_GRAPH_MIXING_SUPPORT``) that ``fn`` only reads from the environment, or, in a
    method (first parameter ``self``), sets as a default (``os.environ.setdefault``), and otherwise names only in
    messages (``logger.warning``, ``warnings.warn``). Such a def is library code tuning NCCL for the job when NCCL is
    in use: under Neuron's collectives the variable is read by nothing, so the read answers "unset" and the default
    changes nothing (``no-op-elsewhere``); the launch environment, where the NCCL settings a port must translate are
    set, is scanned on its own (job files, scripts, images). An assignment (``os.environ[k] = v``), a default set by
    a plain function (a launcher's ``main``), or any other use of the name keeps every mention a finding."""
    parent = {id(c): p for p in walk(fn) for c in ast.iter_child_nodes(p)}
    method = bool(fn.args.args) and fn.args.args[0].arg == "self"
    used: dict[str, bool] = {}  # variable -> every mention allowed so far
    accessed: set[str] = set()
    for n in walk(fn):
        if not (isinstance(n, ast.Constant) and isinstance(n.value, str)):
            continue
        for var in set(_NCCL_VAR.findall(n.value)):
            how = _env_key(n, parent) if n.value == var else None
            ok = how == "read" or (how == "default" and method)
            if how is not None:
                accessed.add(var)
            else:
                ok = _in_message(n, parent)
            used[var] = used.get(var, True) and ok
    return frozenset(v for v, ok in used.items() if ok and v in accessed)


def _in_message(node: ast.AST, parent: dict[int, ast.AST]) -> bool:
    """``node`` is (part of) an argument of a message call (``logger.warning``, ``warnings.warn``, ``print``)."""
    p = parent.get(id(node))
    while p is not None and not isinstance(p, ast.stmt):
        if isinstance(p, ast.Call) and _name_of(p.func) in _LOG_CALLS:
            return True
        p = parent.get(id(p))
    return False


def _refuses_a_package(node: ast.Raise) -> bool:
    """``raise ImportError(...)``: the body tells its caller that an optional package cannot be used here (flash-attn
    on a GPU too old for it), the answer of a package probe; the package's port is its own item. Any other
    exception (``ValueError("needs sm90")``) refuses the workload on this device: a requirement, kept."""
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return _name_of(exc) in ("ImportError", "ModuleNotFoundError") if exc is not None else False


def _only_logs(stmt: ast.stmt) -> bool:
    """A statement that only emits a message: ``logger.warning(...)``, ``warnings.warn(...)``, ``print(...)``."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    f = stmt.value.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    return name in _LOG_CALLS


# Ops whose index argument must be int64 and lie inside the indexed dimension.
_INDEX_OPS = frozenset(
    {
        "scatter",
        "scatter_",
        "scatter_add",
        "scatter_add_",
        "scatter_reduce",
        "scatter_reduce_",
        "gather",
        "index_select",
        "index_add",
        "index_add_",
        "index_copy",
        "index_copy_",
        "index_fill",
        "index_fill_",
        "take_along_dim",
    }
)
_BOOLEAN_METHODS = frozenset({"ne", "eq", "lt", "le", "gt", "ge", "bool", "isnan", "isinf", "isfinite", "logical_not"})


def _is_boolean(node: ast.expr) -> bool:
    """An expression whose values are booleans: a comparison, ``x.ne(0)``-style calls, ``~``/``&``/``|`` of
    those (names are not read: ``attention_mask`` may hold anything)."""
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)):
        return _is_boolean(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return _is_boolean(node.left) and _is_boolean(node.right)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _BOOLEAN_METHODS


def _counts_booleans(node: ast.expr) -> bool:
    """``b.sum(...)``, ``torch.sum(b, ...)`` or ``torch.count_nonzero(b)`` of a boolean ``b``: at most a size."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    f = node.func
    if f.attr in ("sum", "count_nonzero") and _root_name(f.value) == "torch" and isinstance(f.value, ast.Name):
        return bool(node.args) and _is_boolean(node.args[0])
    return f.attr in ("sum", "count_nonzero") and _is_boolean(f.value)


def _extent_of(node: ast.expr) -> str | None:
    """The name whose maximum an extent is: ``n``, ``n.max()``, ``n.amax()``, ``n.max().item()``, ``int(...)``."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Call) and not node.args and isinstance(node.func, ast.Attribute):
            if node.func.attr not in ("max", "amax", "item"):
                return None
            node = node.func.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "int" and node.args:
            node = node.args[0]
        else:
            return None


_UPLOAD_METHODS = frozenset({"POST", "PUT", "PATCH"})


def _upload_method(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.upper() in _UPLOAD_METHODS


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _targets(node: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return node.targets if isinstance(node, ast.Assign) else [node.target]


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _catches_import_error(t: ast.expr | None) -> bool:
    if t is None:
        return False
    names = t.elts if isinstance(t, ast.Tuple) else [t]
    return any(
        isinstance(n, (ast.Name, ast.Attribute))
        and (n.id if isinstance(n, ast.Name) else n.attr) in ("ImportError", "ModuleNotFoundError")
        for n in names
    )


_HANDLERS: dict[type, Callable[[PyVisitor, Any], None]] = {
    ast.Try: PyVisitor.v_try,
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
    ast.Compare: PyVisitor.v_compare,
    ast.Assert: PyVisitor.v_if,
    ast.Constant: PyVisitor.v_constant,
    ast.For: PyVisitor.v_loop,
    ast.AsyncFor: PyVisitor.v_loop,
    ast.Assign: PyVisitor.v_assign,
    ast.Name: PyVisitor.v_name,
    ast.Dict: PyVisitor.v_literal,
    ast.List: PyVisitor.v_literal,
    ast.Tuple: PyVisitor.v_literal,
    ast.Set: PyVisitor.v_literal,
    ast.arg: PyVisitor.v_arg,
    ast.AnnAssign: PyVisitor.v_annassign,
}
