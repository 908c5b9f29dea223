"""Functions an entry point reaches more than one call deep (issue 27: "blocking means it stops the default path").

``call_reach.py`` reads the functions an entry point calls by name. The work of a larger code base sits further
down: OpenNMT-py's ``train.py`` calls ``train(opt)`` of ``onmt/bin/train.py``, which calls ``single_main`` of
``onmt/train_single.py``, whose ``configure_process`` runs ``torch.cuda.set_device(device_id)`` with no guard. This
module follows such chains from the functions the entry point calls, up to ``MAX_DEPTH`` calls from the entry
point, through module-level functions only: a call in a reached function's body that is not under a CUDA test, not
in a ``try`` with a handler and not in a nested def (``call_reach._unguarded``), to a module-level function of the
same file or of an in-tree module the file imports (at module level or inside the function; absolute or relative).
A class is followed (its ``__init__`` and ``forward``) only where every call on the way is outside any ``if``.

Each reached function keeps its chain of calls (file, line, callee) so that a finding can name the path that
reaches it, and whether the chain is firm: every call on it outside any ``if`` (a load of a checkpoint in the
function then runs whenever the entry point does).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from accelpilot.porting.scan.families import _resolve
from accelpilot.porting.scan.launch_reach import sets_up_group

# Calls from the entry point: the entry point's own call is the first; three reach a function's function's function.
MAX_DEPTH = 3
_FUNC = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Hop:
    """One call on a chain: ``caller`` calls ``function`` of ``callee`` at ``caller:line``."""

    caller: str
    line: int
    callee: str
    function: str


@dataclass(frozen=True)
class Chain:
    hops: tuple[Hop, ...]
    firm: bool

    def said(self) -> str:
        """``f() of a.py at entry.py:10, which calls g() of b.py at a.py:20``."""
        return ", which calls ".join(f"{h.function}() of {h.callee} at {h.caller}:{h.line}" for h in self.hops)


def reached(
    first: Mapping[tuple[str, str], int],
    firm: Mapping[tuple[str, str], int],
    entry: str,
    parse: Callable[[str], ast.Module | None],
    mods: Mapping[str, str],
    unguarded: Callable[[list[ast.stmt]], Iterable[ast.AST]],
) -> dict[tuple[str, str], Chain]:
    """(file, function) -> the chain that reaches it, for the functions reached two or more calls deep from the
    entry point's calls ``first`` (those of ``firm`` outside any ``if``); ``unguarded`` yields a body's nodes that
    run whatever the device."""
    out: dict[tuple[str, str], Chain] = {}
    seen = set(first)
    module_imports: dict[str, tuple[dict[str, tuple[str, str]], dict[str, str]]] = {}  # per file, read once
    frontier = [  # a firm call of the function, where there is one, is the chain's first hop
        (key, Chain((Hop(entry, firm.get(key, at), key[0], key[1]),), key in firm)) for key, at in sorted(first.items())
    ]
    for _ in range(MAX_DEPTH - 1):
        nxt = []
        for (rel, function), chain in frontier:
            tree = parse(rel)
            fn = module_function(tree, function) if tree is not None else None
            if tree is None or fn is None or sets_up_group(fn):
                continue  # a class (followed no further), or the process group's setup (launch_reach judges it)
            if rel not in module_imports:
                module_imports[rel] = _imports(rel, tree.body, mods)
            callees = _callees(rel, tree, fn, mods, unguarded, module_imports[rel])
            for key, (line, is_firm) in sorted(callees.items()):
                if key in seen:
                    continue
                callee_tree = parse(key[0])
                if callee_tree is None or (
                    module_function(callee_tree, key[1]) is None and not (chain.firm and is_firm)
                ):
                    continue  # a class built under an ``if`` (or not a def at all)
                seen.add(key)
                deeper = Chain((*chain.hops, Hop(rel, line, key[0], key[1])), chain.firm and is_firm)
                out[key] = deeper
                nxt.append((key, deeper))
        frontier = nxt
    return out


def module_function(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The module-level def ``name`` of a source, or None."""
    return next((n for n in tree.body if isinstance(n, _FUNC) and n.name == name), None)


def _callees(
    rel: str,
    tree: ast.Module,
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    mods: Mapping[str, str],
    unguarded: Callable[[list[ast.stmt]], Iterable[ast.AST]],
    at_module_level: tuple[dict[str, tuple[str, str]], dict[str, str]],
) -> dict[tuple[str, str], tuple[int, bool]]:
    """(file, name) -> (first line, outside any ``if``) of the unguarded calls in ``fn`` to a module-level def or
    class of ``rel`` or of an in-tree module ``rel`` imports (``at_module_level``, or inside ``fn``)."""
    own = {n.name for n in tree.body if isinstance(n, (*_FUNC, ast.ClassDef))}
    local = [n for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom))]
    inner_funcs, inner_modules = _imports(rel, local, mods) if local else ({}, {})
    funcs, modules = {**at_module_level[0], **inner_funcs}, {**at_module_level[1], **inner_modules}
    in_if = {id(n) for node in ast.walk(fn) if isinstance(node, ast.If) for n in ast.walk(node) if n is not node}
    out: dict[tuple[str, str], tuple[int, bool]] = {}
    for node in unguarded(fn.body):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        target = None
        if isinstance(f, ast.Name):
            target = funcs.get(f.id) or ((rel, f.id) if f.id in own and f.id != fn.name else None)
        elif isinstance(f, ast.Attribute) and isinstance(f.value, (ast.Name, ast.Attribute)):
            owner = ast.unparse(f.value)
            target = (modules[owner], f.attr) if owner in modules else None
        if target is None:
            continue
        firm = id(node) not in in_if
        line, was_firm = out.get(target, (node.lineno, firm))
        out[target] = (min(line, node.lineno), was_firm or firm)
    return out


def _imports(
    rel: str, statements: Sequence[ast.stmt], mods: Mapping[str, str]
) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """(local name -> (file, name) of ``from m import name``, local name -> file of ``import m`` and ``from p import
    m``) of the in-tree modules the statements import, absolute or relative."""
    funcs: dict[str, tuple[str, str]] = {}
    modules: dict[str, str] = {}
    for node in statements:
        if isinstance(node, ast.Import):
            for a in node.names:
                hit = _one(_resolve(rel, a.name, [], mods))
                if hit is not None:
                    modules[a.asname or a.name] = hit
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            for a in node.names:
                sub = _one(_resolve(rel, f"{base}{'' if base.endswith('.') else '.'}{a.name}", [], mods))
                if sub is not None:
                    modules[a.asname or a.name] = sub
                elif (holder := _one(_resolve(rel, base, [], mods))) is not None:
                    funcs[a.asname or a.name] = (holder, a.name)
    return funcs, modules


def _one(files: set[str]) -> str | None:
    return next(iter(files)) if len(files) == 1 else None
