"""CUDA calls one call deep from an entry point (issue 27: "blocking means it stops the default path").

``entry.py`` blocks CUDA placement on an entry point's own lines. The work a script does every epoch often lives in
a function of a module it imports:

    from engine_pretrain import train_one_epoch     # main_pretrain.py, module level
    ...
        train_stats = train_one_epoch(model, data_loader_train, ...)

    def train_one_epoch(...):                       # engine_pretrain.py
        for samples, _ in data_loader:
            ...
            torch.cuda.synchronize()                # every step, no guard

On a torch build without CUDA (a Neuron host's) such a call raises, so the entry point stops there. A line of a
module-level function of an in-tree module the entry point imports at module level and calls by name (``f(...)``
after ``from m import f``, ``m.f(...)`` after ``import m``) becomes blocking when it runs one of the constructs below
with no guard on the way: not under a CUDA test (``torch.cuda.is_available()``, ``x.is_cuda``, ``device.type ==
"cuda"``, any test naming cuda or a GPU), not in a ``try`` with a handler (a fallback), not after an early return on
such a test, not in a nested def. Only one call deep: what that function calls in turn is not followed. A function
that sets up the process group runs CUDA only under a launcher (torchrun), which ``launch_reach.py`` judges.

What raises, measured on torch 2.13 CPU (``torch.cuda.synchronize()``: "Torch not compiled with CUDA enabled";
``set_device``: "module 'torch._C' has no attribute '_cuda_setDevice'"; ``torch.tensor(..., device="cuda")``,
``x.cuda()``, ``x.to("cuda")``, ``current_device``, ``get_device_name``, ``get_device_properties``,
``current_stream``, ``get_rng_state``, ``ipc_collect``, ``reset_peak_memory_stats``, ``Event``, ``Stream``, the
typed constructors ``torch.cuda.FloatTensor(...)`` and kin, and ``torch.cuda.nvtx`` ranges and marks): the set
below. ``max_memory_allocated``, ``memory_allocated``, ``memory_reserved``, ``empty_cache``, ``device_count``,
``manual_seed[_all]`` and ``torch.device("cuda")`` itself return without CUDA, so they are left out.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Callable, Iterable, Mapping

from accelpilot.porting.findings import Finding
from accelpilot.porting.scan.branch_tests import _asks_cuda_device
from accelpilot.porting.scan.deep_reach import module_function, reached
from accelpilot.porting.scan.families import _module_names, prefixed_module
from accelpilot.porting.scan.launch_reach import sets_up_group
from accelpilot.porting.scan.literals import is_main_test
from accelpilot.porting.scan.patterns import SCALER_STATE

# torch.cuda functions that raise on a torch build without CUDA (measured on torch 2.13 CPU, see above).
RAISING_CUDA_CALLS = frozenset(
    {
        "synchronize",
        "set_device",
        "current_device",
        "get_device_name",
        "get_device_properties",
        "current_stream",
        "get_rng_state",
        "ipc_collect",
        "reset_peak_memory_stats",
        "Event",
        "Stream",
    }
)
# ``torch.cuda.FloatTensor(...)`` and its kin (WaveGlow's ``infer``): "TypeError: type torch.cuda.FloatTensor not
# available. Torch not compiled with CUDA enabled"; and NVTX ranges (RFdiffusion's SE(3)-Transformer): "RuntimeError:
# NVTX functions not installed. Are you sure you have a CUDA build?" (both torch 2.13 CPU, tried).
_TYPED_TENSOR = re.compile(r"(?:Float|Double|Half|BFloat16|Long|Int|Short|Char|Byte|Bool)Tensor")
_NVTX = frozenset({"range", "range_push", "range_pop", "mark"})
# The scanner's rules for such lines: the findings this pass may make blocking.
_RULES = frozenset({"torch-cuda-api", "cuda-device-literal", "cuda-call"})
_CUDA_WORD = re.compile(r"cuda|gpu", re.I)
_CUDA_LITERAL = re.compile(r"cuda(?::\d+)?")
_ALIAS = re.compile(rb"^[ \t]*import[ \t]+torch[ \t]+as[ \t]+(\w+)", re.M)
_FUNC = (ast.FunctionDef, ast.AsyncFunctionDef)
_LEAVES = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_COMPOUND = (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)


def wanted_files(findings: list[Finding], entries: dict[str, str]) -> set[str]:
    """The files this pass reads: the entry points and the files holding a candidate line (none: nothing to do)."""
    files = {f.file for f in findings if _candidate(f, entries) and f.file is not None}
    return files | set(entries) if files and entries else set()


def _submitit(f: Finding) -> bool:
    """A submitit Slurm GPU request (``executor.update_parameters(gpus_per_node=...)``), read by ``runtime_calls``."""
    return f.rule == "slurm-gpu-gres" and f.message.startswith("submitit")


def _candidate(f: Finding, entries: dict[str, str]) -> bool:
    return (
        (f.rule in _RULES or _submitit(f) or (f.rule == "amp-cuda" and f.message.startswith(SCALER_STATE)))
        and f.file not in entries
        and f.context is None
        and f.porting
        and f.severity != "blocking"
        and (f.file or "").endswith(".py")
    )


def _targets(entry: str, tree: ast.Module, mods: dict[str, str]) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """(local name -> (file, function) from ``from m import f``, local name -> file from ``import m``/``from p
    import m``) of the entry point's module-level imports of in-tree modules."""
    funcs: dict[str, tuple[str, str]] = {}
    modules: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in mods and mods[a.name] != entry:
                    modules[a.asname or a.name] = mods[a.name]
                elif (prefixed := prefixed_module(a.name, mods)) is not None and prefixed != entry:
                    modules[a.asname or a.name] = prefixed  # called through the whole dotted name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                local = a.asname or a.name
                if f"{node.module}.{a.name}" in mods:
                    modules[local] = mods[f"{node.module}.{a.name}"]
                elif node.module in mods and mods[node.module] != entry:
                    funcs[local] = (mods[node.module], a.name)
    return funcs, modules


