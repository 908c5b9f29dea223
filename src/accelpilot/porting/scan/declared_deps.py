"""Dependencies the default path imports that no file of the repository declares (rule ``undeclared-dependencies``;
issue 27's held-out labels: DeepSDF's "the tree has no requirements.txt, setup.py, environment.yml or Dockerfile, so
the Python dependencies are not declared", VideoMAE's prose-only INSTALL.md, GPTQ's versions listed only in the README).

A repository with no requirements, setup, pyproject, Pipfile, conda environment or Dockerfile leaves the porting
engineer to find, install and pin every package by trial: on a Neuron host that also means choosing releases that
work beside TorchNeuron's torch (torchvision above all). The item names the third-party packages imported at module
level (outside a ``try`` and outside a version or availability test) by the files the entry points reach: not the
standard library, not the repository's own modules, and not what comes with torch itself (its own requirements:
typing-extensions, sympy, networkx, jinja2, fsspec, filelock; numpy does not). A repository with any such file is
judged by that file's rules (``install.py``, ``text.py``).
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from accelpilot.porting.findings import Finding
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.bringup import commanded
from accelpilot.porting.scan.install import _dist

RULE = "undeclared-dependencies"
# Any file that declares what to install, anywhere in the tree.
_DEPENDENCY_FILE = re.compile(
    r"(?:^|/)(?:[\w.-]*requirements[\w.-]*\.(?:txt|in|ya?ml)|setup\.py|setup\.cfg|pyproject\.toml|Pipfile"
    r"|(?:environment|conda|env)[\w.-]*\.ya?ml|Dockerfile[\w.-]*|[\w.-]+\.dockerfile)$",
    re.I,
)
# torch and what installing torch brings (its own requirements), the Neuron stack's modules, and what a virtual
# environment comes with (pip and, on Python 3.11, setuptools).
_PRESENT = frozenset(
    {"torch", "typing_extensions", "sympy", "networkx", "jinja2", "fsspec", "filelock", "torch_neuronx", "neuronx_cc"}
    | {"pip", "setuptools", "pkg_resources"}
)
_GUARD_WORDS = re.compile(r"TYPE_CHECKING|available|version", re.I)
_MAX_NAMED = 8
# A README's (or install document's) ``pip install`` / ``conda install`` line: the packages it names are declared.
_INSTALL_LINE = re.compile(r"(?:pip3?|conda|mamba)\s+install\b[^\n`]*")
_WORD = re.compile(r"[A-Za-z][\w.-]*")
_DOC = re.compile(r"\.(?:md|rst|txt)$", re.I)
# The distribution an import name comes from, where the two differ.
_DISTRIBUTION = {
    "cv2": "opencv-python",
    "PIL": "pillow",
    "sklearn": "scikit-learn",
    "skimage": "scikit-image",
    "yaml": "pyyaml",
    "huggingface_hub": "huggingface-hub",
}
# What a declared package installs with it (its Requires-Dist, extras left out): read 2026-12-07 from the METADATA
# of the releases installed here (transformers 5, scipy, pandas, matplotlib, scikit-learn, huggingface-hub) and of
# the wheels on the package index (torchvision 0.29.1, timm 1.0.31, datasets 5.2.0, wandb 0.31.0, tiktoken 0.14.0).
_BRINGS = {
    "torchvision": ("numpy", "pillow"),
    "timm": ("torchvision", "pyyaml", "huggingface-hub", "safetensors"),
    "datasets": (
        *("dill", "filelock", "fsspec", "huggingface-hub", "multiprocess", "numpy"),
        *("packaging", "pandas", "pyarrow", "pyyaml", "tqdm", "xxhash"),
    ),
    "wandb": ("click", "packaging", "platformdirs", "protobuf", "pydantic", "pyyaml", "requests", "xxhash"),
    "tiktoken": ("regex", "requests"),
    "transformers": ("huggingface-hub", "numpy", "packaging", "pyyaml", "regex", "safetensors", "tokenizers", "tqdm"),
    "huggingface-hub": ("filelock", "fsspec", "packaging", "pyyaml", "tqdm"),
    "scipy": ("numpy",),
    "pandas": ("numpy", "python-dateutil"),
    "matplotlib": ("numpy", "packaging", "pillow", "pyparsing", "python-dateutil"),
    "scikit-learn": ("joblib", "numpy", "scipy", "threadpoolctl"),
}


def _module_level_imports(tree: ast.Module) -> list[tuple[str, int]]:
    """(dotted module, line) of the imports a module runs when imported: its body and the bodies of its top-level
    ``if`` blocks, not under a ``try`` nor a version/availability test."""
    out: list[tuple[str, int]] = []
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        st = todo.pop(0)
        if isinstance(st, ast.If) and _GUARD_WORDS.search(ast.unparse(st.test)) is None:
            todo += [*st.body, *st.orelse]
        elif isinstance(st, ast.Import):
            out += [(a.name, st.lineno) for a in st.names]
        elif isinstance(st, ast.ImportFrom) and st.level == 0 and st.module:
            out.append((st.module, st.lineno))
    return out


def _own_under_prefix(dotted: str, present: set[str]) -> bool:
    """``deeplearning.cross_image_ssl.moco.builder`` where the tree has ``moco/builder.py`` (MoCo's internal
    prefix): the repository's own module under a prefix the tree lacks (``prefixed_imports.py``'s item)."""
    parts = dotted.split(".")
    return any(
        f"{'/'.join(parts[k:])}.py" in present or f"{'/'.join(parts[k:])}/__init__.py" in present
        for k in range(1, len(parts) - 1)
    )


def _pip_declared(root: Path) -> set[str]:
    """The packages the install lines of the documents near the root name (nanoGPT's README: ``pip install torch
    numpy transformers datasets tiktoken wandb tqdm``), with what each installs with it (``_BRINGS``)."""
    out: set[str] = set()
    for path in [*root.glob("*"), *root.glob("*/*")]:
        if _DOC.search(path.name) and path.is_file():
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for line in _INSTALL_LINE.findall(text):
                out |= {_dist(w) for w in _WORD.findall(line)}
    todo = list(out)
    while todo:
        for more in _BRINGS.get(todo.pop(), ()):
            if more not in out:
                out.add(more)
                todo.append(more)
    return out


def _declared(module: str, declared: set[str]) -> bool:
    dist = _dist(_DISTRIBUTION.get(module, module))
    return dist in declared or (dist == "opencv-python" and any(d.startswith("opencv") for d in declared))


def undeclared_dependencies(
    entries: Mapping[str, str], sources: Mapping[str, bytes], rels: list[str], root: Path
) -> list[Finding]:
    """The repository's ``undeclared-dependencies`` finding, or none: only where a README command or example says what
    runs and no file of the tree declares a dependency. ``sources``: the files the entry points reach; ``root``: the
    tree, whose documents' install lines declare packages too."""
    if not commanded(entries) or any(_DEPENDENCY_FILE.search(r) for r in rels):
        return []
    present = set(rels)
    local = {r.rsplit("/", 1)[-1].split(".", 1)[0] for r in rels} | {p for r in rels for p in r.split("/")[:-1]}
    declared = _pip_declared(root)
    seen: dict[str, tuple[str, int]] = {}
    for rel in sorted(sources):
        try:
            tree = ast.parse(sources[rel])
        except (SyntaxError, ValueError):
            continue
        for dotted, line in _module_level_imports(tree):
            module = dotted.split(".", 1)[0]
            if module in sys.stdlib_module_names or module in local or module in _PRESENT or module in seen:
                continue
            if not _own_under_prefix(dotted, present) and not _declared(module, declared):
                seen[module] = (rel, line)
    if not seen:
        return []
    names = sorted(seen, key=str.lower)
    rel, line = seen[names[0]]
    shown = ", ".join(names[:_MAX_NAMED]) + (f" and {len(names) - _MAX_NAMED} more" if len(names) > _MAX_NAMED else "")
    message = f"no requirements, setup or environment file: the default path imports {len(names)} packages: {shown}"
    return [Finding.from_rule(RULES[RULE], file=rel, line=line, message=message)]
