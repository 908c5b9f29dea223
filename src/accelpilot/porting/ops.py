"""Operator inventory of a real model: which core ATen operators it runs, how often, with which dtypes.

The only module of ``porting`` that runs torch on a model (lazily, inside functions), and the only one that imports
user code, and only when asked (``accelpilot scan --model module:factory``): it says so on stderr. The factory
returns an object with ``build_model()`` and ``example_inputs()`` (the workload protocol, duck-typed here).

Capture: ``torch.export`` (non-strict) first, then ``run_decompositions()`` (core ATen, the default table); if the
model does not export, ``torch._dynamo.explain`` gives the graph breaks with reasons and a dispatch-level trace of
one eager forward gives the operators, each non-core operator decomposed on the fly with the same core ATen table
(and functionalized, as export is). Either way the names are core ATen (``opset.py``): the same model gives the
same operator names through both paths. Operators that stay outside core ATen (custom ops, ops without a
decomposition) are kept, marked ``core=False``.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import logging
import os
import re
import sys
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from accelpilot.errors import ConfigError
from accelpilot.factory import import_factory
from accelpilot.porting.log import Finding, GraphBreak, OpCount, OpInventory
from accelpilot.porting.opset import CORE_ATEN, decomposition_table, is_core_overload
from accelpilot.porting.rules import RULES
from accelpilot.porting.supported import SupportedOps, check_core_aten, normalise_op

# Operators whose output shape (or a Python value) depends on tensor values.
DATA_DEPENDENT_ATEN = frozenset(
    {
        "aten::nonzero",
        "aten::unique",
        "aten::_unique",
        "aten::_unique2",
        "aten::unique_dim",
        "aten::unique_consecutive",
        "aten::masked_select",
        "aten::argwhere",
        "aten::bincount",
        "aten::item",
        "aten::_local_scalar_dense",
        "aten::repeat_interleave",
        "aten::masked_scatter",
    }
)
# Export bookkeeping, not computation: left out of the inventory.
BOOKKEEPING = frozenset(
    {
        "aten::_assert_scalar",
        "aten::_assert_tensor_metadata",
        "aten::_assert_async",
        "aten::sym_constrain_range",
        "aten::sym_constrain_range_for_size",
        "aten::_functional_sym_constrain_range",
        "aten::sym_size",
        "aten::sym_numel",
        "aten::sym_stride",
        "aten::sym_storage_offset",
    }
)
_REGION_HOPS = frozenset({"wrap_with_set_grad_enabled", "wrap_with_autocast"})
FLOAT64 = ("float64",)
COMPLEX = ("complex32", "complex64", "complex128")
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_CALL = re.compile(r"([\w./\\-]+\.py)\D{1,3}(\d+)")


def _say(msg: str) -> None:
    sys.stderr.write(msg + "\n")


def load_factory(spec: str, announce: Callable[[str], None] = _say) -> Any:
    """Import ``module:factory`` or ``path/file.py:factory`` and call it. Imports user code: said on stderr."""
    if ":" not in spec:
        raise ConfigError(
            f"model {spec!r} is not of the form module:factory",
            field="--model",
            fix="e.g. mypkg.models:make_workload or path/to/file.py:factory",
        )
    mod_name = spec.rpartition(":")[0]
    announce(f"accelpilot: importing user code {mod_name!r} to build the model for the op inventory (--model)")
    factory = import_factory(spec, "--model")
    workload = factory()
    for need in ("build_model", "example_inputs"):
        if not callable(getattr(workload, need, None)):
            raise ConfigError(
                f"{spec} returned {type(workload).__name__}, which has no {need}()",
                field="--model",
                fix="the factory must return an object with build_model() and example_inputs()",
            )
    return workload


def _rel(path: str) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return path


def _torch_dir() -> str:
    import torch

    return os.path.dirname(torch.__file__)


def _site(stack_trace: str | None) -> tuple[str | None, int | None]:
    """The innermost frame of an FX ``stack_trace`` outside torch itself (the user's line)."""
    if not stack_trace:
        return None, None
    frames = _FRAME.findall(stack_trace)
    if not frames:
        return None, None
    frames = [f for f in frames if not f[0].startswith("<")]  # generated code (``<eval_with_key>``): no site
    if not frames:
        return None, None
    tdir = _torch_dir()
    user = [f for f in frames if not f[0].startswith(tdir)]
    file, line = (user or frames)[-1]
    return _rel(file), int(line)


def _dtype_names(val: Any) -> list[str]:
    import torch

    out: list[str] = []
    vals = val if isinstance(val, (list, tuple)) else [val]
    for v in vals:
        if isinstance(v, torch.Tensor):
            out.append(str(v.dtype).replace("torch.", ""))
    return out


class _Capture:
    """Operators, counts, first call sites, dtypes and data-dependent ops, whichever way they were captured."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.sites: dict[str, tuple[str | None, int | None]] = {}
        self.dtypes: set[str] = set()
        self.dtype_sites: dict[str, tuple[str | None, int | None]] = {}
        self.data_dependent: dict[str, tuple[str | None, int | None]] = {}
        self.not_core: set[str] = set()

    def add(
        self, op: str, site: tuple[str | None, int | None], dtypes: list[str], unbacked: bool, core: bool = True
    ) -> None:
        if op in BOOKKEEPING:
            return
        if not core:
            self.not_core.add(op)
        if op.startswith("aten::sym_"):
            unbacked = False  # a shape query reports a data-dependent size; the op that made it is flagged
        self.counts[op] += 1
        if op not in self.sites or self.sites[op][0] is None:
            self.sites[op] = site
        for d in dtypes:
            self.dtypes.add(d)
            self.dtype_sites.setdefault(d, site)
        if op in DATA_DEPENDENT_ATEN or unbacked:
            self.data_dependent.setdefault(op, site)


def _capture_export(model: Any, inputs: tuple[Any, ...], cap: _Capture) -> None:
    import torch
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

    exported = torch.export.export(model, inputs, strict=False)
    fallback_sites = _exported_sites(exported)
    # Core ATen: the default table of run_decompositions is torch's core ATen decomposition table.
    ep = exported.run_decompositions()
    # ``no_grad``/``autocast`` regions are higher-order ops around sub-graphs in the exported program (the
    # decomposition inlines them today): walk every graph, not only the top one, or such a model could report no
    # operators at all.
    nodes = [n for gm in ep.graph_module.modules() if isinstance(gm, torch.fx.GraphModule) for n in gm.graph.nodes]
    for node in nodes:
        if node.op == "placeholder":
            for d in _dtype_names(node.meta.get("val")):
                cap.dtypes.add(d)
            continue
        if node.op != "call_function":
            continue
        if isinstance(node.target, torch._ops.HigherOrderOperator):
            # control flow (torch.cond, while_loop) and other higher-order ops: their sub-graphs are walked, the
            # op itself has no core ATen form: kept and marked, never dropped (the no_grad/autocast wrappers are
            # only regions, and the decomposition inlines them)
            if node.target.name() not in _REGION_HOPS:
                site = _origin_site(node, fallback_sites) or _site(node.meta.get("stack_trace"))
                cap.add(f"higher_order::{node.target.name()}", site, [], False, core=False)
            continue
        if not isinstance(node.target, torch._ops.OpOverload):
            continue
        val = node.meta.get("val")
        try:
            unbacked = bool(free_unbacked_symbols(val))
        except Exception:
            unbacked = False
        site = _site(node.meta.get("stack_trace"))
        if site[0] is None or site[0].startswith(_torch_dir()):
            site = _origin_site(node, fallback_sites) or site
        cap.add(normalise_op(node.target.name()), site, _dtype_names(val), unbacked, is_core_overload(node.target))


def _exported_sites(ep: Any) -> dict[str, tuple[str | None, int | None]]:
    """The user's line per node name of the exported program (before decomposition), for decomposed nodes whose
    own stack trace lost it (a sub-graph inlined from a ``no_grad`` region). A higher-order op's node takes the
    line of its first result."""
    import torch

    sites: dict[str, tuple[str | None, int | None]] = {}
    tdir = _torch_dir()
    for gm in ep.graph_module.modules():
        if not isinstance(gm, torch.fx.GraphModule):
            continue
        for n in gm.graph.nodes:
            site = _site(n.meta.get("stack_trace"))
            if site[0] is None or site[0].startswith(tdir):
                site = next(
                    (s for u in n.users if (s := _site(u.meta.get("stack_trace")))[0] and not s[0].startswith(tdir)),
                    site,
                )
            if site[0] is not None:
                sites.setdefault(n.name, site)
    return sites


def _origin_site(node: Any, sites: dict[str, tuple[str | None, int | None]]) -> tuple[str | None, int | None] | None:
    """The site of the exported node a decomposed node came from (``meta["from_node"]`` provenance)."""
    todo = list(node.meta.get("from_node") or [])
    while todo:
        src = todo.pop(0)
        site = sites.get(getattr(src, "name", ""))
        if site is not None:
            return site
        todo.extend(getattr(src, "from_node", None) or [])
    return None


def _capture_dispatch(model: Any, inputs: tuple[Any, ...], cap: _Capture, functional: bool = True) -> None:
    """Run one eager forward under a dispatch mode: every ATen call, with the first user frame as call site.

    Each operator outside core ATen is decomposed on the spot with the core ATen table (or its
    CompositeImplicitAutograd kernel, as ``run_decompositions`` does), re-entering the mode so the parts are recorded;
    the forward is functionalized (``relu_`` -> ``relu``), as export is. Kept as a trace of a real forward, not
    ``make_fx``: a model that fails to export usually has data-dependent control flow a tracer cannot follow either.
    """
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    torch_dir = os.path.dirname(torch.__file__)
    here = os.path.dirname(__file__)
    table = decomposition_table()
    cia = torch._C.DispatchKey.CompositeImplicitAutograd

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            core = is_core_overload(func)
            if not core and func.name().split("::", 1)[0] in ("aten", "prims"):
                decomp = table.get(func)
                if decomp is None and func.has_kernel_for_dispatch_key(cia):
                    decomp = func.decompose
                if decomp is not None:
                    mark = (cap.counts.copy(), set(cap.not_core))
                    try:
                        with self:  # the parts dispatch back into this mode and are recorded
                            res = decomp(*args, **kwargs)
                    except Exception:
                        # a decomposition that does not apply to these real inputs: forget its parts, run the
                        # operator itself and list it as outside core ATen rather than lose the whole trace
                        cap.counts, cap.not_core = mark[0], mark[1]
                        res = NotImplemented
                        core = False
                    if res is not NotImplemented:
                        return res
            out = func(*args, **kwargs)
            op = normalise_op(func.name())
            site: tuple[str | None, int | None] = (None, None)
            if op not in cap.sites or op in DATA_DEPENDENT_ATEN:
                for fr in reversed(traceback.extract_stack(limit=40)):
                    if not fr.filename.startswith((torch_dir, here)) and "<" not in fr.filename:
                        site = (_rel(fr.filename), fr.lineno)
                        break
            cap.add(op, site, _dtype_names(out), False, core)
            return out

    with torch.no_grad(), Mode():
        if functional:
            torch.func.functionalize(model, remove="mutations")(*inputs)
        else:
            model(*inputs)


def _explain(model: Any, inputs: tuple[Any, ...]) -> tuple[int | None, list[GraphBreak]]:
    import torch

    try:
        import torch._dynamo as dynamo

        dynamo.reset()
        out = dynamo.explain(model)(*inputs)
    except Exception as exc:  # explain itself can fail on exotic models; the inventory still stands
        return None, [GraphBreak(reason=f"dynamo explain failed: {type(exc).__name__}: {str(exc)[:200]}")]
    finally:
        torch._dynamo.reset()
    breaks: list[GraphBreak] = []
    for br in getattr(out, "break_reasons", []) or []:
        loc = None
        stack = getattr(br, "user_stack", None) or []
        if stack:
            fr = stack[-1]
            loc = f"{_rel(fr.filename)}:{fr.lineno}"
        breaks.append(GraphBreak(reason=str(getattr(br, "reason", br)).strip().splitlines()[0][:300], location=loc))
    return getattr(out, "graph_count", None), breaks


@contextlib.contextmanager
def _quiet_torch() -> Iterator[None]:
    """torch logs whole graphs and dynamo advice on failures; the inventory reports them itself."""
    saved = {}
    for name in ("torch", "torch._dynamo", "torch.export", "torch.fx", "torch._export"):
        lg = logging.getLogger(name)
        saved[name] = lg.level
        lg.setLevel(logging.CRITICAL)
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


# A graph break on a numpy value (a constant array, ``np.`` arithmetic on host values) is dynamo declining host code,
# not a hazard of the model's graph on the target (issue 27).
_NUMPY_BREAK = re.compile(r"\bnumpy\b|\bnp\.|\bndarray\b")


def _graph_break_findings(inv: OpInventory) -> list[Finding]:
    out = []
    for br in inv.graph_breaks:
        file, line = br.location.rsplit(":", 1) if br.location else (None, None)
        context = "numpy-constant" if _NUMPY_BREAK.search(br.reason) else None
        site = (file, int(line) if line else None)
        out.append(_finding("graph-break", site, f"graph break: {br.reason}", br.reason, context=context))
    return out


def _capture_all(model: Any, inputs: tuple[Any, ...], inv: OpInventory) -> tuple[_Capture, list[Finding]]:
    """torch.export first; on failure a dispatch trace (operators). Graph breaks are always looked for (dynamo
    explain): a model that exports can still break graphs under ``torch.compile`` on the target."""
    cap = _Capture()
    findings: list[Finding] = []
    try:
        _capture_export(model, inputs, cap)
        inv.graph_count, inv.graph_breaks = _explain(model, inputs)
        findings.extend(_graph_break_findings(inv))
        return cap, findings
    except Exception as exc:
        msg = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        inv.export_error = f"{type(exc).__name__}: {msg}"
        m = re.search(r"\(([^()]+\.py):(\d+) in \w+\)", str(exc))
        site = (_rel(m.group(1)), int(m.group(2))) if m else (None, None)
    findings.append(_finding("export-failure", site, f"torch.export failed: {inv.export_error}", "export"))
    inv.graph_count, inv.graph_breaks = _explain(model, inputs)
    findings.extend(_graph_break_findings(inv))
    cap = _Capture()
    try:
        try:
            _capture_dispatch(model, inputs, cap)
        except Exception:
            # functionalization can fail where the plain forward runs: trace that, in-place ops named as they run
            cap = _Capture()
            _capture_dispatch(model, inputs, cap, functional=False)
            inv.notes.append("fallback trace not functionalized: in-place operators appear as they run")
        inv.method = "dispatch-trace"
    except Exception as exc2:
        inv.method = "failed"
        inv.export_error = f"{inv.export_error}; {_eager_verdict(model, inputs, exc2)}"
    return cap, findings


def _eager_verdict(model: Any, inputs: tuple[Any, ...], trace_error: Exception) -> str:
    """What failed when the dispatch trace did: "eager forward failed too" only when a plain forward fails as well
    (issue 27); otherwise the trace is what failed, and the forward runs."""
    import torch

    try:
        with torch.no_grad():
            model(*inputs)
    except Exception as exc:
        return f"eager forward failed too: {type(exc).__name__}: {exc}"
    return f"the dispatch trace failed ({type(trace_error).__name__}: {trace_error}); the eager forward itself runs"


def _finding(
    rule: str, site: tuple[str | None, int | None], message: str, snippet: str, context: str | None = None
) -> Finding:
    return Finding.from_rule(
        RULES[rule], file=site[0], line=site[1], message=message, snippet=snippet, source="model", context=context
    )


def _model_site(model: Any) -> tuple[str | None, int | None]:
    """Where the model's ``forward`` is defined (its class's file and the def line), or (None, None)."""
    cls = type(model)
    try:
        file = inspect.getsourcefile(cls)
        fwd = getattr(cls, "forward", None)
        line = inspect.getsourcelines(fwd)[1] if fwd is not None else inspect.getsourcelines(cls)[1]
    except (OSError, TypeError):
        return None, None
    return (_rel(file), line) if file else (None, None)


def _in_user_code(findings: list[Finding], model: Any) -> list[Finding]:
    """Every finding at a file of the user's code (issue 27): one with no site, or one inside torch itself, is
    placed at the model's forward and says so."""
    tdir = _torch_dir()
    site = _model_site(model)
    out = []
    for f in findings:
        inside = f.file is not None and os.path.abspath(f.file).startswith(tdir)
        if (f.file is None or inside) and site[0] is not None:
            msg = f"{f.message} (no frame in the model's code: placed at its forward)"
            f = Finding.from_rule(
                RULES[f.rule],
                file=site[0],
                line=site[1],
                message=msg,
                snippet=f.snippet,
                source=f.source,
                context=f.context,
            )
        out.append(f)
    return out


