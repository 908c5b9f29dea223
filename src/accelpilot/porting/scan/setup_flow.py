"""float64 that only builds the module: where a float64 value goes within the defs that run once on the host.

A diffusion schedule ``betas = cosine_schedule(T)`` computed in float64 by a module-level helper, derived into a
dozen locals in ``__init__`` and stored through ``register_buffer = lambda name, val: self.register_buffer(name,
val.to(torch.float32))`` never reaches the device as float64: the work is host-side setup, cast before it is kept.
``visit_base._setup_only`` reads the one-statement case while visiting; this pass reads the flow of the whole def
(``Flow``) and the helpers such a def calls (``setup_float64_lines``). A value stored as it is (``self.x = ...``,
``self.register_buffer(..., betas)``, a method of ``self`` handed it), returned from ``__init__``, or a helper also
called from a forward, a lambda kept for later or another def keeps its finding. Read per file: a helper another
file imports and calls elsewhere is not seen (as for ``reach.FileReach.init_only``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from accelpilot.porting.scan.dataflow import SETUP_DEFS
from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.post_kit import _tree

_Fn = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# Facts of a tensor that carry none of its values (``timesteps, = betas.shape``).
_META_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "layout"})
_META_METHODS = frozenset({"size", "dim", "numel", "nelement", "element_size", "item", "tolist", "is_floating_point"})
# Builtins whose result is a Python value or nothing, never the tensor (``int(timesteps)``, ``len(betas)``).
_HOST_BUILTINS = frozenset({"len", "int", "float", "bool", "isinstance", "str", "repr", "print", "range", "type"})
_NARROW = frozenset({"float32", "float", "float16", "half", "bfloat16"})
_DEPTH = 3  # local lambdas/defs followed inside each other


def float64_nodes(fn: ast.AST) -> Iterator[ast.expr]:
    """``torch.float64``/``torch.double`` (under any import name) and ``.double()`` calls in ``fn``'s own code."""
    for n in own_nodes(fn):
        if isinstance(n, ast.expr) and _is_float64(n):
            yield n


def _is_float64(n: ast.AST) -> bool:
    if isinstance(n, ast.Attribute):
        return n.attr in ("float64", "double") and isinstance(n.value, ast.Name)
    return isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "double" and not n.args


def own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``fn``'s body, not those of the defs, lambdas and classes nested in it (they are yielded)."""
    todo = list(fn.body) if isinstance(fn.body, list) else [fn.body]  # type: ignore[attr-defined]
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))


def _narrows(call: ast.Call) -> bool:
    """``x.float()``/``.half()``/``.bfloat16()``, or ``.to``/``.type`` naming a float type narrower than float64."""
    f = call.func
    if not isinstance(f, ast.Attribute):
        return False
    if f.attr in ("float", "half", "bfloat16"):
        return not call.args and not call.keywords
    if f.attr not in ("to", "type"):
        return False
    dtypes = [*call.args, *(k.value for k in call.keywords if k.arg == "dtype")]
    return any(isinstance(d, ast.Attribute) and d.attr in _NARROW and isinstance(d.value, ast.Name) for d in dtypes)


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node


def _params(fn: _Fn) -> list[str]:
    a = fn.args
    return [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p))]


