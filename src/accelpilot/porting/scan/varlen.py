"""Predicates for ``cu_seqlens`` (variable-length packing): reads that only count segments or feed a check."""

from __future__ import annotations

import ast

from accelpilot.porting.scan.dataflow import _name_of
from accelpilot.porting.scan.nodes import walk

# Calls that only check a condition (``torch_compilable_check(cond, msg)``, ``torch._check(cond)``): a value read there
# decides whether the code goes on, and shapes nothing.
_CHECKS = frozenset({"torch_compilable_check", "_check", "_check_with", "_check_is_size", "_assert", "_assert_async"})


def _unpacked_offsets(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[int]:
    """The nodes of each ``cu_seqlens`` parameter of ``fn`` (the parameter and its uses) when every use reads only
    how many segments there are (``cu_seqlens.shape[0]``, ``len(cu_seqlens)``, ``.size(0)``) or feeds a check, also
    through one local (``lengths = cu_seqlens[1:] - cu_seqlens[:-1]`` then ``torch_compilable_check((lengths ==
    lengths[0]).all(), ...)``). Such a def runs one fixed-shape computation per segment count (an export-safe
    attention that reshapes equal segments into a batch): the offsets' values never shape a tensor, nothing is packed
    there. A use of the values themselves (a slice, a split, ``.tolist()``, a kernel argument) keeps every mention,
    unless the parameter defaults to ``None`` and is only tested against ``None`` or handed on to a call."""
    params = [a for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs) if "cu_seqlens" in a.arg]
    if not params:
        return frozenset()
    parent = {id(c): p for p in walk(fn) for c in ast.iter_child_nodes(p)}
    names = [n for n in walk(fn) if isinstance(n, ast.Name)]
    out: set[int] = set()
    optional = _none_default_params(fn)
    for a in params:
        uses = [n for n in names if n.id == a.arg]
        if uses and all(
            isinstance(u.ctx, ast.Load) and (_counts_segments(u, parent) or _only_checked(u, parent, names))
            for u in uses
        ):
            out |= {id(a), *map(id, uses)}
        elif a.arg in optional and all(
            isinstance(u.ctx, ast.Load) and (_counts_segments(u, parent) or _none_test_or_passed(u, parent))
            for u in uses
        ):
            # ``def forward(self, x, cu_seqlens=None)`` handing it on to a kernel: packing is opt-in and built by
            # the caller (where its own finding is); the default path is not packed
            out |= {id(a), *map(id, uses)}
    return frozenset(out)


