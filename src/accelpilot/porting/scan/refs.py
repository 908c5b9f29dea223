"""Across files: the lines that use a kernel or a built extension defined elsewhere in the tree.

A kernel item is its definition plus its launches (``kernel[grid](...)``) and the imports of it; an extension
built by ``torch.utils.cpp_extension`` is one item with the Python files that import the built module. Which
names are kernels is known only after every file is scanned, so this is a second pass, over the few files whose
bytes name one of them (a tree with no kernel and no extension costs nothing).
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from accelpilot.porting.item_keys import kernel_definition
from accelpilot.porting.scan.branch_tests import kernel_guard
from accelpilot.porting.scan.visitor import _HANDLERS, PyVisitor

# (rule, file, line, message, subject, context, defined_in, source line)
Ref = tuple[str, str, int, str, str, str | None, str, str]
# A definition found by the first pass: (rule, file, subject, message).
Definition = tuple[str, str, str, str]

_LAUNCHED_RULES = frozenset({"triton-kernel", "nki-kernel", "numba-cuda"})
_BUILDERS = frozenset({"CUDAExtension", "CppExtension", "load_inline"})
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


_BUILT = "{}({!r})"  # the visitor's message for a builder given a module name: CUDAExtension('pkg._C')


def _is_definition(rule: str, message: str) -> bool:
    """A kernel's decorator, not an import of the language (``item_keys.kernel_definition``)."""
    return kernel_definition(rule, message)


_WORD = re.compile(rb"\w+")
_NAME_BEFORE = re.compile(rb"(\w+)[ \t]*$")


def _subscripted(data: bytes, close: int) -> bytes | None:
    """The name subscripted by the ``[...]`` that closes at ``close`` (``kernel[grid]`` -> ``kernel``)."""
    depth = 0
    for j in range(close, max(-1, close - 400), -1):
        c = data[j]
        if c == 93:  # ]
            depth += 1
        elif c == 91:  # [
            depth -= 1
            if depth == 0:
                m = _NAME_BEFORE.search(data, max(0, j - 120), j)
                return m.group(1) if m else None
    return None


def _import_statements(data: bytes) -> Iterator[bytes]:
    """Each import statement's text (a parenthesised ``from x import (...)`` whole)."""
    i = data.find(b"import")
    while i != -1:
        ls = data.rfind(b"\n", 0, i) + 1
        end = data.find(b"\n", i)
        end = len(data) if end == -1 else end
        head = data[ls:i].lstrip()
        if head == b"" or head.startswith(b"from "):
            line = data[ls:end]
            if b"(" in line and b")" not in line:
                close = data.find(b")", end)
                end = len(data) if close == -1 else close
            yield data[ls:end]
        i = data.find(b"import", end)