class Flow:
    """The flow of seeded values through one def: ``leaks`` when one is kept beyond the call (stored on an object
    the def did not make, handed to a method of such an object or to a call with ``self``, ``setattr``), ``returns``
    when one is returned or yielded. Flow-insensitive: a local that ever holds a seeded value holds it everywhere."""

    def __init__(
        self,
        fn: _Fn,
        is_seed: Callable[[ast.AST], bool],
        seeded: frozenset[str] = frozenset(),
        objects: frozenset[str] = frozenset(),
        depth: int = 0,
    ) -> None:
        self.fn, self.is_seed, self.objects, self.depth = fn, is_seed, objects, depth
        self.nodes = list(own_nodes(fn))
        self.params = set(_params(fn))
        stored = {n.id for n in self.nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        kept = {g for n in self.nodes if isinstance(n, (ast.Global, ast.Nonlocal)) for g in n.names}
        self.locals = stored - self.params - kept  # made here: mutating one keeps nothing
        self.local_fns: dict[str, _Fn] = {}
        for n in self.nodes:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.local_fns[n.name] = n
            elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Lambda):
                for t in n.targets:
                    if isinstance(t, ast.Name):
                        self.local_fns[t.id] = n.value
        self._callees: dict[tuple[int, frozenset[str]], Flow] = {}
        self.tainted = set(seeded)
        self.leaks = False
        self.returns = False
        self._spread()
        self._sinks()

    def carries(self, e: ast.AST | None) -> bool:
        """Whether ``e``'s value may hold a seeded value."""
        if e is None or isinstance(e, (ast.Constant, ast.Lambda, ast.Compare, ast.JoinedStr)):
            return False
        if self.is_seed(e):
            return True
        if isinstance(e, ast.Name):
            return e.id in self.tainted
        if isinstance(e, ast.Attribute):
            return e.attr not in _META_ATTRS and self.carries(e.value)
        if isinstance(e, ast.Subscript):
            return self.carries(e.value)
        if isinstance(e, ast.Call):
            return self._call_carries(e)
        return any(self.carries(c) for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr))

    def _call_carries(self, call: ast.Call) -> bool:
        f = call.func
        args = [*call.args, *(k.value for k in call.keywords)]
        if isinstance(f, ast.Attribute):
            if _narrows(call) or f.attr in _META_METHODS:
                return False
            return self.carries(f.value) or any(self.carries(a) for a in args)
        if isinstance(f, ast.Name):
            if f.id in _HOST_BUILTINS:
                return False
            callee = self._callee(call)
            if callee is not None:
                return callee.returns
        return any(self.carries(a) for a in args)

    def _callee(self, call: ast.Call) -> Flow | None:
        """The flow through a local lambda/def this call hands seeded values to (None: not one, or none handed)."""
        f = call.func
        fn = self.local_fns.get(f.id) if isinstance(f, ast.Name) else None
        if fn is None:
            return None
        names = _params(fn)
        seeded = {names[i] for i, a in enumerate(call.args) if i < len(names) and self.carries(a)}
        seeded |= {k.arg for k in call.keywords if k.arg in names and self.carries(k.value)}
        if any(isinstance(a, ast.Starred) and self.carries(a) for a in call.args) or any(
            k.arg is None and self.carries(k.value) for k in call.keywords
        ):
            seeded = set(names)
        if not seeded:
            return None
        if self.depth >= _DEPTH:
            return _Opaque()
        key = (id(fn), frozenset(seeded))
        if key not in self._callees:  # asked again on every round of ``_spread``
            self._callees[key] = Flow(fn, self.is_seed, key[1], self.objects | self.params, self.depth + 1)
        return self._callees[key]

    def _spread(self) -> None:
        """Taint every local that some assignment, loop or in-place call gives a seeded value, to a fixed point."""
        changed = True
        while changed:
            before = len(self.tainted)
            for n in self.nodes:
                for targets, value in _writes(n):
                    if not self.carries(value):
                        continue
                    for t in targets:
                        for name in _names_of(t):
                            self.tainted.add(name)
                        root = _root(t)
                        if not isinstance(t, ast.Name) and isinstance(root, ast.Name) and root.id in self.locals:
                            self.tainted.add(root.id)  # ``buffers[k] = v`` on a local made here
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                    root = _root(n.func.value)
                    if isinstance(root, ast.Name) and root.id in self.locals and self._hands_on(n):
                        self.tainted.add(root.id)  # ``parts.append(v)``
            changed = len(self.tainted) != before

    def _hands_on(self, call: ast.Call) -> bool:
        return any(self.carries(a) for a in (*call.args, *(k.value for k in call.keywords)))

    def _sinks(self) -> None:
        if isinstance(self.fn, ast.Lambda) and self.carries(self.fn.body):
            self.returns = True
        for n in self.nodes:
            if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)) and self.carries(n.value):
                self.returns = True
            for targets, value in _writes(n):
                if self.carries(value) and any(not self._kept_here(t) for t in targets):
                    self.leaks = True
            if isinstance(n, ast.Call) and self._hands_on(n) and self._call_keeps(n):
                self.leaks = True

    def _kept_here(self, target: ast.expr) -> bool:
        """Writing to ``target`` keeps the value only within this call (a local, or an object made here)."""
        if isinstance(target, (ast.Tuple, ast.List)):
            return all(self._kept_here(e) for e in target.elts)
        root = _root(target)
        if isinstance(target, (ast.Name, ast.Starred)) and isinstance(root, ast.Name):
            return root.id in self.locals or root.id in self.params
        return isinstance(root, ast.Name) and (root.id in self.locals or root.id in self.tainted)

    def _call_keeps(self, call: ast.Call) -> bool:
        """A call handed a seeded value that may keep it: a method of an object this def did not make (a parameter,
        ``self`` seen from a lambda, a module-level variable: ``self.register_buffer``), ``setattr``, a call also
        handed ``self``, or a local lambda/def that does. A module's function (``torch.sqrt``) keeps nothing."""
        f = call.func
        args = [*call.args, *(k.value for k in call.keywords)]
        if any(isinstance(a, ast.Name) and a.id == "self" for a in args):
            return True
        if isinstance(f, ast.Name):
            if f.id == "setattr":
                return True
            callee = self._callee(call)
            return callee is not None and callee.leaks
        if isinstance(f, ast.Attribute) and not _narrows(call):
            root = _root(f.value)
            if isinstance(root, ast.Call) and isinstance(root.func, ast.Name) and root.func.id == "super":
                return True  # ``super().__init__(betas)``: the base class keeps it
            objects = self.params | self.objects | {"self", "cls"}
            return isinstance(root, ast.Name) and root.id in objects and root.id not in self.tainted
        return False


