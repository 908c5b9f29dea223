"""The visitor's rules on branches: probes, per-backend dispatch, requirements and the target's own arm."""

from __future__ import annotations

import ast
import re

from accelpilot.porting.scan.branch_tests import (
    _BACKENDS,
    _CUDA_QUERIES,
    _PLACEMENT,
    _TARGET_DEVICES,
    GPU_FLAG,
    _asks_flash,
    _asks_gpu_only_runtime,
    _block_after,
    _catches_import_error,
    _chain,
    _compared_backend,
    _early_exit_dispatch,
    _import_under_broad_except,
    _leaving_branch,
    _only_logs,
    _refuses_a_package,
    _tunes_given_device,
    exits_unless,
)
from accelpilot.porting.scan.dataflow import (
    _bindings,
    _fixed_by_module,
    _host_params,
    _integer_valued,
    _name_of,
    _once_per_loop,
)
from accelpilot.porting.scan.literals import is_main_test
from accelpilot.porting.scan.nodes import walk
from accelpilot.porting.scan.patterns import (
    probe_kind,
)
from accelpilot.porting.scan.varlen import _names_varlen
from accelpilot.porting.scan.visit_calls import CallRules

_GPU_PARAM = re.compile(GPU_FLAG)


class BranchRules(CallRules):
    """The visitor's rules on branches: probes, per-backend dispatch, requirements and the target's own arm."""

    def v_if(self, node: ast.If | ast.While | ast.Assert) -> None:
        if isinstance(node, ast.If) and is_main_test(node.test):
            self._within("main-block", node)  # a demo run by hand; run.py keeps it porting work in an entry script
            return
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
        if isinstance(node, ast.If) and self.context in (None, "optional") and exits_unless(node, self._asks_gpu):
            # ``if not torch.cuda.is_available() or not flash: return``: what follows in the block runs only on CUDA,
            # as the body of ``if torch.cuda.is_available():`` would (a probe when it only asks, else optional)
            after = _block_after(self.def_node, node)
            context = "probe" if after and self._queries_cuda_only(after) else "optional"
            self._guarded.update((id(x), (x, context)) for x in after)
        if isinstance(node, ast.If) and self.context in (None, "optional") and self._only_asks_cuda(node):
            # ``if torch.cuda.is_available(): major, minor = torch.cuda.get_device_capability()`` (or ``if
            # len(torch.cuda.default_generators) > 0: seed = ...[torch.cuda.current_device()].seed() else: <generic>``):
            # the body only reads facts of the CUDA device the test found and refuses nothing; without CUDA the code
            # after it (or the else) runs, so the body is part of the probe
            self._visit_if_under(node, "probe", test_too=True)
            return
        if isinstance(node, ast.If) and self.context in (None, "optional") and self._cuda_tensor_sync(node):
            # DLRM's ``if Z_test.is_cuda: torch.cuda.synchronize()``: only a tensor on a CUDA device opens the body,
            # and the body only drives the CUDA runtime (a kernel launched there stays: skipping it loses work)
            self._visit_if_under(node, "optional", test_too=False)
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
            # the guarded body (and its else) is an optional path, in a ``__main__`` block too (``main-block>optional``:
            # SadTalker's ``if torch.cuda.is_available() and not args.cpu: args.device = "cuda"``)
            guarded = self.context = self._nested("optional")
            try:
                self.backend_branch = self._dispatch_backend(node) or saved_branch
                if saved in (None, "optional") and (self._foreign_probe(node.test) or id(node) in self._apple):
                    # ``if is_torch_xpu_available(): ...``: only another accelerator ever runs this body (an
                    # ``elif`` link is visited inside the chain's ``optional`` else: that is no stronger context)
                    self.context = "backend-branch"
                for x in node.body:
                    self.visit(x)
                self.context = guarded
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
                    elif saved_context is None and node.orelse and self._compared(node.test) == "cuda":
                        # k-diffusion's ``if device.type == 'cuda': <CUDA event timing> else: time.time()``: the
                        # CUDA arm of a two-way choice runs only on CUDA, the else is the path elsewhere
                        self.context = "optional"
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
        return any(self._asks_cuda(v) for v in values) and self._queries_cuda_only(node.body)

    def _queries_cuda_only(self, body: list[ast.stmt]) -> bool:
        """``body`` uses CUDA only through device queries, places nothing and raises nothing (``_only_asks_cuda``)."""
        subs = [sub for stmt in body for sub in walk(stmt)]
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

    def _asks_gpu(self, test: ast.expr) -> bool:
        """``_asks_cuda``, or a parameter of the def that its caller sets to whether a GPU is in use (ColBERT's
        ``try_load_torch_extensions(cls, use_gpu)``: ``if ... or not use_gpu: return`` before the CUDA builds)."""
        if self._asks_cuda(test):
            return True
        fn = self.def_node
        if not isinstance(test, ast.Name) or fn is None or _GPU_PARAM.fullmatch(test.id) is None:
            return False
        a = fn.args
        return test.id in {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}

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

    def _cuda_tensor_sync(self, node: ast.If) -> bool:
        """``if x.is_cuda: torch.cuda.synchronize()``: an ``is_cuda`` test (alone or in an ``and``) over a body of
        only ``torch.cuda.*`` calls (synchronize, empty_cache): nothing the model computes is skipped off CUDA."""
        test = node.test
        values = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        if not any(isinstance(v, ast.Attribute) and v.attr == "is_cuda" for v in values):
            return False
        return all(
            isinstance(st, ast.Expr)
            and isinstance(st.value, ast.Call)
            and (self.dotted(st.value.func) or "").startswith("torch.cuda.")
            for st in node.body
        )

    def _is_probe(self, test: ast.expr) -> bool:
        if isinstance(test, (ast.Name, ast.Attribute)):  # ``if _is_torch_xpu_available:``, a cached probe result
            return self._probe_backends(test) is not None
        return any(isinstance(sub, ast.Call) and self._probe_backends(sub.func) is not None for sub in walk(test))

    def v_try(self, node: ast.Try) -> None:
        """``try: import x`` / ``except ImportError``: what the try body needs is an optional dependency."""
        optional = any(_catches_import_error(h.type) for h in node.handlers) or _import_under_broad_except(node)
        if self.context is None and self._asks_cuda_or_no(node):
            self._within("probe", node)
            return
        if not optional:
            self.generic(node)
            return
        saved = self.context
        self.context = self._nested("optional")
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
