"""Which kernel families the default path reaches (issue 27: "blocking means it stops the default path").

Two rules a porting lead states for any repository:

- **An optional model family is chosen by a config value.** ``{"Mamba1": Mamba, "Mamba2": Mamba2}[cfg.pop("layer",
  "Mamba1")]``: the class under the default key is the default model; the others run only when the config names
  them. Their modules are optional families, each with the setting that selects it.
- **The default path is what the package and its entry points import**, not following imports into an optional
  family's module (``import mamba_ssm`` imports ``Mamba2`` to export it; the default model never builds one).

A kernel family that no file of the default path imports, and that an optional family uses, blocks nothing by
default: its lines say "blocks when ``cfg['layer']`` is 'Mamba2'" (the settings of the optional families that use
it). Without that evidence a family keeps its severity: a package whose ``__init__.py`` imports nothing is used by
importing its modules, so "not imported by the package" alone shows nothing. Only kernel families are judged this
way: their import graph is what the scan reads already (``families.py``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping

from accelpilot.porting.findings import Finding, context_of_path

# ``cfg.pop("layer", "Mamba1")`` / ``cfg.get("layer", "Mamba1")``: a file that may choose a class by a config value.
_DEFAULTED = re.compile(rb"\.(?:pop|get)\(\s*['\"]\w+['\"]\s*,\s*['\"]\w+['\"]\s*\)")


# ``layer = cfg.pop("layer", "Mamba1")``: the name a defaulted lookup binds (its use as a map index is then looked for).
_BOUND = re.compile(rb"(?m)^[ \t]*(\w+)[ \t]*=[ \t]*[^\n=]*?\.(?:pop|get)\(\s*['\"]\w+['\"]\s*,\s*['\"]\w+['\"]\s*\)")


def may_choose_class(data: bytes) -> bool:
    """Whether a source may choose a class by a config value (read with ``ast`` only then): a name bound from a
    defaulted lookup that indexes something (``{...}[layer]``). Most files with ``.get("k", "D")`` index nothing with
    it, and parsing them all cost a quarter of a scan of transformers."""
    if _DEFAULTED.search(data) is None:
        return False
    names = {m.group(1) for m in _BOUND.finditer(data)}
    return any(re.search(rb"\[\s*" + re.escape(n) + rb"\s*\]", data) for n in names)


def _imported_names(tree: ast.Module) -> dict[str, str]:
    """Local name -> dotted module it is imported from (``from a.b import C`` -> ``C``: ``a.b``)."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                out[a.asname or a.name] = node.module
    return out


def _defaulted(node: ast.AST) -> tuple[str, str, str] | None:
    """``recv.pop("k", "D")``/``recv.get("k", "D")`` -> (``recv['k']``, ``k``, ``D``)."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("pop", "get")
        and len(node.args) == 2
        and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args)
    ):
        return None
    recv = ast.unparse(node.func.value)
    key, default = node.args[0].value, node.args[1].value  # type: ignore[attr-defined]
    return f"{recv}['{key}']", key, default


def optional_classes(tree: ast.Module) -> dict[str, str]:
    """Class name -> the setting that selects it, for the classes of a name -> class map indexed by a config value
    whose default names another class of the map."""
    maps: dict[str, dict[str, str]] = {}  # variable -> {key: class name}
    chosen: dict[str, tuple[str, str]] = {}  # variable -> (setting, default key)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name, value = node.targets[0].id, node.value
        if isinstance(value, ast.Dict) and value.keys:
            table = {
                k.value: v.id
                for k, v in zip(value.keys, value.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Name)
            }
            if len(table) == len(value.keys):
                maps[name] = table
        elif (d := _defaulted(value)) is not None:
            chosen[name] = (d[0], d[2])
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id in maps
            and isinstance(node.slice, ast.Name)
            and node.slice.id in chosen
        ):
            setting, default = chosen[node.slice.id]
            table = maps[node.value.id]
            if default in table:
                for key, cls in table.items():
                    if key != default and cls != table[default]:
                        out[cls] = f"`{setting}` is '{key}'"
    return out


def optional_modules(sources: Iterable[tuple[str, bytes]], mods: dict[str, str]) -> dict[str, str]:
    """File of an optional model family's class -> the setting that selects it."""
    out: dict[str, str] = {}
    for _rel, data in sources:
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            continue
        names = _imported_names(tree)
        for cls, setting in optional_classes(tree).items():
            module = names.get(cls)
            if module is not None and module in mods:
                out.setdefault(mods[module], setting)
    return out


def reached(roots: set[str], imports: Mapping[str, set[str]], cut: set[str]) -> set[str]:
    """Files the roots import, transitively, not following imports into ``cut``."""
    seen = set(roots)
    todo = list(roots)
    while todo:
        for t in imports.get(todo.pop(), ()):
            if t not in seen and t not in cut:
                seen.add(t)
                todo.append(t)
    return seen


# torch.cuda objects whose construction raises on a torch build without CUDA, as a Neuron host's torch is (measured on
# torch 2.13 CPU: ``torch.cuda.Event()`` "Tried to instantiate dummy base class Event", ``torch.cuda.Stream()``
# "requires CUDA support"). Calls such as ``synchronize`` raise too, but sit mostly in timing helpers off the path.
RAISES_WITHOUT_CUDA = re.compile(r"^torch\.cuda\.(?:Event|Stream)\b")
# The subject ``train_hazards.py`` gives a sparse tensor registered as a module buffer (it moves with the model).
SPARSE_BUFFER = "sparse-buffer"


