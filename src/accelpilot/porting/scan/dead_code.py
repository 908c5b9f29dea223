"""A module of a scripts repository that nothing runs (issue 27: an item must stop or serve a path).

In a repository that is not an installable package (no ``setup.py``, ``setup.cfg`` or ``pyproject.toml`` at its
root) and whose README says how it is run (its commands name entry points), code is run by those scripts: a module
inside a folder that no file of the tree imports (at any level, lazily or not), that is no entry point and has no
``if __name__ == "__main__":`` block, runs on no path. DiT's
``diffusion/timestep_sampler.py`` (its ``LossSecondMomentResampler`` with a removed numpy alias) is such a module.
Its lines are listed apart (``unreached-module``), never porting work. A module named in any source by its dotted
name or path (``class_name='training.loss.StyleGAN2Loss'``, loaded by name at run time) is reached. In a package, a
module nothing in the tree imports is still public API its users import, so nothing is judged there. A folder a
dynamic import names (``importlib.import_module`` with a quoted folder name in the same file) is loaded by name: its
modules run when chosen (``--model TimesNet``), so they are reached, and a blocking line there or in a module only
they import blocks when that module is chosen.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from accelpilot.porting.findings import (
    NOT_PORTING,
    RUNTIME_REASON,
    UNRUN_SCRIPT,
    Finding,
    host_side,
    nested_distribution,
)
from accelpilot.porting.scan.default_path import reached
from accelpilot.porting.scan.families import _LIBRARY_RULES, _module_names, imports_of

UNREACHED = "unreached-module"
# A quoted name in a file that imports by name (``models_dir = 'models'``, ``f"models.{name}"`` has ``'models'`` only
# when written apart): a folder of the tree it may load from.
_QUOTED = re.compile(rb"""['"]([A-Za-z_][\w]*(?:[./][A-Za-z_]\w*)*[./]?)['"]""")
_PACKAGING = ("setup.py", "setup.cfg", "pyproject.toml")


def mark_unreached_modules(
    findings: list[Finding],
    sources: Iterable[tuple[str, bytes]],
    rels: list[str],
    entries: Mapping[str, str],
    read_text: Callable[[str], str | None] = lambda rel: None,
    readme: str = "",
) -> None:
    """Lines in a module nothing runs become ``unreached-module`` (not porting work). ``entries``: entry point -> how
    it is known; only a README (or linked document) command, ``README: `python train.py```, says how code runs.
    ``readme``: the root README's text."""
    if not any(": `" in how for how in entries.values()) or any(r in rels for r in _PACKAGING):
        return  # no command says how the code runs, or a package whose users import its modules
    _mark_unrun_trees(findings, rels, entries)
    candidates = {f.file for f in findings if f.file and f.file.endswith(".py") and "/" in f.file and f.porting}
    jobs = {f.file for f in findings if f.file and f.file.endswith(".sh") and "/" in f.file and f.porting}
    jobs -= set(entries)
    if not candidates and not jobs:
        return
    mods = _module_names(rels, entries)
    names = {rel: (rel[:-3].replace("/", ".").encode(), rel.encode()) for rel in candidates}
    folders = {rel.rpartition("/")[0] for rel in rels if "/" in rel}
    graph: dict[str, set[str]] = {}
    mains: set[str] = set()
    named: set[str] = set()
    by_name: set[str] = set()  # folders whose modules a dynamic import loads by name
    for rel, data in sources:
        graph[rel] = imports_of(rel, data, mods) - {rel}
        if b"__main__" in data:
            mains.add(rel)
        named |= {c for c, (dotted, path) in names.items() if c != rel and (dotted in data or path in data)}
        if b"import_module(" in data or b"__import__(" in data:
            by_name |= {
                d for m in _QUOTED.finditer(data) if (d := m.group(1).decode().replace(".", "/").strip("/")) in folders
            }
    imported = set().union(*graph.values()) if graph else set()
    loaded = {r for r in rels if r.endswith(".py") and r.rpartition("/")[0] in by_name}
    dead = {r for r in candidates if r not in imported | mains | named | loaded and r not in entries}
    dead |= _unrun_job_folders(jobs, rels, entries, imported | named | set(entries), read_text)
    # the builds whose extension a module on some path imports (RAFT's guarded ``import alt_cuda_corr``)
    present = set(rels)
    imported_ext = {
        f.defined_in for f in findings if f.message.startswith("imports the built extension") and f.file not in dead
    }
    for f in findings:
        # a CUDA source that only an unreached script's ``load()`` compiles is unreached with it; a ``setup.py``
        # build is run by an install command, not by an import (RAFT's ``alt_cuda_corr``), so it stays while the
        # README names the build's folder or a module on some path imports the extension, and follows its
        # unreached builder otherwise (Person_reID's ``GPU-Re-Ranking/extension/*/setup.py``, run by a sub-folder's
        # ``make.sh`` only)
        jit = (
            f.rule == "cuda-source-file"
            and f.defined_in in dead
            and (
                not _setup_file(f.defined_in)
                or (
                    f.defined_in not in imported_ext
                    and not _documented_build(f.defined_in, readme)
                    and not nested_distribution(f.defined_in, present)  # a copy's build: its vendored item
                )
            )
        )
        if (f.file in dead or jit) and f.porting:
            _unreach(f)
    if loaded:
        _mark_loaded_by_name(findings, graph, loaded, set(entries))


