"""The Python visitor: one pass over a (pruned) syntax tree, at most one finding per rule and line."""

from __future__ import annotations

import ast

from accelpilot.porting.scan.branch_tests import (
    _COMPARED_DEVICE,
    _CUDA_NO_OPS,
    _CUDA_QUERIES,
    _PROBE_DEF,
    _compared_backend,
    counts_gpus,
    peak_flops,
)
from accelpilot.porting.scan.dataflow import (
    _decorator_name,
    _fresh_on_path,
    _is_dtype,
    _is_masky,
    _is_none,
    _module_trips,
    _name_of,
    _remapped_after,
    grown_cache,
)
from accelpilot.porting.scan.defaults import forwarded_to_base, init_owners
from accelpilot.porting.scan.literals import (
    _DTYPE_TESTS,
    JOB_SPEC_RULES,
    _library_nccl_vars,
    cuda_arm_head,
    impl_selector,
    indexed_cuda_head,
    indexed_device,
)
from accelpilot.porting.scan.nodes import walk
from accelpilot.porting.scan.patterns import (
    BACKEND_SPEC,
    BENCHMARK_MODULES,
    CHOICE_SUFFIX,
    CUDA_GRAPH_NAMES,
    DEVICE,
    DEVICE_RULE,
    DISPATCHED_BY_DEFAULT,
    EXACT_STRINGS,
    INDEXED_CHOICE,
    STRING_RULES,
    STRING_TRIGGER,
    TENSOR_VALUE_METHODS,
    TORCHAUDIO_STFT,
    lib_rule,
    package_of,
)
from accelpilot.porting.scan.varlen import _fills_given_inputs, _unpacked_offsets, fixed_step_offsets
from accelpilot.porting.scan.visit_base import _HANDLERS
from accelpilot.porting.scan.visit_tables import TableRules


