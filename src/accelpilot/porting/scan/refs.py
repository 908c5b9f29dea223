"""Across files: the lines that use a kernel or a built extension defined elsewhere in the tree.

A kernel item is its definition plus its launches (``kernel[grid](...)``) and the imports of it; an extension
built by ``torch.utils.cpp_extension`` is one item with the Python files that import the built module. Which
names are kernels is known only after every file is scanned, so this is a second pass, over the few files whose
bytes name one of them (a tree with no kernel and no extension costs nothing).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from typing import Any

from accelpilot.porting.scan.visitor import _HANDLERS, PyVisitor

# (rule, file, line, message, subject, context, defined_in, source line)
Ref = tuple[str, str, int, str, str, str | None, str, str]
# A definition found by the first pass: (rule, file, subject, message).
Definition = tuple[str, str, str, str]

_LAUNCHED_RULES = frozenset({"triton-kernel", "nki-kernel", "numba-cuda"})
_LOADERS = frozenset({"torch.utils.cpp_extension.load", "torch.utils.cpp_extension.load_inline"})


def module_parts(rel: str) -> list[str]:
    """``pkg/kernels/fused.py`` -> [pkg, kernels, fused]; a package's ``__init__.py`` is the package."""
    parts = rel[:-3].split("/") if rel.endswith(".py") else rel.split("/")
    return parts[:-1] if parts and parts[-1] == "__init__" else parts


def _ends_with(parts: list[str], mod: list[str]) -> bool:
    """The import names this file. The tree root need not be the import root: ``src/pkg/x.py`` is ``pkg.x``, and a
    scanned package's ``models/x.py`` is imported as ``pkg.models.x``; so the shorter must end the longer."""
    n = min(len(parts), len(mod))
    return n > 0 and parts[len(parts) - n :] == mod[len(mod) - n :]


class Index:
    """Kernels (by name, with their defining files) and built extension modules (by import name)."""

    def __init__(self, definitions: Iterable[Definition]) -> None:
        self.kernels: dict[str, list[tuple[str, str]]] = {}  # name -> [(rule, file)]
        self.extensions: dict[str, tuple[str, str]] = {}  # module name -> (rule, file)
        self.modules: dict[str, list[str]] = {}
        for rule, file, subject, message in sorted(definitions):
            if rule in _LAUNCHED_RULES and (message.startswith("@") or message.endswith(".jit")):
                if (rule, file) not in self.kernels.setdefault(subject, []):
                    self.kernels[subject].append((rule, file))
                    self.modules.setdefault(file, module_parts(file))
            elif rule == "cpp-extension-cuda" and not message.startswith(("import ", "from ")):
                self.extensions.setdefault(subject, (rule, file))

    def pattern(self) -> re.Pattern[bytes] | None:
        """Bytes a file must hold to use any of these names (None: nothing to look for)."""
        words = set(self.kernels) | {e.rsplit(".", 1)[-1] for e in self.extensions}
        words = {w for w in words if w.isidentifier()}
        if not words:
            return None
        return re.compile(rb"\b(?:" + b"|".join(re.escape(w.encode()) for w in sorted(words)) + rb")\b")

    def kernel(self, dotted: str, here: str) -> tuple[str, str, str] | None:
        """(rule, defining file, name) of the kernel ``dotted`` names from file ``here``, if it is one."""
        mod, _, name = dotted.rpartition(".")
        cands = self.kernels.get(name)
        if not cands:
            return None
        for rule, file in cands:
            if (not mod and file == here) or (mod and _ends_with(self.modules[file], mod.split("."))):
                return rule, file, name
        return None

    def extension(self, dotted: str) -> tuple[str, str, str] | None:
        """(rule, defining file, module) when ``dotted`` is a built extension module or a name inside one."""
        parts = dotted.split(".")
        for n in range(len(parts), 0, -1):
            hit = self.extensions.get(".".join(parts[:n]))
            if hit is not None:
                return hit[0], hit[1], ".".join(parts[:n])
        return None