class Index:
    """Kernels (by name, with their defining files) and built extension modules (by import name)."""

    def __init__(self, definitions: Iterable[Definition]) -> None:
        self.kernels: dict[str, list[tuple[str, str]]] = {}  # name -> [(rule, file)]
        self.extensions: dict[str, tuple[str, str]] = {}  # module name -> (rule, file)
        self.canonical: dict[str, str] = {}  # an in-place build's import name -> the name its builder gives it
        self.modules: dict[str, list[str]] = {}
        for rule, file, subject, message in sorted(definitions):
            if rule in _LAUNCHED_RULES and _is_definition(rule, message):
                if (rule, file) not in self.kernels.setdefault(subject, []):
                    self.kernels[subject].append((rule, file))
                    self.modules.setdefault(file, module_parts(file))
            elif rule == "cpp-extension-cuda" and message == _BUILT.format(message.split("(", 1)[0], subject):
                self.extensions.setdefault(subject, (rule, file))
                if message.startswith("Extension(") and "." not in subject:
                    # a setuptools extension built in place beside its setup file (``build_ext --inplace``): HRNet's
                    # ``gpu_nms`` of ``lib/nms/setup_linux.py`` is imported as ``nms.gpu_nms`` or ``lib.nms.gpu_nms``
                    # (a JIT ``load()`` names no folder: its module is not the file beside it)
                    folder = module_parts(file)[:-1]
                    for k in range(len(folder)):
                        alias = ".".join([*folder[k:], subject])
                        self.extensions.setdefault(alias, (rule, file))
                        self.canonical.setdefault(alias, subject)
        # what an import statement naming a kernel must also name: the defining module (or its package)
        self.homes = {
            name.encode(): {self.modules[f][-1].encode() for _, f in defs if self.modules[f]}
            for name, defs in self.kernels.items()
        }
        self.kernel_words = set(self.homes)
        self.ext_words = {e.rsplit(".", 1)[-1].encode() for e in self.extensions}

    def empty(self) -> bool:
        return not self.kernels and not self.extensions

    def uses(self, data: bytes) -> bool:
        """Whether the file may use a kernel or an extension: a launch ``name[grid](``, an import statement
        naming a kernel and its defining module, or one naming a built extension. A bare mention does not
        count: Triton helpers decorated with ``@triton.jit`` are called ``any`` or ``get``, which half a code
        base mentions. Found from ``](`` and the word ``import`` with ``bytes.find``: a regex of a hundred
        kernel names over every file cost more than the whole first pass."""
        i = data.find(b"](")
        while i != -1:
            name = _subscripted(data, i)
            if name is not None and name in self.kernel_words:
                return True
            i = data.find(b"](", i + 2)
        for stmt in _import_statements(data):
            words = set(_WORD.findall(stmt))
            if not words.isdisjoint(self.ext_words):
                return True
            for name in words & self.kernel_words:
                if not self.homes[name].isdisjoint(words):
                    return True
        return False

    def loader_files(self) -> set[str]:
        """Files that build an extension with ``load()``: calls through the returned module are uses."""
        return {file for _, file in self.extensions.values()}

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
            name = ".".join(parts[:n])
            hit = self.extensions.get(name)
            if hit is not None:
                return hit[0], hit[1], self.canonical.get(name, name)
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
        self.sources: dict[str, tuple[str, str]] = {}  # a CUDA source file -> (defining file, extension)
        self.lists: dict[str, ast.List | ast.Tuple] = {}  # a name bound to a literal list (``srcs = ["a.cu"]``)

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

    def r_if(self, node: ast.If) -> None:
        """A launch under a fast-path flag, or under a CUDA test with a fallback, is reached only so (``kernel_guard``):
        its line says how, and the kernel's item is blocking only if some launch is not."""
        guard = kernel_guard(node, self.def_node) if self.context is None else None
        if guard is None:
            PyVisitor.v_if(self, node)
            return
        self.visit(node.test)
        self.context = guard
        try:
            for s in node.body:
                self.visit(s)
        finally:
            self.context = None
        for s in node.orelse:
            self.visit(s)

    def r_call(self, node: ast.Call) -> None:
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name in _BUILDERS or (name == "load" and self.dotted(f) in _LOADERS) or name == "Extension":
            self._sources(node)
        if isinstance(f, ast.Subscript):
            d = self.dotted(f.value)
            kernel = self.index.kernel(d, self.rel) if d else None
            if kernel is not None:
                self.ref(kernel, node.lineno, f"launches kernel {kernel[2]}[grid](...) ({kernel[1]})")
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in self.loaded:
            ext = self.loaded[f.value.id]
            self.ref(ext, node.lineno, f"calls {f.attr}() of the built extension {ext[2]} ({ext[1]})")
        PyVisitor.v_call(self, node)

    def _sources(self, node: ast.Call) -> None:
        """A builder's literal ``sources=[...]`` (or second argument, or a name bound to such a list earlier in the
        file): those CUDA files are this extension's."""
        ext = self._ext_name(node)
        hit = self.index.extension(ext) if ext else None
        if hit is None or hit[1] != self.rel:
            return
        arg = next((k.value for k in node.keywords if k.arg == "sources"), node.args[1] if len(node.args) > 1 else None)
        if isinstance(arg, ast.Name):  # SAM 2's ``CUDAExtension("sam2._C", srcs)`` after ``srcs = [...]``
            arg = self.lists.get(arg.id)
        folder = posixpath.dirname(self.rel)
        for e in arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else ():
            if isinstance(e, ast.Constant) and isinstance(e.value, str):
                self.sources[posixpath.normpath(posixpath.join(folder, e.value))] = (hit[1], hit[2])

    def r_assign(self, node: ast.Assign) -> None:
        """``mod = load(name="ext", ...)``: calls through ``mod`` are uses of the built extension."""
        v = node.value
        if isinstance(v, (ast.List, ast.Tuple)) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self.lists[node.targets[0].id] = v
        if isinstance(v, ast.Call) and self.dotted(v.func) in _LOADERS:
            ext = self._ext_name(v)
            hit = self.index.extension(ext) if ext else None
            for t in node.targets:
                if isinstance(t, ast.Name) and hit is not None:
                    self.loaded[t.id] = hit
        PyVisitor.v_assign(self, node)


