"""Post passes that join lines to the work they serve: kernel and package wrappers, graph capture, varlen feeds."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from accelpilot.porting.log import NOT_PORTING, SERVES
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.nodes import walk
from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.post_kit import _reach, _stmt_walk, _tree, _tree_holding
from accelpilot.porting.scan.reach import FileReach

# Placement and packing lines that can serve another item's work: CUDA placement (one device setting per file) and
# the varlen layout a kernel's signature takes.
_SERVING_RULES = frozenset({"cuda-call", "cuda-device-literal", "torch-cuda-api", "varlen-packing"})


_PACKAGE_RULES = frozenset(r.id for r in RULES.values() if r.item == "package")


# A package's wrapper module feeds the package's kernel its unpadded varlen layout: those helpers' index selection
# and cumulative lengths are part of replacing the package.
_WRAPPER_RULES = frozenset({"varlen-packing", "data-dependent-op"})


_REQUIRES = re.compile(rb"if not [\w.]*is_\w+_available\(")  # the cheap pre-check of ``_required_packages``


def _serving_lines(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """Lines whose only purpose is another finding's work join that finding's item (their subject becomes
    ``serves:<rule>:<line>``, read by ``log.build_items``):

    - a hub kernel's wrapper: placement and varlen lines in module-level defs that reach the def loading the kernel
      through this file's calls (``_sparse_attention`` -> ``_msa_sparse_atten_op`` -> the loader), or whose every
      caller does (the kernel's capability check), or that a decorator of one registers (the op's fake): packing
      the inputs the kernel's signature takes and pinning the device it launches on are part of replacing it.
      Methods stay (a model's own placement); so does a def that never reaches the kernel.
    - a CUDA graph's capture and replay: in a file that captures a graph (a ``cuda-graphs`` line), placement lines
      that are the context managers of a ``with`` in a def holding that line (the warm-up stream and memory pool
      the capture runs under) or of a ``with`` whose body only replays (``graph.replay()``): replacing CUDA graphs
      replaces them. Other placement in the capturing def, and on the eager path beside it, stays.
    - a package's adapter class: placement lines in a class that raises ``ImportError`` unless the package is there
      (``if not is_bitsandbytes_available(): raise ImportError``) and holds a line of that package's item: moving
      the package's quantized model to the target is that package's port. A class that only imports it does not
      qualify (the Trainer imports bitsandbytes for one optimizer).
    - a hub kernel's adapter class: placement lines in a class that raises ``ImportError`` unless ``kernels`` (the
      hub-kernel loader) is there join the hub-kernel item of a module the class imports relatively
      (``serves:hub-kernel:@..integrations.eetq``; ``log`` resolves the module to a file of the same scan and joins
      only when that file loads a hub kernel): the quantizer's CUDA requirement is the kernel's port."""
    open_ctx = [
        (r, ln) for r, ln, _, _, _, ctx in found if r in _SERVING_RULES and ctx not in NOT_PORTING and ln is not None
    ]
    if not open_ctx and not any(r in _WRAPPER_RULES for r, *_ in found):
        return found
    serves: dict[int, str] = {}
    kernels = [ln for r, ln, _, _, _, ctx in found if r == "hub-kernel" and ctx not in NOT_PORTING and ln is not None]
    if kernels:
        serves.update(_kernel_wrapper(data, kernels[0], [ln for _, ln in open_ctx]))
    packages = [
        (r, ln, sub) for r, ln, _, _, sub, ctx in found if r in _PACKAGE_RULES and ctx not in NOT_PORTING and ln and sub
    ]
    if packages and b"ImportError" in data and _REQUIRES.search(data):
        placement = [ln for r, ln in open_ctx if r != "varlen-packing" and ln not in serves]
        serves.update(_package_adapter(data, packages, placement))
    if b"is_kernels_available" in data and b"ImportError" in data:
        placement = [ln for r, ln in open_ctx if r != "varlen-packing" and ln not in serves]
        serves.update(_kernel_adapter(data, placement))
    graphs = [  # a captured graph (``torch.cuda.graph``); a compile mode string has the mode as subject
        ln
        for r, ln, _, _, sub, ctx in found
        if r == "cuda-graphs" and ctx not in NOT_PORTING and ln is not None and sub is None
    ]
    lines = data.splitlines()
    loaders = [p for p in packages if p[1] <= len(lines) and lines[p[1] - 1][:1] in (b" ", b"\t")]  # inside a def
    if loaders:
        hazards = [
            ln for r, ln, _, _, _, ctx in found if r in _WRAPPER_RULES and ctx not in NOT_PORTING and ln not in serves
        ]
        if hazards:  # no line to join: no parse of the whole file
            serves.update(_package_wrapper(data, loaders, [ln for ln in hazards if ln is not None]))
    if graphs:
        placement = [ln for r, ln in open_ctx if r != "varlen-packing" and ln not in serves]
        serves.update(_graph_capture(data, graphs, placement))
    if not serves:
        return found
    return [
        (r, ln, msg, snip, serves[ln], ctx)
        if (r in _SERVING_RULES or r in _WRAPPER_RULES) and ctx not in NOT_PORTING and ln in serves
        else (r, ln, msg, snip, sub, ctx)
        for r, ln, msg, snip, sub, ctx in found
    ]


def _kernel_wrapper(data: bytes, kernel_line: int, lines: list[int]) -> dict[int, str]:
    spans = _wrapper_spans(data, kernel_line, _reach(data))
    return {ln: f"{SERVES}hub-kernel:{kernel_line}" for ln in lines if any(a <= ln <= b for a, b in spans)}


def _package_wrapper(data: bytes, packages: list[tuple[str, int, str]], lines: list[int]) -> dict[int, str]:
    """A package's wrapper module: the module-level defs that reach a def of this file importing the package (the
    flash-attn loader), and the helpers every caller of which does, serve that package (``_kernel_wrapper``)."""
    out: dict[int, str] = {}
    reach = _reach(data)
    seen: set[str | None] = set()
    for rule, pline, _ in packages:
        loader = reach.def_at_line(pline)
        if loader in seen:  # one loader def, one reach
            continue
        seen.add(loader)
        spans = _wrapper_spans(data, pline, reach)
        out.update(
            {ln: f"{SERVES}{rule}:{pline}" for ln in lines if ln not in out and any(a <= ln <= b for a, b in spans)}
        )
    return out


def _wrapper_spans(data: bytes, loader_line: int, reach: FileReach) -> list[tuple[int, int]]:
    """Line spans of the module-level defs that reach the def holding ``loader_line`` through this file's calls (body
    or decorator names), plus the defs every caller of which is one of those and that no module-level statement
    names."""
    loader = reach.def_at_line(loader_line)
    if loader is None or not any(h[1] == 0 and h[2] == b"def" and h[3] == loader for h in reach.headers):
        return []  # no module-level def of that name (read from the headers: no parse of the whole file)
    tree = _tree(data)
    top = {d.name: d for d in tree.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if loader not in top:
        return []

    reads = {  # the names each def's body and decorators read, once
        d.name: {n.id for b in [*d.body, *d.decorator_list] for n in walk(b) if isinstance(n, ast.Name)}
        for d in top.values()
    }

    def callers(name: str) -> set[str]:
        return {d for d, names in reads.items() if d != name and name in names}

    reaching, todo = {loader}, [loader]
    while todo:
        for c in callers(todo.pop()) - reaching:
            reaching.add(c)
            todo.append(c)
    named = set().union(*_mentioned_at_module(tree))
    grew = True
    while grew:  # helpers whose every caller reaches the kernel (its capability check), up a chain of helpers
        grew = False
        for d in top.values():
            up = callers(d.name)
            if d.name not in reaching and d.name not in named and up and up <= reaching:
                reaching.add(d.name)
                grew = True
    return [(d.lineno, d.end_lineno or d.lineno) for n, d in top.items() if n in reaching]


def _graph_capture(data: bytes, graphs: list[int], lines: list[int]) -> dict[int, str]:
    if not lines:
        return {}
    tree = _tree(data)
    capturing = [
        (d.lineno, d.end_lineno or d.lineno)
        for d in _stmt_walk(tree)
        if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(d.lineno <= g <= (d.end_lineno or d.lineno) for g in graphs)
    ]
    out: dict[int, str] = {}
    for w in _stmt_walk(tree):
        if not isinstance(w, (ast.With, ast.AsyncWith)):
            continue
        in_capture = any(a <= w.lineno <= b for a, b in capturing)
        if in_capture or all(_replays(st) for st in w.body):
            heads = range(w.lineno, w.body[0].lineno)  # the with's own lines: its context managers
            near = min(graphs, key=lambda g: abs(g - w.lineno))
            out.update({ln: f"{SERVES}cuda-graphs:{near}" for ln in lines if ln in heads})
    return out


def _replays(st: ast.stmt) -> bool:
    """``<graph>.replay()``: the call that runs a captured CUDA graph."""
    return (
        isinstance(st, ast.Expr)
        and isinstance(st.value, ast.Call)
        and isinstance(st.value.func, ast.Attribute)
        and st.value.func.attr == "replay"
        and not st.value.args
        and not st.value.keywords
    )


def _mentioned_at_module(tree: ast.Module) -> list[set[str]]:
    """Names read by module-level statements other than defs and classes (a def named there may be called from
    anywhere)."""
    return [
        {n.id for n in walk(s) if isinstance(n, ast.Name)}
        for s in tree.body
        if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom))
    ]


def _classes_holding(data: bytes, lines: list[int]) -> Iterator[tuple[ast.ClassDef, list[int]]]:
    """Each class of the file with the ones of ``lines`` it holds (classes holding none are skipped)."""
    if not lines:
        return
    for c in _stmt_walk(_tree_holding(data, lines)):
        if isinstance(c, ast.ClassDef):
            inside = [ln for ln in lines if c.lineno <= ln <= (c.end_lineno or c.lineno)]
            if inside:
                yield c, inside


def _package_adapter(data: bytes, packages: list[tuple[str, int, str]], lines: list[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for c, inside in _classes_holding(data, lines):
        a, b = c.lineno, c.end_lineno or c.lineno
        required = _required_packages(c)
        for rule, pline, sub in packages:
            if a <= pline <= b and _package_word(sub) in required:
                out.update({ln: f"{SERVES}{rule}:{pline}" for ln in inside})
                break
    return out


def _kernel_adapter(data: bytes, lines: list[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for c, inside in _classes_holding(data, lines):
        if "kernels" not in _required_packages(c):
            continue
        modules = sorted(
            {"." * n.level + (n.module or "") for n in _stmt_walk(c) if isinstance(n, ast.ImportFrom) and n.level > 0}
        )
        if modules:
            out.update({ln: f"{SERVES}hub-kernel:@{','.join(modules)}" for ln in inside})
    return out


def _package_word(subject: str) -> str:
    return re.split(r"[=<>!~\[;@ .]", subject.strip(), maxsplit=1)[0].lower().replace("-", "_")


def _required_packages(c: ast.ClassDef) -> set[str]:
    """``X`` for each ``if not is_X_available(...): ... raise ImportError(...)`` in the class's methods."""
    out: set[str] = set()
    for node in _stmt_walk(c):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)):
            continue
        call = node.test.operand
        if not isinstance(call, ast.Call):
            continue
        name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        m = re.fullmatch(r"is_(\w+?)_available", name)
        raises = any(
            isinstance(r, ast.Raise)
            and r.exc is not None
            and "ImportError" in {n.id for n in walk(r.exc) if isinstance(n, ast.Name)}
            for b in node.body
            for r in _stmt_walk(b)
        )
        if m and raises:
            out.add(m.group(1))
    return out


