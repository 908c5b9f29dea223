"""Sizes read back from tensors into shapes (rule ``size-readback`` of ``train_hazards.py``): a slice bound that is
a tensor drawn from a torch call, or a padding/shape argument unpacked from a tensor cast to integers. Each makes a
new shape per step, which a compiled graph (torch.compile on the neuron backend) retraces."""

from __future__ import annotations

import ast

from accelpilot.porting.scan.nodes import dotted as _dotted

_INT_CASTS = frozenset({"ceil", "floor", "round", "int", "long", "tolist", "item"})
_INT_DTYPES = frozenset({"int32", "int64", "int", "long"})
_SHAPE_CALLS = frozenset({"pad", "narrow", "view", "reshape", "expand", "new_zeros", "zeros", "empty", "ones"})


def _args(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(k.value for k in call.keywords if k.arg == "dtype")]


def _is_dtype(node: ast.AST, torch_names: set[str], *names: str) -> bool:
    d = _dotted(node)
    if d is None or "." not in d:
        return False
    root, _, leaf = d.rpartition(".")
    aliases = {"float16": ("float16", "half")}
    wanted = {w for n in names for w in aliases.get(n, (n,))}
    return root in torch_names and leaf in wanted


def _from_torch(node: ast.AST, torch_names: set[str]) -> bool:
    """An expression whose call chain starts at a torch factory (``torch.where(...)``, ``torch.empty(...).random_``)."""
    while True:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Attribute):
            node = node.value
        else:
            return isinstance(node, ast.Name) and node.id in torch_names


def _int_readback(node: ast.AST, torch_names: set[str]) -> bool:
    """A tensor turned into integers (``.ceil()``, ``.long()``, ``.to(torch.int32)``, ``.tolist()``)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            if n.func.attr in _INT_CASTS:
                return True
            if n.func.attr == "to" and any(_is_dtype(a, torch_names, *_INT_DTYPES) for a in _args(n)):
                return True
    return False


def size_readbacks(fn: ast.FunctionDef | ast.AsyncFunctionDef, torch_names: set[str]) -> list[tuple[ast.AST, str]]:
    """Slice bounds that are names bound, in ``fn``, to a tensor drawn from a torch factory (``cutoff =
    torch.where(...)``), and padding/shape arguments that are names unpacked from a tensor read back as integers
    (``mx0, my0 = margin.ceil().to(torch.int32)``). A name also bound to anything else is left alone."""
    drawn: set[str] = set()
    unpacked: set[str] = set()
    other: set[str] = set()
    for st in ast.walk(fn):
        if not isinstance(st, ast.Assign):
            continue
        for t in st.targets:
            if isinstance(t, ast.Tuple) and _int_readback(st.value, torch_names):
                unpacked |= {e.id for e in t.elts if isinstance(e, ast.Name)}
            elif isinstance(t, ast.Name) and _drawn(st.value, torch_names):
                drawn.add(t.id)
            elif isinstance(t, (ast.Name, ast.Tuple, ast.List)):  # ``x[i] = ...`` binds no name
                other |= {e.id for e in ast.walk(t) if isinstance(e, ast.Name)}
    drawn -= other
    unpacked -= other
    if not drawn and not unpacked:
        return []
    found: list[tuple[ast.AST, str]] = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Slice):
            used = {x for b in (n.lower, n.upper) if b is not None for x in _bare_names(b)} & (drawn | unpacked)
            if used:
                found.append((n, f"slice bound {', '.join(sorted(used))} read back from a tensor"))
        elif isinstance(n, ast.Call) and isinstance(n.func, (ast.Attribute, ast.Name)):
            name = n.func.attr if isinstance(n.func, ast.Attribute) else n.func.id
            if name in _SHAPE_CALLS:
                sized = [*n.args[1:], *(k.value for k in n.keywords if k.arg in ("pad", "size", "shape"))]
                used = {x for a in sized for x in _bare_names(a)} & unpacked
                if used:
                    found.append((n, f"{name}(...) sized by {', '.join(sorted(used))} read back from a tensor"))
    return found


def _drawn(value: ast.AST, torch_names: set[str]) -> bool:
    """A tensor value from a torch call (``torch.where(...)``, ``torch.empty([]).random_(...)``), not a device,
    dtype or generator."""
    if not (isinstance(value, ast.Call) and _from_torch(value, torch_names)):
        return False
    d = _dotted(value.func) or ""
    return d.rsplit(".", 1)[-1] not in ("device", "Generator", "dtype", "Size", "get_default_dtype")


def _bare_names(node: ast.AST) -> set[str]:
    """Names used as values in ``node`` (``cutoff``, ``n + 1``, ``[a, b]``), not ones only read for an attribute,
    an index or a call (``x.shape[2]``, ``f(x)``)."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.BinOp):
        return _bare_names(node.left) | _bare_names(node.right)
    if isinstance(node, ast.UnaryOp):
        return _bare_names(node.operand)
    if isinstance(node, (ast.List, ast.Tuple)):
        return {x for e in node.elts for x in _bare_names(e)}
    return set()
