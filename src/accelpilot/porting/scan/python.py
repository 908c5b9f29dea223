"""One Python source to findings: prune, parse the chosen blocks, visit them, then the post passes in order."""

from __future__ import annotations

import ast
import re

from accelpilot.porting.scan.attention import manual_attention
from accelpilot.porting.scan.branch_tests import GPU_FLAG
from accelpilot.porting.scan.decode_syncs import decode_syncs
from accelpilot.porting.scan.dist_launch import dist_launchers
from accelpilot.porting.scan.fid_eval import fid_lines
from accelpilot.porting.scan.hf_generate import generate_calls
from accelpilot.porting.scan.literals import kernel_selectors
from accelpilot.porting.scan.padding import padding_lines
from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.post_backend import _foreign_classes, _foreign_kernels, _helper_name, _no_fallback
from accelpilot.porting.scan.post_host import _matcher_indices, _pattern_bookkeeping, _post_generate
from accelpilot.porting.scan.post_join import _feeds_varlen, _serving_lines
from accelpilot.porting.scan.post_kit import _reach, _tree, unused_nested
from accelpilot.porting.scan.prune import trigger_lines
from accelpilot.porting.scan.runtime_calls import runtime_calls
from accelpilot.porting.scan.setup_flow import host_setup_pass
from accelpilot.porting.scan.stack_upgrade import stack_sites
from accelpilot.porting.scan.step_syncs import host_syncs
from accelpilot.porting.scan.train_hazards import train_hazards
from accelpilot.porting.scan.unbound import unbound_off_cuda
from accelpilot.porting.scan.units import outside_docstrings, parse_unit, string_spans, units
from accelpilot.porting.scan.visit_base import FUNCTION_RULES
from accelpilot.porting.scan.visitor import PyVisitor

# A cpp_extension ``load(...)`` or ``CppExtension(...)`` call carries no trigger token of its own: in files that
# name cpp_extension, these lines (and the import that makes ``load`` cpp_extension's) are triggers too, and so is a
# test of a GPU flag the caller passes (``if ... or not use_gpu: return`` before ColBERT's CUDA builds).
_EXTENSION_LINE = re.compile(
    rb"cpp_extension|CppExtension|\bload(?:_inline)?[ \t]*\(|\bnot[ \t]+" + GPU_FLAG.encode() + rb"\b"
)


# A setuptools ``Extension(...)`` with a ``.cu`` source (``literals.cuda_distutils_extension``): its line is a trigger.
_DISTUTILS_EXTENSION = re.compile(rb"\bExtension[ \t]*\(")


def _with_extension_lines(data: bytes, hits: list[int], lines_of: re.Pattern[bytes] = _EXTENSION_LINE) -> list[int]:
    lines = set(hits)
    pos, lineno = 0, 1
    for m in lines_of.finditer(data):
        lineno += data.count(b"\n", pos, m.start())
        pos = m.start()
        lines.add(lineno)
    return sorted(lines)


def scan_python(source: str | bytes, *, prune: bool = True) -> list[RawFinding]:
    """Findings for one Python source. ``prune=False`` parses and visits everything (the reference for tests)."""
    data = source.encode("utf-8") if isinstance(source, str) else source
    torch_file = b"torch" in data
    if not prune:
        v = PyVisitor(None, torch_file)
        v.selectors = kernel_selectors(data)
        v.visit(ast.parse(data))
        return unused_nested(data, _post_passes(data, v) + _whole_file(data), v.nested_defs)
    hits = trigger_lines(data)
    spans = string_spans(data) if hits else []
    hits = outside_docstrings(data, hits, spans)
    if b"cpp_extension" in data:
        hits = _with_extension_lines(data, hits)
    elif b"Extension(" in data and _CUDA_SOURCE.search(data) is not None:
        hits = _with_extension_lines(data, hits, _DISTUTILS_EXTENSION)
    if not hits:
        return _whole_file(data)
    v = PyVisitor(hits, torch_file)
    v.selectors = kernel_selectors(data)
    try:
        trees = [parse_unit(data, u) for u in units(data, hits, spans)]
    except SyntaxError:
        # A block boundary guessed wrong (e.g. a column-0 line inside a string): the whole file, parsed once and
        # shared with the post passes (``_tree``; the visitor does not change it).
        trees = [_tree(data)]
    for t in trees:
        v.visit(t)
    return unused_nested(data, _post_passes(data, v) + _whole_file(data), v.nested_defs)