def inventory(
    factory_spec: str | Any,
    supported_ops: SupportedOps | None = None,
    *,
    announce: Callable[[str], None] = _say,
) -> OpInventory:
    """Inventory the model of ``module:factory`` (or an already-built workload object) into an OpInventory.

    Findings (merged into a log with ``PortabilityLog.with_inventory``): unsupported operators when a list is
    given, plus compile-ahead hazards from the graph itself: data-dependent ops, float64/complex dtypes, graph
    breaks, export failure.
    """
    # A list in another op set is refused before any model is built (one line: file, operator, fix).
    compare = check_core_aten(supported_ops) if supported_ops is not None else False
    workload = load_factory(factory_spec, announce) if isinstance(factory_spec, str) else factory_spec
    name = factory_spec if isinstance(factory_spec, str) else type(workload).__name__
    model = workload.build_model()
    if hasattr(model, "eval"):
        model.eval()
    notes: list[str] = []
    config = getattr(model, "config", None)
    if config is not None and getattr(config, "use_cache", None):
        # A cache object (transformers' DynamicCache) as an output is not an operator and does not export:
        # capture the forward with caching off, and say so.
        config.use_cache = False
        notes.append("captured with config.use_cache=False (cache objects are outputs, not operators)")
    inputs = workload.example_inputs()
    inputs = tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)
    inv = OpInventory(model=name, method="torch.export", op_set=CORE_ATEN, notes=notes)
    with _quiet_torch():
        cap, findings = _capture_all(model, inputs, inv)
    if not cap.counts and inv.method != "failed":
        # Never "0 operators" as a success: an empty inventory means the capture missed the model.
        why = f"{inv.method} captured no ATen operator"
        inv.method = "failed"
        inv.export_error = f"{inv.export_error}; {why}" if inv.export_error else why
        findings.append(_finding("export-failure", (None, None), f"op inventory incomplete: {why}", "no operators"))
    unsupported: list[str] = []
    listed_ops = {e.op for e in supported_ops.unsupported} if supported_ops is not None else set()
    for op, n in sorted(cap.counts.items()):
        ok = None
        if supported_ops is not None:
            # a list in another op set is not compared; its own "unsupported" verdicts still mark the operator
            ok = supported_ops.is_supported(op) if compare else (False if op in listed_ops else None)
        site = cap.sites.get(op, (None, None))
        call_site = f"{site[0]}:{site[1]}" if site[0] else None
        inv.ops.append(OpCount(op=op, count=n, supported=ok, core=op not in cap.not_core, call_site=call_site))
        if ok is False:
            unsupported.append(op)
    if cap.not_core:
        inv.notes.append(f"outside core ATen (no decomposition; kept as named): {', '.join(sorted(cap.not_core))}")
    inv.dtypes = sorted(cap.dtypes)
    inv.data_dependent_ops = sorted(cap.data_dependent)
    for op, site in sorted(cap.data_dependent.items()):
        findings.append(_finding("data-dependent-op", site, f"{op}: output shape or value depends on data", op))
    for d in sorted(cap.dtypes):
        if d in FLOAT64:
            findings.append(_finding("float64-dtype", cap.dtype_sites[d], f"the graph computes in {d}", d))
        elif d in COMPLEX:
            findings.append(_finding("complex-dtype", cap.dtype_sites[d], f"the graph computes in {d}", d))
    if supported_ops is not None:
        inv.supported_ops_file = supported_ops.source
        inv.supported_ops_op_set = supported_ops.op_set
        if not compare:
            inv.notes.append(
                f"{Path(supported_ops.source).name} names operators as the tool traced them (op set "
                f"{supported_ops.op_set}), not core ATen: its verdicts are reported as given, operators are not "
                "compared with it one by one"
            )
        listed = {e.op: e for e in supported_ops.unsupported}
        for op in unsupported:
            e = listed.get(op)
            why = f" (listed unsupported, fails at {e.failure_at})" if e and e.failure_at else ""
            findings.append(
                _finding(
                    "unsupported-op",
                    cap.sites.get(op, (None, None)),
                    f"{op} x{cap.counts[op]} is not in {Path(supported_ops.source).name} (core ATen){why}",
                    op,
                )
            )
        for op, e in listed.items():
            if op in unsupported:
                continue  # reported above, at its captured site
            m = _CALL.search(e.call or "")
            site = (m.group(1), int(m.group(2))) if m else (None, None)
            site = cap.sites.get(op, site) if op in cap.counts else site
            findings.append(
                _finding(
                    "unsupported-op",
                    site,
                    f"{op} reported unsupported by the analysis{' at ' + e.failure_at if e.failure_at else ''}",
                    op,
                )
            )
        inv.unsupported_ops = sorted(set(unsupported) | set(listed))
        if supported_ops.support_percentage is not None:
            inv.support_percentage = supported_ops.support_percentage
        elif cap.counts and compare:
            inv.support_percentage = round(100.0 * (len(cap.counts) - len(unsupported)) / len(cap.counts), 2)
    inv.findings = _in_user_code(findings, model)
    return inv