def _calls(
    tree: ast.Module, funcs: dict[str, tuple[str, str]], modules: dict[str, str], firm: bool = False
) -> dict[tuple[str, str], int]:
    """(file, function) -> the first line of the entry point that calls it by name, outside a CUDA test (``firm``:
    outside any ``if`` but ``if __name__ == "__main__":``, as a class built only under an option, WaveGlow's ``if
    denoiser_strength > 0: Denoiser(...)``, is not built by the default command)."""
    guarded = _guarded_ids(tree, firm)
    out: dict[tuple[str, str], int] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or id(node) in guarded:
            continue
        target = _target(node.func, funcs, modules)
        if target is not None and (target not in out or node.lineno < out[target]):
            out[target] = node.lineno
    return out


def _guarded_ids(tree: ast.Module, firm: bool) -> set[int]:
    """Ids of the nodes under a CUDA test's body (``firm``: under either arm of any ``if`` but the ``__main__``
    guard)."""
    return {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ((firm and not is_main_test(node.test)) or _cuda_test(node.test))
        for st in [*node.body, *(node.orelse if firm else [])]
        for n in ast.walk(st)
    }


def _target(f: ast.expr, funcs: dict[str, tuple[str, str]], modules: dict[str, str]) -> tuple[str, str] | None:
    """(file, name) of the in-tree function or class a call's callee names: ``f`` imported from a module, ``m.f``,
    or ``pkg.sub.m.f`` after ``import pkg.sub.m``; None for anything else."""
    if isinstance(f, ast.Name):
        return funcs.get(f.id)
    if isinstance(f, ast.Attribute) and isinstance(f.value, (ast.Name, ast.Attribute)):
        owner = ast.unparse(f.value)
        return (modules[owner], f.attr) if owner in modules else None
    return None


_ON_INSTANCE = ", which the entry point's instance runs"
# A test on a run option: ``self.opt.predictive_mask``, ``args.amp``, ``cfg.model.ema``.
_OPTION_TEST = re.compile(r"\b(?:opt|opts|args|cfg|config|hparams|hps|flags|options)\.\w+")


def _unoptioned(body: list[ast.stmt]) -> list[ast.stmt]:
    """``body`` without the ``if`` statements (both arms) whose test reads a run option, at any depth of its
    compound statements: those lines run only when the run asks for them."""
    out: list[ast.stmt] = []
    for st in body:
        if isinstance(st, ast.If) and _OPTION_TEST.search(ast.unparse(st.test)) is not None:
            continue
        if isinstance(st, (ast.If, *_COMPOUND)):
            st = copy.copy(st)
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(st, field, None), list):
                    setattr(st, field, _unoptioned(getattr(st, field)))
        out.append(st)
    return out


