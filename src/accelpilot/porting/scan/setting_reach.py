"""A module loaded only when a setting asks for it (issue 27: "one behind a flag is 'blocks when FLAG is set'").

GPT-NeoX imports its mixture-of-experts layer, and with it megablocks, only inside the layer that uses it:

    self.num_experts = neox_args.moe_num_experts if layer_number % neox_args.moe_expert_interval == 0 else 1
    if self.num_experts > 1:
        from megatron.model.moe import ParallelDroplessMoE       # moe.py: ``import megablocks.ops`` at its top

With ``moe_num_experts`` 1 by default and in the default command's configs (``settings.py``), ``moe.py`` is never
imported on the default path: what it imports and runs blocks only when the setting is changed. A module counts as
loaded only under settings when every import of it (tests and examples aside) sits under an ``if`` that the default
settings make false, or at the top of a module that is itself loaded only under settings; an entry point, a module
with a ``__main__`` block, or one nothing imports keeps its severity.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping

from accelpilot.porting.findings import Finding, context_of_path
from accelpilot.porting.scan.fallback_reach import _WHEN, _Parsed, _setting_off, _stem, _Tree
from accelpilot.porting.scan.families import _module_names, _resolve
from accelpilot.porting.scan.settings import Settings

_DEPTH = 3  # modules followed up through module-level imports


class _Imports:
    """Each file's import statements, collected once."""

    def __init__(self, tree: _Tree) -> None:
        self.tree = tree
        self._of: dict[str, list[ast.stmt]] = {}

    def of(self, rel: str) -> list[ast.stmt]:
        if rel not in self._of:
            p = self.tree.parsed(rel)
            nodes = p.parent if p is not None else ()
            self._of[rel] = [n for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom))]
        return self._of[rel]


def _imports_of(imports: _Imports, rel: str, mods: dict[str, str]) -> list[tuple[str, ast.stmt, _Parsed]]:
    """Every import statement of module ``rel`` in the tree's other files (tests and examples aside)."""
    tree = imports.tree
    stem = _stem(rel).encode()
    out: list[tuple[str, ast.stmt, _Parsed]] = []
    for other, data in tree.data.items():
        if other == rel or stem not in data or context_of_path(other) is not None:
            continue
        p = tree.parsed(other)
        for node in imports.of(other):
            if isinstance(node, ast.ImportFrom):
                module, names = "." * node.level + (node.module or ""), [a.name for a in node.names]
                hit = bool(module) and rel in _resolve(other, module, names, mods)
            elif isinstance(node, ast.Import):
                hit = any(rel in _resolve(other, a.name, [], mods) for a in node.names)
            else:
                continue
            if hit and p is not None:
                out.append((other, node, p))
    return out


def _site_guard(node: ast.stmt, p: _Parsed, settings: Callable[[], Settings | None]) -> tuple[str | None, bool]:
    """(the setting guard holding the import, whether it sits at module level outside any ``if`` it could be under)."""
    child: ast.AST = node
    up = p.parent.get(node)
    while up is not None and not isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(up, ast.If):
            when = _setting_off(up, child, node, p, settings)
            if when is not None:
                return when, False
        child, up = up, p.parent.get(up)
    return None, up is None


def _has_main(p: _Parsed | None) -> bool:
    return p is not None and any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) for n in p.tree.body)


def gated_by_settings(imports: _Imports, rel: str, mods: dict[str, str], depth: int = 0) -> set[str] | None:
    """The settings under which module ``rel`` is loaded, when every import of it is under one; else None."""
    tree = imports.tree
    if depth > _DEPTH or _has_main(tree.parsed(rel)):
        return None
    sites = _imports_of(imports, rel, mods)
    if not sites:
        return None
    guards = [(other, _site_guard(node, p, tree.settings)) for other, node, p in sites]
    if any(when is None and not top for _, (when, top) in guards):
        return None  # imported inside a function with no setting around it: on whatever path calls that
    found: set[str] = set()
    for other, (when, _) in guards:
        above = {when.removeprefix(_WHEN)} if when is not None else gated_by_settings(imports, other, mods, depth + 1)
        if above is None:
            return None
        found |= above
    return found


