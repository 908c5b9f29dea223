"""One item per extension when a tree builds it two ways (issue 27: "the same kernel counted twice").

Pointnet2_PyTorch imports the extension its ``setup.py`` builds and, when that fails, compiles the same sources
just in time:

    try:
        import pointnet2_ops._ext as _ext                # setup.py: CUDAExtension("pointnet2_ops._ext", ...)
    except ImportError:
        _ext = load("_ext", sources=_ext_sources, ...)  # the same sources, by glob

The ``load()`` in that handler, named as the imported module's last part, is the same extension: its lines (the
build, the ``cpp_extension`` import of the handler, every ``_ext.f(...)`` call) join the built extension's item. Its
CUDA sources, named by a glob that the scan does not expand, join it too when they lie below the folder of the
``setup.py`` that builds it and that folder builds no other extension (never the tree's root, where every source
lies).
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable

from accelpilot.porting.findings import Finding

_RULE = "cpp-extension-cuda"
_IMPORTED = "imports the built extension "


def _handler_spans(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """(try body first line, last line, handler first line, last line) of each ``try`` with an ImportError (or
    bare, or ``Exception``) handler."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try) or not node.body:
            continue
        for h in node.handlers:
            names = (
                {ast.unparse(t) for t in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type])}
                if h.type
                else set()
            )
            if h.type is None or names & {"ImportError", "ModuleNotFoundError", "Exception"}:
                out.append((node.body[0].lineno, node.body[-1].end_lineno or 0, h.lineno, h.end_lineno or h.lineno))
    return out


def join_fallback_builds(findings: list[Finding], read: Callable[[str], str | None]) -> None:
    """Give a just-in-time fallback build, and the CUDA sources under its builder's folder, the subject of the
    extension they build (in place)."""
    loads = [f for f in findings if f.rule == _RULE and f.message.startswith("load(") and f.subject and f.file]
    imports = [f for f in findings if f.rule == _RULE and f.message.startswith(_IMPORTED) and f.subject and f.file]
    for load in loads:
        same = [i for i in imports if i.file == load.file and (i.subject or "").rpartition(".")[2] == load.subject]
        if not same:
            continue
        try:
            tree = ast.parse(read(load.file or "") or "")
        except (SyntaxError, ValueError):
            continue
        built, name, file = same[0], load.subject, load.file
        for body_first, body_last, first, last in _handler_spans(tree):
            if not (body_first <= (built.line or 0) <= body_last and first <= (load.line or 0) <= last):
                continue
            for g in findings:
                handler_line = g.file == file and first <= (g.line or 0) <= last and g.rule == _RULE
                own = g.subject == name and g.defined_in in (None, file) and g.file == file
                if handler_line or own:
                    g.subject, g.defined_in = built.subject, built.defined_in
    _join_sources_below(findings)


def _join_sources_below(findings: list[Finding]) -> None:
    """CUDA sources no build named, below the folder (not the root) of the one ``setup.py`` extension built there."""
    builds: dict[str, set[tuple[str, str]]] = {}
    for f in findings:
        if f.rule == _RULE and f.subject and f.file and f.defined_in is None and f.file.endswith("setup.py"):
            folder = posixpath.dirname(f.file)
            if folder:
                builds.setdefault(folder, set()).add((f.file, f.subject))
    for folder, exts in builds.items():
        if len(exts) != 1:
            continue
        (where, subject) = next(iter(exts))
        for f in findings:
            if f.rule == "cuda-source-file" and f.subject is None and (f.file or "").startswith(folder + "/"):
                f.defined_in, f.subject = where, subject
