"""Across files: a kernel launched, or an extension built, only on a CUDA tensor's path with a fallback (issue 27).

Wrappers of custom ops test the tensor before using their kernel and compute the same result in PyTorch otherwise:

    def bias_act(x, ...):                       # torch_utils/ops/bias_act.py
        if impl == 'cuda' and x.device.type == 'cuda' and _init():
            return _bias_act_cuda(...).apply(x, b)
        return _bias_act_ref(x, ...)
    def _init():
        _plugin = custom_ops.get_plugin('bias_act_plugin', sources=['bias_act.cpp', 'bias_act.cu'])

``get_plugin`` (another file) calls ``torch.utils.cpp_extension.load``, and Whisper's ``dtw_cuda`` launches a Triton
kernel that ``dtw`` calls only ``if x.is_cuda`` before ``return dtw_cpu(...)``. The launch or the build is then not
on the default path of a host without CUDA: the fallback runs there, and porting the kernel is a performance item
that names it. This pass follows each blocking launch or build up its callers (by name, through the files that
import its module) until a call sits under a CUDA test with another path (an ``else``, or code after the ``if`` that
does not raise), in its body or in a later ``and`` of the test; a chain that reaches module level, or a function
nobody in the tree calls, stays blocking. A plugin loader's callers that name the plugin and its CUDA sources
(``get_plugin('bias_act_plugin', sources=...)``) make one item per plugin: the call, its sources and the loader.
A module that imports a built extension at its top, and that every file of the tree imports only under an
``ImportError`` fallback (Swin's ``try: from kernels.window_process.window_process import WindowProcess`` /
``except: WindowProcess = None``), puts the extension (its import, sources and build) on an optional path too.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Callable, Iterable

from accelpilot.porting.findings import REACH_WARNING, Finding, context_of_path
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.branch_tests import _asks_cuda_device, _catches_import_error
from accelpilot.porting.scan.families import _module_names, _resolve
from accelpilot.porting.scan.settings import Evaluator, Settings, declaration

_DEPTH = 5  # callers followed up from a launch: deeper chains stay blocking
_SOURCE_EXT = (".cu", ".cuh", ".cpp", ".cc", ".h")
_IMPORTS = ("from ", "import ")
_Fn = ast.FunctionDef | ast.AsyncFunctionDef
# ``if self.is_kernel_available(mask, *input.size()):`` / ``if can_use_fused_kernel(x):``: the repository's own probe
# of whether its kernel applies, with the same computation in PyTorch on its other path.
_KERNEL_PROBE = re.compile(r"(?i)^(?:is_|can_)?\w*(?:kernel|fused|fusion|triton|cuda)\w*_(?:available|supported)$")
_WHEN = "blocks when "  # a found guard that is a setting off by default, not a fallback
_UNLESS = "` unless `"  # a fallback taken where the repository's own kernel probe says no
_Lazy = Callable[[], "Settings | None"]


class _Parsed:
    """One file's tree, each node's parent, and its functions by name."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parent: dict[ast.AST, ast.AST] = {}
        self.funcs: dict[str, list[_Fn]] = {}
        self.calls: list[ast.Call] = []
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.funcs.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.Call):
                self.calls.append(node)

    def function_at(self, line: int) -> _Fn | None:
        """The innermost function holding ``line``."""
        best: _Fn | None = None
        for fns in self.funcs.values():
            for fn in fns:
                if fn.lineno <= line <= (fn.end_lineno or fn.lineno) and (best is None or fn.lineno > best.lineno):
                    best = fn
        return best


def _stem(rel: str) -> str:
    """The module name an importer writes for ``rel`` (``pkg/custom_ops.py`` -> ``custom_ops``)."""
    parts = rel[:-3].split("/")
    return parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]


def _callee(call: ast.Call) -> tuple[str | None, str | None]:
    """(name, the module-ish name before it): ``custom_ops.get_plugin(...)`` -> (get_plugin, custom_ops)."""
    f = call.func
    if isinstance(f, ast.Name):
        return f.id, None
    if isinstance(f, ast.Attribute):
        v = f.value
        return f.attr, v.id if isinstance(v, ast.Name) else v.attr if isinstance(v, ast.Attribute) else None
    return None, None