class RefVisitor(PyVisitor):
    """The visitor's reach tracking (probes, ImportError fallbacks, optional paths) and import aliases, recording
    only the uses of known kernels and built extensions."""

    def __init__(self, index: Index, rel: str) -> None:
        super().__init__(None, True)
        self.index = index
        self.rel = rel
        self.refs: list[Ref] = []
        self.loaded: dict[str, tuple[str, str, str]] = {}  # variable bound to load()'s module -> extension
        self._ref_seen: set[tuple[str, int]] = set()

    def add(self, rule: str, line: int, message: str, subject: str | None = None, context: str | None = None) -> None:
        """The first pass already reported this file's own findings."""

    def ref(self, hit: tuple[str, str, str], line: int, message: str) -> None:
        rule, file, subject = hit
        if (subject, line) not in self._ref_seen:
            self._ref_seen.add((subject, line))
            self.refs.append((rule, self.rel, line, message, subject, self.context, file, ""))

    def visit(self, node: ast.AST) -> None:
        handler = _REF_HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node)
        else:
            self.generic(node)

    def r_import(self, node: ast.Import) -> None:
        for a in node.names:
            hit = self.index.extension(a.name)
            if hit is not None:
                self.ref(hit, node.lineno, f"imports the built extension {hit[2]} ({hit[1]})")
        PyVisitor.v_import(self, node)

    def r_importfrom(self, node: ast.ImportFrom) -> None:
        mod = node.module or ""
        if node.level:  # relative: resolve against this file's package
            base = module_parts(self.rel)
            if not self.rel.endswith("__init__.py"):
                base = base[:-1]
            base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
            mod = ".".join([*base, *([mod] if mod else [])])
        for a in node.names:
            full = f"{mod}.{a.name}" if mod else a.name
            self.aliases[a.asname or a.name] = full
            kernel = self.index.kernel(full, self.rel) if "." in full else None
            if kernel is not None and kernel[1] != self.rel:
                self.ref(kernel, node.lineno, f"imports kernel {kernel[2]} ({kernel[1]})")
            ext = self.index.extension(full)
            if ext is not None:
                self.ref(ext, node.lineno, f"imports the built extension {ext[2]} ({ext[1]})")
        if not node.level:
            PyVisitor.v_importfrom(self, node)

    def r_call(self, node: ast.Call) -> None:
        f = node.func
        if isinstance(f, ast.Subscript):
            d = self.dotted(f.value)
            kernel = self.index.kernel(d, self.rel) if d else None
            if kernel is not None:
                self.ref(kernel, node.lineno, f"launches kernel {kernel[2]}[grid](...) ({kernel[1]})")
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in self.loaded:
            ext = self.loaded[f.value.id]
            self.ref(ext, node.lineno, f"calls {f.attr}() of the built extension {ext[2]} ({ext[1]})")
        PyVisitor.v_call(self, node)

    def r_assign(self, node: ast.Assign) -> None:
        """``mod = load(name="ext", ...)``: calls through ``mod`` are uses of the built extension."""
        v = node.value
        if isinstance(v, ast.Call) and self.dotted(v.func) in _LOADERS:
            ext = self._ext_name(v)
            hit = self.index.extension(ext) if ext else None
            for t in node.targets:
                if isinstance(t, ast.Name) and hit is not None:
                    self.loaded[t.id] = hit
        PyVisitor.v_assign(self, node)


_REF_HANDLERS: dict[type, Callable[[RefVisitor, Any], None]] = {
    **_HANDLERS,
    ast.Import: RefVisitor.r_import,
    ast.ImportFrom: RefVisitor.r_importfrom,
    ast.Call: RefVisitor.r_call,
    ast.Assign: RefVisitor.r_assign,
}


def find_refs(sources: Iterable[tuple[str, bytes]], index: Index) -> list[Ref]:
    """Uses of the index's kernels and extensions in the given (rel, bytes) Python sources."""
    pattern = index.pattern()
    if pattern is None:
        return []
    refs: list[Ref] = []
    for rel, data in sources:
        if pattern.search(data) is None:
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue  # the first pass already recorded why this file could not be read
        v = RefVisitor(index, rel)
        v.visit(tree)
        if v.refs:
            lines = data.decode("utf-8", errors="replace").splitlines()
            refs.extend((*r[:7], lines[r[2] - 1] if 0 < r[2] <= len(lines) else "") for r in v.refs)
    return refs