def mark_sparse_buffers(findings: list[Finding], default: set[str]) -> None:
    """A sparse tensor registered as a buffer in a module the default path imports moves with ``model.to(device)``:
    blocking, on the stated assumption that TorchNeuron registers no sparse kernels (``rules/train_rules.py``)."""
    for f in findings:
        if f.file in default and f.subject == SPARSE_BUFFER and f.rule == "sparse-tensor" and f.porting:
            f.severity = "blocking"
            f.reason = (
                f"{f.file}, which the default path imports, registers a sparse tensor as a module buffer, so it moves "
                f"to the device with the model; assumed (unverified on hardware) that TorchNeuron, a PrivateUse1 "
                f"backend, has no sparse kernels, as MPS had none: {f.file}:{f.line}"
            )


def mark_raising_constructors(
    findings: list[Finding],
    default: set[str],
    entries: Iterable[str],
    read: Callable[[str], bytes | None] | None = None,
) -> None:
    """A ``torch.cuda.Event``/``Stream`` built unguarded in a module the default path imports stops a host without
    CUDA when that code runs: blocking, with the reason (entry points have their own rule, ``entry.py``). Not when
    it sits in a top-level class or def whose name no Python source of the tree names again (DreamerV3's
    ``TimeRecording``, a timing helper nothing uses): that code never runs."""
    skip = set(entries)
    raising = [
        f
        for f in findings
        if f.file in default
        and f.file not in skip
        and f.rule == "torch-cuda-api"
        and f.context is None
        and f.porting
        and RAISES_WITHOUT_CUDA.match(f.message)
    ]
    unused = unused_holders(raising, read, default) if read is not None and raising else set()
    for f in raising:
        if id(f) not in unused:
            f.severity = "blocking"
            f.reason = (
                f"{f.message} raises on a torch build without CUDA (a Neuron host's), built unguarded in "
                f"{f.file}, which the default path imports: {f.file}:{f.line}"
            )


def judge_families(
    findings: list[Finding],
    family_of: dict[str, str],
    imports: dict[str, set[str]],
    top: dict[str, set[str]],
    roots: set[str],
    optional: dict[str, str],
    read: Callable[[str], bytes | None] | None = None,
) -> None:
    """A kernel family no default-path file imports: its blocking lines become warnings that say when it blocks.
    ``imports``: every import of each file (who uses a family); ``top``: module-level imports only, what importing
    a module runs (the reach: a lazy import inside a def, ``TYPE_CHECKING`` or a lazy-module table is not followed)."""
    if not roots:
        return
    default = reached(roots, top, set(optional))
    mark_raising_constructors(findings, default, roots, read)
    mark_sparse_buffers(findings, default)
    members: dict[str, set[str]] = {}
    for k, fam in family_of.items():
        members.setdefault(fam, set()).add(k)
    reasons: dict[str, str] = {}
    scripts = not any(r.endswith("__init__.py") for r in roots)  # a package's modules are its users' API
    for fam, files in members.items():
        users = {src for src, ts in imports.items() if ts & files and src not in files and context_of_path(src) is None}
        if files & default or users & default:
            continue  # on the default path, or used (even by a guarded or lazy import) by a file that is
        settings = sorted({optional[u] for u in users if u in optional})
        if settings:  # an optional family uses it: the evidence that it is not the default model's
            reasons[fam] = "optional model family: blocks when " + " or ".join(settings)
        elif not users and scripts:  # modded-nanogpt's train_gpt_medium.py: its own kernels, its own run
            reasons[fam] = (
                f"blocks when {', '.join(sorted(files))} is run: a script with its own kernels that no file imports "
                "and no README command runs"
            )
    for f in findings:
        if f.family in reasons and f.porting:
            if f.severity == "blocking":
                f.severity = "warning"
            f.reason = reasons[f.family]


def default_roots(rels: Iterable[str], own: set[str], entries: Iterable[str]) -> set[str]:
    """The files ``import <package>`` runs (each own package's ``__init__.py``) and the entry points."""
    inits = {rel for rel in rels if rel.removeprefix("src/") in {f"{p}/__init__.py" for p in own}}
    return inits | set(entries)


def unused_holders(findings: Iterable[Finding], read: Callable[[str], bytes | None], rels: Iterable[str]) -> set[int]:
    """The ids of ``findings`` whose line sits in a top-level class or def named nowhere else: not again in its own
    file, nor in any other Python source of ``rels`` (each file parsed once, every other source read once for all the
    names)."""
    holders: dict[int, tuple[str, str]] = {}
    trees: dict[str, ast.Module | None] = {}
    for f in findings:
        if f.file is None or f.line is None:
            continue
        if f.file not in trees:
            data = read(f.file)
            try:
                trees[f.file] = ast.parse(data) if data is not None else None
            except SyntaxError:
                trees[f.file] = None
        tree = trees[f.file]
        holder = next(
            (
                n.name
                for n in (tree.body if tree is not None else [])
                if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and n.lineno <= f.line <= (n.end_lineno or n.lineno)
            ),
            None,
        )
        own = read(f.file) or b""
        if holder is not None and len(re.findall(rb"\b%s\b" % re.escape(holder.encode()), own)) == 1:
            holders[id(f)] = (f.file, holder)
    names = {name for _, name in holders.values()}
    if not names:
        return set()
    word = re.compile(rb"\b(%s)\b" % b"|".join(re.escape(n.encode()) for n in sorted(names)))
    named: set[tuple[str, str]] = set()  # (a file other than the holder's, a name it holds)
    for rel in rels:
        data = read(rel) if rel.endswith(".py") else None
        if data is not None:
            named |= {(rel, m.decode()) for m in set(word.findall(data))}
    return {key for key, (file, name) in holders.items() if not any(other != file and n == name for other, n in named)}
