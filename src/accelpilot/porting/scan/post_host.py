"""Post passes that set host-side work apart: codebook delay patterns, generate loops, Hungarian matcher indices."""

from __future__ import annotations

import ast
import re
from collections.abc import Collection

from accelpilot.porting.scan.nodes import walk
from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.post_kit import _Def, _defs, _held_lines, _reach, _stmt_walk
from accelpilot.porting.scan.reach import FileReach
from accelpilot.porting.scan.visit_base import FUNCTION_RULES

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