def _leaves(body: list[ast.stmt]) -> bool:
    """The branch ends by leaving: a ``return`` (also as a ``try``'s last statement, whose ``except`` falls through
    to the code after on failure), ``continue`` or ``break``."""
    last = body[-1] if body else None
    if isinstance(last, ast.Try):
        last = last.body[-1] if last.body else None
    return isinstance(last, (ast.Return, ast.Continue, ast.Break))


def _assigned(body: list[ast.stmt]) -> set[str]:
    return {
        t.id
        for s in body
        for n in ast.walk(s)
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }


def _other_path(node: ast.If, parent: dict[ast.AST, ast.AST]) -> list[ast.stmt]:
    """What runs instead of ``node``'s body when its test is false: its ``else``, or the statements after it when
    the body leaves or the next statement tests what the body computes (``if result is None:``). A CUDA test with
    nothing of the kind is no fallback: the default path needs the kernel on CUDA and skips work elsewhere."""
    if node.orelse:
        return node.orelse
    holder = parent.get(node)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(holder, field, None)
        if isinstance(block, list) and node in block:
            after = block[block.index(node) + 1 :]
            nxt = after[0] if after else None
            tests = isinstance(nxt, ast.If) and any(
                isinstance(n, ast.Name) and n.id in _assigned(node.body) for n in ast.walk(nxt.test)
            )
            return after if _leaves(node.body) or tests else []
    return []


def _fallback_text(other: list[ast.stmt]) -> str | None:
    """The fallback's first line (inside a lone ``if result is None:``, its body's), None when it raises."""
    if not other or isinstance(other[0], ast.Raise):
        return None
    first = other[0]
    if isinstance(first, ast.If) and first.body and not isinstance(first.body[0], ast.Raise):
        first = first.body[0]
    value = getattr(first, "value", None)
    if isinstance(first, (ast.Return, ast.Expr)) and isinstance(value, ast.Call):  # ``return _bias_act_ref(...)``
        return ("return " if isinstance(first, ast.Return) else "") + ast.unparse(value.func) + "(...)"
    return ast.unparse(first).splitlines()[0][:80]


def _catching(node: ast.AST, child: ast.AST) -> str | None:
    """A ``try`` holding ``child`` in its body whose handler catches everything (``except Exception:``, a bare
    ``except``) or ``ImportError`` and does not raise again: SAM 2's ``fill_holes_in_mask_scores`` warns and skips
    the step when its connected-components extension fails. The handler's first line, as the fallback."""
    if not (isinstance(node, ast.Try) and child in node.body):
        return None
    for h in node.handlers:
        broad = h.type is None or _catches_import_error(h.type) or _is_broad(h.type)
        if broad and not any(isinstance(n, ast.Raise) for st in h.body for n in ast.walk(st)):
            kind = "" if h.type is None else " " + ast.unparse(h.type)
            return f"except{kind}: " + (_fallback_text(h.body) or "pass")
    return None