def _instance_calls(
    tree: ast.Module, funcs: dict[str, tuple[str, str]], modules: dict[str, str]
) -> dict[tuple[str, str], set[str]]:
    """(file, class) -> the methods the entry point calls, outside any ``if`` but the ``__main__`` guard, on a name it
    binds to an instance of that in-tree class (``trainer = Trainer(opts)`` then ``trainer.train()``)."""
    guarded = _guarded_ids(tree, firm=True)
    bound: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1:
            cls = _target(node.value.func, funcs, modules)
            if cls is not None and isinstance(node.targets[0], ast.Name):
                bound[node.targets[0].id] = cls
    out: dict[tuple[str, str], set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and id(node) not in guarded and isinstance(node.func, ast.Attribute):
            owner_node = node.func.value
            if isinstance(owner_node, ast.Name) and owner_node.id in bound:
                out.setdefault(bound[owner_node.id], set()).add(node.func.attr)
    return out


def _cuda_test(test: ast.expr) -> bool:
    """A test that asks for CUDA: the usual forms, or any test naming cuda or a GPU (``use_cuda``, ``args.device ==
    "cuda"``, ``torch.cuda.device_count() > 1``): on the target it is false or decides a path this pass cannot read."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return False  # the path without CUDA: read by ``_unguarded`` as an early return
    return _asks_cuda_device(test) or _CUDA_WORD.search(ast.unparse(test)) is not None


def _negated_cuda_test(test: ast.expr) -> bool:
    return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and _cuda_test(test.operand)


def _unguarded(body: list[ast.stmt]) -> Iterable[ast.AST]:
    """The nodes of ``body`` that run whatever the device: not under a CUDA test, in a ``try`` with a handler, after
    ``if not <CUDA test>: return``, or in a nested def or class."""
    for st in body:
        if isinstance(st, (*_FUNC, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(st, ast.If):
            yield st.test
            if _cuda_test(st.test):
                yield from _unguarded(st.orelse)
                continue
            yield from _unguarded(st.body)
            yield from _unguarded(st.orelse)
            if _negated_cuda_test(st.test) and st.body and isinstance(st.body[-1], _LEAVES):
                return  # the rest of the block runs only with CUDA
            continue
        if isinstance(st, ast.Try) and st.handlers:
            yield from _unguarded(st.orelse)
            yield from _unguarded(st.finalbody)
            continue
        if isinstance(st, _COMPOUND):
            for field, value in ast.iter_fields(st):
                if field == "handlers":
                    for h in value:
                        yield from _unguarded(h.body)
                elif field in ("body", "orelse", "finalbody"):
                    yield from _unguarded(value)
                else:
                    for v in value if isinstance(value, list) else [value]:
                        if isinstance(v, ast.AST):
                            yield from _walk_expr(v)
            continue
        yield from _walk_expr(st)


def _walk_expr(node: ast.AST) -> Iterable[ast.AST]:
    """Every node of an expression or simple statement, not entering lambdas, nor the operands that only run with
    CUDA: those after a CUDA test in an ``and`` (F5-TTS's ``"cuda" in device and
    torch.cuda.get_device_properties(device).major >= 7``) and the CUDA arm of ``a if <CUDA test> else b``."""
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Lambda):
            continue
        yield n
        if isinstance(n, ast.BoolOp) and isinstance(n.op, ast.And):
            cut = next((k for k, v in enumerate(n.values) if _cuda_test(v)), len(n.values))
            todo.extend(n.values[: cut + 1])
        elif isinstance(n, ast.IfExp) and _cuda_test(n.test):
            todo.extend((n.test, n.orelse))
        else:
            todo.extend(ast.iter_child_nodes(n))


def _raises(node: ast.AST, torch_names: set[str]) -> str | None:
    """What a call that raises on a torch build without CUDA does, or None."""
    if isinstance(node, ast.Subscript) and _scaler_state(node):
        return f"{ast.unparse(node)} (a CUDA GradScaler's state is empty without CUDA: KeyError)"
    if not isinstance(node, ast.Call):
        return None
    f = node.func
    if isinstance(f, ast.Attribute):
        v = f.value
        if (
            (f.attr in RAISING_CUDA_CALLS or _TYPED_TENSOR.fullmatch(f.attr) is not None)
            and isinstance(v, ast.Attribute)
            and v.attr == "cuda"
            and isinstance(v.value, ast.Name)
            and v.value.id in torch_names
        ):
            return f"{v.value.id}.cuda.{f.attr}()"
        if f.attr in _NVTX and ast.unparse(v) in {f"{t}.cuda.nvtx" for t in torch_names}:
            return f"{ast.unparse(f)}()"
        if f.attr == "cuda" and all(isinstance(a, (ast.Constant, ast.Name, ast.Attribute)) for a in node.args):
            return ".cuda()"
        if f.attr == "to" and any(_cuda_constant(a) for a in [*node.args, *(k.value for k in node.keywords)]):
            return ".to('cuda')"
    root = f
    while isinstance(root, ast.Attribute):
        root = root.value
    on_cuda = any(k.arg == "device" and _cuda_constant(k.value) for k in node.keywords)
    if on_cuda and isinstance(root, ast.Name) and root.id in torch_names and not _is_device_ctor(f):
        return f"{ast.unparse(f)}(..., device='cuda')"
    return None


def _scaler_state(node: ast.Subscript) -> bool:
    """``loss_scaler.state_dict()["scale"]``: a scaler's state read by key (``patterns.SCALER_STATE``)."""
    call = node.value
    return (
        isinstance(node.slice, ast.Constant)
        and node.slice.value == "scale"
        and isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "state_dict"
        and "scaler" in ast.unparse(call.func.value).lower()
    )


def _is_device_ctor(f: ast.expr) -> bool:
    return isinstance(f, ast.Attribute) and f.attr in ("device", "Generator")


def _cuda_constant(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _CUDA_LITERAL.fullmatch(node.value) is not None
    )


def raising_lines(
    data: bytes, function: str, built: bool = True, methods: frozenset[str] = frozenset()
) -> dict[int, str]:
    """Line -> what raises there without CUDA, for the unguarded lines of the module-level ``function`` of a source
    (or, when ``built``, of the methods building the module-level class of that name runs, with ``methods``, those
    the entry point calls on the instance); empty for a function that sets up the process group
    (``launch_reach.py`` judges it)."""
    tree = _parsed(data)
    if tree is None:
        return {}
    fn = module_function(tree, function)
    if fn is not None and sets_up_group(fn):
        return {}
    bodies = [("", fn)] if fn is not None else _built_methods(tree, function, methods) if built else []
    torch_names = {"torch", *(m.decode() for m in _ALIAS.findall(data))}
    out: dict[int, str] = {}
    for where, body in bodies:
        # a method the instance runs deeper down skips what a run option decides (monodepth2's ``elif
        # self.opt.predictive_mask:`` in ``compute_losses``): the default run may not take it
        stmts = _unoptioned(body.body) if where.endswith(_ON_INSTANCE) else body.body
        for n in _unguarded(stmts):
            what = _raises(n, torch_names)
            if what is not None:
                out.setdefault(getattr(n, "lineno", 0), what + where)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.end_lineno:
                    # ``torch.zeros(\n  n, h\n).cuda()`` (Social GAN's forward): the finding is on the line of
                    # ``.cuda``, the call starts lines above it
                    out.setdefault(n.func.end_lineno, what + where)
    return out


def _built_methods(
    tree: ast.Module, name: str, on_instance: frozenset[str] = frozenset()
) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """The methods that building the module-level class ``name`` runs: ``__init__`` at construction, ``forward``
    on every call of the model (MoCo's, which draws ``torch.randperm(n).cuda()`` through ``self._batch_shuffle_ddp``),
    and the methods of the class those two call as ``self.m(...)``, one call deep; each with where it runs. The
    methods the entry point calls on the instance (``on_instance``: monodepth2's ``trainer.train()``) run too, with
    every method of the class they reach through ``self.m(...)``, however deep (a trainer's loop and its steps)."""
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)
    if cls is None:
        return []
    methods = {m.name: m for m in cls.body if isinstance(m, _FUNC)}
    roots = [(f" in {name}.{m}", methods[m]) for m in ("__init__", "forward") if m in methods]
    called = sorted({c for _, m in roots for c in _self_calls(m, methods)})
    out = roots + [(f" in {name}.{m}, which {name}.forward or __init__ calls", methods[m]) for m in called]
    seen = {"__init__", "forward", *called}
    todo = sorted(m for m in on_instance if m in methods and m not in seen)
    seen |= set(todo)
    while todo:
        m = todo.pop(0)
        out.append((f" in {name}.{m}{_ON_INSTANCE}", methods[m]))
        more = sorted(_self_calls(methods[m], methods) - seen)
        seen |= set(more)
        todo += more
    return out


