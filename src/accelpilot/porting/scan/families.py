"""Units of porting work across files: the repository's own packages, and kernel families read from imports.

Two rules a porting lead states for any repository (issue 27):

- **A repository's own package is never an external dependency.** ``import mamba_ssm`` inside mamba's tree is its
  own code (its kernels are items already), whatever list of CUDA libraries names it.
- **One item per kernel family.** A file that defines GPU kernels (Triton ``@triton.jit``, or one importing a kernel
  language such as TileLang or CUTLASS at module level) is ported with the op it serves. The op's roots are the kernel
  files that code outside the kernels imports; roots imported by the same set of outside files are one family (the
  Mamba3 module's SISO, MIMO and step kernels), a root imported by other code is its own (a norm the model and the
  scan both use). A kernel file only other kernel files import (a helper, a backward pass) joins the family of its
  first importer; one that only tests import joins a family of its own folder. Its wrapper lines, device calls and
  launch sites then join that item.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType

from accelpilot.porting.findings import Finding, context_of_path
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.default_path import (
    RAISES_WITHOUT_CUDA,
    SPARSE_BUFFER,
    judge_families,
    may_choose_class,
    optional_modules,
)

_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+([.\w]+)[ \t]+import[ \t]+\(?([^\n#]*)|import[ \t]+([\w. \t,]+))", re.M)
# Libraries whose rule stands for a CUDA-only package or a training runtime: a finding naming the repository's own
# package is dropped (GPT-NeoX's in-tree ``megatron`` package is its own code, not the Megatron-LM dependency).
_LIBRARY_RULES = frozenset({"cuda-kernel-library", "cuda-only-library", "training-runtime"})
# Kernel languages: a module-level import of one makes the file a kernel file (Triton's ``@triton.jit`` already does).
KERNEL_LANGUAGES = frozenset({"tilelang", "cutlass", "triton"})


def own_packages(rels: Iterable[str]) -> set[str]:
    """Top-level import names the tree itself provides: ``pkg/__init__.py`` at the root or under ``src/``."""
    own: set[str] = set()
    for rel in rels:
        parts = rel.split("/")
        if parts[0] == "src" and len(parts) > 1:
            parts = parts[1:]
        if len(parts) == 2 and parts[1] == "__init__.py":
            own.add(parts[0])
    return own


def drop_own_package(findings: list[Finding], own: set[str]) -> list[Finding]:
    """Findings less those that read an import of the repository's own package as a CUDA library dependency."""
    return [f for f in findings if not (f.rule in _LIBRARY_RULES and (f.subject or "").split(".")[0] in own)]


class Modules(dict[str, str]):
    """Dotted module name -> file; ``script_dirs``: the folders of entry scripts a README command runs, where a
    plain ``import model`` finds the module beside the script (Python puts the script's folder first on
    ``sys.path``)."""

    script_dirs: frozenset[str] = frozenset()
    path_dirs: frozenset[str] = frozenset()


class Entries(dict[str, str]):
    """Entry point -> how it is known (a README command ...); ``path_dirs``: the folders its scripts put on
    ``sys.path`` (RAFT's ``sys.path.append('core')``), where every module of the run finds a bare import;
    ``others``: the later commands that run a script too (RWKV-LM's prepare, then run script); ``superseded``: the
    scripts a README runs that their own names mark as superseded (``train_legacy.py``), no entry point while another
    command runs, kept with their commands so that what they would stop is said as "blocks when it is run";
    ``aside``: the demo, test, evaluation, export and timing scripts a README runs beside its training run, no entry
    point either, said the same way."""

    path_dirs: frozenset[str] = frozenset()
    others: Mapping[str, tuple[str, ...]] = MappingProxyType({})  # replaced per instance, never mutated
    superseded: Mapping[str, str] = MappingProxyType({})
    aside: Mapping[str, str] = MappingProxyType({})


def script_dirs(entries: Iterable[str]) -> frozenset[str]:
    """The folders (below the root) of the entry scripts: their siblings are importable by their bare names."""
    return frozenset(e.rpartition("/")[0] for e in entries if e.endswith(".py") and "/" in e)


