"""Data-flow predicates of the visitor: bindings, host-built values, fresh names per iteration, integer values."""

from __future__ import annotations

import ast
import re

from accelpilot.porting.scan.nodes import walk


def _is_masky(node: ast.AST, top: bool = True) -> bool:
    """A subscript index that is a boolean mask: a comparison, ``.bool()``, ``~``/``&``/``|`` of those, or a
    name ending in ``mask`` or ``mask_k`` (only as the whole index, so ``tuple[Tensor | BlockMask]`` annotations
    do not count)."""
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)):
        return _is_masky(node.operand, top)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return _is_masky(node.left, False) or _is_masky(node.right, False)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "bool":
        return True
    if not top:
        return False
    if isinstance(node, ast.Name):
        return _MASK_NAME.search(node.id) is not None
    if isinstance(node, ast.Attribute):
        return _MASK_NAME.search(node.attr) is not None
    return False


# ``valid_mask``, and a mask of one codebook or step (``mask_k``, audiocraft's per-codebook loss)
_MASK_NAME = re.compile(r"mask(?:_[a-z0-9])?$", re.I)


def _name_of(f: ast.expr) -> str | None:
    """The last name of ``name`` or ``a.b.name``; None for anything else."""
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _decorator_name(d: ast.expr) -> str | None:
    """``@name``, ``@mod.name`` or ``@name(...)``: the decorator's own name."""
    return _name_of(d.func if isinstance(d, ast.Call) else d)


# Ops of one tensor that keep a host-built tensor host-built (``_host_built``).
_ONE_INPUT = frozenset({"clamp", "clamp_min", "clamp_max", "float", "double", "int", "long", "to", "round", "abs"})


# Ops whose result is integer positions, not a mask (``_integer_valued``), and integer dtypes of a factory's dtype=.
_POSITION_OPS = frozenset({"argmax", "argmin", "argsort", "arange", "long", "int", "searchsorted", "bucketize"})


_INT_DTYPES = frozenset({"long", "int", "int64", "int32", "int16", "int8", "short"})


# Ops that move or reshape a tensor without changing its values (an integer index stays one through them).
_KEEPS_VALUES = frozenset(
    {"to", "view", "reshape", "expand", "expand_as", "unsqueeze", "squeeze", "flatten", "contiguous", "clone"}
)


# Annotation names of a host value: a parameter so typed is never a tensor input (``_host_params``).
_HOST_TYPES = frozenset({"int", "float", "bool", "str", "None", "device", "dtype", "Optional", "Union"})


# Arithmetic that keeps a host-built tensor host-built when the other operand is a number the inputs do not decide.
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv)


# Collectives (torch.distributed, accelerate.utils): of a host-built tensor, their result is still host values.
_COLLECTIVES = frozenset({"reduce", "all_reduce", "all_gather", "gather", "broadcast", "reduce_scatter"})


# torch dtype attribute names (``torch.float64``, ``torch.double``, ``torch.cfloat``, ``torch.float8_e4m3fn``).
_DTYPE_NAME = re.compile(
    r"^(q?u?int\d+\w*|float\d*(_\w+)?|bfloat16|half|double|long|int|short|bool|complex\d+|c(half|float|double))$"
)


def _bindings(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, list[ast.expr] | None]:
    """Every name the def binds, with the values of its plain assignments; None for a name also bound another way
    (a loop or comprehension target, ``+=``, ``with ... as``, a walrus, a tuple target), whose values are not
    followed. One walk: an ``Assign`` is met before the names it stores."""
    out: dict[str, list[ast.expr] | None] = {}
    direct: set[int] = set()
    for x in walk(node):
        if isinstance(x, ast.Assign):
            for t in x.targets:
                if isinstance(t, ast.Name):
                    direct.add(id(t))
                    vals = out.setdefault(t.id, [])
                    if vals is not None:
                        vals.append(x.value)
        elif isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store) and id(x) not in direct:
            out[x.id] = None
    return out


def _host_params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """Parameters annotated as host values (``int | None``, ``torch.device``, ``str``): never a tensor input."""
    a = node.args
    out = set()
    for x in (*a.posonlyargs, *a.args, *a.kwonlyargs):
        ann = x.annotation
        if ann is not None and all(
            (isinstance(n, ast.Name) and n.id in _HOST_TYPES)
            or (isinstance(n, ast.Attribute) and n.attr in _HOST_TYPES)
            or (isinstance(n, ast.Constant) and n.value is None)
            for n in walk(ann)
            if isinstance(n, (ast.Name, ast.Attribute, ast.Constant))
            and not (isinstance(n, ast.Name) and n.id == "torch")
        ):
            out.add(x.arg)
    return frozenset(out)


