"""What the visitor asks of a test before it decides what a branch means (visit_branches): which backend a probe
names, whether a test asks for CUDA alone, whether a body only queries CUDA, whether a masky index keeps shapes
fixed."""

from __future__ import annotations

import ast
import re

from accelpilot.porting.scan.branch_tests import (
    _BACKENDS,
    _CUDA_QUERIES,
    GPU_FLAG,
    _compared_backend,
    _refuses_a_package,
)
from accelpilot.porting.scan.dataflow import (
    _bindings,
    _fixed_by_module,
    _host_params,
    _integer_valued,
    _name_of,
)
from accelpilot.porting.scan.nodes import walk
from accelpilot.porting.scan.patterns import (
    probe_kind,
)
from accelpilot.porting.scan.visit_calls import CallRules

_GPU_PARAM = re.compile(GPU_FLAG)


class ProbeRules(CallRules):
    """The visitor's questions about tests: probes, CUDA-only tests, CUDA-query bodies and fixed mask reads."""

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