class PyVisitor(TableRules):
    """One pass over the (pruned) tree; records RawFindings, at most one per rule and line."""

    # -- handlers --
    def v_expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstrings and bare strings are documentation, not code paths
        self.visit(node.value)

    def v_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """ "Inside forward" means: the innermost enclosing def (or class) is ``def forward``."""
        saved = (self.forward_depth, self.def_name, self.loop_depth, self.def_node, self.backend_branch)
        saved_vars, saved_once, saved_fresh = self._loop_vars, self._once_at, self._fresh
        if self.def_node is not None and not node.decorator_list:
            self.nested_defs.append((node.lineno, node.end_lineno or node.lineno))
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
            if (impl_selector(param.arg) or param.arg in self.selectors) and isinstance(default, ast.Constant):
                self._consumed.add(id(default))  # ``impl="cuda"``: a code path of the library, not a device
            saved, self._default_of = self._default_of, (self._init_owner.get(id(node), node.name), param.arg)
            context, self.context = (
                self.context,
                "forwarded-default" if forwarded_to_base(node, param.arg) else self.context,
            )
            try:
                self.visit(default)
            finally:
                self._default_of, self.context = saved, context

    def v_class(self, node: ast.ClassDef) -> None:
        saved = self.forward_depth
        self.forward_depth = 0
        try:
            self._init_owner.update(init_owners(node))  # ``Cls(device=d)`` passes ``__init__``'s ``device``
            self.trainer_subclass(node)
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
            if mod.startswith("torch.cuda") or full in TORCHAUDIO_STFT:
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
            elif d.startswith("torch.fft.") or d in ("torch.stft", "torch.istft"):
                self.add("fft-op", line, d)
            elif d.startswith("torch.nested."):
                self.add("nested-tensor", line, d)
            elif d in ("torch.float64", "torch.double"):
                self.add("float64-dtype", line, d, context=self._setup_only(line))
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
        elif d in TORCHAUDIO_STFT:
            self.add("fft-op", line, f"{d} (a torch.stft inside)")
        elif d.startswith(("triton.jit", "triton.autotune")):
            self.add("triton-kernel", line, f"@{d}")
        elif d.startswith(("neuronxcc.nki.jit", "nki.jit")):
            self.add("nki-kernel", line, f"@{d}")
        elif d.startswith("numba.cuda."):
            self.add("numba-cuda", line, d)

    def v_subscript(self, node: ast.Subscript) -> None:
        sl = node.slice
        # one-line rule (like the trigger): the index starts on the line of its "["; an assignment through a mask
        # (``x[mask] = 0``) keeps the shape, only a read changes it
        store = isinstance(node.ctx, ast.Store)
        if id(node) in self._consumed:
            store = True  # ``c_dets[mask_c].numpy()``: a host tensor's read (``v_call``)
        if self.torch_file and not store and sl.lineno == (node.value.end_lineno or node.lineno):
            elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
            masks = [e for e in elts if _is_masky(e) and not self._not_a_mask_read(e)]
            # numpy's on host data aside: the array, or every mask, bound to a numpy call (Person_reID's
            # ``mask = np.in1d(index, junk_index)`` then ``index[mask]``, ``index`` a parameter)
            if masks and not (
                self._numpy_bound(node.value, sl.lineno) or all(self._numpy_bound(e, sl.lineno) for e in masks)
            ):
                self.add("boolean-mask-index", sl.lineno, "boolean-mask indexing")
        self.generic(node)

    def _cond(self, test: ast.expr, keyword_line: int) -> None:
        """A tensor-value method called on the line of the ``if``/``while``/``assert`` keyword (one-line rule)."""
        if self.forward_depth and self.torch_file:
            for sub in walk(test):
                if (
                    isinstance(sub, ast.Call)
                    and isinstance(sub.func, ast.Attribute)
                    and sub.func.attr in TENSOR_VALUE_METHODS
                    and (sub.func.end_lineno or sub.lineno) == keyword_line
                    and not self._host_built(sub.func.value, keyword_line, 6)
                ):
                    self.add("tensor-control-flow", keyword_line, f"branch on .{sub.func.attr}() inside forward")
                    break

    def v_compare(self, node: ast.Compare) -> None:
        """``device.type == "mps"``, ``d in ("cpu", "mps")``, ``device_map != "cuda"``: a branch on which backend
        is in use selects nothing (the placement, if any, is its own line), so the device string is not a finding.
        Likewise a torch dtype compared with (``x.dtype == torch.float64``, ``t.dtype in (torch.float32,
        torch.float64)``) is a test of which dtype is in use: it converts nothing, so it is not a float64 or complex
        use (a conversion in the branch is its own line)."""
        if counts_gpus(node, self.dotted):
            # ``torch.cuda.device_count() > 1``: 0 without CUDA (no error), so the branch is skipped on the target
            self.add(
                "torch-cuda-api", node.lineno, "torch.cuda.device_count compared", context=self.context or "count-query"
            )
            return
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
        head = indexed_cuda_head(node.body)
        if head is not None and any(isinstance(n, ast.Attribute) and n.attr == "is_available" for n in walk(node.test)):
            # ``'cuda:' + str(args.gpu) if torch.cuda.is_available() else 'cpu'`` (torchdiffeq), or ``'cuda:{}'.format
            # (args.gpu) if torch.cuda.is_available() and args.gpu != -1 else 'cpu'`` (federated-learning): a choice
            self._consumed.add(id(head))
            self.add("cuda-device-literal", head.lineno, INDEXED_CHOICE)
        elif (head := cuda_arm_head(node.body)) is not None and any(
            isinstance(n, ast.Attribute) and n.attr == "is_available" and n.lineno > head.lineno
            for n in walk(node.test)
        ):
            # ``torch.device('cuda' if args.use_cuda\n and torch.cuda.is_available() else 'cpu')`` (pytorch-maml):
            # the test that makes it a choice is on a later line than the string, out of the line's text
            self._consumed.add(id(head))
            self.add("cuda-device-literal", head.lineno, f"device string {head.value!r}{CHOICE_SUFFIX}")
        values = (
            node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And) else [node.test]
        )
        if (
            self.context in (None, "optional")
            and any(self._asks_cuda(v) for v in values)
            and self._reads_cuda_facts(node.body)
        ):
            # ``torch.cuda.get_device_name(...) if torch.cuda.is_available() else "CPU"`` (RFdiffusion's run metadata):
            # the body only reads a fact of the CUDA device the test found, as ``if is_available():`` would
            saved, self.context = self.context, "probe"
            try:
                self.visit(node.test)
                self.visit(node.body)
            finally:
                self.context = saved
            self.visit(node.orelse)
            return
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

    def _reads_cuda_facts(self, expr: ast.expr) -> bool:
        """``expr`` calls only CUDA device queries (``torch.cuda.get_device_name(torch.cuda.current_device())``)."""
        calls = [n for n in walk(expr) if isinstance(n, ast.Call)]
        return bool(calls) and all(self.dotted(c.func) in _CUDA_QUERIES for c in calls)

    def _made_for_given(self, node: ast.IfExp) -> bool:
        """``torch.cuda.Stream(device=d) if d.type == "cuda" else None``: an object of one backend made only when the
        device the code already holds is of that type, with nothing (``None``, or a no-op ``lambda``: nanochat's
        ``torch.cuda.synchronize if device_type == "cuda" else lambda: None``) on any other device: the expression
        form of ``_tunes_given_device``'s lone branch. A body that places work anew (``"cuda:0"``, ``.cuda()``) stays
        (``_places``, the device given)."""
        backend = _compared_backend(node.test)
        return (
            backend is not None
            and (_is_none(node.orelse) or isinstance(node.orelse, ast.Lambda))
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
        if not self.loop_depth and grown_cache(node, self.def_node):  # outside a loop (the loop case is below)
            self.add("growing-sequence", node.lineno, "KV cache grown with torch.cat: a new shape every step")
        """``seq = torch.cat([seq, tok], ...)`` inside a loop: the sequence grows a step at a time."""
        v = node.value
        if peak_flops(node):
            self.add("hardcoded-peak-flops", node.lineno, "peak FLOPS literal")
        if isinstance(v, ast.Constant) and any(
            impl_selector(x.id if isinstance(x, ast.Name) else x.attr if isinstance(x, ast.Attribute) else None)
            for x in node.targets
        ):
            self._consumed.add(id(v))  # ``self.impl = "cuda"``: an implementation selector
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
            remapped = bool(self._fresh) and _remapped_after(self._fresh[-1][0], node, targets)
            if carried and not unrolled and not remapped and any(ast.unparse(e) in targets for e in v.args[0].elts):
                self.add("growing-sequence", v.lineno, "torch.cat onto the sequence inside a loop")
        self.generic(node)

    def v_name(self, node: ast.Name) -> None:
        if "cu_seqlens" in node.id and id(node) not in self._consumed:
            self._add_varlen(node, node.lineno, node.id)

    def v_arg(self, node: ast.arg) -> None:
        if "cu_seqlens" in node.arg:
            self._add_varlen(node, node.lineno, node.arg)

    def _add_varlen(self, node: ast.AST, line: int, detail: str) -> None:
        """A ``cu_seqlens`` mention, unless its def reads the offsets only for their count or a check
        (``_unpacked_offsets``: nothing is packed there); ``host-side`` in a def that fills its caller's inputs
        (``_fills_given_inputs``). Each def is read once, when its first mention is met."""
        fn, context = self.def_node, None
        if fn is not None:
            known = self._varlen_defs.get(id(fn))
            if known is None:
                known = self._varlen_defs[id(fn)] = (
                    _unpacked_offsets(fn) | fixed_step_offsets(fn),
                    _fills_given_inputs(fn),
                )
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
        rule = "nccl-backend" if BACKEND_SPEC.match(v) else EXACT_STRINGS.get(v)
        if rule:
            # a kernel library named in a string is loaded lazily, by name, as a fast path with a fallback
            # (unless an outer context, such as the probe call naming it, already says how it is reached)
            lazy = "optional" if rule == "cuda-kernel-library" and self.context is None else None
            self.add(rule, line, f"string {v!r}", subject=v, context=lazy)
            return
        if STRING_TRIGGER.search(v):
            for rid, pat, template in STRING_RULES:
                mm = pat.search(v)
                if mm and self._message_depth and rid in JOB_SPEC_RULES:
                    continue  # "run with --gres=gpu:1" in an error or log message asks a person; it sets nothing
                if mm:
                    ctx = None
                    if rid == "nccl-backend" and self.def_node is not None:
                        ctx = "no-op-elsewhere" if mm.group(0) in self._nccl_defaults(self.def_node) else None
                    self.add(rid, line, template.format(m=mm.group(0)), subject=mm.group(0), context=ctx)

    def v_indexed(self, node: ast.JoinedStr | ast.BinOp) -> None:
        """``f"cuda:{rank}"`` or ``"cuda:" + str(i)`` on its own (``literals.indexed_device``)."""
        found = indexed_device(node)
        if found is not None and id(found[0]) not in self._consumed:
            self._consumed.add(id(found[0]))
            self.add("cuda-device-literal", found[0].lineno, "device string 'cuda:' + index", context=found[1])
        self.generic(node)

    def v_raise(self, node: ast.Raise) -> None:
        self._message_depth += 1
        try:
            self.generic(node)
        finally:
            self._message_depth -= 1


_HANDLERS.update(
    {
        ast.Raise: PyVisitor.v_raise,
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
        ast.JoinedStr: PyVisitor.v_indexed,
        ast.BinOp: PyVisitor.v_indexed,
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
)
