"""One Python source to findings: prune, parse the chosen blocks, visit them."""

from __future__ import annotations

import ast
import re

from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.prune import parse_unit, trigger_lines, units
from accelpilot.porting.scan.reach import FileReach
from accelpilot.porting.scan.visitor import FUNCTION_RULES, PyVisitor

# A cpp_extension ``load(...)`` or ``CppExtension(...)`` call carries no trigger token of its own: in files that
# name cpp_extension, these lines (and the import that makes ``load`` cpp_extension's) are triggers too.
_EXTENSION_LINE = re.compile(rb"cpp_extension|CppExtension|\bload(?:_inline)?[ \t]*\(")


def _with_extension_lines(data: bytes, hits: list[int]) -> list[int]:
    lines = set(hits)
    pos, lineno = 0, 1
    for m in _EXTENSION_LINE.finditer(data):
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
        v.visit(ast.parse(data))
        return _post_passes(data, v)
    hits = trigger_lines(data)
    if b"cpp_extension" in data:
        hits = _with_extension_lines(data, hits)
    if not hits:
        return []
    v = PyVisitor(hits, torch_file)
    try:
        trees = [parse_unit(data, u) for u in units(data, hits)]
    except SyntaxError:
        trees = [ast.parse(data)]  # a block boundary guessed wrong (e.g. a column-0 line inside a string)
    for t in trees:
        v.visit(t)
    return _post_passes(data, v)


def _post_passes(data: bytes, v: PyVisitor) -> list[RawFinding]:
    """The passes over one file's findings that read the file beyond the visited units, in order."""
    found = _helpers_join_caller(data, _weight_init(data, _dispatched_bodies(data, v)))
    return _foreign_kernels(data, _foreign_classes(data, _no_fallback(data, found)))


def _dispatched_bodies(data: bytes, v: PyVisitor) -> list[RawFinding]:
    """Findings in the body of a class that a dispatcher call of this file wraps (``use_experts_implementation(
    experts_class=FP8Experts)``, the call form of the decorator) are ``reference-fallback`` unless a stronger
    context holds, as ``PyVisitor.v_class`` does for a decorated class. Read lexically (the class that holds a
    line, by indentation), so the pruned scan needs no parse of the class."""
    if not v.dispatched:
        return v.found
    reach = FileReach(data)
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
    reach = FileReach(data)
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
    reach = FileReach(data)
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


# ``if not <probe naming another accelerator>(``: the cheap pre-check of ``_foreign_classes``.
_NOT_FOREIGN = re.compile(rb"^[ \t]+if not [\w.]*(?:mps|xpu|npu|hpu|mlu|musa|sdaa|gcu|ipu)[\w.]*\(", re.M)


# Porting contexts a foreign class's lines give way to (its requirement of its accelerator is that backend's too).
_OPEN = (None, "optional", "requirement")


def _foreign_classes(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """Lines in a class one of whose methods raises unless another accelerator is there (``if not
    torch.backends.mps.is_available(): ... raise``, perhaps after a dequantize fallback) are ``backend-branch``,
    unless a stronger context holds: nothing in the class runs on the port's device, as in an ``if
    is_torch_xpu_available():`` body; so is the class's own requirement of that accelerator. A class requiring CUDA
    is the port's work and stays. Read on the whole file (a pruned scan may parse one method of a large class
    alone), only when the pre-check matches."""
    if not _NOT_FOREIGN.search(data) or not any(ctx in _OPEN for *_, ctx in found):
        return found
    probe = PyVisitor(None, True)
    spans = [
        (c.lineno, c.end_lineno or c.lineno)
        for c in ast.walk(ast.parse(data))
        if isinstance(c, ast.ClassDef) and probe.requires_foreign(c)
    ]
    if not spans:
        return found
    return [
        (r, ln, msg, snip, sub, "backend-branch")
        if ctx in _OPEN and ln is not None and any(a <= ln <= b for a, b in spans)
        else (r, ln, msg, snip, sub, ctx)
        for r, ln, msg, snip, sub, ctx in found
    ]


# ``if <probe naming another accelerator>():`` at column 0 with an import right under it: ``_foreign_kernels``'s
# cheap pre-check.
_FOREIGN_IMPORT = re.compile(
    rb"^if [\w.]*(?:mps|xpu|npu|hpu|mlu|musa|sdaa|gcu|ipu)[\w.]*\(\)[ \t]*:[ \t]*\r?\n[ \t]+(?:from|import) ", re.M
)


def _foreign_kernels(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """Lines of a module-level def that calls, on every path, a name the module imports only under a probe of
    another accelerator (``if is_torch_npu_available(): from torch_npu import npu_fusion_attention``, then ``def
    npu_flash_attn_varlen_func(...)`` calling it in both branches) are ``backend-branch``, unless a stronger context
    holds: without that accelerator the name is unbound and the def cannot run, so it is that backend's kernel
    binding (a port takes the generic attention path). A kernel imported under a CUDA or flash-attn probe is the
    port's work and stays, and so does a def that calls the name on one branch only (its other path is generic;
    the probed branch is set apart by the visitor when its test is the probe). Whole file parsed only when the
    pre-check matches."""
    if not _FOREIGN_IMPORT.search(data) or not any(ctx in _OPEN for *_, ctx in found):
        return found
    tree = ast.parse(data)
    probe = PyVisitor(None, True)
    bound = {
        a.asname or a.name.split(".")[0]
        for st in tree.body
        if isinstance(st, ast.If) and probe._foreign_probe(st.test)
        for imp in st.body
        if isinstance(imp, (ast.Import, ast.ImportFrom))
        for a in imp.names
    }
    spans = [
        (d.lineno, d.end_lineno or d.lineno)
        for d in tree.body
        if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and _must_call(d.body, bound)
    ]
    if not spans:
        return found
    return [
        (r, ln, msg, snip, sub, "backend-branch")
        if ctx in _OPEN and ln is not None and any(a <= ln <= b for a, b in spans)
        else (r, ln, msg, snip, sub, ctx)
        for r, ln, msg, snip, sub, ctx in found
    ]


def _must_call(body: list[ast.stmt], names: set[str]) -> bool:
    """Every path through ``body`` calls one of ``names``: a plain statement that calls it, or an ``if`` both of
    whose branches must (read in order; a statement that leaves first ends the path without the call)."""
    for st in body:
        if isinstance(st, ast.If):
            if _must_call(st.body, names) and _must_call(st.orelse, names):
                return True
            continue
        if isinstance(st, (ast.With, ast.AsyncWith)) and _must_call(st.body, names):
            return True
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.AsyncWith)):
            continue
        if _branches(st):
            continue
        if any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id in names for c in ast.walk(st)):
            return True
        if isinstance(st, (ast.Return, ast.Raise)):
            return False
    return False


