"""The visitor's rules on branches: probes, per-backend dispatch, requirements and the target's own arm."""

from __future__ import annotations

import ast
import re

from accelpilot.porting.scan.branch_tests import (
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
    _tunes_given_device,
    exits_unless,
)
from accelpilot.porting.scan.dataflow import (
    _once_per_loop,
)
from accelpilot.porting.scan.literals import is_main_test
from accelpilot.porting.scan.nodes import walk
from accelpilot.porting.scan.varlen import _names_varlen
from accelpilot.porting.scan.visit_probes import ProbeRules

_GPU_PARAM = re.compile(GPU_FLAG)


class BranchRules(ProbeRules):
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

    def _backend_call(self, backend: str) -> str | None:
        """``backend-branch`` for a call of ``backend``'s own API (memory statistics, caches, seeds,
        synchronisation) inside that backend's branch of a dispatch, the branch placing nothing (``_places``)."""
        if self.backend_branch != backend:
            return None
        return "backend-branch" if self.context in (None, "optional") else None

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