def _none_default_params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Parameters of ``fn`` whose default is ``None``."""
    pos = [*fn.args.posonlyargs, *fn.args.args]
    pairs = list(zip(pos[len(pos) - len(fn.args.defaults) :], fn.args.defaults, strict=True))
    pairs += [(a, d) for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True) if d is not None]
    return {a.arg for a, d in pairs if isinstance(d, ast.Constant) and d.value is None}


def _none_test_or_passed(u: ast.Name, parent: dict[int, ast.AST]) -> bool:
    """``u is None`` / ``u is not None``, or ``u`` handed as it is to a call (``f(u)``, ``f(x=u)``)."""
    p = parent.get(id(u))
    if isinstance(p, ast.Compare) and len(p.ops) == 1 and isinstance(p.ops[0], (ast.Is, ast.IsNot)):
        other = p.comparators[0] if p.left is u else p.left
        return isinstance(other, ast.Constant) and other.value is None
    if isinstance(p, ast.keyword):
        return isinstance(parent.get(id(p)), ast.Call)
    return isinstance(p, ast.Call) and u in p.args


def _counts_segments(u: ast.Name, parent: dict[int, ast.AST]) -> bool:
    """``u.shape``, ``len(u)``, ``u.size(...)``, ``u.numel()``: a read of how many offsets there are."""
    p = parent.get(id(u))
    if isinstance(p, ast.Attribute) and p.attr == "shape":
        return True
    if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id == "len" and p.args == [u]:
        return True
    call = parent.get(id(p)) if isinstance(p, ast.Attribute) and p.attr in ("size", "numel") else None
    return isinstance(call, ast.Call) and call.func is p


def _only_checked(u: ast.Name, parent: dict[int, ast.AST], names: list[ast.Name]) -> bool:
    """``u`` is read inside a check (``_CHECKS``, ``assert``), or assigned to one local whose every read is."""
    stmt = _in_check(u, parent)
    if stmt is None:
        return True
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    local = stmt.targets[0].id
    reads = [n for n in names if n.id == local and isinstance(n.ctx, ast.Load)]
    stores = [n for n in names if n.id == local and isinstance(n.ctx, ast.Store)]
    return len(stores) == 1 and bool(reads) and all(_in_check(n, parent) is None for n in reads)


def _in_check(node: ast.AST, parent: dict[int, ast.AST]) -> ast.AST | None:
    """None when ``node`` lies in a check call or an ``assert``; else the statement holding it."""
    while (p := parent.get(id(node))) is not None:
        if isinstance(p, ast.Assert) or (isinstance(p, ast.Call) and _name_of(p.func) in _CHECKS):
            return None
        if isinstance(p, ast.stmt):
            return p
        node = p
    return node


def _fills_given_inputs(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``def prepare(model, inputs): inputs["cu_seqlens"] = ...`` returning nothing: the def writes named entries
    into a mapping its caller handed it, to prepare the inputs of a call the caller makes next (export input
    preparation, precomputing packing offsets from ``grid_thw`` outside the traced graph). Its packing lines run
    eagerly before that call; the consumer of the offsets (the model's packed attention) is its own finding.
    A def that returns or yields a value, or writes only its own locals or ``self``, is not this."""
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)} - {"self", "cls"}
    writes = False
    for n in walk(fn):
        if isinstance(n, (ast.Yield, ast.YieldFrom)) or (isinstance(n, ast.Return) and n.value is not None):
            return False
        if isinstance(n, ast.Assign):
            for t in n.targets:
                for e in t.elts if isinstance(t, ast.Tuple) else [t]:
                    writes = writes or (
                        isinstance(e, ast.Subscript)
                        and isinstance(e.value, ast.Name)
                        and e.value.id in params
                        and isinstance(e.slice, ast.Constant)
                        and isinstance(e.slice.value, str)
                    )
    return writes


def _names_varlen(node: ast.AST) -> bool:
    """``node`` mentions ``cu_seqlens`` (a name, an attribute or a string), what the varlen rule reads."""
    for sub in walk(node):
        if isinstance(sub, ast.Name) and "cu_seqlens" in sub.id:
            return True
        if isinstance(sub, ast.Attribute) and "cu_seqlens" in sub.attr:
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and "cu_seqlens" in sub.value:
            return True
    return False


def fixed_step_offsets(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[int]:
    """The nodes of each local ``*cu_seqlens*`` name of ``fn`` whose every assignment is a ``torch.arange`` with a
    step (``torch.arange(0, (b + 1) * s, step=s)``): equal segments of a fixed length, a batch in packed form, so
    no length is read from the data and nothing varies per step. A parameter, an augmented assignment or any other
    assignment (a ``cumsum`` of lengths) keeps every mention."""
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    assigned: dict[str, bool] = {}
    names: dict[str, list[int]] = {}
    for n in walk(fn):
        if isinstance(n, ast.Name) and "cu_seqlens" in n.id:
            names.setdefault(n.id, []).append(id(n))
        elif isinstance(n, ast.Assign):
            for tgt in n.targets:
                if isinstance(tgt, ast.Name) and "cu_seqlens" in tgt.id:
                    ok = assigned.get(tgt.id, True) and _stepped_arange(n.value)
                    assigned[tgt.id] = ok
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
            tgt2 = n.target
            if isinstance(tgt2, ast.Name) and "cu_seqlens" in tgt2.id:
                assigned[tgt2.id] = False
    out: set[int] = set()
    for name, ok in assigned.items():
        if ok and name not in params:
            out.update(names.get(name, ()))
    return frozenset(out)


def _stepped_arange(v: ast.expr) -> bool:
    """``torch.arange(start, end, step, ...)`` or ``torch.arange(..., step=s)``, also through ``.to()``/``.int()``."""
    while (
        isinstance(v, ast.Call)
        and isinstance(v.func, ast.Attribute)
        and v.func.attr in ("to", "int", "long", "contiguous")
    ):
        v = v.func.value
    if not (isinstance(v, ast.Call) and _name_of(v.func) == "arange"):
        return False
    return len(v.args) >= 3 or any(k.arg == "step" for k in v.keywords)