def _self_calls(fn: ast.FunctionDef | ast.AsyncFunctionDef, methods: Mapping[str, object]) -> set[str]:
    """The methods of its class a method calls as ``self.m(...)``."""
    return {
        c.func.attr
        for c in ast.walk(fn)
        if isinstance(c, ast.Call)
        and isinstance(c.func, ast.Attribute)
        and isinstance(c.func.value, ast.Name)
        and c.func.value.id == "self"
        and c.func.attr in methods
    }


def mark_called_cuda(
    findings: list[Finding], entries: dict[str, str], read: Callable[[str], bytes | None], rels: list[str]
) -> None:
    """Lines that raise without CUDA in a function an entry point calls by name, or reaches through module-level
    functions up to ``deep_reach.MAX_DEPTH`` calls deep with every call on the way outside any ``if`` (YOLOv5's
    ``autobatch`` runs only under ``if batch_size == -1``), become blocking, with the entry point, the calls and the
    line as the reason."""
    mods = _module_names(rels, entries)
    parse = _cached(read)
    data = {rel: read(rel) or b"" for rel in {f.file for f in findings if _candidate(f, entries)} if rel}
    for entry in sorted(entries):
        tree = parse(entry)
        if tree is None:
            continue
        funcs, modules = _targets(entry, tree, mods)
        _mark_device_constants(findings, entry, entries, tree, parse, funcs, modules, mods)
        firm = _calls(tree, funcs, modules, firm=True)
        first = _calls(tree, funcs, modules)
        on_instance = _instance_calls(tree, funcs, modules)
        for (rel, function), at in sorted(first.items()):
            todo = [f for f in findings if f.file == rel and _candidate(f, entries)]
            if not todo or rel not in data:
                continue
            called = frozenset(on_instance.get((rel, function), ())) if (rel, function) in firm else frozenset()
            lines = raising_lines(data[rel], function, built=(rel, function) in firm, methods=called)
            span = _span(data[rel], function)
            for f in todo:
                if _submitit(f):
                    if span[0] <= (f.line or 0) <= span[1]:
                        _mark_launcher(f, entry, entries, function, rel, at)
                    continue
                _mark_raising(
                    f, lines, f"entry point {entry} ({entries[entry]}) calls {function}() of {rel} at {entry}:{at}"
                )
        for (rel, function), chain in sorted(reached(first, firm, entry, parse, mods, _unguarded).items()):
            todo = [f for f in findings if f.file == rel and _candidate(f, entries) and not _submitit(f)]
            if todo and rel in data and chain.firm:  # deeper down, a call under an option is not the default path
                lines = raising_lines(data[rel], function)
                for f in todo:
                    _mark_raising(f, lines, f"entry point {entry} ({entries[entry]}) calls {chain.said()}")


