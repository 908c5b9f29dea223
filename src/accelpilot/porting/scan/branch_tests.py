"""Backend and device predicates of the visitor: probes, per-backend dispatch chains, device names and branch shapes."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from accelpilot.porting.scan.dataflow import _call_name, _name_of
from accelpilot.porting.scan.literals import _LOG_CALLS
from accelpilot.porting.scan.nodes import walk

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


def _import_under_broad_except(node: ast.Try) -> bool:
    """``try: import apex`` / ``except:`` (or ``except Exception:``): a body of imports (and constant flags such as
    ``has_apex = True``) under a handler that catches everything is an optional import, as under ``ImportError``."""
    broad = any(h.type is None or _name_of(h.type) in ("Exception", "BaseException") for h in node.handlers)
    imports = any(isinstance(x, (ast.Import, ast.ImportFrom)) for x in node.body)
    only = all(
        isinstance(x, (ast.Import, ast.ImportFrom)) or (isinstance(x, ast.Assign) and isinstance(x.value, ast.Constant))
        for x in node.body
    )
    return broad and imports and only


def _catches_import_error(t: ast.expr | None) -> bool:
    if t is None:
        return False
    names = t.elts if isinstance(t, ast.Tuple) else [t]
    return any(
        isinstance(n, (ast.Name, ast.Attribute))
        and (n.id if isinstance(n, ast.Name) else n.attr) in ("ImportError", "ModuleNotFoundError")
        for n in names
    )


# A flag that switches a fast path on (``self.use_fast_path``, ``config.use_triton``, ``fused_add_norm``): a kernel
# launched only under it blocks only when the flag is set. ``self.training`` and probes are no such flags.
_FLAG_NAME = re.compile(r"^_?(use_\w+|enable_\w+|\w*fused\w*|\w*fast_path\w*|\w*triton\w*|\w*_kernels?)$")


def _flag(test: ast.expr) -> str | None:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return next((f for v in test.values if (f := _flag(v)) is not None), None)
    name = _name_of(test) if isinstance(test, (ast.Name, ast.Attribute)) else None
    return ast.unparse(test) if name is not None and _FLAG_NAME.match(name) else None


# A parameter or flag named for whether the caller runs on a GPU (``use_gpu``, ``use_cuda``, ``on_gpu``, ``cuda``):
# ``visit_branches`` reads an early return on it, ``python.py`` makes its test line a trigger.
GPU_FLAG = r"(?:use_|on_|is_|has_|with_)?(?:gpu|cuda)s?"


def _asks_cuda_device(test: ast.expr) -> bool:
    """``x.is_cuda``, ``x.device.type == "cuda"``, ``torch.cuda.is_available()``, alone or in an ``and``."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_asks_cuda_device(v) for v in test.values)
    if isinstance(test, ast.Attribute) and test.attr == "is_cuda":
        return True
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "is_available":
        return _name_of(test.func.value) == "cuda"
    return _compared_backend(test) == "cuda"


def exits_unless(node: ast.If, asks: Callable[[ast.expr], bool]) -> bool:
    """``if not torch.cuda.is_available() or not flash: return``: a lone ``if`` whose body only leaves (``return``,
    ``continue``, ``break``, after lines that only log; a ``raise`` is a requirement) and whose test negates a CUDA
    question (``asks``), alone, as an operand of an ``or``, or over an ``and`` (``not (cuda and flash)``): the
    statements after it in its block run only when CUDA answered yes."""
    if node.orelse or not node.body:
        return False
    *head, last = node.body
    if not isinstance(last, (ast.Return, ast.Continue, ast.Break)) or not all(map(_only_logs, head)):
        return False
    return _negates(node.test, asks)


def _negates(test: ast.expr, asks: Callable[[ast.expr], bool]) -> bool:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return any(_negates(v, asks) for v in test.values)
    if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
        return False
    inner = test.operand
    both = inner.values if isinstance(inner, ast.BoolOp) and isinstance(inner.op, ast.And) else [inner]
    return any(asks(v) for v in both)


def kernel_guard(node: ast.If, fn: ast.FunctionDef | ast.AsyncFunctionDef | None) -> str | None:
    """How a kernel launched in ``node``'s body is reached, when not always: ``flag:<flag>`` under a fast-path flag,
    ``fallback:<code>`` under a CUDA test whose other path computes without the kernel (an ``else``, or the code after
    a body that returns), with that code's first statement; None otherwise (a CUDA test with no fallback is a
    requirement of the default path)."""
    if _asks_cuda_device(node.test):
        leaves = bool(node.body) and isinstance(node.body[-1], (ast.Return, ast.Continue, ast.Break))
        other = node.orelse or (_block_after(fn, node) if leaves else [])
        if other and not isinstance(other[0], ast.Raise):
            return "fallback:" + ast.unparse(other[0]).splitlines()[0][:80]
        return None
    flag = _flag(node.test)
    return f"flag:{flag}" if flag is not None else None


def counts_gpus(node: ast.Compare, dotted: Callable[[ast.AST], str | None]) -> bool:
    """``torch.cuda.device_count() > 1`` (``>= N``, N >= 1): a count of CUDA devices compared with a count."""
    left, ops, right = node.left, node.ops, node.comparators
    if not (isinstance(left, ast.Call) and dotted(left.func) == "torch.cuda.device_count" and len(ops) == 1):
        return False
    if not (isinstance(ops[0], (ast.Gt, ast.GtE)) and isinstance(right[0], ast.Constant)):
        return False
    value = right[0].value
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def peak_flops(node: ast.Assign) -> bool:
    """``flops_promised = 312e12``: a number of at least 1e12 bound to a name that says FLOPS (a chip's peak)."""
    v = node.value
    if not (isinstance(v, ast.Constant) and isinstance(v.value, (int, float)) and not isinstance(v.value, bool)):
        return False
    names = [t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else "" for t in node.targets]
    return v.value >= 1e12 and any("flop" in n.lower() for n in names)
