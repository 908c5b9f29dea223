"""Predicates on literals and calls the visitor reads apart: dtype tables, extension sources, NCCL, uploads."""

from __future__ import annotations

import ast
import re

from accelpilot.porting.scan.dataflow import _is_dtype, _name_of
from accelpilot.porting.scan.nodes import walk

_CUDA_NAME = re.compile(r"cuda(?::\d+)?")

# Comparison operators that test which dtype a value has (``==``, ``in``, ``is``), not order it.
_DTYPE_TESTS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)


def _dtype_table(node: ast.Dict) -> bool:
    """Two or more entries, each pairing a torch dtype with something (``"F64": torch.float64``,
    ``torch.float64: DataType.DOUBLE``): a table that names dtypes, and computes nothing in them."""
    pairs = zip(node.keys, node.values, strict=True)
    return len(node.keys) >= 2 and all(_is_dtype(k) or _is_dtype(v) for k, v in pairs)


# torch.utils.cpp_extension's builders of a native module (``load`` only when it resolves to cpp_extension's).
_EXT_BUILDERS = frozenset({"CUDAExtension", "CppExtension", "load_inline"})


def cuda_distutils_extension(node: ast.Call, name: str) -> bool:
    """``Extension('gpu_nms', ['nms_kernel.cu', 'gpu_nms.pyx'], ...)``: a setuptools/distutils extension with a CUDA
    source among its literal sources (the Faster R-CNN-era NMS builds, compiled by a custom nvcc step: HRNet's
    ``lib/nms/setup_linux.py``). One of Python or Cython sources only builds for the host."""
    if name != "Extension":
        return False
    arg = next((k.value for k in node.keywords if k.arg == "sources"), node.args[1] if len(node.args) > 1 else None)
    return isinstance(arg, (ast.List, ast.Tuple)) and any(
        isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value.endswith((".cu", ".cuh")) for e in arg.elts
    )


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


_UPLOAD_METHODS = frozenset({"POST", "PUT", "PATCH"})


def _upload_method(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.upper() in _UPLOAD_METHODS


# A parameter, keyword or attribute that selects an implementation (``impl="cuda"``, ``kernel_impl``,
# ``implementation``): its "cuda" names a code path of the library (a kernel or its reference), not a device.
IMPL_NAME = re.compile(r"^_?(impl|implementation|\w+_impl|impl_\w+)$")


def impl_selector(name: str | None) -> bool:
    return name is not None and IMPL_NAME.match(name) is not None


# ``self.backend in ['cuda', 'keops']`` / ``backend == "naive"``: a name compared with another kernel implementation's
# name holds an implementation choice (S4's ``backend: str = 'cuda'`` picks its Cauchy kernel, not a device).
_SELECTOR_TEST = re.compile(
    rb"(?:self\.)?([A-Za-z_]\w*)\s*(?:==|!=|in|not\s+in)\s*[\[\(]?[^\n]*?['\"](?:keops|naive|triton|pykeops|reference)['\"]"
)


# A line naming an implementation in quotes: the only lines ``_SELECTOR_TEST`` can match on (it is tried there alone,
# since trying it at every identifier of a file cost 7% of a scan of transformers, where "reference" is common).
_SELECTOR_LINE = re.compile(rb"""^[^\n]*['"](?:keops|naive|triton|pykeops|reference)['"][^\n]*""", re.M)


def kernel_selectors(data: bytes) -> frozenset[str]:
    """Names a file compares with a kernel implementation's name (``keops``, ``naive``, ``triton``): their "cuda"
    default names the CUDA kernel among implementations, like ``impl="cuda"``."""
    if b"keops" not in data and b"naive" not in data and b"triton" not in data and b"reference" not in data:
        return frozenset()
    return frozenset(
        m.group(1).decode() for line in _SELECTOR_LINE.finditer(data) for m in _SELECTOR_TEST.finditer(line.group(0))
    )


# Calls whose string arguments are messages to a person (errors, logs, help): a ``--gres=gpu:1`` there asks a reader
# to request GPUs; it is no job setting of this repository.
MESSAGE_CALLS = frozenset(
    {"print", "warn", "warning", "warning_once", "info", "debug", "error", "exception", "critical"}
)
# Job-spec rules that a message string names without setting anything.
JOB_SPEC_RULES = frozenset({"slurm-gpu-gres", "gpu-launcher-setting", "k8s-gpu-resource"})


def is_main_test(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either side)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
    )


def indexed_cuda_head(body: ast.expr) -> ast.Constant | None:
    """The ``"cuda:..."`` string heading a device string built with an index: ``'cuda:' + str(i)``,
    ``'cuda:{}'.format(i)`` or ``f'cuda:{i}'``; None for anything else."""
    head: ast.expr | None = None
    if isinstance(body, ast.BinOp):
        head = body.left
    elif isinstance(body, ast.Call) and isinstance(body.func, ast.Attribute) and body.func.attr == "format":
        head = body.func.value
    elif isinstance(body, ast.JoinedStr) and body.values:
        head = body.values[0]
    if isinstance(head, ast.Constant) and isinstance(head.value, str) and head.value.startswith("cuda:"):
        return head
    return None


def indexed_device(node: ast.JoinedStr | ast.BinOp) -> tuple[ast.Constant, str | None] | None:
    """The ``"cuda:"`` head of a whole device string an index completes (``f"cuda:{rank}"``, MDM's
    ``dist_util.dev()``; ``"cuda:" + str(i)``), with its context: ``optional`` for an index taken modulo a count
    (``"cuda:" + str(k % ndevices)``, DLRM's embedding tables spread over the GPUs: a multi-device layout); None for
    anything else (a conditional's arm is ``visitor.v_ifexp``'s)."""
    head = indexed_cuda_head(node)
    whole = len(node.values) == 2 if isinstance(node, ast.JoinedStr) else isinstance(node.op, ast.Add)
    if head is None or head.value != "cuda:" or not whole:
        return None
    index = node.values[1] if isinstance(node, ast.JoinedStr) else node.right
    spread = any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in ast.walk(index))
    return head, "optional" if spread else None


def cuda_arm_head(body: ast.expr) -> ast.Constant | None:
    """The ``"cuda"``/``"cuda:N"`` string of a conditional's arm: the arm itself, or ``torch.device("cuda")``."""
    if isinstance(body, ast.Call) and _name_of(body.func) == "device" and len(body.args) == 1:
        body = body.args[0]
    if isinstance(body, ast.Constant) and isinstance(body.value, str) and _CUDA_NAME.fullmatch(body.value):
        return body
    return None