def _mark_raising(f: Finding, lines: dict[int, str], path: str) -> None:
    what = lines.get(f.line or 0)
    if what is None or f.severity == "blocking":
        return
    f.severity = "blocking"
    f.reason = (
        f"{path}, which runs {what} with no guard: it raises on a torch build without CUDA (a Neuron host's; "
        f"measured on torch 2.13 CPU): {f.message} at {f.file}:{f.line}"
    )


def _cached(read: Callable[[str], bytes | None]) -> Callable[[str], ast.Module | None]:
    """``read`` then parse, each file once."""
    trees: dict[str, ast.Module | None] = {}

    def parse(rel: str) -> ast.Module | None:
        if rel not in trees:
            trees[rel] = _parsed(read(rel))
        return trees[rel]

    return parse


def _span(data: bytes, function: str) -> tuple[int, int]:
    """(first line, last line) of the module-level ``function`` of a source, or (0, -1)."""
    tree = _parsed(data)
    if tree is None:
        return 0, -1
    fn = module_function(tree, function)
    return (fn.lineno, fn.end_lineno or fn.lineno) if fn is not None else (0, -1)


def _mark_launcher(f: Finding, entry: str, entries: dict[str, str], function: str, rel: str, at: int) -> None:
    """A submitit GPU request in a function the entry point calls (dinov2's ``submit_jobs`` in ``run/submit.py``):
    blocking when the entry point is the README's way to run what it launches; "blocks when used" when the README
    also runs that script directly."""
    launched = [t for t, how in entries.items() if how.startswith(f"run by {entry},")]
    direct = [t for t in entries if t != entry and t in launched and not entries[t].startswith("run by")]
    where = f"entry point {entry} ({entries[entry]}) calls {function}() of {rel} at {entry}:{at}"
    if direct:
        f.reason = f"blocks when {entry} is used: an alternative launcher; {where}: {f.message} at {rel}:{f.line}"
        return
    f.severity = "blocking"
    f.reason = (
        f"{where}, which asks Slurm for NVIDIA GPUs through submitit, a request a Trainium cluster (Neuron devices, "
        f"not GPU gres) cannot grant: {f.message} at {rel}:{f.line}"
    )