def _module_names(rels: Iterable[str], entries: Iterable[str] = ()) -> Modules:
    """Dotted module name -> file, from the root and from under ``src/``; with ``entries``, bare names of modules
    beside an entry script resolve there too (``Modules.script_dirs``)."""
    out = Modules()
    out.script_dirs = script_dirs(entries)
    out.path_dirs = getattr(entries, "path_dirs", frozenset())
    for rel in rels:
        if not rel.endswith(".py"):
            continue
        stem = rel[:-3].removesuffix("/__init__")
        for base in (stem, stem.removeprefix("src/")):
            out.setdefault(base.replace("/", "."), rel)
    return out


# Packages an import names that are someone else's: a tail of theirs that matches a tree module is a coincidence
# (``transformers.models.llama.modeling_llama`` beside a vendored ``llama/modeling_llama.py``), not the tree's own.
_THIRD_PARTY = frozenset(
    {
        "torch",
        "torchvision",
        "torchaudio",
        "transformers",
        "diffusers",
        "timm",
        "numpy",
        "scipy",
        "jax",
        "flax",
        "tensorflow",
        "keras",
        "detectron2",
        "mmcv",
        "mmdet",
        "mmengine",
        "fairseq",
        "lightning",
        "pytorch_lightning",
        "apex",
        "deepspeed",
        "megatron",
        "accelerate",
        "peft",
        "trl",
        "datasets",
        "triton",
        "xformers",
        "sklearn",
        "google",
        "azure",
        "aws",
        "botocore",
        "boto3",
        "mlflow",
        "ray",
        "vllm",
        "sglang",
        "nemo",
        "fvcore",
        "os",
        "sys",
        "collections",
        "importlib",
        "typing",
        "distutils",
        "setuptools",
        "huggingface_hub",
        "tokenizers",
    }
)


def prefixed_module(module: str, mods: Mapping[str, str]) -> str | None:
    """The tree file an absolute import names under a package prefix the tree does not have: an export that kept
    its monorepo path, MoCo's ``import deeplearning.cross_image_ssl.moco.builder`` for the tree's
    ``moco/builder.py`` (the longest tail of two or more parts that is a module of the tree); None otherwise."""
    parts = module.split(".")
    if len(parts) < 3 or module.startswith(".") or parts[0] in mods or parts[0] in _THIRD_PARTY:
        return None
    tail = next((".".join(parts[i:]) for i in range(1, len(parts) - 1) if ".".join(parts[i:]) in mods), None)
    return mods[tail] if tail is not None else None


def _resolve(rel: str, module: str, names: list[str], mods: Mapping[str, str]) -> set[str]:
    """The in-tree files ``from module import names`` (or ``import module``) in ``rel`` names."""
    if module.startswith("."):
        level = len(module) - len(module.lstrip("."))
        pkg = rel[:-3].split("/")[:-1]
        if level - 1 > len(pkg):
            return set()
        base = pkg[: len(pkg) - (level - 1)]
        rest = module.lstrip(".")
        module = ".".join(base + ([rest] if rest else []))
        module = module.removeprefix("src.")
    out: set[str] = set()
    for cand in [module, *(f"{module}.{n}" for n in names)]:
        if cand in mods and mods[cand] != rel:
            out.add(mods[cand])
    folder = rel.rpartition("/")[0]
    if not out and folder in getattr(mods, "script_dirs", ()) and not module.startswith("."):
        # an entry script's folder is first on ``sys.path``: ``from model import GPT2LMModel`` beside
        # ``examples/NLG/src/gpt2_ft.py`` is ``examples/NLG/src/model.py`` (for the script and its siblings)
        local = f"{folder.replace('/', '.')}.{module}"
        for cand in [local, *(f"{local}.{n}" for n in names)]:
            if cand in mods and mods[cand] != rel:
                out.add(mods[cand])
    tail = prefixed_module(module, mods) if not out else None
    if tail is not None and tail != rel:
        out.add(tail)
    for path_dir in sorted(getattr(mods, "path_dirs", ())) if not out and not module.startswith(".") else ():
        # a folder the entry script put on ``sys.path`` serves every module of the process: RAFT's ``from raft
        # import RAFT`` (train.py) and ``from utils.utils import ...`` (core/corr.py) after ``sys.path.append('core')``
        local = f"{path_dir.replace('/', '.')}.{module}"
        for cand in [local, *(f"{local}.{n}" for n in names)]:
            if cand in mods and mods[cand] != rel:
                out.add(mods[cand])
    return out


