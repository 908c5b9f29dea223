"""The default path of a library repository: the README's Python example (issue 27: "blocking means it stops the
default path").

A library ships no script to run; its README shows the default use instead:

    ```python
    from denoising_diffusion_pytorch import Unet, GaussianDiffusion, Trainer
    ...
    trainer = Trainer(diffusion, 'path/to/your/images', amp = True)
    trainer.train()
    ```

``entry.py`` reads such an example only when the README (and the documents it links) gives no command, and
narrowly:

- only fences marked ``python``/``py`` whose code parses;
- only the section (under one heading) of the first such block that imports the repository's own package, with the
  other blocks of that section: a later section (another model family, an optional wrapper) is optional use;
- only names imported from the repository's own modules and called directly (``from pkg import C`` then
  ``C(...)``; ``import pkg`` then ``pkg.f(...)``), each resolved to the file that defines it, through a package
  ``__init__``'s re-exports (``from pkg.mod import C``, or ``from .mod import *``) a few levels deep;
- the entry point is that file, scoped to the lines of the called classes and functions (another class of the same
  module is not the example's), with the keywords the example passes as ``True`` (``amp = True``), so that a line
  that runs only under such a keyword can be judged (``entry.py``).
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path

from accelpilot.porting.scan.families import _module_names

# (class or function name, first line, last line, the keywords the example passes as True)
Scope = tuple[str, int, int, frozenset[str]]

_FENCE = re.compile(r"^[ \t]*```[ \t]*(?:python3?|py)[ \t]*\n(.*?)^[ \t]*```", re.M | re.S)
_ANY_FENCE = re.compile(r"^[ \t]*```.*?^[ \t]*```", re.M | re.S)
_HEADING = re.compile(r"^#{1,6}\s+(.*)$", re.M)
_PLACEHOLDER = re.compile(r"<[A-Za-z_][\w .-]*>")  # ``<your_image>``, ``<input prompts>``
_DEPTH = 4  # re-exports followed through package ``__init__`` files


def _blocks(text: str) -> list[tuple[str, int, str]]:
    """(heading above, heading's offset, code) of each Python fence, in order."""
    return [(head, pos, code) for head, pos, code, _ in _fences(text)]


def _fences(text: str) -> list[tuple[str, int, str, int]]:
    """``_blocks`` with the README line of each fence's first code line."""
    fences = [m.span() for m in _ANY_FENCE.finditer(text)]  # a ``# comment`` in a fence is no heading
    heads = [
        (m.start(), m.group(1).strip())
        for m in _HEADING.finditer(text)
        if not any(a <= m.start() < b for a, b in fences)
    ]
    out = []
    for m in _FENCE.finditer(text):
        above = [(pos, h) for pos, h in heads if pos < m.start()]
        pos, head = above[-1] if above else (-1, "")
        out.append((head, pos, textwrap.dedent(m.group(1)), text.count("\n", 0, m.start(1)) + 1))
    return out


def _parse(code: str) -> ast.Module | None:
    """The block parsed, with placeholders a reader fills in (SAM 2's ``predictor.set_image(<your_image>)``) read
    as names; None when it is no Python even then."""
    for text in (code, _PLACEHOLDER.sub("_placeholder", code)):
        try:
            return ast.parse(text)
        except (SyntaxError, ValueError):
            continue
    return None


def _absolute(rel: str, module: str | None, level: int) -> str:
    """``from .mod import C`` in ``rel`` -> the dotted module it names."""
    if not level:
        return module or ""
    parts = rel[:-3].removeprefix("src/").split("/")[:-1]
    base = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    return ".".join(base + ([module] if module else []))


class _Resolver:
    """Finds the file and lines that define a name a module exports, following re-exports."""

    def __init__(self, root: Path, rels: Iterable[str]) -> None:
        self.root = root
        self.mods = _module_names(rels)
        self._trees: dict[str, ast.Module | None] = {}

    def tree(self, rel: str) -> ast.Module | None:
        """``rel`` parsed (read on demand: a few files of the tree), None when it does not read or parse."""
        if rel not in self._trees:
            try:
                self._trees[rel] = ast.parse((self.root / rel).read_bytes())
            except (OSError, SyntaxError, ValueError):
                self._trees[rel] = None
        return self._trees[rel]

    def define(self, module: str, name: str, depth: int = 0) -> tuple[str, int, int] | None:
        rel = self.mods.get(module)
        tree = self.tree(rel) if rel is not None else None
        if rel is None or tree is None or depth > _DEPTH:
            return None
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                return rel, first, node.end_lineno or node.lineno
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                for a in node.names:
                    if (a.asname or a.name) == name:
                        return self.define(_absolute(rel, node.module, node.level), a.name, depth + 1)
        for node in tree.body:  # ``from .clip import *`` (CLIP's ``clip/__init__.py``): any name may come from there
            if isinstance(node, ast.ImportFrom) and [a.name for a in node.names] == ["*"]:
                found = self.define(_absolute(rel, node.module, node.level), name, depth + 1)
                if found is not None:
                    return found
        return None


def _calls(code: ast.Module, mods: Mapping[str, str]) -> tuple[dict[str, tuple[str, str]], list[ast.Call]] | None:
    """The own names a block imports (local name -> (module, name); an imported module's local name -> (module,
    "")) and its calls; None when it imports nothing of the repository's own."""
    names: dict[str, tuple[str, str]] = {}
    for node in ast.walk(code):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module and node.module in mods:
            for a in node.names:
                names[a.asname or a.name] = (node.module, a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name in mods:
                    names[a.asname or a.name] = (a.name, "")
    if not names:
        return None
    return names, [n for n in ast.walk(code) if isinstance(n, ast.Call)]


def example_entries(text: str, root: Path, rels: Iterable[str]) -> tuple[dict[str, list[Scope]], dict[str, str]]:
    """(file -> the scopes the README's example calls in it, file -> how it is known) for a README's Python
    example; empty when the README has none that calls the repository's own code."""
    resolver = _Resolver(root, rels)
    section: int | None = None
    heading = ""
    called: dict[tuple[str, int, int], tuple[str, set[str]]] = {}  # (file, first, last) -> (name, true keywords)
    for head, pos, code in _blocks(text):
        if section is not None and pos != section:
            break  # the next section: optional use
        tree = _parse(code)
        if tree is None:
            continue
        found = _calls(tree, resolver.mods)
        if found is None:
            continue
        section, heading = pos, head
        names, calls = found
        for call in calls:
            f = call.func
            if isinstance(f, ast.Name) and f.id in names and names[f.id][1]:
                module, name = names[f.id]
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in names:
                module, name = names[f.value.id]
                if name and f"{module}.{name}" in resolver.mods:
                    # ``from imagebind.models import imagebind_model``: a submodule, whose function is called
                    module, name = f"{module}.{name}", ""
                if name and f.attr.startswith("_"):
                    continue
                # ``Chronos2Pipeline.from_pretrained(...)``: the imported class is what the example builds; a
                # function of an imported module is that function
                name = name or f.attr
            else:
                continue
            defined = resolver.define(module, name)
            if defined is None:
                continue
            _, true = called.setdefault(defined, (name, set()))
            true.update(
                k.arg for k in call.keywords if k.arg and isinstance(k.value, ast.Constant) and k.value.value is True
            )
    scopes: dict[str, list[Scope]] = {}
    for (rel, first, last), (name, true) in called.items():
        scopes.setdefault(rel, []).append((name, first, last, frozenset(true)))
    where = f" under '{heading}'" if heading else ""
    how = {
        rel: f"README example{where}: "
        + ", ".join(f"{s[0]}({_passed(s[3])})" for s in sorted(spans, key=lambda s: s[1]))
        for rel, spans in scopes.items()
    }
    return scopes, how


def _passed(true: frozenset[str]) -> str:
    return ", ".join(f"{k}=True" for k in sorted(true)) or "..."


# ``device_map="cuda"``, ``device="cuda:0"``, ``.to("cuda")``, ``.cuda()``: the example places its work on CUDA.
_DEVICE_KEYWORDS = frozenset({"device", "device_map"})


def example_device_lines(text: str, rels: Iterable[str]) -> list[tuple[int, str, str]]:
    """(README line, the line, what it does) of each CUDA placement in the README's example section (the first
    section whose Python example imports the repository's own code, as ``example_entries`` reads it): Chronos-2's
    ``Chronos2Pipeline.from_pretrained("amazon/chronos-2", device_map="cuda")``."""
    mods = _module_names(rels)
    lines = text.splitlines()
    section: int | None = None
    out: list[tuple[int, str, str]] = []
    for _, pos, code, first in _fences(text):
        if section is not None and pos != section:
            break
        tree = _parse(code)
        if tree is None or (section is None and _calls(tree, mods) is None):
            continue
        section = pos
        for n in ast.walk(tree):
            if not isinstance(n, ast.Call):
                continue
            what = None
            for k in n.keywords:
                if k.arg in _DEVICE_KEYWORDS and _cuda_string(k.value):
                    what = f"{k.arg}={ast.unparse(k.value)}"
            f = n.func
            if isinstance(f, ast.Attribute) and f.attr == "cuda" and not n.args:
                what = ".cuda()"
            if isinstance(f, ast.Attribute) and f.attr == "to" and n.args and _cuda_string(n.args[0]):
                what = f".to({ast.unparse(n.args[0])})"
            if what is not None:
                ln = first + n.lineno - 1
                out.append((ln, lines[ln - 1].strip() if 0 < ln <= len(lines) else "", what))
    return out


def _cuda_string(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(":")[0] == "cuda"