def _fixed_by_module(
    e: ast.expr,
    binds: dict[str, list[ast.expr] | None],
    params: tuple[frozenset[str], frozenset[str]],
    seen: set[str],
    depth: int,
) -> bool:
    """``e`` reads only ``self``/``cls`` state, constants, names of the module and host-typed parameters
    (``params`` = every parameter, the host-typed ones), through the def's plain assignments (``depth`` deep)."""
    every, host = params
    for n in walk(e):
        if not isinstance(n, ast.Name) or n.id in ("self", "cls") or n.id in seen:
            continue
        if n.id in every:
            if n.id in host and n.id not in binds:
                continue
            return False  # an input of the function: maybe a tensor
        if n.id not in binds:
            continue  # a module-level name (``torch``, a constant)
        values = binds[n.id]
        if not values or depth == 0:
            return False
        seen.add(n.id)
        if not all(_fixed_by_module(v, binds, params, seen, depth - 1) for v in values):
            return False
    return True


def _integer_valued(v: ast.expr) -> bool:
    """``v`` is built as integers: an index op (``argmax``, ``arange``, ``.long()``), a factory with an integer
    ``dtype=``, an int constant, through ops that keep values (``.to(device)``, ``.view``, ``.unsqueeze``)."""
    if isinstance(v, ast.Constant):
        return isinstance(v.value, int) and not isinstance(v.value, bool)
    if not isinstance(v, ast.Call):
        return False
    name = _call_name(v)
    if name in _POSITION_OPS:
        return True
    dtype = next((k.value for k in v.keywords if k.arg == "dtype"), None)
    if dtype is not None:
        return _is_dtype(dtype) and isinstance(dtype, ast.Attribute) and dtype.attr in _INT_DTYPES
    if name in _KEEPS_VALUES and isinstance(v.func, ast.Attribute):
        return not any(_is_dtype(a) for a in v.args) and _integer_valued(v.func.value)
    return False