def _feeds_varlen(data: bytes, found: list[RawFinding]) -> list[RawFinding]:
    """A boolean-mask selection whose result a method passes to a submodule (``self.audio_tower(input_features,
    ...)``) built in ``__init__`` from a class of this file whose ``forward`` packs varlen sequences unpads that
    module's input for the packing: it joins the file's varlen item (``serves:varlen-packing:<line>``). A mask
    result that feeds no such module (or a module without varlen packing) keeps its own item."""
    masks = [ln for r, ln, _, _, _, ctx in found if r == "boolean-mask-index" and ctx not in NOT_PORTING and ln]
    varlen = [ln for r, ln, _, _, _, ctx in found if r == "varlen-packing" and ctx not in NOT_PORTING and ln]
    if not masks or not varlen:
        return found
    text = data.splitlines()
    assigned = {  # cheap pre-check before the parse: a mask result read later by a ``self.<attr>(...)`` call
        m.group(1) for ln in masks if ln <= len(text) and (m := re.match(rb"\s*(\w+)\s*=[^=]", text[ln - 1]))
    }
    if not any(re.search(rb"self\.\w+\([^)]*\b" + re.escape(n) + rb"\b", data) for n in assigned):
        return found
    tree = _tree_holding(data, {*masks, *varlen})  # a class holding neither feeds nor packs
    classes = {c.name: c for c in tree.body if isinstance(c, ast.ClassDef)}
    packing: dict[str, int] = {}  # class -> a varlen line of its forward
    for name, c in classes.items():
        for d in c.body:
            if isinstance(d, ast.FunctionDef) and d.name == "forward":
                inside = [ln for ln in varlen if d.lineno <= ln <= (d.end_lineno or d.lineno)]
                if inside:
                    packing[name] = inside[0]
    if not packing:
        return found
    serves: dict[int, str] = {}
    for c in classes.values():
        built = _submodules(c)  # self.<attr> -> class name
        feeding = {a: packing[k] for a, k in built.items() if k in packing}
        if not feeding:
            continue
        for d in c.body:
            if not isinstance(d, ast.FunctionDef):
                continue
            for st in _stmt_walk(d):
                if not (isinstance(st, ast.Assign) and st.lineno in masks):
                    continue
                names = {t.id for t in st.targets if isinstance(t, ast.Name)}
                for call in walk(d):
                    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                        continue
                    owner = call.func.value
                    if not (isinstance(owner, ast.Name) and owner.id == "self" and call.func.attr in feeding):
                        continue
                    args = [*call.args, *(k.value for k in call.keywords)]
                    if call.lineno > st.lineno and any(isinstance(a, ast.Name) and a.id in names for a in args):
                        serves[st.lineno] = f"{SERVES}varlen-packing:{feeding[call.func.attr]}"
    if not serves:
        return found
    return [
        (r, ln, msg, snip, serves[ln], ctx)
        if r == "boolean-mask-index" and ctx not in NOT_PORTING and ln in serves
        else (r, ln, msg, snip, sub, ctx)
        for r, ln, msg, snip, sub, ctx in found
    ]


def _submodules(c: ast.ClassDef) -> dict[str, str]:
    """``self.<attr> = Cls(...)`` or ``Cls._from_config(...)``/``Cls.from_pretrained(...)`` in ``__init__``."""
    out: dict[str, str] = {}
    for d in c.body:
        if not (isinstance(d, ast.FunctionDef) and d.name == "__init__"):
            continue
        for st in _stmt_walk(d):
            if not (isinstance(st, ast.Assign) and isinstance(st.value, ast.Call)):
                continue
            f = st.value.func
            cls = f.id if isinstance(f, ast.Name) else None
            if (
                isinstance(f, ast.Attribute)
                and isinstance(f.value, ast.Name)
                and f.attr.startswith(("_from_", "from_"))
            ):
                cls = f.value.id
            for t in st.targets:
                if cls and isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    out[t.attr] = cls
    return out
