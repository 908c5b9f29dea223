"""One Python source to findings: prune, parse the chosen blocks, visit them."""

from __future__ import annotations

import ast
import functools
import re
from collections import deque
from collections.abc import Collection, Iterator

from accelpilot.porting.log import NOT_PORTING, SERVES
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.nodes import walk
from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.prune import outside_docstrings, parse_unit, string_spans, top_units, trigger_lines, units
from accelpilot.porting.scan.reach import FileReach
from accelpilot.porting.scan.visit_base import FUNCTION_RULES
from accelpilot.porting.scan.visitor import PyVisitor

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
    spans = string_spans(data) if hits else []
    hits = outside_docstrings(data, hits, spans)
    if b"cpp_extension" in data:
        hits = _with_extension_lines(data, hits)
    if not hits:
        return []
    v = PyVisitor(hits, torch_file)
    try:
        trees = [parse_unit(data, u) for u in units(data, hits, spans)]
    except SyntaxError:
        # A block boundary guessed wrong (e.g. a column-0 line inside a string): the whole file, parsed once and
        # shared with the post passes (``_tree``; the visitor does not change it).
        trees = [_tree(data)]
    for t in trees:
        v.visit(t)
    return _post_passes(data, v)


@functools.lru_cache(maxsize=1)
def _tree(data: bytes) -> ast.Module:
    """The whole file's syntax tree, parsed once for all the post passes that need it (each used to parse it again:
    a third of the scan's time on transformers). Read-only: no pass changes it."""
    return ast.parse(data)


# The fields that hold statements (and the handlers and cases that hold them): no expression holds one.
_STMT_FIELDS = frozenset({"body", "handlers", "orelse", "finalbody", "cases"})


