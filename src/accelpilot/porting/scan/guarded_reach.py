"""A runtime library reached only through an import whose failure the default path catches (issue 27: "blocking
means it stops the default path").

A module-level ``from flash_attn import flash_attn_func`` blocks where the default path imports its module: the code
does not even import without it (``findings.RUNTIME_REASON``). When every way from the entry points to that module
passes through an import inside ``try: ... except ImportError:`` (llm-awq's ``pre_quant.py``: ``try: from
tinychat.models import LlavaLlamaForCausalLM`` / ``except ImportError: pass``), the ``ImportError`` that the missing
library raises is caught there, and the default path runs on without that code: the library blocks only when that
code is used, as the guarded import's own branch says. Such lines become warnings naming the guarded import.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

from accelpilot.porting.findings import RUNTIME_REASON, Finding
from accelpilot.porting.scan.default_path import reached
from accelpilot.porting.scan.families import Modules, _module_names, imports_of, resolve_imports

# Handlers that catch a failed import: ``ImportError`` (``ModuleNotFoundError`` is one), ``Exception``, bare.
_CATCHES = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type
    if kinds is None:
        return True
    names = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    return any(isinstance(n, ast.Name) and n.id in _CATCHES for n in names)


def _raw(imp: ast.Import | ast.ImportFrom) -> list[tuple[str | None, str, bool]]:
    """One import statement in ``families.raw_imports``' shape."""
    if isinstance(imp, ast.ImportFrom):
        return [("." * imp.level + (imp.module or ""), ", ".join(a.name for a in imp.names), False)]
    return [(None, ", ".join(a.name for a in imp.names), False)]


def _guarded_imports(rel: str, data: bytes, mods: Modules) -> tuple[dict[str, int], set[str]]:
    """(in-tree file -> line of an import of it inside a ``try`` whose handler catches a failed import; the in-tree
    files the source imports outside any such ``try``)."""
    if b"try:" not in data or b"except" not in data:
        return {}, set()
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return {}, set()
    inside: set[int] = set()
    guarded: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_catches_import_error(h) for h in node.handlers):
            for stmt in node.body:
                for imp in ast.walk(stmt):
                    if isinstance(imp, (ast.Import, ast.ImportFrom)):
                        inside.add(id(imp))
                        for target in resolve_imports(rel, _raw(imp), mods)[0]:
                            guarded.setdefault(target, imp.lineno)
    unguarded: set[str] = set()
    for imp in ast.walk(tree):
        if isinstance(imp, (ast.Import, ast.ImportFrom)) and id(imp) not in inside:
            unguarded |= resolve_imports(rel, _raw(imp), mods)[0]
    return guarded, unguarded


def mark_guarded_runtime_imports(
    findings: list[Finding], sources: Iterable[tuple[str, bytes]], rels: list[str], roots: set[str]
) -> None:
    """Blocking runtime imports (``RUNTIME_REASON``) in modules that the default path (``roots``: the entry points
    and the package ``__init__`` files an import runs) reaches only through an ``ImportError``-guarded import
    become warnings that name that import."""
    candidates = {f.file for f in findings if f.reason == RUNTIME_REASON and f.severity == "blocking" and f.file}
    if not candidates or not roots:
        return
    mods = _module_names(rels, roots)
    every: dict[str, set[str]] = {}
    guarded: dict[str, dict[str, int]] = {}
    open_graph: dict[str, set[str]] = {}
    for rel, data in sources:
        every[rel] = imports_of(rel, data, mods) - {rel}
        guarded[rel], unguarded = _guarded_imports(rel, data, mods)
        # an edge stays open where the file also imports the target outside any guard (that import fails first)
        open_graph[rel] = {t for t in every[rel] if t not in guarded[rel] or t in unguarded}
    reach_all = reached(roots, every, set())
    reach_open = reached(roots, open_graph, set())
    behind = (candidates & reach_all) - reach_open
    apart = candidates - reach_all
    for f in findings:
        if f.reason != RUNTIME_REASON or f.severity != "blocking":
            continue
        if f.file in apart:
            f.severity = "warning"
            f.reason = (
                f"blocks when {f.file} is imported: no module the default path imports reaches it "
                f"({f.message} at {f.file}:{f.line})"
            )
            continue
        if f.file not in behind:
            continue
        site = _guard_site(f.file, reach_open, every, guarded)
        library = (f.subject or f.message.split(" import ")[0].split()[-1]).split(".")[0]
        f.severity = "warning"
        f.reason = (
            f"reached only through an import inside `try: ... except ImportError` ({site}): its failure is caught "
            f"there, so the default path runs without {library}; it blocks when that code is used"
        )


def _guard_site(
    target: str, reach_open: set[str], every: Mapping[str, set[str]], guarded: Mapping[str, dict[str, int]]
) -> str:
    """``file:line`` of a guarded import, in a file the default path reaches openly, that leads to ``target``."""
    for rel in sorted(reach_open):
        for dest, line in sorted(guarded.get(rel, {}).items()):
            if target in reached({dest}, every, set()):
                return f"{rel}:{line}"
    return "a guarded import"