def _documented_build(setup_rel: str, readme: str) -> bool:
    """The README names the folder of a build script: its path, or the folder's own name as a word (RAFT's ``cd
    alt_cuda_corr && python setup.py install``), so an install step runs it."""
    folder, _, _ = setup_rel.rpartition("/")
    if not folder:
        return True
    name = folder.rpartition("/")[2]
    return folder in readme or re.search(rf"(?<![\w/-]){re.escape(name)}(?![\w-])", readme) is not None


def _setup_file(rel: str) -> bool:
    """``setup.py`` or a variant (HRNet's ``lib/nms/setup_linux.py``, run by ``make``): an install step runs it."""
    name = rel.rpartition("/")[2]
    return name.startswith("setup") and name.endswith(".py")


def _unreach(f: Finding) -> None:
    """``f`` is on no path: listed apart, never blocking."""
    f.context, f.porting, f.reason = UNREACHED, False, NOT_PORTING[UNREACHED]
    if f.severity == "blocking":
        f.severity = "warning"


_PY_NAME = re.compile(r"[\w.-]+\.py\b")
_PY_PATH = re.compile(r"(?:^|[\s\"'=])((?:[\w.-]+/)+[\w.-]+\.py)\b", re.M)  # ``data/cached_fineweb10B.py``


def _snapshot(rel: str, stems: set[str]) -> bool:
    """``rel`` is named as a copy of an entry script (``train_gpt_tailema_2720.py`` of ``train_gpt.py``)."""
    name = rel.rpartition("/")[2]
    return any(name.startswith(f"{stem}_") for stem in stems)


def _unrun_job_folders(
    jobs: set[str], rels: list[str], entries: Mapping[str, str], reached: set[str], read: Callable[[str], str | None]
) -> set[str]:
    """A shell script no README command runs or links, in a sub-folder, that runs only scripts of its own folder
    which nothing imports, no command runs and which are named as copies of an entry script (modded-nanogpt's
    ``records/.../run.sh`` and the ``train_gpt_*.py`` snapshot beside it): a past run kept as a record, not the
    repository's (ChatGLM's ``ptuning/train.sh`` running ``ptuning/main.py`` is an optional path, and stays). The
    script and the folder's ``requirements.txt`` are on no path."""
    out: set[str] = set()
    present = set(rels)
    stems = {e.rpartition("/")[2][:-3] for e in entries if e.endswith(".py")}
    for job in sorted(jobs):
        folder = job.rpartition("/")[0]
        body = read(job) or ""
        # a host-side script named by its path from the root (``data/cached_fineweb10B.py``, the data download a
        # record's script runs first) prepares data; it is not the run the script records
        data = {p.rpartition("/")[2] for p in _PY_PATH.findall(body) if p in present and host_side(p)}
        ran = {f"{folder}/{n}" for n in _PY_NAME.findall(body) if n not in data}
        if ran and ran <= present and not ran & reached and all(_snapshot(r, stems) for r in ran):
            out |= {job, f"{folder}/requirements.txt"}
    return out


def mark_record_requirements(findings: list[Finding]) -> None:
    """The ``install-pin`` lines (read after the reach) of a ``requirements.txt`` beside a past record's launch
    script (``_unrun_job_folders``) are on no path, as the script is."""
    folders = {
        f.file.rpartition("/")[0] for f in findings if f.file and f.file.endswith(".sh") and f.context == UNREACHED
    }
    for f in findings:
        if f.porting and f.file and f.file.endswith("/requirements.txt") and f.file.rpartition("/")[0] in folders:
            _unreach(f)