def _whole_file(data: bytes) -> list[RawFinding]:
    """The passes that read a whole file behind their own byte gates: training-path hazards, runtime calls
    (accelerate, submitit), per-step host reads, APIs removed from the current stack."""
    return (
        train_hazards(data)
        + runtime_calls(data)
        + dist_launchers(data)
        + generate_calls(data)
        + fid_lines(data)
        + host_syncs(data)
        + decode_syncs(data)
        + manual_attention(data)
        + padding_lines(data)
        + stack_sites(data)
        + unbound_off_cuda(data)
    )


def _post_passes(data: bytes, v: PyVisitor) -> list[RawFinding]:
    """The passes over one file's findings that read the file beyond the visited units, in order."""
    found = _helpers_join_caller(data, host_setup_pass(data, _weight_init(data, _dispatched_bodies(data, v))))
    found = _post_generate(data, _matcher_indices(data, _pattern_bookkeeping(data, found)))
    found = _serving_lines(data, _foreign_kernels(data, _foreign_classes(data, _no_fallback(data, found))))
    return _cpu_extension(data, _feeds_varlen(data, found))


_CUDA_SOURCE = re.compile(rb"\.cuh?['\"]|CUDAExtension|cuda_sources")


def _cpu_extension(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """A file whose only extension builder is ``CppExtension`` and that names no CUDA source (no ``.cu`` file, no
    ``CUDAExtension``, no ``cuda_sources=``) builds a C++ extension for the host (YOLOX's ``FastCOCOEvalOp`` of
    ``cocoeval.cpp``, through ``CppExtension`` or its ``load()`` fallback): no CUDA kernel, so its builder lines are
    no ``cpp-extension-cuda`` finding. So is a ``load()`` call whose sources are all C++ files (ColBERT's
    ``load(name="segmented_maxsim_cpp", sources=[... "segmented_maxsim.cpp"])``, built on the host when no GPU is
    visible), though the same file builds a CUDA extension with another call."""
    if b"CppExtension" in data and not _CUDA_SOURCE.search(data):
        return [f for f in found if f[0] != "cpp-extension-cuda"]
    if b"load(" not in data or not any(f[0] == "cpp-extension-cuda" for f in found):
        return found
    host = _host_loads(data)
    return [f for f in found if not (f[0] == "cpp-extension-cuda" and f[1] in host)]


_CPP_SOURCE = (".cpp", ".cc", ".cxx", ".c")


def _host_loads(data: bytes) -> set[int]:
    """Lines of the ``load(...)`` calls that build C++ sources only: named sources, none a ``.cu``/``.cuh``, and
    no ``cuda_sources=`` or ``with_cuda=True``."""
    try:
        tree = _tree(data)
    except SyntaxError:
        return set()
    out: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name != "load":
            continue
        words = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        cuda = any(w.endswith((".cu", ".cuh")) for w in words) or any(
            k.arg == "cuda_sources" or (k.arg == "with_cuda" and not _false(k.value)) for k in node.keywords
        )
        if not cuda and any(w.endswith(_CPP_SOURCE) for w in words):
            out.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return out


def _false(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value in (False, None)


def _dispatched_bodies(data: bytes, v: PyVisitor) -> list[RawFinding]:
    """Findings in the body of a class that a dispatcher call of this file wraps (``use_experts_implementation(
    experts_class=FP8Experts)``, the call form of the decorator) are ``reference-fallback`` unless a stronger
    context holds, as ``PyVisitor.v_class`` does for a decorated class. Read lexically (the class that holds a
    line, by indentation), so the pruned scan needs no parse of the class."""
    if not v.dispatched:
        return v.found
    reach = _reach(data)
    out: list[RawFinding] = []
    for r, ln, msg, snip, sub, ctx in v.found:
        candidate = ln is not None and r != "moe-experts-dispatch" and ctx in (None, "optional")
        if candidate and ln is not None and v.dispatched & reach.classes_at_line(ln):
            ctx = "reference-fallback"
        out.append((r, ln, msg, snip, sub, ctx))
    return out


# Rules whose line is moot when only weight initialisation runs it (a dtype used to build initial values).
_INIT_MOOT = frozenset({"float64-dtype"})


_INIT_DEF = re.compile(rb"def[ \t]+_?init(?:ialize)?_weights\b")


def _weight_init(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """float64 in a def reached only from ``_init_weights``/``initialize_weights`` (same-file callers) is set apart
    as weight-init: it builds initial values on the host, and a loaded checkpoint skips it. float64 on the forward
    path (the same helper called from ``forward``) stays a finding."""
    if not any(r in _INIT_MOOT and ctx is None for r, _, _, _, _, ctx in found) or not _INIT_DEF.search(data):
        return found  # no candidate line, or no weight-initialisation def in the file to be reached from
    reach = _reach(data)
    out: list[RawFinding] = []
    for r, ln, msg, snip, sub, ctx in found:
        if r in _INIT_MOOT and ctx is None and ln is not None:
            holder = reach.def_at_line(ln)
            if holder is not None and reach.init_only(holder):
                ctx = "weight-init"
        out.append((r, ln, msg, snip, sub, ctx))
    return out


def _helpers_join_caller(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """A compile hazard in a helper that one def of the file alone calls (``remove_keypoints_from_borders``, called
    only by ``_extract_keypoints``) names that caller as its function: the caller's fixed-shape rewrite is the
    helper's too, so the log makes them one item (``build_items``). Followed up a chain of sole callers. The whole
    helper moves, and only when every line of each of its rules in the file then lies in that one caller: a rule whose
    item also spans other functions keeps the helper apart, so the join folds a helper into its caller and never
    pulls unrelated work together."""
    names = {sub.rpartition(":")[0] for r, _, _, _, sub, _ in found if r in FUNCTION_RULES and sub}
    if not any(_helper_name(n, data) for n in names):
        return found  # only methods such as ``forward``: no helper to join (and no file read for callers)
    reach = _reach(data)
    callers: dict[str, str] = {}

    def caller_of(sub: str) -> str:
        if sub not in callers:
            seen, up_sub, name = {sub}, sub, sub.rpartition(":")[0]
            while (up := reach.sole_caller(name)) is not None and f"{up[0]}:{up[1]}" not in seen:
                up_sub, name = f"{up[0]}:{up[1]}", up[0]
                seen.add(up_sub)
            callers[sub] = up_sub
        return callers[sub]

    functions: dict[str, set[str | None]] = {}  # rule -> the functions its lines lie in, helpers joined
    rules: dict[str, set[str]] = {}  # function -> the rules with a line in it
    for r, _, _, _, sub, _ in found:
        if r in FUNCTION_RULES:
            functions.setdefault(r, set()).add(caller_of(sub) if sub else None)
            if sub:
                rules.setdefault(sub, set()).add(r)
    moved = {
        sub
        for sub, rs in rules.items()
        if caller_of(sub) != sub and all(len(functions[r]) == 1 for r in rs)  # the whole helper moves, or none
    }
    return [
        (r, ln, msg, snip, caller_of(sub), ctx)
        if r in FUNCTION_RULES and sub in moved
        else (r, ln, msg, snip, sub, ctx)
        for r, ln, msg, snip, sub, ctx in found
    ]