def _stmt_walk(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` over statements only (with the except handlers and match cases between them), in the same order:
    the defs, classes, ``if``s and ``with``s a pass looks for are all statements, and skipping expressions skips
    most of the tree's nodes."""
    todo = deque([node])
    while todo:
        n = todo.popleft()
        for f in n._fields:
            if f in _STMT_FIELDS:
                v = getattr(n, f, None)
                if isinstance(v, list):
                    todo.extend(c for c in v if isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case)))
        yield n


def _tree_holding(data: bytes, lines: Collection[int]) -> ast.Module:
    """The file's top-level statements that hold any of ``lines``, each parsed alone: for a pass that reads only the
    classes or defs holding some findings, a fraction of a large model file's parse (the whole file if a block's
    boundary is guessed wrong)."""
    try:
        units = top_units(data, sorted(lines), string_spans(data))
        return ast.Module(body=[st for u in units for st in parse_unit(data, u).body], type_ignores=[])
    except SyntaxError:
        return _tree(data)


@functools.lru_cache(maxsize=1)
def _reach(data: bytes) -> FileReach:
    """The file's def/class headers, read once for all the post passes (each used to read them again). Its only
    state is what it memoises (``line_starts``), so sharing it changes no answer."""
    return FileReach(data)


@functools.lru_cache(maxsize=1)
def _defs(data: bytes) -> tuple[_Def, ...]:
    """Every def of the file, in ``ast.walk`` order."""
    return tuple(d for d in _stmt_walk(_tree(data)) if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _post_passes(data: bytes, v: PyVisitor) -> list[RawFinding]:
    """The passes over one file's findings that read the file beyond the visited units, in order."""
    found = _helpers_join_caller(data, _weight_init(data, _dispatched_bodies(data, v)))
    found = _post_generate(data, _matcher_indices(data, _pattern_bookkeeping(data, found)))
    found = _serving_lines(data, _foreign_kernels(data, _foreign_classes(data, _no_fallback(data, found))))
    return _feeds_varlen(data, found)


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


# The generate machinery: what runs once around the traced decode step (``generate``) or feeds it its inputs
# (``prepare_inputs_for_generation``), eagerly on the host; the compiled graph is the model's forward.
_GENERATE_DEFS = frozenset({"generate", "prepare_inputs_for_generation"})
# A value that names a pattern (``delay_pattern_mask``, ``build_delay_pattern_mask(...)``): a layout decided by the
# prompt length and the codebook count, not by the generated values.
_PATTERN_WORD = re.compile(r"pattern", re.I)


def _pattern_bookkeeping(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """Codebook delay-pattern bookkeeping in the generate machinery (``generate``, ``prepare_inputs_for_generation``
    and defs of the file reached only from them) is ``host-side``: the pattern is built once per generate and reverted
    once on the finished codes, and what it selects is fixed by the prompt length and the pattern, not by generated
    values. Two shapes: every hazard of a def that builds or applies the pattern (its name names one:
    ``build_delay_pattern_mask``), and a hazard whose operands name a pattern on its line or in the latest assignment
    of a name they read (``mask = delay_pattern_mask != pad``; ``ids = apply_delay_pattern_mask(ids, ...)`` then
    ``ids[ids != pad]``). Stay: a hazard on generated values (an eos cut feeding the codec's decode, also after the
    pattern is reverted), and pattern bookkeeping the model's forward reaches. Parsed only when the file has such a
    hazard, a ``def generate`` and the word."""
    cands = {ln for r, ln, _, _, sub, ctx in found if r in FUNCTION_RULES and ctx is None and sub and ln is not None}
    if not cands or b"pattern" not in data or b"def generate" not in data:
        return found
    reach = _reach(data)
    funcs = list(_defs(data))
    moot: set[int] = set()
    for ln, d in _held_lines(funcs, cands):
        if not reach.only_reached_from(_GENERATE_DEFS, d.name):
            continue
        stmt = _statement_at(d, ln)
        if _PATTERN_WORD.search(d.name) or (stmt is not None and _reads_pattern(stmt, d)):
            moot.add(ln)
    return _host_side(found, moot, FUNCTION_RULES, need_subject=True)


def _held_lines(funcs: list[_Def], lines: Collection[int]) -> Iterator[tuple[int, _Def]]:
    """Each of ``lines`` held by a def of ``funcs``, with the innermost def holding it (lines outside every def are
    skipped)."""
    for ln in lines:
        holders = [d for d in funcs if d.lineno <= ln <= (d.end_lineno or d.lineno)]
        if holders:
            yield ln, max(holders, key=lambda h: h.lineno)


def _host_side(
    found: list[RawFinding], moot: set[int], rules: Collection[str], *, need_subject: bool
) -> list[RawFinding]:
    """``found`` with the findings of ``rules`` on the ``moot`` lines set apart as ``host-side`` (only those not yet
    in a context, and with ``need_subject`` only those naming their subject)."""
    if not moot:
        return found
    return [
        (r, ln, msg, snip, sub, "host-side")
        if r in rules and ctx is None and (sub or not need_subject) and ln in moot
        else (r, ln, msg, snip, sub, ctx)
        for r, ln, msg, snip, sub, ctx in found
    ]


def _statement_at(d: ast.AST, ln: int) -> ast.stmt | None:
    """The innermost simple statement of ``d`` (no block of its own) whose lines hold ``ln``."""
    best: ast.stmt | None = None
    for s in _stmt_walk(d):
        if not isinstance(s, ast.stmt) or hasattr(s, "body"):
            continue
        if s.lineno <= ln <= (s.end_lineno or s.lineno) and (best is None or s.lineno >= best.lineno):
            best = s
    return best


def _read_side(stmt: ast.stmt) -> ast.AST:
    return stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and stmt.value else stmt


def _reads_pattern(stmt: ast.stmt, d: ast.AST) -> bool:
    """The statement's read side names a pattern, or the latest earlier assignment in ``d`` of a name it reads does
    (one step only: a value computed from the reverted codes, such as an eos position, is generated data again)."""
    value = _read_side(stmt)
    if _PATTERN_WORD.search(ast.unparse(value)):
        return True
    latest: dict[str, ast.Assign] = {}
    for s in _stmt_walk(d):
        if isinstance(s, ast.Assign) and s.lineno < stmt.lineno:
            for t in s.targets:
                for n in walk(t):
                    if isinstance(n, ast.Name) and (n.id not in latest or latest[n.id].lineno < s.lineno):
                        latest[n.id] = s
    read = {n.id for n in walk(value) if isinstance(n, ast.Name)}
    return any(_PATTERN_WORD.search(ast.unparse(latest[n].value)) for n in read if n in latest)


# A decode loop's call: ``super().generate(...)`` from an override, ``self.generate(...)`` from a wrapper.
_DECODE_CALL = re.compile(rb"\b(?:super\(\)|self)\.generate\(")
# Hazards of the graph's shape, moot outside it; a dtype (float64, complex) still needs the device's support.
_SHAPE_HAZARDS = FUNCTION_RULES - {"float64-dtype", "complex-dtype"}
_Def = ast.FunctionDef | ast.AsyncFunctionDef


def _post_generate(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """A shape hazard in a helper that runs on the finished output of a decode loop is ``host-side``: the helper is
    called, in a def that decodes (``super().generate(...)``, or a def of the file calling one that does: one step),
    with an argument read from the decode call's result (directly, or through the target of a ``for`` over it: ``for
    seq in sequences``), every mention of it is such a call, and it calls no model (``self(...)``, a submodule
    ``self.proj(...)``, ``.forward``/``.generate``: only defs of the file and plain functions). Defs of the file
    reached only from such helpers qualify likewise (Whisper's segmenting of finished sequences, its DTW token
    timestamps). Stay: per-step code the decode loop calls, a helper on data not read from the result, one that
    calls a model (a codec decoding the cut codes), and hazards of the decoding def itself."""
    cands = {ln for r, ln, _, _, sub, ctx in found if r in _SHAPE_HAZARDS and ctx is None and sub and ln is not None}
    if not cands or (b"super().generate(" not in data and b"self.generate(" not in data):
        return found
    reach = _reach(data)
    lexical = _lexical_decoding(reach, data)
    if not any(
        (h := reach.def_at_line(ln)) and h not in lexical and reach.only_reached_from(lexical, h) for ln in cands
    ):
        return found  # read lexically first: a full parse of a large generate file costs more than the scan of it
    funcs: list[_Def] = list(_defs(data))
    names = {d.name for d in funcs}
    maybe = [d for d in funcs if d.name in lexical]  # the AST's decoding defs are among the lexical ones
    decoding = {d.name for d in maybe if any(_decode_call(c, set()) for c in walk(d))}
    # a def calling one of those decodes too (``generate`` -> ``generate_with_fallback``); one step, as read lexically
    decoding |= {d.name for d in maybe if any(_decode_call(c, decoding) for c in walk(d))}
    post_calls: dict[str, int] = {}
    for d in maybe:
        if d.name in decoding:
            for h in _called_on_result(d, decoding, names):
                post_calls[h] = post_calls.get(h, 0) + 1
    roots = frozenset(
        h
        for h, n in post_calls.items()
        if h not in decoding
        and sum(1 for _ in reach._mentions(h)) == n  # named nowhere else (a word outside comments and its header)
        and all(not _calls_model(d, names) for d in funcs if d.name == h)
    )
    if not roots:
        return found
    moot: set[int] = set()
    for ln, helper in _held_lines(funcs, cands):
        name = helper.name
        if name not in decoding and not _calls_model(helper, names) and reach.only_reached_from(roots, name):
            moot.add(ln)
    return _host_side(found, moot, _SHAPE_HAZARDS, need_subject=True)


def _lexical_decoding(reach: FileReach, data: bytes) -> frozenset[str]:
    """The decoding defs read from the source's lines: the defs holding a decode call and, one step, the defs naming
    one of them. Every helper ``_post_generate`` sets apart is reached only from these, so a hazard elsewhere needs
    no parse."""
    holders = {d for m in _DECODE_CALL.finditer(data) if (d := reach.enclosing_def(m.start())) is not None}
    callers = {reach.enclosing_def(pos) for h in holders for pos in reach._mentions(h)}
    return frozenset(holders | {d for d in callers if d is not None})


def _callee(call: ast.Call) -> str | None:
    """``h`` of ``self.h(...)`` or ``h(...)``."""
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
        return f.attr
    return None


def _decode_call(node: ast.AST, decoding: set[str]) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    if isinstance(f, ast.Attribute) and f.attr == "generate":
        v = f.value
        return (isinstance(v, ast.Name) and v.id == "self") or (
            isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super"
        )
    return _callee(node) in decoding


def _called_on_result(d: _Def, decoding: set[str], names: set[str]) -> list[str]:
    """Defs of the file that ``d`` calls with an argument read from a decode call's result (one step, or a ``for``
    target over it)."""
    result: set[str] = set()
    for st in _stmt_walk(d):
        if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None and _decode_call(st.value, decoding):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            result |= {n.id for t in targets for n in walk(t) if isinstance(n, ast.Name)}
    if not result:
        return []
    for st in _stmt_walk(d):
        if (
            isinstance(st, (ast.For, ast.AsyncFor))
            and {n.id for n in walk(st.iter) if isinstance(n, ast.Name)} & result
        ):
            result |= {n.id for n in walk(st.target) if isinstance(n, ast.Name)}
    out: list[str] = []
    for c in walk(d):
        if isinstance(c, ast.Call) and (h := _callee(c)) in names and h not in decoding:
            args = [*c.args, *(k.value for k in c.keywords)]
            if any(isinstance(n, ast.Name) and n.id in result for a in args for n in walk(a)):
                out.append(h)
    return out


def _calls_model(d: _Def, names: set[str]) -> bool:
    """``d`` calls a model: ``self(...)``, a submodule (``self.proj(...)``, ``self.codec.decode(...)``), or any
    ``.forward``/``.generate``; calls of the file's own defs and of plain functions and tensor methods are not."""
    for c in walk(d):
        if not isinstance(c, ast.Call):
            continue
        f = c.func
        if isinstance(f, ast.Name) and f.id == "self":
            return True
        if isinstance(f, ast.Attribute):
            if f.attr in ("forward", "generate"):
                return True
            root = f
            while isinstance(root.value, ast.Attribute):
                root = root.value
            if isinstance(root.value, ast.Name) and root.value.id == "self" and not (root is f and f.attr in names):
                return True
    return False


# A call of the loss's matcher (``self.matcher(outputs, targets)``): the DETR family's Hungarian matcher moves the cost
# matrix to the CPU and solves the assignment with scipy's ``linear_sum_assignment``; the indices come back as CPU
# tensors (``torch.as_tensor`` of numpy arrays).
_MATCHER_CALL = re.compile(rb"\.\w*matcher\(")


def _matcher_indices(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """A compile hazard whose operands derive only from a matcher's indices is ``host-side``: a helper (``_get_dense_
    o2o_indices``) whose parameters get, at every call of this file, only what ``self.matcher(...)`` returned (or a
    list of such results), and which computes on them through its own loops and comprehensions (``torch.unique``,
    ``argsort``, ``.item()`` pairs), post-processes CPU index tensors, as the matcher itself does. Stays: a hazard
    that also reads the model's outputs in that helper, and a hazard on matcher indices in a def some call passes
    other values to. Parsed only when the file calls a matcher."""
    cands = {ln for r, ln, _, _, _, ctx in found if r in FUNCTION_RULES and ctx is None and ln is not None}
    if not cands or not _MATCHER_CALL.search(data):
        return found
    funcs = list(_defs(data))
    moot: set[int] = set()
    for ln, d in _held_lines(funcs, cands):
        seeds = _matcher_params(funcs, d)
        stmt = _statement_at(d, ln)
        if not seeds or stmt is None:
            continue
        local, host = _host_names(d, seeds)
        read = {n.id for n in walk(_read_side(stmt)) if isinstance(n, ast.Name)} & local
        if read and read <= host:
            moot.add(ln)
    return _host_side(found, moot, FUNCTION_RULES, need_subject=False)


def _is_matcher_call(v: ast.expr | None) -> bool:
    return isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr.endswith("matcher")


def _matcher_params(funcs: list[ast.FunctionDef | ast.AsyncFunctionDef], d: ast.AST) -> set[str]:
    """The parameters of ``d`` that every call of it in the file (``self.d(...)``/``d(...)``) fills with a name the
    caller binds only to matcher results: ``x = self.matcher(...)``, or ``xs = []`` then ``xs.append(y)`` of one."""
    assert isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))
    params = [a.arg for a in (*d.args.posonlyargs, *d.args.args)]
    method = bool(params) and params[0] in ("self", "cls")
    positional = params[1:] if method else params
    filled: dict[str, bool] = {}
    for caller in funcs:
        for c in walk(caller):
            if not isinstance(c, ast.Call):
                continue
            f = c.func
            named = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if named != d.name or caller is d:
                continue
            given = {**dict(zip(positional, c.args, strict=False)), **{k.arg: k.value for k in c.keywords if k.arg}}
            for p in positional:
                a = given.get(p)
                ok = isinstance(a, ast.Name) and _bound_to_matcher(caller, a.id)
                filled[p] = filled.get(p, True) and ok
    return {p for p, ok in filled.items() if ok}


def _bound_to_matcher(caller: ast.AST, name: str) -> bool:
    """Every binding of ``name`` in ``caller`` is a matcher call, an empty list filled by appending such names."""
    values = [s.value for s in _stmt_walk(caller) if isinstance(s, ast.Assign) and _binds(s.targets, name)]
    if not values:
        return False
    for v in values:
        if _is_matcher_call(v):
            continue
        if not (isinstance(v, ast.List) and not v.elts):
            return False
        appended = [
            c.args[0]
            for c in walk(caller)
            if isinstance(c, ast.Call)
            and isinstance(c.func, ast.Attribute)
            and c.func.attr == "append"
            and isinstance(c.func.value, ast.Name)
            and c.func.value.id == name
            and len(c.args) == 1
        ]
        if not appended or not all(
            isinstance(x, ast.Name) and x.id != name and _bound_to_matcher(caller, x.id) for x in appended
        ):
            return False
    return True


def _binds(targets: list[ast.expr], name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in walk(t))


def _host_names(d: ast.AST, seeds: set[str]) -> tuple[set[str], set[str]]:
    """(the def's parameters and bound names, those derived only from ``seeds``): a name is derived when every value
    bound to it (assignment, ``for`` target, comprehension target) reads some of the def's own names, and only derived
    ones; a seed is derived from the start."""
    assert isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))
    bindings: list[tuple[set[str], ast.AST]] = []
    for s in walk(d):
        if isinstance(s, ast.Assign):
            bindings.append(({n.id for t in s.targets for n in walk(t) if isinstance(n, ast.Name)}, s.value))
        elif isinstance(s, (ast.For, ast.AsyncFor, ast.comprehension)):
            bindings.append(({n.id for n in walk(s.target) if isinstance(n, ast.Name)}, s.iter))
    params = {a.arg for a in (*d.args.posonlyargs, *d.args.args, *d.args.kwonlyargs)}
    local = params | {n for names, _ in bindings for n in names}
    values: dict[str, list[set[str]]] = {}
    for names, v in bindings:
        reads = {n.id for n in walk(v) if isinstance(n, ast.Name)}
        for n in names:
            values.setdefault(n, []).append(reads)
    # the largest set closed under "every binding reads, of the def's names, some and only derived ones" (a seed
    # rebound from itself and another derived name, ``indices = [... for a, b in zip(indices, aux)]``, stays)
    host = set(seeds) | ({n for names, _ in bindings for n in names} - params)
    changed = True
    while changed:
        changed = False
        for n in list(host):
            if any(not (r & local) or not (r & local) <= host for r in values.get(n, [])):
                host.discard(n)
                changed = True
    return local, host


# ``if not <probe naming another accelerator>(``: the cheap pre-check of ``_foreign_classes``.
_NOT_FOREIGN = re.compile(rb"^[ \t]+if not [\w.]*(?:mps|xpu|npu|hpu|mlu|musa|sdaa|gcu|ipu)[\w.]*\(", re.M)
# The same without its line anchor: it starts with a literal, which sre finds fast (the anchored form tries every
# line of the file); no match of it means no match of ``_NOT_FOREIGN``.
_NOT_FOREIGN_FAST = re.compile(rb"if not [\w.]*(?:mps|xpu|npu|hpu|mlu|musa|sdaa|gcu|ipu)[\w.]*\(")


# Porting contexts a foreign class's lines give way to (its requirement of its accelerator is that backend's too).
_OPEN = (None, "optional", "requirement")


def _foreign_classes(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """Lines in a class one of whose methods raises unless another accelerator is there (``if not
    torch.backends.mps.is_available(): ... raise``, perhaps after a dequantize fallback) are ``backend-branch``,
    unless a stronger context holds: nothing in the class runs on the port's device, as in an ``if
    is_torch_xpu_available():`` body; so is the class's own requirement of that accelerator. A class requiring CUDA
    is the port's work and stays. Read on the whole file (a pruned scan may parse one method of a large class
    alone), only when the pre-check matches."""
    if not any(ctx in _OPEN for *_, ctx in found) or not _NOT_FOREIGN_FAST.search(data):
        return found
    if not _NOT_FOREIGN.search(data):
        return found
    probe = PyVisitor(None, True)
    open_lines = {ln for _, ln, *_, ctx in found if ctx in _OPEN and ln is not None}
    spans = [  # only a class holding an open line can change one
        (c.lineno, c.end_lineno or c.lineno)
        for c in _stmt_walk(_tree_holding(data, open_lines))
        if isinstance(c, ast.ClassDef) and probe.requires_foreign(c)
    ]
    return _backend_spans(found, spans)


def _backend_spans(found: list[RawFinding], spans: list[tuple[int, int]]) -> list[RawFinding]:
    """``found`` with its open findings (no context, or a weaker one) inside ``spans`` set apart as
    ``backend-branch``: the code there runs only on another accelerator."""
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
# Its unanchored form, a literal first (found fast by sre): no match of it means no match of ``_FOREIGN_IMPORT``.
_FOREIGN_IMPORT_FAST = re.compile(
    rb"if [\w.]*(?:mps|xpu|npu|hpu|mlu|musa|sdaa|gcu|ipu)[\w.]*\(\)[ \t]*:[ \t]*\r?\n[ \t]+(?:from|import) "
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
    if not any(ctx in _OPEN for *_, ctx in found) or not _FOREIGN_IMPORT_FAST.search(data):
        return found
    if not _FOREIGN_IMPORT.search(data):
        return found
    tree = _tree(data)
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
    return _backend_spans(found, spans)


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
        if any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id in names for c in walk(st)):
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
    if not lines or b"global" not in data:  # no ``global`` statement: no kernel bound to a module global
        return found
    tree = _tree(data)
    bound: dict[int, set[str]] = {}  # kernel line -> the module globals its def binds
    for d in _defs(data):
        names = {n for g in _stmt_walk(d) if isinstance(g, ast.Global) for n in g.names}
        if names:
            for c in walk(d):
                if isinstance(c, ast.Call) and c.lineno in lines:
                    bound.setdefault(c.lineno, set()).update(names)
    if not bound:
        return found
    empty: set[str] = set()  # globals whose None is answered by returning a placeholder
    for node in _stmt_walk(tree):
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


# Placement and packing lines that can serve another item's work: CUDA placement (one device setting per file) and
# the varlen layout a kernel's signature takes.
_SERVING_RULES = frozenset({"cuda-call", "cuda-device-literal", "torch-cuda-api", "varlen-packing"})
_PACKAGE_RULES = frozenset(r.id for r in RULES.values() if r.item == "package")
# A package's wrapper module feeds the package's kernel its unpadded varlen layout: those helpers' index selection
# and cumulative lengths are part of replacing the package.
_WRAPPER_RULES = frozenset({"varlen-packing", "data-dependent-op"})
_REQUIRES = re.compile(rb"if not [\w.]*is_\w+_available\(")  # the cheap pre-check of ``_required_packages``


def _serving_lines(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """Lines whose only purpose is another finding's work join that finding's item (their subject becomes
    ``serves:<rule>:<line>``, read by ``log.build_items``):

    - a hub kernel's wrapper: placement and varlen lines in module-level defs that reach the def loading the kernel
      through this file's calls (``_sparse_attention`` -> ``_msa_sparse_atten_op`` -> the loader), or whose every
      caller does (the kernel's capability check), or that a decorator of one registers (the op's fake): packing
      the inputs the kernel's signature takes and pinning the device it launches on are part of replacing it.
      Methods stay (a model's own placement); so does a def that never reaches the kernel.
    - a CUDA graph's capture and replay: in a file that captures a graph (a ``cuda-graphs`` line), placement lines
      that are the context managers of a ``with`` in a def holding that line (the warm-up stream and memory pool
      the capture runs under) or of a ``with`` whose body only replays (``graph.replay()``): replacing CUDA graphs
      replaces them. Other placement in the capturing def, and on the eager path beside it, stays.
    - a package's adapter class: placement lines in a class that raises ``ImportError`` unless the package is there
      (``if not is_bitsandbytes_available(): raise ImportError``) and holds a line of that package's item: moving
      the package's quantized model to the target is that package's port. A class that only imports it does not
      qualify (the Trainer imports bitsandbytes for one optimizer).
    - a hub kernel's adapter class: placement lines in a class that raises ``ImportError`` unless ``kernels`` (the
      hub-kernel loader) is there join the hub-kernel item of a module the class imports relatively
      (``serves:hub-kernel:@..integrations.eetq``; ``log`` resolves the module to a file of the same scan and joins
      only when that file loads a hub kernel): the quantizer's CUDA requirement is the kernel's port."""
    open_ctx = [
        (r, ln) for r, ln, _, _, _, ctx in found if r in _SERVING_RULES and ctx not in NOT_PORTING and ln is not None
    ]
    if not open_ctx and not any(r in _WRAPPER_RULES for r, *_ in found):
        return found
    serves: dict[int, str] = {}
    kernels = [ln for r, ln, _, _, _, ctx in found if r == "hub-kernel" and ctx not in NOT_PORTING and ln is not None]
    if kernels:
        serves.update(_kernel_wrapper(data, kernels[0], [ln for _, ln in open_ctx]))
    packages = [
        (r, ln, sub) for r, ln, _, _, sub, ctx in found if r in _PACKAGE_RULES and ctx not in NOT_PORTING and ln and sub
    ]
    if packages and b"ImportError" in data and _REQUIRES.search(data):
        placement = [ln for r, ln in open_ctx if r != "varlen-packing" and ln not in serves]
        serves.update(_package_adapter(data, packages, placement))
    if b"is_kernels_available" in data and b"ImportError" in data:
        placement = [ln for r, ln in open_ctx if r != "varlen-packing" and ln not in serves]
        serves.update(_kernel_adapter(data, placement))
    graphs = [  # a captured graph (``torch.cuda.graph``); a compile mode string has the mode as subject
        ln
        for r, ln, _, _, sub, ctx in found
        if r == "cuda-graphs" and ctx not in NOT_PORTING and ln is not None and sub is None
    ]
    lines = data.splitlines()
    loaders = [p for p in packages if p[1] <= len(lines) and lines[p[1] - 1][:1] in (b" ", b"\t")]  # inside a def
    if loaders:
        hazards = [
            ln for r, ln, _, _, _, ctx in found if r in _WRAPPER_RULES and ctx not in NOT_PORTING and ln not in serves
        ]
        if hazards:  # no line to join: no parse of the whole file
            serves.update(_package_wrapper(data, loaders, [ln for ln in hazards if ln is not None]))
    if graphs:
        placement = [ln for r, ln in open_ctx if r != "varlen-packing" and ln not in serves]
        serves.update(_graph_capture(data, graphs, placement))
    if not serves:
        return found
    return [
        (r, ln, msg, snip, serves[ln], ctx)
        if (r in _SERVING_RULES or r in _WRAPPER_RULES) and ctx not in NOT_PORTING and ln in serves
        else (r, ln, msg, snip, sub, ctx)
        for r, ln, msg, snip, sub, ctx in found
    ]


def _kernel_wrapper(data: bytes, kernel_line: int, lines: list[int]) -> dict[int, str]:
    spans = _wrapper_spans(data, kernel_line, _reach(data))
    return {ln: f"{SERVES}hub-kernel:{kernel_line}" for ln in lines if any(a <= ln <= b for a, b in spans)}


def _package_wrapper(data: bytes, packages: list[tuple[str, int, str]], lines: list[int]) -> dict[int, str]:
    """A package's wrapper module: the module-level defs that reach a def of this file importing the package (the
    flash-attn loader), and the helpers every caller of which does, serve that package (``_kernel_wrapper``)."""
    out: dict[int, str] = {}
    reach = _reach(data)
    seen: set[str | None] = set()
    for rule, pline, _ in packages:
        loader = reach.def_at_line(pline)
        if loader in seen:  # one loader def, one reach
            continue
        seen.add(loader)
        spans = _wrapper_spans(data, pline, reach)
        out.update(
            {ln: f"{SERVES}{rule}:{pline}" for ln in lines if ln not in out and any(a <= ln <= b for a, b in spans)}
        )
    return out


def _wrapper_spans(data: bytes, loader_line: int, reach: FileReach) -> list[tuple[int, int]]:
    """Line spans of the module-level defs that reach the def holding ``loader_line`` through this file's calls (body
    or decorator names), plus the defs every caller of which is one of those and that no module-level statement
    names."""
    loader = reach.def_at_line(loader_line)
    if loader is None or not any(h[1] == 0 and h[2] == b"def" and h[3] == loader for h in reach.headers):
        return []  # no module-level def of that name (read from the headers: no parse of the whole file)
    tree = _tree(data)
    top = {d.name: d for d in tree.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if loader not in top:
        return []

    reads = {  # the names each def's body and decorators read, once
        d.name: {n.id for b in [*d.body, *d.decorator_list] for n in walk(b) if isinstance(n, ast.Name)}
        for d in top.values()
    }

    def callers(name: str) -> set[str]:
        return {d for d, names in reads.items() if d != name and name in names}

    reaching, todo = {loader}, [loader]
    while todo:
        for c in callers(todo.pop()) - reaching:
            reaching.add(c)
            todo.append(c)
    named = set().union(*_mentioned_at_module(tree))
    grew = True
    while grew:  # helpers whose every caller reaches the kernel (its capability check), up a chain of helpers
        grew = False
        for d in top.values():
            up = callers(d.name)
            if d.name not in reaching and d.name not in named and up and up <= reaching:
                reaching.add(d.name)
                grew = True
    return [(d.lineno, d.end_lineno or d.lineno) for n, d in top.items() if n in reaching]


def _graph_capture(data: bytes, graphs: list[int], lines: list[int]) -> dict[int, str]:
    if not lines:
        return {}
    tree = _tree(data)
    capturing = [
        (d.lineno, d.end_lineno or d.lineno)
        for d in _stmt_walk(tree)
        if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(d.lineno <= g <= (d.end_lineno or d.lineno) for g in graphs)
    ]
    out: dict[int, str] = {}
    for w in _stmt_walk(tree):
        if not isinstance(w, (ast.With, ast.AsyncWith)):
            continue
        in_capture = any(a <= w.lineno <= b for a, b in capturing)
        if in_capture or all(_replays(st) for st in w.body):
            heads = range(w.lineno, w.body[0].lineno)  # the with's own lines: its context managers
            near = min(graphs, key=lambda g: abs(g - w.lineno))
            out.update({ln: f"{SERVES}cuda-graphs:{near}" for ln in lines if ln in heads})
    return out


def _replays(st: ast.stmt) -> bool:
    """``<graph>.replay()``: the call that runs a captured CUDA graph."""
    return (
        isinstance(st, ast.Expr)
        and isinstance(st.value, ast.Call)
        and isinstance(st.value.func, ast.Attribute)
        and st.value.func.attr == "replay"
        and not st.value.args
        and not st.value.keywords
    )


def _mentioned_at_module(tree: ast.Module) -> list[set[str]]:
    """Names read by module-level statements other than defs and classes (a def named there may be called from
    anywhere)."""
    return [
        {n.id for n in walk(s) if isinstance(n, ast.Name)}
        for s in tree.body
        if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom))
    ]


def _classes_holding(data: bytes, lines: list[int]) -> Iterator[tuple[ast.ClassDef, list[int]]]:
    """Each class of the file with the ones of ``lines`` it holds (classes holding none are skipped)."""
    if not lines:
        return
    for c in _stmt_walk(_tree_holding(data, lines)):
        if isinstance(c, ast.ClassDef):
            inside = [ln for ln in lines if c.lineno <= ln <= (c.end_lineno or c.lineno)]
            if inside:
                yield c, inside


def _package_adapter(data: bytes, packages: list[tuple[str, int, str]], lines: list[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for c, inside in _classes_holding(data, lines):
        a, b = c.lineno, c.end_lineno or c.lineno
        required = _required_packages(c)
        for rule, pline, sub in packages:
            if a <= pline <= b and _package_word(sub) in required:
                out.update({ln: f"{SERVES}{rule}:{pline}" for ln in inside})
                break
    return out


def _kernel_adapter(data: bytes, lines: list[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for c, inside in _classes_holding(data, lines):
        if "kernels" not in _required_packages(c):
            continue
        modules = sorted(
            {"." * n.level + (n.module or "") for n in _stmt_walk(c) if isinstance(n, ast.ImportFrom) and n.level > 0}
        )
        if modules:
            out.update({ln: f"{SERVES}hub-kernel:@{','.join(modules)}" for ln in inside})
    return out


def _package_word(subject: str) -> str:
    return re.split(r"[=<>!~\[;@ .]", subject.strip(), maxsplit=1)[0].lower().replace("-", "_")


def _required_packages(c: ast.ClassDef) -> set[str]:
    """``X`` for each ``if not is_X_available(...): ... raise ImportError(...)`` in the class's methods."""
    out: set[str] = set()
    for node in _stmt_walk(c):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)):
            continue
        call = node.test.operand
        if not isinstance(call, ast.Call):
            continue
        name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        m = re.fullmatch(r"is_(\w+?)_available", name)
        raises = any(
            isinstance(r, ast.Raise)
            and r.exc is not None
            and "ImportError" in {n.id for n in walk(r.exc) if isinstance(n, ast.Name)}
            for b in node.body
            for r in _stmt_walk(b)
        )
        if m and raises:
            out.add(m.group(1))
    return out


def _feeds_varlen(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """A boolean-mask selection whose result a method passes to a submodule (``self.audio_tower(input_features,
    ...)``) built in ``__init__`` from a class of this file whose ``forward`` packs varlen sequences unpads that
    module's input for the packing: it joins the file's varlen item (``serves:varlen-packing:<line>``). A mask
    result that feeds no such module (or a module without varlen packing) keeps its own item."""
    masks = [ln for r, ln, _, _, _, ctx in found if r == "boolean-mask-index" and ctx not in NOT_PORTING and ln]
    varlen = [ln for r, ln, _, _, _, ctx in found if r == "varlen-packing" and ctx not in NOT_PORTING and ln]
    if not masks or not varlen:
        return found
    text = data.splitlines()
    assigned = {  # cheap pre-check before the parse: a mask result read later by a ``self.<attr>(...)`` call
        m.group(1) for ln in masks if ln <= len(text) and (m := re.match(rb"\s*(\w+)\s*=[^=]", text[ln - 1]))
    }
    if not any(re.search(rb"self\.\w+\([^)]*\b" + re.escape(n) + rb"\b", data) for n in assigned):
        return found
    tree = _tree_holding(data, {*masks, *varlen})  # a class holding neither feeds nor packs
    classes = {c.name: c for c in tree.body if isinstance(c, ast.ClassDef)}
    packing: dict[str, int] = {}  # class -> a varlen line of its forward
    for name, c in classes.items():
        for d in c.body:
            if isinstance(d, ast.FunctionDef) and d.name == "forward":
                inside = [ln for ln in varlen if d.lineno <= ln <= (d.end_lineno or d.lineno)]
                if inside:
                    packing[name] = inside[0]
    if not packing:
        return found
    serves: dict[int, str] = {}
    for c in classes.values():
        built = _submodules(c)  # self.<attr> -> class name
        feeding = {a: packing[k] for a, k in built.items() if k in packing}
        if not feeding:
            continue
        for d in c.body:
            if not isinstance(d, ast.FunctionDef):
                continue
            for st in _stmt_walk(d):
                if not (isinstance(st, ast.Assign) and st.lineno in masks):
                    continue
                names = {t.id for t in st.targets if isinstance(t, ast.Name)}
                for call in walk(d):
                    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                        continue
                    owner = call.func.value
                    if not (isinstance(owner, ast.Name) and owner.id == "self" and call.func.attr in feeding):
                        continue
                    args = [*call.args, *(k.value for k in call.keywords)]
                    if call.lineno > st.lineno and any(isinstance(a, ast.Name) and a.id in names for a in args):
                        serves[st.lineno] = f"{SERVES}varlen-packing:{feeding[call.func.attr]}"
    if not serves:
        return found
    return [
        (r, ln, msg, snip, serves[ln], ctx)
        if r == "boolean-mask-index" and ctx not in NOT_PORTING and ln in serves
        else (r, ln, msg, snip, sub, ctx)
        for r, ln, msg, snip, sub, ctx in found
    ]


def _submodules(c: ast.ClassDef) -> dict[str, str]:
    """``self.<attr> = Cls(...)`` or ``Cls._from_config(...)``/``Cls.from_pretrained(...)`` in ``__init__``."""
    out: dict[str, str] = {}
    for d in c.body:
        if not (isinstance(d, ast.FunctionDef) and d.name == "__init__"):
            continue
        for st in _stmt_walk(d):
            if not (isinstance(st, ast.Assign) and isinstance(st.value, ast.Call)):
                continue
            f = st.value.func
            cls = f.id if isinstance(f, ast.Name) else None
            if (
                isinstance(f, ast.Attribute)
                and isinstance(f.value, ast.Name)
                and f.attr.startswith(("_from_", "from_"))
            ):
                cls = f.value.id
            for t in st.targets:
                if cls and isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    out[t.attr] = cls
    return out