def _mark_loaded_by_name(
    findings: list[Finding], graph: Mapping[str, set[str]], loaded: set[str], entries: set[str]
) -> None:
    """A blocking line in a module of a folder loaded by name (Time-Series-Library's ``models/``: ``importlib.
    import_module(f"models.{name}")`` for ``--model TimesNet``), or in a module only such modules import, runs only
    when that module is chosen: it blocks when it is (the entry points' static imports never reach it)."""
    default = reached(entries, graph, loaded)
    only_chosen = reached(loaded, graph, set()) - default
    for f in findings:
        if f.file in only_chosen and f.porting and f.severity == "blocking":
            via = (
                f.file
                if f.file in loaded
                else next(
                    (m for m in sorted(loaded) if f.file in reached({m}, graph, set())), "a module loaded by name"
                )
            )
            f.severity = "warning"
            f.reason = (
                f"blocks when {via} is chosen: its folder is loaded by name at run time (importlib), and no entry "
                f"point imports it: {f.message} at {f.file}:{f.line}"
            )


def _unrun_candidate(f: Finding) -> bool:
    """A blocking module-level import of a runtime or kernel library: judged on the default path
    (``RUNTIME_REASON``), or left at its rule's severity in a file the reach did not judge (GPT-NeoX's
    ``tools/ckpts/convert_neox_to_mamba_ssm.py`` importing mamba_ssm)."""
    if f.severity != "blocking" or not f.file or not f.file.endswith(".py"):
        return False
    library = f.rule in _LIBRARY_RULES and f.reason is None and f.message.startswith(("import ", "from "))
    return f.reason == RUNTIME_REASON or library


def mark_unrun_scripts(
    findings: list[Finding],
    imports: Callable[[], Mapping[str, set[str]]],
    entries: Mapping[str, str],
    read: Callable[[str], bytes | None],
) -> None:
    """A runtime library imported at module level blocks only where the default path imports it: in a script that
    no README command runs and no file of the tree imports (YOLOX's ``tools/trt.py`` and its ``import tensorrt``),
    it blocks when that script is run. Judged only when README commands say what runs."""
    if not any(": `" in how for how in entries.values()):
        return
    candidates = {f.file for f in findings if _unrun_candidate(f) and f.file not in entries}
    if not candidates:
        return
    graph = imports()  # resolved only when a candidate exists
    imported = set().union(*graph.values()) if graph else set()
    scripts = set()
    for rel in candidates - imported:
        data = read(rel) if rel is not None else None
        if data is not None and b"__main__" in data:
            scripts.add(rel)
    for f in findings:
        if f.file in scripts and _unrun_candidate(f):
            f.severity = "warning"
            f.reason = (
                f"blocks when {f.file} is run: {UNRUN_SCRIPT}, so the default "
                f"path never imports it ({f.message} at {f.file}:{f.line})"
            )


_SOURCES = (".cu", ".cuh", ".cpp", ".cc", ".c", ".h", ".hpp")


def _mark_unrun_trees(findings: list[Finding], rels: list[str], entries: Mapping[str, str]) -> None:
    """CUDA/C++ sources in a top-level folder of Python code where no entry point lives (RWKV-LM's ``RWKV-v4/cuda``
    beside ``RWKV-v7/train_temp/train.py``, the README's run): an older generation or a side project of the
    repository, whose kernels no command builds. Their lines are listed apart (``unreached-module``). A folder of
    sources only (``csrc/``), with no Python of its own, is left to the loaders that build it."""
    # the folders an entry script puts on ``sys.path`` are the run's too (HRNet's ``lib/``, added by
    # ``tools/_init_paths.py``, holds the NMS extension its datasets import)
    tops = {e.split("/", 1)[0] for e in entries if "/" in e}
    if tops:  # with every entry at the root, no folder is set apart
        tops |= {d.split("/", 1)[0] for d in getattr(entries, "path_dirs", ())}
    python_tops = {r.split("/", 1)[0] for r in rels if r.endswith(".py") and "/" in r}
    for f in findings:
        if not (f.file and f.porting and f.file.endswith(_SOURCES) and "/" in f.file):
            continue
        top = f.file.split("/", 1)[0]
        if top in python_tops and top not in tops and tops:
            _unreach(f)