def _mark_device_constants(
    findings: list[Finding],
    entry: str,
    entries: dict[str, str],
    tree: ast.Module,
    parse: Callable[[str], ast.Module | None],
    funcs: dict[str, tuple[str, str]],
    modules: dict[str, str],
    mods: dict[str, str],
) -> None:
    """A module-level device constant of an imported module (GPTQ's ``modelutils.DEV = torch.device('cuda:0')``) that
    the entry point uses outside a CUDA test (``opt_sequential(model, dataloader, DEV)``, ``model.to(DEV)``): the
    default command places its work on CUDA, so the constant's line blocks."""
    star = {
        mods[n.module]
        for n in tree.body
        if isinstance(n, ast.ImportFrom) and n.module in mods and n.level == 0 and [a.name for a in n.names] == ["*"]
    }
    todo = [f for f in findings if f.rule == "cuda-device-literal" and _candidate(f, entries)]
    for f in todo:
        rel = f.file or ""
        name = _device_constant(parse(rel), f.line or 0)
        if name is None:
            continue
        local = {k for k, (r, n) in funcs.items() if r == rel and n == name} | ({name} if rel in star else set())
        via = {k for k, r in modules.items() if r == rel}
        at = _unguarded_use(tree, local, via, name)
        if at is None:
            continue
        f.severity = "blocking"
        f.reason = (
            f"entry point {entry} ({entries[entry]}) uses {name} of {rel} at {entry}:{at} with no guard, and {rel} "
            f"binds it to a CUDA device: {f.message} at {rel}:{f.line}"
        )


def _device_constant(tree: ast.Module | None, line: int) -> str | None:
    """The name a module-level ``NAME = torch.device("cuda...")`` (or ``NAME = "cuda..."``) on ``line`` binds."""
    if tree is None:
        return None
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and node.lineno == line and len(node.targets) == 1):
            continue
        target, value = node.targets[0], node.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "device":
            value = value.args[0] if value.args else value
        if (
            isinstance(target, ast.Name)
            and isinstance(value, ast.Constant)
            and isinstance(value.value, str)
            and _CUDA_LITERAL.fullmatch(value.value)
        ):
            return target.id
    return None


def _unguarded_use(tree: ast.Module, local: set[str], via: set[str], name: str) -> int | None:
    """The first line where the entry point reads the constant (``DEV`` imported, or ``modelutils.DEV``) outside a
    CUDA test; None when it does not."""
    guarded = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and _cuda_test(node.test)
        for st in node.body
        for n in ast.walk(st)
    }
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Name) and node.id in local and isinstance(node.ctx, ast.Load):
            return node.lineno
        if (
            isinstance(node, ast.Attribute)
            and node.attr == name
            and isinstance(node.value, ast.Name)
            and node.value.id in via
        ):
            return node.lineno
    return None


def _parsed(data: bytes | None) -> ast.Module | None:
    """A source's tree, or None (unreadable, or not Python this interpreter parses)."""
    try:
        return ast.parse(data) if data is not None else None
    except (SyntaxError, ValueError):
        return None