_REF_HANDLERS: dict[type, Callable[[RefVisitor, Any], None]] = {
    **_HANDLERS,
    ast.If: RefVisitor.r_if,
    ast.Import: RefVisitor.r_import,
    ast.ImportFrom: RefVisitor.r_importfrom,
    ast.Call: RefVisitor.r_call,
    ast.Assign: RefVisitor.r_assign,
}


def find_refs(sources: Iterable[tuple[str, bytes]], index: Index) -> tuple[list[Ref], dict[str, tuple[str, str]]]:
    """Uses of the index's kernels and extensions in the given (rel, bytes) Python sources, and the CUDA source
    files each extension builds from (path -> (defining file, extension))."""
    built: dict[str, tuple[str, str]] = {}
    if index.empty():
        return [], built
    loaders = index.loader_files()
    refs: list[Ref] = []
    for rel, data in sources:
        if rel not in loaders and not index.uses(data):
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue  # the first pass already recorded why this file could not be read
        v = RefVisitor(index, rel)
        v.visit(tree)
        built.update(v.sources)
        if v.refs:
            lines = data.decode("utf-8", errors="replace").splitlines()
            refs.extend((*r[:7], lines[r[2] - 1] if 0 < r[2] <= len(lines) else "") for r in v.refs)
    return refs, built


_SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc")


def _source_paths(folder: str, value: str) -> list[str]:
    """Where a ``load()`` source may lie: by file name in the builder's folder (``os.path.join(module_path, ...)``),
    else the path as written from the builder's folder or any folder above it, the directory the script may be run
    from (RWKV-7's ``src/model.py`` builds ``cuda/rwkv7_clampw.cu``, run from ``train_temp/``)."""
    name = value.rpartition("/")[2]
    written = value.removeprefix("./")
    parts = folder.split("/") if folder else []
    above = ["/".join(parts[:i]) for i in range(len(parts), -1, -1)]
    return [f"{folder}/{name}" if folder else name, *(f"{a}/{written}" if a else written for a in above)]


def jit_sources(
    loads: list[tuple[str, int, str]], read: Callable[[str], bytes | None], present: set[str]
) -> dict[str, tuple[str, str]]:
    """Source file -> (the file that builds it, the extension's name) for ``torch.utils.cpp_extension.load(name,
    sources=[os.path.join(module_path, "fused_bias_act_kernel.cu"), ...])`` calls (``loads``: file, line, name): the
    sources a JIT build names (``_source_paths``), so that each joins its extension's item (two
    extensions in one folder, rosinality's ``op/``, are two items, not a third for the folder's ``.cu`` files)."""
    out: dict[str, tuple[str, str]] = {}
    for rel, line, name in loads:
        data = read(rel)
        try:
            tree = ast.parse(data or b"")
        except (SyntaxError, ValueError):
            continue
        folder = rel.rpartition("/")[0]
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and call.lineno <= line <= (call.end_lineno or call.lineno)):
                continue
            for c in ast.walk(call):
                if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.endswith(_SOURCE_SUFFIXES):
                    src = next((x for x in _source_paths(folder, c.value) if x in present), None)
                    if src is not None:
                        out.setdefault(src, (rel, name))
    return out