# One import statement as ``_IMPORT`` reads it: (the ``from`` module, or None for ``import a, b``; the names or
# modules text; whether it is at module level, column 0).
RawImport = tuple[str | None, str, bool]


def raw_imports(data: bytes) -> list[RawImport]:
    """A source's import statements, unresolved (cheap to send from a worker process: the first pass reads them)."""
    out: list[RawImport] = []
    for m in _IMPORT.finditer(data):
        top = data[m.start() : m.start() + 1] not in (b" ", b"\t")
        if m.group(1) is not None:
            out.append((m.group(1).decode(), m.group(2).decode(errors="replace"), top))
        else:
            out.append((None, m.group(3).decode(errors="replace"), top))
    return out


def resolve_imports(rel: str, raw: list[RawImport], mods: dict[str, str]) -> tuple[set[str], set[str]]:
    """``imports_of`` at any level and at module level (an import at column 0), from ``raw_imports``: the default
    path's reach reads both for every file of the tree."""
    every: set[str] = set()
    top: set[str] = set()
    for module, text, at_top in raw:
        found: set[str] = set()
        if module is not None:
            names = [n.strip().split(" ")[0] for n in text.split(",")]
            found = _resolve(rel, module, [n for n in names if n.isidentifier()], mods)
        else:
            for part in text.split(","):
                name = part.strip().split(" ")[0]
                if name:
                    found |= _resolve(rel, name, [], mods)
        every |= found
        if at_top:
            top |= found
    return every, top


def imports_both(rel: str, data: bytes, mods: dict[str, str]) -> tuple[set[str], set[str]]:
    """``resolve_imports`` of a source read here."""
    return resolve_imports(rel, raw_imports(data), mods)


def imports_of(rel: str, data: bytes, mods: dict[str, str], top_level: bool = False) -> set[str]:
    """In-tree files that ``rel`` imports (any level: lazy and guarded imports are imports too), or with
    ``top_level`` only those its module level imports (column 0: not under ``if TYPE_CHECKING:``, ``try:`` or in a
    def)."""
    every, top = imports_both(rel, data, mods)
    return top if top_level else every


def kernel_files(findings: list[Finding]) -> set[str]:
    """Files that define GPU kernels: a kernel definition (``@triton.jit``), or a module-level, unguarded import of
    a kernel language (TileLang, CUTLASS/CuTe)."""
    out: set[str] = set()
    for f in findings:
        if f.file is None or not f.file.endswith(".py"):
            continue
        rule = RULES.get(f.rule)
        defines = rule is not None and rule.item == "kernel" and f.message.startswith("@")
        language = (
            f.rule in _LIBRARY_RULES
            and f.context is None
            and (f.subject or "").split(".")[0] in KERNEL_LANGUAGES
            and f.message.startswith(("import ", "from "))
        )
        if defines or language:
            out.add(f.file)
    return out


def kernel_region(kernels: set[str], rels: Iterable[str]) -> set[str]:
    """The kernels and their ops' wrappers: every Python file (``__init__.py`` aside) of a folder whose files are
    mostly kernel files (``ops/triton/mamba3/`` holds its SISO wrapper beside eight kernel files). A folder where
    kernels are the minority (a model folder with one kernel file), or the root, adds only its kernel files."""
    by_folder: dict[str, list[str]] = {}
    for rel in rels:
        if rel.endswith(".py") and not rel.endswith("__init__.py"):
            by_folder.setdefault(rel.rpartition("/")[0], []).append(rel)
    region = set(kernels)
    for folder, files in by_folder.items():
        # the repository's root is no op folder: modded-nanogpt's two kernel modules and the medium-track script
        # outnumber its one trainer, which is the entry point that imports them, not their wrapper
        if folder and 2 * sum(f in kernels for f in files) > len(files):
            region.update(files)
    return region


