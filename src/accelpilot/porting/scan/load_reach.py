"""Checkpoint loads an entry point reaches (split from ``call_reach.py``): a ``checkpoint-weights-only`` load in a
module-level function the entry point calls by name outside any ``if``, or down a chain of such calls
(``deep_reach``), on a line that always runs when the function does, blocks as a load on the entry point's own line
does."""

from __future__ import annotations

import ast
from collections.abc import Callable

from accelpilot.porting.findings import Finding
from accelpilot.porting.scan.call_reach import _FUNC, _cached, _calls, _parsed, _targets, _unguarded
from accelpilot.porting.scan.deep_reach import reached
from accelpilot.porting.scan.families import _module_names

_LOAD_PENDING = "blocks when that checkpoint is loaded here"


def mark_called_loads(
    findings: list[Finding], entries: dict[str, str], read: Callable[[str], bytes | None], rels: list[str]
) -> None:
    """A ``checkpoint-weights-only`` load in a module-level function an entry point calls by name outside any ``if``
    (LaMa's ``predict.py`` calling ``load_checkpoint`` of ``saicinpainting/training/trainers/__init__.py``, whose
    ``torch.load`` reads a Lightning checkpoint), on a line that runs whenever the function does (``_always_runs``):
    blocking, as a load on the entry point's own line is; so is one deeper down a chain of such calls
    (``deep_reach``, every call outside any ``if``)."""
    todo = [
        f
        for f in findings
        if f.rule == "checkpoint-weights-only"
        and f.severity != "blocking"
        and f.porting
        and f.context is None
        and f.file not in entries
        and (f.reason or "").startswith(_LOAD_PENDING)
    ]
    if not todo or not entries:
        return
    mods = _module_names(rels, entries)
    holders: dict[int, ast.FunctionDef | ast.AsyncFunctionDef | None] = {}
    for f in todo:
        tree = _parsed(read(f.file or ""))
        holders[id(f)] = next(
            (
                n
                for n in (tree.body if tree is not None else [])
                if isinstance(n, _FUNC)
                and n.lineno <= (f.line or 0) <= (n.end_lineno or n.lineno)
                and _always_runs(n.body, f.line or 0)
            ),
            None,
        )
    parse = _cached(read)
    for entry in sorted(entries):
        tree = parse(entry)
        if tree is None:
            continue
        funcs, modules = _targets(entry, tree, mods)
        firm = _calls(tree, funcs, modules, firm=True)
        deep = reached(_calls(tree, funcs, modules), firm, entry, parse, mods, _unguarded)
        for f in todo:
            fn = holders[id(f)]
            if fn is None or f.severity == "blocking":
                continue
            key = (f.file or "", fn.name)
            if key in firm:
                how = f"{fn.name}() of {f.file} at {entry}:{firm[key]}"
            elif key in deep and deep[key].firm:
                how = deep[key].said()
            else:
                continue
            f.severity = "blocking"
            f.reason = (
                f"entry point {entry} ({entries[entry]}) calls {how}, which loads it: torch >= 2.6 (as TorchNeuron's) "
                f"loads with weights_only=True and raises UnpicklingError at {f.file}:{f.line}"
            )


def _always_runs(body: list[ast.stmt], line: int) -> bool:
    """``line`` is in a statement of ``body`` that runs whenever the function does: not under an ``if``, a ``try``
    or a loop (a resume under ``if args.resume:``, DiT's ``find_model`` loading only a path it was not given by
    name), only inside ``with`` blocks."""
    for st in body:
        if not st.lineno <= line <= (st.end_lineno or st.lineno):
            continue
        if isinstance(st, (ast.With, ast.AsyncWith)):
            return _always_runs(st.body, line)
        return not isinstance(st, (ast.If, ast.Try, ast.For, ast.AsyncFor, ast.While, *_FUNC, ast.ClassDef))
    return False