def _probes_kernel(test: ast.expr) -> bool:
    """``self.is_kernel_available(...)`` (alone or in an ``and``): the repository asks whether its kernel applies."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_probes_kernel(v) for v in test.values)
    return isinstance(test, ast.Call) and _KERNEL_PROBE.match(_callee(test)[0] or "") is not None


def _class_of(node: ast.AST, p: _Parsed) -> ast.ClassDef | None:
    up = p.parent.get(node)
    while up is not None and not isinstance(up, ast.ClassDef):
        up = p.parent.get(up)
    return up


def _reads_attribute(test: ast.expr) -> bool:
    return any(isinstance(n, ast.Attribute) and isinstance(n.value, (ast.Name, ast.Attribute)) for n in ast.walk(test))


def _setting_off(node: ast.If, child: ast.AST, call: ast.AST, p: _Parsed, settings: _Lazy | None) -> str | None:
    """``if neox_args.rope_fusion:`` holding ``child`` in its body, false with the default settings (or in its
    ``else``, true with them): the condition under which the line runs, as text."""
    if settings is None or child is node.test or not _reads_attribute(node.test):
        return None
    known = settings()  # read the settings only when a guard could test one
    if known is None:
        return None
    off = Evaluator(known, _class_of(call, p)).off(node.test)
    test = ast.unparse(node.test)
    if off is True and child in node.body:
        return _WHEN + f"`{test}`"
    if off is False and child in node.orelse:
        return _WHEN + f"`not ({test})`"
    return None


def _guard(call: ast.AST, p: _Parsed, settings: _Lazy | None = None) -> tuple[str | None, _Fn | None]:
    """(the fallback's text, None) when ``call`` runs only under a CUDA test or a kernel probe with a fallback in its
    function, in a ``try`` whose handler skips its failure, or under a setting false by default (the text then
    starts with ``_WHEN``); else (None, the function holding it, None at module level)."""
    child, node = call, p.parent.get(call)
    while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        caught = _catching(node, child)
        if caught is not None:
            return caught, None
        if isinstance(node, ast.If):
            when = _setting_off(node, child, call, p, settings)
            if when is not None:
                return when, None
        if isinstance(node, ast.If) and (_asks_cuda_device(node.test) or _probes_kernel(node.test)):
            in_body, in_test = child in node.body, False
            if child is node.test and isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And):
                # a later ``and`` than the device test runs only on CUDA: ``x.device.type == 'cuda' and _init()``
                values = node.test.values
                held = next((k for k, v in enumerate(values) if any(n is call for n in ast.walk(v))), -1)
                in_test = held > 0 and any(_asks_cuda_device(v) for v in values[:held])
            if in_body or in_test:
                text = _fallback_text(_other_path(node, p.parent))
                if text is not None and not _asks_cuda_device(node.test):
                    probe = next(n for n in ast.walk(node.test) if isinstance(n, ast.Call) and _probes_kernel(n))
                    text += _UNLESS + ast.unparse(probe.func) + "(...)"
                if text is not None:
                    return text, None
        child, node = node, p.parent.get(node)
    return None, node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


class _Tree:
    """The tree's Python sources, parsed on demand."""

    def __init__(self, sources: Iterable[tuple[str, bytes]], load: Callable[[_Tree], Settings] | None = None) -> None:
        self.data = dict(sources)
        self._parsed: dict[str, _Parsed | None] = {}
        self._load = load
        self._settings: list[Settings | None] = []

    def settings(self) -> Settings | None:
        """The default settings, read once, on the first guard that tests an attribute."""
        if not self._settings:
            self._settings.append(self._load(self) if self._load is not None else None)
        return self._settings[0]

    def parsed(self, rel: str) -> _Parsed | None:
        if rel not in self._parsed:
            try:
                self._parsed[rel] = _Parsed(ast.parse(self.data[rel]))
            except (KeyError, SyntaxError, ValueError, RecursionError, MemoryError):
                self._parsed[rel] = None
        return self._parsed[rel]

    def callers(self, rel: str, name: str) -> list[tuple[str, ast.Call]]:
        """Calls of function ``name`` of file ``rel``: bare in that file, or in a file that names its module."""
        word, stem = name.encode(), _stem(rel).encode()
        out: list[tuple[str, ast.Call]] = []
        for other, data in self.data.items():
            same = other == rel
            if word not in data or (not same and stem not in data) or context_of_path(other) is not None:
                continue
            p = self.parsed(other)
            for call in p.calls if p is not None else ():
                callee, via = _callee(call)
                if callee == name and (via is None or (via == "self" if same else via.encode() == stem)):
                    out.append((other, call))
        return out

    def declaring(self, name: str) -> Iterable[ast.Module]:
        """The parsed files that may declare setting ``name`` (a field or an ``add_argument``), tests aside."""
        pattern = declaration(name)
        for rel, data in self.data.items():
            if name.encode() in data and context_of_path(rel) is None and pattern.search(data):
                p = self.parsed(rel)
                if p is not None:
                    yield p.tree

    def apply_callers(self, cls: str) -> list[tuple[str, ast.Call]]:
        """``Cls.apply(...)`` calls: how an autograd Function's ``forward`` (and ``backward``) is reached."""
        word = cls.encode()
        out: list[tuple[str, ast.Call]] = []
        for other, data in self.data.items():
            if word not in data or context_of_path(other) is not None:
                continue
            p = self.parsed(other)
            out += [(other, c) for c in (p.calls if p is not None else ()) if _callee(c) == ("apply", cls)]
        return out


def _autograd_function(fn: _Fn, p: _Parsed) -> str | None:
    """The class name when ``fn`` is the ``forward``/``backward`` of a ``torch.autograd.Function`` subclass."""
    cls = p.parent.get(fn)
    if fn.name not in ("forward", "backward") or not isinstance(cls, ast.ClassDef):
        return None
    return cls.name if any(ast.unparse(b).endswith("Function") for b in cls.bases) else None


def _fallbacks(tree: _Tree, rel: str, line: int) -> set[str] | None:
    """The fallbacks that run instead of what ``rel:line`` does when the tensor is not on CUDA (and the settings,
    false by default, that it needs), if every call chain reaching it has one; None when some chain reaches it
    unguarded (or cannot be followed)."""
    p = tree.parsed(rel)
    fn = p.function_at(line) if p is not None else None
    if fn is None or p is None:
        return None
    found: set[str] = set()
    cls = _autograd_function(fn, p)
    todo: list[tuple[str, str, int]] = [(rel, cls or fn.name, 0)]
    seen: set[tuple[str, str]] = set()
    while todo:
        file, name, depth = todo.pop()
        if (file, name) in seen:
            continue
        seen.add((file, name))
        sites = tree.apply_callers(name) if cls is not None and depth == 0 else tree.callers(file, name)
        if not sites or depth >= _DEPTH:
            return None  # nobody in the tree calls it (an entry of its own), or too deep to tell
        for other, call in sites:
            q = tree.parsed(other)
            if q is None:
                return None
            text, holder = _guard(call, q, tree.settings)
            if text is not None:
                found.add(text)
            elif holder is None:
                return None  # called at module level, unguarded
            else:
                todo.append((other, holder.name, depth + 1))
    return found


def _reason(found: set[str], settings: Settings | None = None) -> str:
    when = sorted(t.removeprefix(_WHEN) for t in found if t.startswith(_WHEN))
    falls = sorted(t for t in found if not t.startswith(_WHEN))
    probed = any(_UNLESS in t for t in falls)
    off = "off CUDA, or where the repository's kernel probe says no," if probed else "off CUDA"
    fallback = f"{off} the fallback runs (" + "; ".join(f"`{t}`" for t in falls) + ")"
    if not when:
        return "performance item: " + fallback
    known = settings.where() if settings is not None else "the defaults"
    text = "optional path: blocks when " + " or ".join(when) + f" holds (it does not with {known})"
    return text + ("; elsewhere " + fallback if falls else "")


def _guarded(node: ast.AST, p: _Parsed) -> bool:
    """``node`` sits in the body of a ``try`` whose handler catches ``ImportError`` (or everything), in the same
    function or at module level."""
    child, up = node, p.parent.get(node)
    while up is not None and not isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        if (
            isinstance(up, ast.Try)
            and child in up.body
            and any(h.type is None or _catches_import_error(h.type) or _is_broad(h.type) for h in up.handlers)
        ):
            return True
        child, up = up, p.parent.get(up)
    return False


def _is_broad(t: ast.expr) -> bool:
    return isinstance(t, ast.Name) and t.id in ("Exception", "BaseException")


def _only_guarded_imports(tree: _Tree, rel: str) -> str | None:
    """The first import site (``file:line``) of module ``rel`` when every import of it in the tree (tests aside)
    sits under an ``ImportError`` fallback (Swin's ``try: from kernels.window_process.window_process import
    WindowProcess`` / ``except: WindowProcess = None``); None when one is unguarded or nothing imports it."""
    mods = _module_names(tree.data)
    stem = _stem(rel).encode()
    sites: list[tuple[str, int]] = []
    for other, data in tree.data.items():
        if other == rel or stem not in data or context_of_path(other) is not None:
            continue
        p = tree.parsed(other)
        for node in p.parent if p is not None else ():
            if isinstance(node, ast.ImportFrom):
                module, names = "." * node.level + (node.module or ""), [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                module, names = "", []
                if not any(rel in _resolve(other, a.name, [], mods) for a in node.names):
                    continue
            else:
                continue
            if module and rel not in _resolve(other, module, names, mods):
                continue
            if p is not None and not _guarded(node, p):
                return None
            sites.append((other, node.lineno))
    return "{}:{}".format(*min(sites)) if sites else None


def _is_target(f: Finding) -> bool:
    """A blocking launch of a kernel, or a blocking extension build (``load(...)``, a builder)."""
    if f.severity != "blocking" or not f.porting or f.file is None or f.line is None or not f.file.endswith(".py"):
        return False
    return f.message.startswith(("launches kernel", "imports the built extension")) or (
        f.rule == "cpp-extension-cuda" and f.message.startswith(("load(", "load_inline("))
    )


def _plugin_calls(tree: _Tree, loader: Finding) -> list[tuple[str, ast.Call, str, list[str]]]:
    """Calls of the loader function that name a plugin (a string first argument) and its CUDA sources (string
    literals ending in a source suffix in the calling function): (file, call, plugin, source paths)."""
    p = tree.parsed(loader.file or "")
    fn = p.function_at(loader.line or 0) if p is not None else None
    if fn is None:
        return []
    out = []
    for other, call in tree.callers(loader.file or "", fn.name):
        if other == loader.file or not call.args:
            continue
        first = call.args[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            continue
        q = tree.parsed(other)
        holder = q.function_at(call.lineno) if q is not None else None
        folder = posixpath.dirname(other)
        names = {
            n.value
            for n in ast.walk(holder if holder is not None else call)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.endswith(_SOURCE_EXT)
        }
        out.append((other, call, first.value, sorted(posixpath.normpath(posixpath.join(folder, s)) for s in names)))
    return out


def _judge_guarded_import(tree: _Tree, f: Finding, findings: list[Finding]) -> None:
    """A module that imports a built extension, itself imported only under ``ImportError`` fallbacks: the extension
    is an optional path, and so are its CUDA sources (they block only through that import)."""
    site = _only_guarded_imports(tree, f.file or "")
    if site is None:
        return
    reason = f"{REACH_WARNING['optional']}: every import of {f.file} is guarded ({site})"
    built = [g for g in findings if g.file == f.defined_in and g.rule == "cpp-extension-cuda"]
    ids = {id(g) for g in built}
    for g in findings:
        source = g.defined_in == f.defined_in and g.subject == f.subject and g.rule == "cuda-source-file"
        build = id(g) in ids and g.subject == f.subject
        if g.severity == "blocking" and (g is f or source or build):
            g.severity, g.reason = "warning", reason
    if not any(g.severity == "blocking" and g.subject for g in built):  # the build file's shared imports follow
        for g in built:
            if g.severity == "blocking":
                g.severity, g.reason = "warning", reason


def _judge_called_import(tree: _Tree, f: Finding, findings: list[Finding]) -> None:
    """An extension imported inside a function every caller of which catches its failure (SAM 2's
    ``get_connected_components``: ``from sam2 import _C`` in the function, each call in a ``try`` whose ``except
    Exception`` warns and skips hole filling): a performance item naming that fallback, with its sources and build."""
    p = tree.parsed(f.file or "")
    if f.severity != "blocking" or p is None or p.function_at(f.line or 0) is None:
        return
    found = _fallbacks(tree, f.file or "", f.line or 0)
    if not found:
        return
    reason = _reason(found, tree.settings())
    for g in findings:
        same = g.subject == f.subject and (g.defined_in == f.defined_in or g.file == f.defined_in)
        if g.severity == "blocking" and (g is f or (same and g.rule in ("cuda-source-file", "cpp-extension-cuda"))):
            g.severity, g.reason = "warning", reason
    build = [g for g in findings if g.file == f.defined_in and g.rule == "cpp-extension-cuda"]
    if not any(g.severity == "blocking" and not g.message.startswith(_IMPORTS) for g in build):
        for g in build:  # the builder's ``from torch.utils.cpp_extension import CUDAExtension`` follows its builds
            if g.severity == "blocking":
                g.severity, g.reason = "warning", reason


def _guarded_extension_sources(findings: list[Finding]) -> None:
    """An extension every import of which sits under an ``ImportError`` fallback (RAFT's ``try: import
    alt_cuda_corr`` / ``except: pass`` in core/corr.py, already an optional line): the code runs unbuilt, so its CUDA
    sources block only where the path that calls it runs, and say so."""
    imports: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        if f.message.startswith("imports the built extension") and f.defined_in and f.subject:
            imports.setdefault((f.defined_in, f.subject), []).append(f)
    for (built, ext), fs in imports.items():
        if not all(f.severity != "blocking" and f.reason == REACH_WARNING["optional"] for f in fs):
            continue
        first = min(fs, key=lambda f: (f.file or "", f.line or 0))
        reason = (
            f"{REACH_WARNING['optional']}: every import of the extension is guarded ({first.file}:{first.line}), so "
            "the code runs without the build; blocks only where the path that calls it runs"
        )
        for g in findings:
            if g.rule == "cuda-source-file" and g.defined_in == built and g.subject == ext and g.severity == "blocking":
                g.severity, g.reason = "warning", reason


def reach_tree(
    sources: Iterable[tuple[str, bytes]], settings: Callable[[Callable[[str], Iterable[ast.Module]]], Settings] | None
) -> Callable[[], _Tree]:
    """The tree's Python sources, read and parsed (on demand) once for the passes that follow calls and imports."""
    memo: list[_Tree] = []

    def get() -> _Tree:
        if not memo:
            memo.append(_Tree(sources, None if settings is None else lambda t: settings(t.declaring)))
        return memo[0]

    return get


def fallback_reach(
    findings: list[Finding],
    sources: Iterable[tuple[str, bytes]] | Callable[[], _Tree],
    settings: Callable[[Callable[[str], Iterable[ast.Module]]], Settings] | None = None,
) -> list[Finding]:
    """The findings with each blocking kernel launch or extension build that every caller reaches only under a
    CUDA test with a fallback made a performance item naming the fallback (or, under a setting false by default,
    an optional item naming the setting), and a plugin loader's plugins split into one item each (the call that
    names it, its CUDA sources, the loader joining the first). Reads the tree's Python sources again only when some
    launch or build blocks (``sources``: them, or the shared ``reach_tree``); ``settings`` reads the default
    settings, given the files that may declare a name."""
    _guarded_extension_sources(findings)
    targets = [f for f in findings if _is_target(f)]
    if not targets:
        return findings
    tree = sources() if callable(sources) else reach_tree(sources, settings)()
    lines = {rel: data.decode("utf-8", errors="replace").splitlines() for rel, data in tree.data.items()}
    added: list[Finding] = []
    by_file = {f.file: f for f in findings if f.rule == "cuda-source-file" and f.defined_in is None}
    for f in targets:
        if f.message.startswith("imports the built extension"):
            _judge_guarded_import(tree, f, findings)
            _judge_called_import(tree, f, findings)
            continue
        found = _fallbacks(tree, f.file or "", f.line or 0)
        if found:
            f.severity, f.reason = "warning", _reason(found, tree.settings())
        if not f.message.startswith("load") or f.defined_in is not None:
            continue
        plugins = _plugin_calls(tree, f)
        for n, (other, call, plugin, srcs) in enumerate(sorted(plugins, key=lambda x: (x[0], x[1].lineno))):
            site = _fallbacks(tree, other, call.lineno)
            if n == 0:  # the shared loader is ported (or left) with its first plugin, and says that plugin's reason
                f.defined_in, f.subject = other, plugin
                if found and site:
                    f.reason = _reason(site, tree.settings())
            if any(a.file == other and a.line == call.lineno for a in added):
                continue
            text = lines.get(other, [])
            new = Finding.from_rule(
                RULES["cpp-extension-cuda"],
                file=other,
                line=call.lineno,
                message=f"calls {_callee(call)[0]}({plugin!r}) ({f.file}): builds the CUDA extension {plugin}",
                snippet=text[call.lineno - 1] if 0 < call.lineno <= len(text) else "",
                subject=plugin,
                defined_in=other,
            )
            if site:
                new.severity, new.reason = "warning", _reason(site, tree.settings())
            added.append(new)
            for src in srcs:
                s = by_file.get(src)
                if s is not None:
                    s.defined_in, s.subject = other, plugin
                    s.severity, s.reason = new.severity, new.reason
    return findings + added