def _branches(st: ast.stmt) -> bool:
    """A compound statement whose body may not run, or not to its end (a loop, ``try``, ``match``)."""
    return isinstance(st, (ast.For, ast.AsyncFor, ast.While, ast.Try, ast.Match))


# Tensor factories a function returns in place of a kernel's result when the kernel is missing: a placeholder
# (zeros, uninitialised memory), not a computation of the same result.
_PLACEHOLDERS = frozenset({"zeros_like", "zeros", "empty_like", "empty", "full_like", "ones_like"})


def _no_fallback(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """A hub kernel bound to a module global (``global k; k = get_kernel(...)``) where the file answers that global
    being None with ``return torch.zeros_like(...)``: without the kernel the model runs and returns placeholders, no
    fallback computes the result, so the kernel's line is ``no-fallback`` (blocking). A kernel whose absence is met
    by another computation (or by a raise) stays as it was. The whole file is parsed, only when it has a hub kernel
    on the main path."""
    lines = {ln for r, ln, _, _, _, ctx in found if r == "hub-kernel" and ctx is None}
    if not lines:
        return found
    tree = ast.parse(data)
    bound: dict[int, set[str]] = {}  # kernel line -> the module globals its def binds
    for d in ast.walk(tree):
        if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = {n for g in ast.walk(d) if isinstance(g, ast.Global) for n in g.names}
            for c in ast.walk(d):
                if names and isinstance(c, ast.Call) and c.lineno in lines:
                    bound.setdefault(c.lineno, set()).update(names)
    if not bound:
        return found
    empty: set[str] = set()  # globals whose None is answered by returning a placeholder
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name)
            and len(node.test.ops) == 1
            and isinstance(node.test.ops[0], ast.Is)
            and isinstance(node.test.comparators[0], ast.Constant)
            and node.test.comparators[0].value is None
            and isinstance(node.body[0], ast.Return)
            and _placeholder(node.body[0].value)
        ):
            empty.add(node.test.left.id)
    return [
        (r, ln, msg, snip, sub, "no-fallback")
        if r == "hub-kernel" and ctx is None and ln is not None and bound.get(ln, set()) & empty
        else (r, ln, msg, snip, sub, ctx)
        for r, ln, msg, snip, sub, ctx in found
    ]


def _placeholder(value: ast.expr | None) -> bool:
    """``torch.zeros_like(q)``, also through methods chained on it (``.requires_grad_()``, ``.to(...)``)."""
    while isinstance(value, ast.Call):
        f = value.func
        if isinstance(f, ast.Attribute) and f.attr in _PLACEHOLDERS and isinstance(f.value, ast.Name):
            return True
        value = f.value if isinstance(f, ast.Attribute) else None
    return False


def _helper_name(name: str, data: bytes) -> bool:
    """Cheap pre-check of ``FileReach.sole_caller``'s helpers: a ``_private`` name or a module-level def."""
    if name.startswith("_") and not name.startswith("__"):
        return True
    head = name.encode() + b"("
    return data.startswith(b"def " + head) or b"\ndef " + head in data or b"\nasync def " + head in data
