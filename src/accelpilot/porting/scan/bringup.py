"""The bring-up of the default path's models on the neuron device (seed 000: "record every ... unsupported
operator"; seed 004: "check operator coverage before you promise anyone a migration date").

A static scan cannot say which operators TorchNeuron lowers: only compiling the model can. What it can say is which
models the default path builds, so that the log carries the work of finding out as one item: run them on the neuron
device in eager, then under ``torch.compile(backend="neuron")``, read the compile log for unsupported operators
(NCC_EUOC002) and CPU fallbacks, and compare outputs with the CPU (``accelpilot scan --model`` gives the operator
inventory of one factory). The models are the ``nn.Module`` subclasses defined in the files the entry points import,
transitively (lazily too: a training script imports its model inside ``main``), or the Hugging Face model a
``from_pretrained`` call there loads. Only a repository whose README or scripts say what runs gets the item: a
library's modules are its users' to bring up.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping

from accelpilot.porting.findings import Finding, context_of_path, promoted_folders
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.families import _module_names, imports_of

BRINGUP = "model-bringup"
# Bases that make a class a torch module (a subclass of one of the tree's modules counts too, by name).
_TORCH_BASES = frozenset({"Module", "LightningModule"})
# ``AutoModelForCausalLM.from_pretrained(...)``, ``LlamaForCausalLM.from_pretrained(...)``: a Hugging Face model.
_HF_MODEL = re.compile(rb"\b((?:Auto)?\w*(?:Model|For\w+))\.from_pretrained\(")
_HF_CLASS = re.compile(r"^[A-Z]\w*(?:Model|For[A-Z]\w+)$")
_MAX_NAMED = 6  # class names listed per file in a line's message


def _base_name(b: ast.expr) -> str | None:
    """A base's name; any ``nn.X``/``torch.nn.X`` class (``nn.LayerNorm``, ``nn.Sequential``) is a ``Module``."""
    if isinstance(b, ast.Name):
        return b.id
    if isinstance(b, ast.Attribute):
        v = b.value
        if (isinstance(v, ast.Name) and v.id == "nn") or (isinstance(v, ast.Attribute) and v.attr == "nn"):
            return "Module" if b.attr[:1].isupper() else None
        return b.attr
    return None


def _hf_models(tree: ast.Module) -> set[str]:
    """Names a file imports from ``transformers`` that are models (``LlamaForCausalLM``, ``LlamaModel``,
    ``PreTrainedModel``): a subclass of one is a torch module."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "transformers":
            out |= {a.asname or a.name for a in node.names if _HF_CLASS.match(a.name)}
    return out


def _classes(tree: ast.Module) -> list[tuple[str, int, list[str]]]:
    """(name, line, base names) of every class defined at module level or nested in a class; a base imported from
    transformers as a model is named ``Module``."""
    hf = _hf_models(tree)
    out: list[tuple[str, int, list[str]]] = []
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                bases = ["Module" if n in hf else n for n in map(_base_name, child.bases) if n is not None]
                out.append((child.name, child.lineno, bases))
                todo.append(child)
    return out


def default_sources(entries: Iterable[str], read: Callable[[str], bytes | None], rels: list[str]) -> dict[str, bytes]:
    """The sources of the entry points and of every in-tree file they import, at any level, transitively (only
    those are read). Tests, examples and demos are not followed."""
    mods = _module_names(rels, entries)
    out: dict[str, bytes] = {}
    todo = [e for e in entries if e.endswith(".py")]
    promoted = promoted_folders(todo)  # an example folder a README command runs is the default path
    while todo:
        rel = todo.pop()
        if rel in out:
            continue
        data = read(rel)
        if data is None:
            continue
        out[rel] = data
        todo.extend(
            t for t in imports_of(rel, data, mods) if t not in out and context_of_path(t, promoted=promoted) is None
        )
    return out


def commanded(entries: Mapping[str, str]) -> bool:
    """A README command or example says what runs (a library's modules are its users' to bring up)."""
    return any(": `" in how or how.startswith("README example") for how in entries.values())


def model_bringup(entries: Mapping[str, str], sources: Mapping[str, bytes]) -> list[Finding]:
    """One finding per file that defines the default path's torch modules (or loads a Hugging Face model): the lines
    of the repository's bring-up item. ``entries``: entry point -> how it is known, nothing without a command;
    ``sources``: the files the entry points reach (``default_sources``)."""
    if not commanded(entries):
        return []
    defined: dict[str, list[tuple[str, int, list[str]]]] = {}
    for rel, data in sources.items():
        if b"class " not in data:
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            continue
        defined[rel] = _classes(tree)
    modules: set[str] = set()
    changed = True
    while changed:  # a subclass of a module is a module, wherever its base is defined
        changed = False
        for classes in defined.values():
            for name, _line, bases in classes:
                if name not in modules and any(b in _TORCH_BASES or b in modules for b in bases):
                    modules.add(name)
                    changed = True
    rule = RULES[BRINGUP]
    out: list[Finding] = []
    for rel in sorted(defined):
        found = [(name, line) for name, line, _ in defined[rel] if name in modules]
        if not found:
            continue
        more = f" and {len(found) - _MAX_NAMED} more" if len(found) > _MAX_NAMED else ""
        names = ", ".join(n for n, _ in found[:_MAX_NAMED]) + more
        msg = f"{len(found)} torch module{'s' if len(found) != 1 else ''} the default path builds: {names}"
        out.append(Finding.from_rule(rule, file=rel, line=found[0][1], message=msg, subject=BRINGUP))
    for rel in sorted(sources):
        if rel in {f.file for f in out}:
            continue
        m = _HF_MODEL.search(sources[rel])
        if m is not None:
            line = sources[rel].count(b"\n", 0, m.start()) + 1
            msg = f"the Hugging Face model {m.group(1).decode()}.from_pretrained loads"
            out.append(Finding.from_rule(rule, file=rel, line=line, message=msg, subject=BRINGUP))
    return out