def _call_name(call: ast.Call) -> str | None:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _is_dtype(node: ast.expr | None) -> bool:
    """``torch.<dtype>`` spelt out (the root is the name ``torch``)."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "torch"
        and _DTYPE_NAME.match(node.attr) is not None
    )


def _delegates(def_name: str | None, call: ast.Call) -> bool:
    """``.cuda()`` in a wrapper's own ``def cuda`` is delegation (whoever calls the wrapper chose CUDA); in
    ``def to`` only when it forwards an argument (``module.cuda(device)``): a bare ``.cuda()`` there ignores the
    requested device, which is hard-coded placement."""
    if def_name == "cuda":
        return True
    return def_name == "to" and bool(call.args or call.keywords)


def _module_trips(it: ast.expr, counted: bool = False) -> bool:
    """A ``for`` iterable whose length the module's structure fixes: its submodules (``self.layers``,
    ``self.a.layers``, a ModuleDict's ``self.dec.items()``: EDM's U-Net decoder, or a dict's ``items()``),
    ``enumerate`` of them,
    ``range(len(...))`` of them. A number is not, even a config one: ``range(self.config.prediction_length)`` is a
    generated length."""
    if (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Attribute)
        and it.func.attr in ("items", "values", "keys")
        and not it.args
        and not counted
    ):
        # a dict the function is handed (audiocraft's ``for cond_type, (cond, mask) in conditions.items()``): one
        # trip per key, a count its structure fixes, not a generated length
        return isinstance(it.func.value, ast.Name) or _module_trips(it.func.value)
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and len(it.args) == 1 and not it.keywords:
        arg = it.args[0]
        if it.func.id == "enumerate" and not counted:
            return _module_trips(arg)
        if it.func.id == "range" and not counted:
            return _module_trips(arg, counted=True)
        if it.func.id == "len" and counted:
            return _module_trips(arg)
        return False
    if counted or not isinstance(it, ast.Attribute):
        return False
    base: ast.expr = it
    while isinstance(base, ast.Attribute):
        base = base.value
    return isinstance(base, ast.Name) and base.id == "self"


def _fresh_names(body: list[ast.stmt], fresh: dict[str, int], tests: frozenset[str] = frozenset()) -> dict[str, int]:
    """``fresh`` plus the names the loop body's top-level statements assign without reading them (``x = rows[i]``):
    each iteration starts them anew from that line. A name whose first top-level assignment reads it
    (``x = torch.cat([x, t])``) is carried from the iteration before, and is not added.

    An ``if`` whose body and ``else`` both set a name afresh sets it on every path (``if sample: t = multinomial(..)
    else: t = argmax(..)``); so does an ``if`` with no else whose test (``tests``, unparsed) is also the test of an
    ``if`` holding the concat: the concat runs only when that body ran."""
    out = dict(fresh)
    seen: set[str] = set(out)
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            t = stmt.targets[0]
            if isinstance(t, (ast.Name, ast.Attribute)):
                name = ast.unparse(t)
                if name not in seen:
                    seen.add(name)
                    if not _reads(stmt.value, t):
                        out[name] = stmt.lineno
        elif isinstance(stmt, ast.If):
            sets = set(_fresh_names(stmt.body, {}, tests))
            if stmt.orelse:
                sets &= set(_fresh_names(stmt.orelse, {}, tests))
            elif ast.unparse(stmt.test) not in tests:
                continue
            for name in sets - seen:
                seen.add(name)
                out[name] = stmt.end_lineno or stmt.lineno  # set once the whole ``if`` has run
    return out


def _remapped_after(body: list[ast.stmt], node: ast.stmt, targets: set[str]) -> bool:
    """A top-level statement of the loop body after the one holding ``node`` passes a target to a call that
    rebinds it (NeRF's skip connection ``xyz_ = torch.cat([input_xyz, xyz_], -1)`` under ``if i in self.skips:``,
    then ``xyz_ = layer(xyz_)``): the next iteration carries the layer's output, not the concat, so nothing
    grows. A concat, stack or pad rebinding it carries the growth on."""
    holder = next((s for s in body if s.lineno <= node.lineno <= (s.end_lineno or s.lineno)), node)
    for stmt in (s for s in body if s.lineno > (holder.end_lineno or holder.lineno)):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call)):
            continue
        name, call = ast.unparse(stmt.targets[0]), stmt.value
        func = call.func.attr if isinstance(call.func, ast.Attribute) else ast.unparse(call.func)
        if name in targets and func not in ("cat", "stack", "pad", "hstack", "vstack", "concatenate"):
            return any(ast.unparse(a) == name for a in call.args)
    return False


def _fresh_on_path(body: list[ast.stmt], fresh: dict[str, int], node: ast.stmt) -> dict[str, int]:
    """``_fresh_names`` of the loop body, then of each ``if``/``with``/``try`` block on the way down to ``node``:
    a name set afresh earlier in a block that holds the concat is set afresh before it on every iteration that
    reaches it."""
    path: list[list[ast.stmt]] = [body]
    tests: set[str] = set()
    while True:
        holder = next((s for s in path[-1] if s.lineno <= node.lineno <= (s.end_lineno or s.lineno)), None)
        if holder is None or holder is node:
            break
        inner = next(
            (b for b in _blocks(holder) if any(s.lineno <= node.lineno <= (s.end_lineno or 0) for s in b)), None
        )
        if inner is None:
            break
        if isinstance(holder, ast.If) and inner is holder.body:
            tests.add(ast.unparse(holder.test))
        path.append(inner)
    out = _fresh_names(body, fresh, frozenset(tests))
    for block in path[1:]:
        for name, line in _fresh_names(block, {}, frozenset(tests)).items():
            if line < node.lineno:
                out[name] = line
    return out


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists an ``if``/``with``/``try`` runs within one iteration (not a nested loop's or def's)."""
    if isinstance(stmt, ast.If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [stmt.body]
    if isinstance(stmt, ast.Try):
        return [stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody]
    return []


def _reads(value: ast.expr, target: ast.Name | ast.Attribute) -> bool:
    """``value`` mentions ``target`` (a name, or the same ``obj.attr``)."""
    if isinstance(target, ast.Name):
        return any(isinstance(n, ast.Name) and n.id == target.id for n in walk(value))
    want = ast.unparse(target)
    attrs = (n for n in walk(value) if isinstance(n, ast.Attribute) and n.attr == target.attr)
    return any(ast.unparse(n) == want for n in attrs)


def _once_per_loop(test: ast.expr, loop_vars: frozenset[str]) -> bool:
    """``i == k`` (alone or in an ``and``) with ``i`` bound by the innermost ``for`` and ``k`` not using it: true on
    at most one iteration."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    for p in parts:
        if isinstance(p, ast.Compare) and len(p.ops) == 1 and isinstance(p.ops[0], (ast.Eq, ast.Is)):
            sides = (p.left, p.comparators[0])
            for a, b in (sides, sides[::-1]):
                if (
                    isinstance(a, ast.Name)
                    and a.id in loop_vars
                    and not any(isinstance(n, ast.Name) and n.id in loop_vars for n in walk(b))
                ):
                    return True
    return False


# Ops whose index argument must be int64 and lie inside the indexed dimension.
_INDEX_OPS = frozenset(
    {
        "scatter",
        "scatter_",
        "scatter_add",
        "scatter_add_",
        "scatter_reduce",
        "scatter_reduce_",
        "gather",
        "index_select",
        "index_add",
        "index_add_",
        "index_copy",
        "index_copy_",
        "index_fill",
        "index_fill_",
        "take_along_dim",
    }
)


_BOOLEAN_METHODS = frozenset({"ne", "eq", "lt", "le", "gt", "ge", "bool", "isnan", "isinf", "isfinite", "logical_not"})


def _is_boolean(node: ast.expr) -> bool:
    """An expression whose values are booleans: a comparison, ``x.ne(0)``-style calls, ``~``/``&``/``|`` of
    those (names are not read: ``attention_mask`` may hold anything)."""
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)):
        return _is_boolean(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return _is_boolean(node.left) and _is_boolean(node.right)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _BOOLEAN_METHODS


def _counts_booleans(node: ast.expr) -> bool:
    """``b.sum(...)``, ``torch.sum(b, ...)`` or ``torch.count_nonzero(b)`` of a boolean ``b``: at most a size."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    f = node.func
    if f.attr in ("sum", "count_nonzero") and _root_name(f.value) == "torch" and isinstance(f.value, ast.Name):
        return bool(node.args) and _is_boolean(node.args[0])
    return f.attr in ("sum", "count_nonzero") and _is_boolean(f.value)


def _extent_of(node: ast.expr) -> str | None:
    """The name whose maximum an extent is: ``n``, ``n.max()``, ``n.amax()``, ``n.max().item()``, ``int(...)``."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Call) and not node.args and isinstance(node.func, ast.Attribute):
            if node.func.attr not in ("max", "amax", "item"):
                return None
            node = node.func.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "int" and node.args:
            node = node.args[0]
        else:
            return None


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _targets(node: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return node.targets if isinstance(node, ast.Assign) else [node.target]


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


# Defs that build a module (run once, on the host, before any forward): float64 there that is converted before it is
# stored never reaches the compiled graph.
SETUP_DEFS = frozenset({"__init__", "reset_parameters", "_reset_parameters"})
# Methods that give a tensor another dtype (``.to`` only when it names no float64 itself).
_CONVERTS = frozenset({"float", "half", "bfloat16", "to", "type"})


def _is_float64(n: ast.AST) -> bool:
    if isinstance(n, ast.Attribute) and n.attr in ("float64", "double") and isinstance(n.value, ast.Name):
        return n.value.id == "torch"
    return isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "double"


def _converted(n: ast.AST, parent: dict[int, ast.AST]) -> bool:
    """Whether ``n``'s value passes through a dtype conversion (``.float()``, ``.to(torch.float32)``) within its
    statement."""
    cur = n
    while not isinstance(cur, ast.stmt):
        p = parent.get(id(cur))
        if p is None:
            return False
        if (
            isinstance(p, ast.Attribute)
            and p.value is cur
            and p.attr in _CONVERTS
            and isinstance(call := parent.get(id(p)), ast.Call)
            and not any(_is_float64(x) for a in (*call.args, *(k.value for k in call.keywords)) for x in walk(a))
        ):
            return True
        cur = p
    return False


def host_setup_float64(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[int]:
    """Lines of float64 in a module-building def (``SETUP_DEFS``) whose value is converted before it is kept: in
    the same statement (``torch.log(torch.arange(1, 17, dtype=torch.float64)).float()``), or assigned to a local
    every read of which is converted (``A = torch.arange(..., dtype=torch.float64)`` then ``torch.log(A).float()``).
    A float64 value stored as it is (a buffer, a parameter) stays a finding: the forward computes in it."""
    if fn.name not in SETUP_DEFS:
        return frozenset()
    parent = {id(c): p for p in walk(fn) for c in ast.iter_child_nodes(p)}
    nodes = list(walk(fn))
    out: set[int] = set()
    for n in nodes:
        if not _is_float64(n):
            continue
        stmt: ast.AST = n
        while not isinstance(stmt, ast.stmt) and id(stmt) in parent:
            stmt = parent[id(stmt)]
        if _converted(n, parent):
            out.add(getattr(n, "lineno", 0))
            continue
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            reads = [x for x in nodes if isinstance(x, ast.Name) and x.id == name and isinstance(x.ctx, ast.Load)]
            stores = [x for x in nodes if isinstance(x, ast.Name) and x.id == name and not isinstance(x.ctx, ast.Load)]
            if reads and len(stores) == 1 and all(_converted(r, parent) for r in reads):
                out.add(getattr(n, "lineno", 0))
    return frozenset(out)


def grown_cache(node: ast.Assign, fn: ast.FunctionDef | ast.AsyncFunctionDef | None) -> bool:
    """``self.k_cache = torch.cat([self.k_cache, k], dim=2)`` on one line, its target naming a cache or past states
    and living beyond the call (an attribute, an entry of a container such as ``cache[module]`` in a forward hook,
    or a parameter of ``fn`` handed in and grown): a KV cache grown each call, a new shape every decode step; a
    trailing ``.detach()``/``.contiguous()`` changes nothing. A local built in the def (a padded copy of a fixed
    buffer) grows nothing."""
    v = node.value
    while (
        isinstance(v, ast.Call)
        and isinstance(v.func, ast.Attribute)
        and v.func.attr in ("detach", "contiguous")
        and not v.args
    ):
        v = v.func.value
    if (
        len(node.targets) != 1
        or not isinstance(v, ast.Call)
        or v.lineno != node.lineno
        or not (isinstance(v.func, ast.Attribute) and v.func.attr == "cat")
        or not (isinstance(v.func.value, ast.Name) and v.func.value.id == "torch")
        or not v.args
        or not isinstance(v.args[0], (ast.List, ast.Tuple))
    ):
        return False
    target = node.targets[0]
    base = target.value if isinstance(target, ast.Subscript) else target
    last = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else ""
    named = "cache" in last.lower() or "past" in last.lower()
    params = {x.arg for x in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)} if fn is not None else set()
    kept = isinstance(target, (ast.Attribute, ast.Subscript)) or (isinstance(target, ast.Name) and target.id in params)
    if named and kept and any(ast.unparse(e) == ast.unparse(target) for e in v.args[0].elts):
        return True
    if fn is not None and _past_tuple_cat(v.args[0].elts, fn):
        return True
    return fn is not None and _state_round_trip(v.args[0].elts, fn)


def _past_tuple_cat(elts: list[ast.expr], fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``key_states = torch.cat([past_key_value[0], key_states], dim=2)`` (the legacy Hugging Face cache: a tuple
    handed in as a parameter named for past states, its entry concatenated with this step's keys and handed back):
    the first element indexes a parameter naming past states or a cache, the second is this step's tensor."""
    if len(elts) != 2 or not isinstance(elts[0], ast.Subscript) or not isinstance(elts[0].value, ast.Name):
        return False
    name = elts[0].value.id
    params = {x.arg for x in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    return name in params and ("past" in name.lower() or "cache" in name.lower()) and isinstance(elts[1], ast.Name)


def _state_round_trip(elts: list[ast.expr], fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``pk = self._streaming_state['past_keys']`` ... ``nk = torch.cat([pk, k])`` ...
    ``self._streaming_state['past_keys'] = nk[:, offset:]`` (audiocraft's streaming attention): a cache read from
    the module's state by a key naming past keys or a cache, concatenated, and written back under that key."""
    reads: dict[str, str] = {}
    writes: set[str] = set()
    for n in walk(fn):
        if not (isinstance(n, ast.Assign) and len(n.targets) == 1):
            continue
        t, value = n.targets[0], n.value
        if isinstance(t, ast.Name) and isinstance(value, (ast.Subscript, ast.Attribute)):
            reads[t.id] = ast.unparse(value)
        elif isinstance(t, (ast.Subscript, ast.Attribute)):
            writes.add(ast.unparse(t))
    for e in elts:
        source = reads.get(e.id) if isinstance(e, ast.Name) else None
        if source is not None and source in writes and ("past" in source.lower() or "cache" in source.lower()):
            return True
    return False
