"""A ``setup.py`` that builds its CUDA extension through a name and globs its sources (issue 27, round 29: the
detectron2-style build of GroundingDINO and Deformable-DETR).

    def get_extensions():
        extensions_dir = os.path.join(this_dir, "groundingdino", "models", "GroundingDINO", "csrc")
        source_cuda = glob.glob(os.path.join(extensions_dir, "**", "*.cu"))
        extension = CppExtension
        if CUDA_HOME is not None and torch.cuda.is_available():
            extension = CUDAExtension
            sources += source_cuda
        else:
            return None            # Deformable-DETR: raise NotImplementedError("Cuda is not available")
        return [extension("groundingdino._C", sources, ...)]

The call through ``extension`` is a ``CUDAExtension`` build of ``groundingdino._C`` (its definition line, so that the
cross-file pass joins ``from groundingdino import _C`` to it), and the ``.cu``/``.cuh`` files under the globbed folder
are its sources (one item, not one per folder). Where the name is a CUDA builder only under a test of CUDA and the
other arm neither raises nor exits, the install builds without the CUDA sources: the build line is a warning that
says so (GroundingDINO); where that arm raises, the install stops without CUDA, and the line blocks as any build.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Iterable

from accelpilot.porting.findings import Finding
from accelpilot.porting.rules import RULES

_CUDA_BUILDER = "CUDAExtension"
_CUDA_WORDS = ("CUDA_HOME", "is_available", "cuda")
_SOURCES = (".cu", ".cuh")


def _builder(v: ast.expr) -> bool:
    return (isinstance(v, ast.Name) and v.id == _CUDA_BUILDER) or (
        isinstance(v, ast.Attribute) and v.attr == _CUDA_BUILDER
    )


def _consts(args: Iterable[ast.expr]) -> list[str] | None:
    out = [a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return out if len(out) == len(list(args)) else None


def _join(call: ast.expr) -> tuple[str | None, list[str]] | None:
    """``os.path.join(base, "a", "b")`` -> (the base's name, or None for a literal first part; the literal parts)."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "join"):
        return None
    if not call.args:
        return None
    head, rest = call.args[0], call.args[1:]
    parts = _consts(rest)
    if parts is None:
        return None
    if isinstance(head, ast.Name):
        return head.id, parts
    first = _consts([head])
    return (None, first + parts) if first is not None else None


def _source_folders(tree: ast.Module) -> list[tuple[str, bool]]:
    """(folder relative to the setup file, recursive) of each ``glob(os.path.join(<dir>, ..., "*.cu"))``."""
    dirs: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            j = _join(node.value)
            if j is not None:  # ``extensions_dir = os.path.join(this_dir, "csrc")``: this_dir is the setup's folder
                base, parts = j
                dirs[node.targets[0].id] = [*dirs.get(base, []), *parts] if base else parts
    out: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        f = node.func
        if not ((isinstance(f, ast.Attribute) and f.attr == "glob") or (isinstance(f, ast.Name) and f.id == "glob")):
            continue
        j = _join(node.args[0])
        if j is None or not j[1] or not j[1][-1].endswith(_SOURCES):
            continue
        base, parts = j
        folder = [*(dirs.get(base, []) if base else []), *parts[:-1]]
        recursive = "**" in folder
        out.append((posixpath.join(*[p for p in folder if p != "**"]) if folder else "", recursive))
    return out


def _cuda_only_when_present(tree: ast.Module, alias: str) -> bool:
    """``alias = CUDAExtension`` only under an ``if`` on CUDA whose other arm neither raises nor exits."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        sets = any(
            isinstance(s, ast.Assign)
            and _builder(s.value)
            and any(isinstance(t, ast.Name) and t.id == alias for t in s.targets)
            for s in node.body
        )
        if not sets or not any(w in ast.unparse(node.test) for w in _CUDA_WORDS):
            continue
        stops = any(isinstance(n, ast.Raise) for s in node.orelse for n in ast.walk(s)) or any(
            isinstance(n, ast.Call)
            and isinstance(n.func, (ast.Name, ast.Attribute))
            and ast.unparse(n.func) in ("sys.exit", "exit", "quit")
            for s in node.orelse
            for n in ast.walk(s)
        )
        return not stops
    return False


def glob_extensions(
    rels: list[str], read: Callable[[str], bytes | None]
) -> tuple[list[Finding], dict[str, tuple[str, str]]]:
    """(a ``cpp-extension-cuda`` definition line per extension a setup file builds through a name bound to
    ``CUDAExtension``; the CUDA sources under the folders its globs name -> (setup file, extension))."""
    findings: list[Finding] = []
    sources: dict[str, tuple[str, str]] = {}
    for rel in rels:
        name = rel.rpartition("/")[2]
        if not (name.startswith("setup") and name.endswith(".py")):
            continue
        data = read(rel)
        if data is None or _CUDA_BUILDER.encode() not in data or b"glob" not in data:
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            continue
        aliases = {
            t.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Assign) and _builder(n.value)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        calls = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in aliases and n.args
        ]
        built = [
            (c, c.args[0].value)
            for c in calls
            if isinstance(c.args[0], ast.Constant) and isinstance(c.args[0].value, str)
        ]
        if len(built) != 1:
            continue
        call, ext = built[0]
        alias = call.func.id if isinstance(call.func, ast.Name) else ""
        line = data.decode("utf-8", "replace").splitlines()[call.lineno - 1]
        f = Finding.from_rule(
            RULES["cpp-extension-cuda"],
            file=rel,
            line=call.lineno,
            message=f"{_CUDA_BUILDER}({ext!r})",
            snippet=line.strip(),
            subject=ext,
        )
        if _cuda_only_when_present(tree, alias):
            f.severity = "warning"
            f.reason = (
                f"{rel} builds {ext} with CUDA only when CUDA is present (`{alias} = {_CUDA_BUILDER}` under a CUDA "
                "test whose other arm builds without it): off CUDA the install skips the CUDA sources"
            )
        findings.append(f)
        home = rel.rpartition("/")[0]
        for folder, recursive in _source_folders(tree):
            top = posixpath.normpath(posixpath.join(home, folder)) if folder else home or "."
            for src in rels:
                if not src.endswith(_SOURCES):
                    continue
                where = src.rpartition("/")[0]
                if where == top or (recursive and (where + "/").startswith(top.rstrip("/") + "/")):
                    sources.setdefault(src, (rel, ext))
    return findings, sources