class _Opaque(Flow):
    """A callee past ``_DEPTH``: assumed to keep and return what it is handed."""

    def __init__(self) -> None:
        self.leaks = self.returns = True


def _writes(n: ast.AST) -> list[tuple[list[ast.expr], ast.expr | None]]:
    """(targets, value) of an assignment, augmented or annotated assignment, walrus or ``for`` loop."""
    if isinstance(n, ast.Assign):
        return [(n.targets, n.value)]
    if isinstance(n, (ast.AugAssign, ast.AnnAssign)):
        return [([n.target], n.value)]
    if isinstance(n, ast.NamedExpr):
        return [([n.target], n.value)]
    if isinstance(n, (ast.For, ast.AsyncFor)):
        return [([n.target], n.iter)]
    return []


def _names_of(t: ast.expr) -> list[str]:
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, ast.Starred):
        return _names_of(t.value)
    if isinstance(t, (ast.Tuple, ast.List)):
        return [x for e in t.elts for x in _names_of(e)]
    return []


class _File:
    """One file read once for the helper checks: every node with its parent and innermost def, lambda or class
    (None at module level), the defs by name, and the names the module binds by assignment (a registry, a cache:
    objects, unlike its imports and defs)."""

    def __init__(self, tree: ast.Module) -> None:
        self.nodes: list[ast.AST] = []
        self.parent: dict[int, ast.AST] = {}
        self.scope: dict[int, ast.AST | None] = {}
        self.defs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        todo: list[tuple[ast.AST, ast.AST | None]] = [(tree, None)]
        while todo:
            n, scope = todo.pop()
            self.nodes.append(n)
            self.scope[id(n)] = scope
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.defs.setdefault(n.name, []).append(n)
            inner = n if isinstance(n, _SCOPES) else scope
            for c in ast.iter_child_nodes(n):
                self.parent[id(c)] = n
                todo.append((c, inner))
        self.objects = frozenset(n for st in tree.body for t, _ in _writes(st) for e in t for n in _names_of(e))