# ``if self.num_experts > 1:`` and, on its next line, ``from megatron.model.moe import ParallelDroplessMoE``: an import
# right under an ``if`` that reads an attribute, the only kind a setting can guard (a cheap filter before any parse;
# transformers' many lazy imports inside functions are not candidates).
_GUARDED_IMPORT = re.compile(
    rb"(?m)^([ \t]*)(?:el)?if [^\n]*\.\w[^\n]*:[ \t]*\n\1[ \t]+"
    rb"(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+([\w, \t(]+)|import[ \t]+([\w.]+))"
)


# The same, read from the import line back (``_GUARDED_IMPORT`` tried at every line start backtracks over each long
# ``if`` line: 4% of a scan of transformers): an indented import, then the ``if`` line just above it.
_INDENTED_IMPORT = re.compile(
    rb"(?m)^([ \t]+)(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+([\w, \t(]+)|import[ \t]+([\w.]+))"
)
_IF_ON_ATTRIBUTE = re.compile(rb"([ \t]*)(?:el)?if [^\n]*\.\w[^\n]*:[ \t]*")


def _guarded_names(data: Iterable[bytes]) -> set[str]:
    """Module and imported names of every import right under an ``if`` on an attribute."""
    out: set[str] = set()
    for blob in data:
        if b"import" not in blob:
            continue
        for m in _INDENTED_IMPORT.finditer(blob):
            end = m.start() - 1  # the newline before the import line
            if end <= 0 or blob[end : end + 1] != b"\n":
                continue
            start = blob.rfind(b"\n", 0, end) + 1
            head = _IF_ON_ATTRIBUTE.fullmatch(blob, start, end)
            if head is None or not m.group(1).startswith(head.group(1)) or len(m.group(1)) == len(head.group(1)):
                continue
            for g in m.groups()[1:]:
                if g:
                    out.update(w for w in re.split(r"[\s,.()]+", g.decode("utf-8", "replace")) if w)
    return out


def _top_imports(imports: _Imports, rel: str, mods: dict[str, str]) -> set[str]:
    """The tree's modules that ``rel`` imports at its top (outside any function)."""
    out: set[str] = set()
    p = imports.tree.parsed(rel)
    for node in imports.of(rel):
        if p is None or _site_guard(node, p, lambda: None)[1] is False:
            continue
        if isinstance(node, ast.ImportFrom):
            out |= set(_resolve(rel, "." * node.level + (node.module or ""), [a.name for a in node.names], mods))
        elif isinstance(node, ast.Import):
            for a in node.names:
                out |= set(_resolve(rel, a.name, [], mods))
    return out


def mark_setting_gated(findings: list[Finding], tree: Callable[[], _Tree], entries: Mapping[str, str]) -> None:
    """Blocking findings in a module loaded only under settings the default path leaves false: optional, with
    those settings as the reason. Only modules some file imports right under an ``if`` on an attribute (and what
    those import at their top) are judged, so a tree with none parses nothing here."""
    files = {f.file for f in findings if f.severity == "blocking" and f.porting and f.file and f.file.endswith(".py")}
    files -= set(entries)
    if not files:
        return
    t = tree()
    names = _guarded_names(t.data.values())
    direct = {f for f in files if _stem(f) in names}
    if not direct:
        return
    imports = _Imports(t)
    mods = _module_names(t.data)
    judged: dict[str, set[str] | None] = {f: gated_by_settings(imports, f, mods) for f in sorted(direct)}
    frontier = [f for f, when in judged.items() if when]
    while frontier:  # a gated module's own imports load only under the same settings
        for rel in sorted(_top_imports(imports, frontier.pop(), mods) - set(judged)):
            judged[rel] = gated_by_settings(imports, rel, mods)
            if judged[rel]:
                frontier.append(rel)
    for f in findings:
        when = judged.get(f.file or "")
        if f.severity != "blocking" or not f.porting or f.file not in files or not when:
            continue
        known = t.settings()
        where = known.where() if known is not None else "the defaults"
        f.severity = "warning"
        f.reason = (
            f"optional path: {f.file} is imported only when " + " or ".join(sorted(when)) + f" holds (it does not "
            f"with {where})"
        )