def families(kernels: set[str], imports: dict[str, set[str]]) -> dict[str, str]:
    """Kernel-region file -> its family's name (the first root of the family, by path), for the families that hold a
    kernel. ``imports``: file -> in-tree files it imports, for every Python file of the tree."""
    region = kernel_region(kernels, imports)
    importers: dict[str, set[str]] = {k: set() for k in region}
    for src, targets in imports.items():
        for t in targets & region:
            importers[t].add(src)

    def outside(k: str) -> frozenset[str]:  # importers outside the region, tests and benchmarks aside
        return frozenset(i for i in importers[k] if i not in region and context_of_path(i) is None)

    # Roots of one op written in several kernel languages (``triton/v3/``, ``tilelang/v3/``: folders of one name in
    # different places) that the same outside files import are one family. Roots in one folder stay apart: a flat
    # ``kernels/`` folder holds independent ops (a norm, a rope, a loss) that one model file may import together.
    roots = {k: c for k in sorted(region) if (c := outside(k))}
    family = {k: k for k in roots}
    for a in roots:
        for b in roots:
            fa, fb = a.rpartition("/")[0], b.rpartition("/")[0]
            if a < b and roots[a] == roots[b] and fa != fb and fa.rpartition("/")[2] == fb.rpartition("/")[2]:
                old, new = sorted((family[a], family[b]), reverse=True)
                family = {k: new if f == old else f for k, f in family.items()}

    def follow(k: str, seen: frozenset[str]) -> str | None:
        if k in family:
            return family[k]
        for i in sorted(importers[k] & region):
            if i not in seen and (fam := follow(i, seen | {k})) is not None:
                return fam
        return None

    for k in sorted(region):
        if k not in family and (fam := follow(k, frozenset({k}))) is not None:
            family[k] = fam
    # used by tests alone: with its folder's family; a root script imported by nothing (a second trainer): its own
    for k in sorted(kernels):
        if k not in family and not importers[k] and "/" not in k:
            family[k] = k
        elif k not in family:
            folder = k.rpartition("/")[0]
            family[k] = next((fam for o, fam in sorted(family.items()) if o.rpartition("/")[0] == folder), k)
    with_kernels = {family[k] for k in kernels}
    return {k: fam for k, fam in family.items() if fam in with_kernels}


def _named(family: dict[str, str]) -> dict[str, str]:
    """Each family named by the folder its files share (``ops/triton/ssd_*.py`` are ``ops/triton/``'s when no other
    family lives there, so it stays the root file's name), or its root file."""
    members: dict[str, list[str]] = {}
    for k, fam in family.items():
        members.setdefault(fam, []).append(k)
    names: dict[str, str] = {}
    for fam, files in members.items():
        common = os.path.commonpath(files) if len(files) > 1 else fam
        others = any(o != fam and (p + "/").startswith(common + "/") for p, o in family.items())
        names[fam] = f"{common}/" if common != fam and common and not others else fam
    return {k: names[fam] for k, fam in family.items()}


# What the first pass read from a Python source for this pass: its raw imports, and whether it may choose a model
# class by a config value (``may_choose_class``).
Prepared = tuple[list[RawImport], bool]


def assign_families(
    findings: list[Finding],
    sources: Iterable[tuple[str, bytes]],
    rels: list[str],
    roots: set[str],
    prepared: Mapping[str, Prepared] | None = None,
    read: Callable[[str], bytes | None] | None = None,
) -> None:
    """Set ``family`` on every finding in (or a use of something defined in) a kernel file, reading each Python
    source's imports once (from ``prepared``, what the worker processes read, when given with ``read``; else from
    ``sources``); then judge each family from the default path (``default_path.py``) from ``roots``."""
    kernels = kernel_files(findings)
    if not kernels and not any(
        RAISES_WITHOUT_CUDA.match(f.message) or f.subject == SPARSE_BUFFER for f in findings if f.context is None
    ):
        return  # nothing to judge from imports: the tree's sources are not read again
    mods = _module_names(rels, roots)
    imports: dict[str, set[str]] = {rel: set() for rel in rels if rel.endswith(".py")}
    top: dict[str, set[str]] = {}  # module-level imports only: the default path's reach
    choosers: list[tuple[str, bytes]] = []  # files that may choose a model class by a config value
    if prepared is not None and read is not None:
        for rel, (raw, chooses) in prepared.items():
            imports[rel], top[rel] = resolve_imports(rel, raw, mods)
            if chooses and (data := read(rel)) is not None:
                choosers.append((rel, data))
    else:
        for rel, data in sources:
            imports[rel], top[rel] = imports_both(rel, data, mods)
            if may_choose_class(data):
                choosers.append((rel, data))
    fam = _named(families(kernels, imports))
    for f in findings:
        home = f.file if f.file in fam else f.defined_in  # a kernel file's own lines stay with its family
        if home in fam:
            f.family = fam[home]
    judge_families(findings, fam, imports, top, roots, optional_modules(choosers, mods), read)