def _setup_only_helper(f: _File, helper: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``helper`` (a def of the module or a method, the only def of its name in the file) is called only from
    module-building defs (``SETUP_DEFS``), by name or through a local alias there (``fn = cosine_schedule`` then
    ``fn(T)``), and in each such def what it returns reaches no kept state (``Flow``)."""
    name = helper.name
    if len(f.defs.get(name, ())) != 1:
        return False
    method = isinstance(f.scope.get(id(helper)), ast.ClassDef)
    callers: dict[int, tuple[ast.FunctionDef | ast.AsyncFunctionDef, set[str]]] = {}
    for n in f.nodes:
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
            if method:
                return False
        elif isinstance(n, ast.Attribute) and n.attr == name:
            if not (method and isinstance(n.value, ast.Name) and n.value.id == "self"):
                return False
        else:
            continue
        caller = f.scope.get(id(n))
        if not isinstance(caller, (ast.FunctionDef, ast.AsyncFunctionDef)) or caller.name not in SETUP_DEFS:
            return False
        up = f.parent.get(id(n))
        aliases = callers.setdefault(id(caller), (caller, set()))[1]
        if isinstance(up, ast.Call) and up.func is n:
            continue
        if isinstance(up, ast.Assign) and up.value is n and all(isinstance(t, ast.Name) for t in up.targets):
            aliases.update(t.id for t in up.targets if isinstance(t, ast.Name))
            continue
        return False  # handed on, kept or stored: it may be called from anywhere
    if not callers:
        return False  # never called here: another file may call it
    for caller, aliases in callers.values():
        for n in own_nodes(caller):
            if isinstance(n, ast.Name) and n.id in aliases and isinstance(n.ctx, ast.Load):
                up = f.parent.get(id(n))
                if not (isinstance(up, ast.Call) and up.func is n):
                    return False  # the alias itself handed on or kept

        def seed(n: ast.AST, aliases: set[str] = aliases) -> bool:
            if not isinstance(n, ast.Call):
                return False
            fn = n.func
            if isinstance(fn, ast.Name):
                return fn.id in aliases or (not method and fn.id == name)
            return method and isinstance(fn, ast.Attribute) and fn.attr == name

        flow = Flow(caller, seed, objects=f.objects)
        if flow.leaks or flow.returns:
            return False
    return True


def _ids_in(ids: set[int]) -> Callable[[ast.AST], bool]:
    return lambda n: id(n) in ids


def setup_float64_lines(tree: ast.Module, lines: set[int]) -> set[int]:
    """Those of ``lines`` (float64 findings) whose float64 only builds the module: in a ``SETUP_DEFS`` def and kept
    only after a cast to a narrower float (through locals, derived values and local lambdas), or in a helper that
    only such defs call (``_setup_only_helper``) and that itself keeps nothing (what it returns is followed)."""
    f = _File(tree)
    defs = [d for ds in f.defs.values() for d in ds]
    out: set[int] = set()
    helpers: dict[int, bool] = {}
    for ln in lines:
        holders = [d for d in defs if d.lineno <= ln <= (d.end_lineno or d.lineno)]
        if not holders:
            continue
        fn = max(holders, key=lambda d: d.lineno)
        seeds = {id(n) for n in float64_nodes(fn) if n.lineno <= ln <= (n.end_lineno or n.lineno)}
        if not seeds:
            continue
        flow = Flow(fn, _ids_in(seeds), objects=f.objects)
        if flow.leaks:
            continue
        if fn.name in SETUP_DEFS:
            if not flow.returns:
                out.add(ln)
            continue
        if id(fn) not in helpers:
            helpers[id(fn)] = _setup_only_helper(f, fn)
        if helpers[id(fn)]:
            out.add(ln)
    return out


def host_setup_pass(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """float64 findings still on the main path whose float64 only builds the module (``setup_float64_lines``)
    become ``host-setup``; the file is parsed only when there is one."""
    lines = {ln for r, ln, _, _, _, ctx in found if r == "float64-dtype" and ctx is None and ln is not None}
    if not lines:
        return found
    try:
        setup = setup_float64_lines(_tree(data), lines)
    except (SyntaxError, ValueError, RecursionError):
        return found
    out: list[RawFinding] = []
    for r, ln, msg, snip, sub, ctx in found:
        if r == "float64-dtype" and ctx is None and ln in setup:
            ctx = "host-setup"
        out.append((r, ln, msg, snip, sub, ctx))
    return out
