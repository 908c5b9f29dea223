"""The repository's default entry points, and the CUDA lines on their path that stop a host without CUDA (issue 27).

A porting lead reads the README first: the commands it gives (``python train.py ...``, ``torchrun ... train.py``) are
the default path. A command under a heading about evaluation, benchmarks or profiling is an evaluation run, listed
apart (DiT's ``sample_ddp.py`` computes FID). Without a README command, a script at the root named as an entry
point (``train*.py``, ``sample*.py``, ``main.py``; not ``eval*.py``) that runs as a script (a ``__main__`` block, or
no ``def`` at all) is one.

Which CUDA lines on an entry point's path stop a host without CUDA is ``entry_blocking.py``'s.

Commands are read from the README, then from the root-level markdown files it links (``[FINETUNE.md](FINETUNE.md)``)
in link order: the README's own command for a script wins. A README command whose script imports a root script and
calls its ``main()`` (a Slurm launcher, ``submitit_pretrain.py`` running ``main_pretrain.main``) makes that script an
entry point too. A library repository with no command has its default path in the README's Python example
(``readme_example.py``): the module defining the classes it calls is an entry point for those classes' lines only.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from accelpilot.porting.findings import context_of_path, entry_script, promoted_folders
from accelpilot.porting.scan.console import console_commands, console_scripts
from accelpilot.porting.scan.documents import (
    folder_documents,
    hosted_docs_pages,
    linked_documents,
    linked_scripts,
    readme_path,
)
from accelpilot.porting.scan.families import Entries, _module_names
from accelpilot.porting.scan.launch_flags import join_continued
from accelpilot.porting.scan.readme_example import Scope, example_entries

# ``python -m llava.serve.cli ...``: a module of the tree run as a script (``-m torch.distributed.run`` names no file of
# the tree, and its script is read by ``_COMMAND``).
# ``deepspeed --module openrlhf.cli.train_sft`` (OpenRLHF): DeepSpeed's launcher runs each rank's script as a module.
_MODULE_COMMAND = re.compile(
    r"(?:^|[\s`$;&(>])(?:(?:python3?(?:\s+-u)?|torchrun(?:\s+--?[\w-]+(?:[= ][^\s-]\S*)?)*)\s+-m"
    r"|deepspeed(?:\s+--?[\w-]+(?:[= ][^\s-]\S*)?)*?\s+--module)\s+([A-Za-z_][\w.]*)"
)
_HEADING = re.compile(r"^(?:#{1,6}\s+(.*)|(.+)\n[=~-]{3,}$)", re.M)
_COMMAND = re.compile(
    r"(?:^|[\s`$;&(>])(?:python3?(?:\s+-u)?|torchrun|accelerate\s+launch|deepspeed|srun\s+python3?"
    r"|lightning\s+run\s+model|fabric\s+run(?:\s+model)?)\s[^\n`]*?"
    r"([\w./-]+\.py)\b"
)
# ``./scripts/run_inference.py 'contigmap.contigs=[150-150]'`` (RFdiffusion): an executable script run by its path at
# the start of a command line.
_EXEC_COMMAND = re.compile(r"^[ \t>]*(?:\$\s+)?\./([\w./-]+\.py)\b", re.M)
_HTML_TAG = re.compile(r"</?[A-Za-z]+\s*/?>")  # ``<pre>python train.py</pre>`` (BLIP): the command without its tags
_EVAL_NAME = re.compile(r"(eval|evaluate|bench|test|profil)", re.I)  # evaluation scripts by name
_EVAL_HEADING = re.compile(r"evaluat|benchmark|profil|\btest|\bfid\b|metric", re.I)
_RUN_BY = "run by"  # how a script a README command runs only through a launcher is known


def _module_file(module: str, present: set[str]) -> str:
    """The file ``python -m module`` runs (``llava.serve.cli`` -> ``llava/serve/cli.py``, a package's
    ``__main__.py``, also under ``src/``); the dotted name itself when the tree has none (a third-party module)."""
    path = module.replace(".", "/")
    for cand in (f"{path}.py", f"{path}/__main__.py", f"src/{path}.py", f"src/{path}/__main__.py"):
        if cand in present:
            return cand
    return module


def readme_entry_points(
    text: str, present: set[str], base: str = "", shell: bool = False
) -> tuple[dict[str, str], set[str]]:
    """(script -> the command that runs it, evaluation scripts) from a README's commands; scripts not in the tree
    are left out. ``base``: the folder a shell script's commands run in (``sft/script.sh`` runs ``finetune.py``);
    ``shell``: the text is a shell script, whose ``#`` comments and ``---`` lines are no Markdown headings (RWKV-LM's
    run script reads as an evaluation section otherwise)."""
    text = join_continued(text)  # a command continued over lines (``\\``) is one line: its script may come late
    entries: dict[str, str] = {}
    evaluation: set[str] = set()
    heading = ""
    headings = () if shell else _HEADING.finditer(text)
    marks = sorted([(m.start(), "h", (m.group(1) or m.group(2) or "").strip()) for m in headings])
    marks += [(m.start(1), "c", m.group(1).removeprefix("./")) for m in _COMMAND.finditer(text)]
    marks += [(m.start(1), "c", m.group(1)) for m in _EXEC_COMMAND.finditer(text)]
    marks += [(m.start(1), "c", _module_file(m.group(1), present)) for m in _MODULE_COMMAND.finditer(text)]
    for pos, kind, value in sorted(marks):
        if kind == "h":
            heading = value
            continue
        if value not in present and base and f"{base}/{value}" in present:
            value = f"{base}/{value}"
        if value not in present and "/" not in value:
            # ``python train.py`` after ``python setup.py install`` (pygcn): the one script of that name a folder
            # below the root, the package the README installs
            below = [p for p in present if p.count("/") == 1 and p.endswith("/" + value)]
            value = below[0] if len(below) == 1 else value
        if value not in present:
            continue
        if _EVAL_HEADING.search(heading):
            evaluation.add(value)
        else:
            line_start = text.rfind("\n", 0, pos) + 1
            line_end = text.find("\n", pos)
            line = text[line_start : line_end if line_end >= 0 else None].strip()
            entries.setdefault(value, line[:120])  # a continued command is one line here (``join_continued``)
    return entries, evaluation - set(entries)


@dataclass
class EntryPoints:
    """The default entry points: ``how`` each is known (script or module -> "README: `cmd`", ...); ``scopes``: for a
    module of a README example, the classes and functions the example calls, with the keywords it passes as true;
    ``wraps``: a README command's script -> the root script whose ``main()`` it runs (a Slurm launcher)."""

    how: dict[str, str] = field(default_factory=dict)
    scopes: dict[str, list[Scope]] = field(default_factory=dict)
    wraps: dict[str, str] = field(default_factory=dict)

    def run_scripts(self) -> frozenset[str]:
        """The entry points run as scripts, whose ``if __name__ == "__main__":`` block is the run: not a module a
        README example imports (only its ``scopes`` run) nor a script whose ``main()`` a launcher calls."""
        scripts = (r for r in self.how if r.endswith(".py") and r not in self.scopes)
        return frozenset(r for r in scripts if not self.how[r].startswith(_RUN_BY))


_CD = re.compile(r"^\s*(?:\$\s*)?cd\s+([\w./-]+)\s*(?:#.*)?$")
# ``sh ./demo-training-run.sh``, ``bash run.sh``, ``./run.sh``: a shell script the command runs.
_CD_AND = re.compile(r"^\s*(?:\$\s*)?cd\s+([\w./-]+)\s*(?:&&|;)\s*(\S.*)$")
_RUN_SH = re.compile(r"^\s*(?:\$\s*)?(?:(?:ba)?sh\s+|source\s+|\.\s+)?(\.?/?[\w./-]+\.sh)\b")


def cd_commands(text: str, present: set[str]) -> tuple[dict[str, str], list[str]]:
    """Commands a README's code blocks run in a folder of the tree: after ``cd DIR`` in the same block (RWKV-LM's
    ``cd RWKV-v7/train_temp/`` then ``sh ./demo-training-run.sh``), (script -> command) for ``python x.py`` resolved
    in DIR; and the shell scripts run, there or at the root (RAFT's ``./train_standard.sh``, not under an evaluation
    heading), read next in their folder."""
    entries: dict[str, str] = {}
    scripts: list[str] = []
    cwd = ""
    in_block = False
    heading = ""
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            cwd = ""  # a new block starts at the repository root
            in_block = not in_block
            continue
        if not in_block and (h := _HEADING.match(line)) is not None and h.group(1) is not None:
            heading = h.group(1)
        m = _CD.match(line)
        if m is not None:
            folder = posixpath.normpath(posixpath.join(cwd, m.group(1))).strip("/")
            cwd = "" if folder == "." else folder
            continue
        here = cwd
        if in_block and (m := _CD_AND.match(line)) is not None:
            # ``cd cnn && python train_search.py --unrolled`` (DARTS): that line's command runs in the folder; the
            # next line of such a README starts from the root again (``cd rnn && ...``)
            folder = posixpath.normpath(posixpath.join(cwd, m.group(1))).strip("/")
            here, line = ("" if folder == "." else folder), m.group(2)
            if _EVAL_HEADING.search(heading):
                continue
        if not here and not (in_block and not _EVAL_HEADING.search(heading)):
            continue
        if here:
            found, _ = readme_entry_points(line, present, here)
            for script, cmd in found.items():
                entries.setdefault(script, cmd)
        sh = _RUN_SH.match(line)
        if sh is not None:
            rel = posixpath.normpath(posixpath.join(here, sh.group(1)))
            if rel in present and rel not in scripts:
                scripts.append(rel)
    return entries, scripts


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _command_entries(root: Path, present: set[str]) -> tuple[dict[str, str], str | None]:
    """Script -> the README command that runs it (the README's own commands first, then the linked documents'; the
    later commands that run it too in ``Entries.others``), and the README's text (None without a README)."""
    readme = readme_path(root)
    text = _read(readme) if readme is not None else None
    if readme is None or text is None:
        return {}, None
    entries: dict[str, str] = {}
    others: dict[str, list[str]] = {}
    consoles = console_scripts(root, present)

    def read_commands(paths: list[Path], folder_base: bool) -> None:
        for path in paths:
            doc = text if path == readme else _read(path)
            sub = path.parent.relative_to(root).as_posix()
            base = sub if path.suffix == ".sh" or folder_base else ""
            found, _ = readme_entry_points(doc or "", present, base, shell=path.suffix == ".sh")
            if path != readme:  # a document's console commands (nnU-Net's getting-started: ``nnUNetv2_train ...``)
                found = {**console_commands(doc or "", consoles), **found}
            label = "README" if path == readme else path.relative_to(root).as_posix()
            for s, cmd in found.items():
                how = f"{label}: `{_HTML_TAG.sub('', cmd).strip()}`"
                if entries.setdefault(s, how) != how:
                    others.setdefault(s, []).append(how)  # RWKV-LM's prepare script, then its run script

    read_commands([readme, *linked_documents(text, root), *linked_scripts(text, root, present)], False)
    for script, cmd in console_commands(text, consoles).items():
        entries.setdefault(script, f"README: `{cmd}`")
    after_cd, cd_scripts = cd_commands(text, present)
    for script, cmd in after_cd.items():
        entries.setdefault(script, f"README: `{_HTML_TAG.sub('', cmd).strip()}`")
    read_commands([root / rel for rel in cd_scripts], False)
    promoted: frozenset[str] = frozenset()
    ran = [s for s in entries if not _installs(s)]
    if (ran or not entries) and not any(context_of_path(s) is None for s in ran):
        # no command of its own: the sub-folder documents it sends the user to hold the run (their commands run
        # in that folder), even under ``examples/`` (LoRA reproduces its paper in ``examples/NLG/``); a shell script
        # of an example folder that no such document runs stays an example (LoRA's ``examples/NLU/*.sh``)
        # only the first such document with a command: the README's headline application (EfficientViT's DC-AE);
        # the other applications it lists are alternatives, listed apart
        own = dict(entries)
        entries.clear()
        for doc in folder_documents(text, root):
            read_commands([doc], True)
            if entries:
                break
        for doc in [] if entries or own else hosted_docs_pages(text, root):
            read_commands([doc], False)  # run from the repository's root, as the hosted page's commands are
            if entries:
                break
        if not entries:
            # no such document: the README's own command is the run, though its script sits in an example folder
            # (StreamingLLM's only command, ``python examples/run_streaming_llama.py --enable_streaming``)
            entries.update(own)
        promoted = promoted_folders(entries)
    runs = {s: how for s, how in entries.items() if not _installs(s)}
    current = {s: how for s, how in runs.items() if not _LEGACY.search(s.rpartition("/")[2])}
    current, aside = _aside_split(current)
    kept = Entries({s: how for s, how in (current or runs).items() if context_of_path(s, promoted=promoted) is None})
    kept.others = {s: tuple(o) for s, o in others.items() if s in kept}
    kept.superseded = {s: how for s, how in runs.items() if current and s not in current and s not in aside}
    kept.aside = aside
    return kept, text


# A script its own name marks as superseded (Medusa's ``medusa/train/train_legacy.py``, run by the README's section
# on "the initial release"): an alternative to the README's current runs, the default path only when nothing else runs.
def _aside_split(runs: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(the runs, the demo/test/timing scripts beside them): a README that trains also runs its demo, test and speed
    scripts (Ultra-Fast-Lane-Detection's demo.py, test.py and speed_simple.py), listed apart from the training run,
    each blocking only when it is run; without a training script every run stays."""
    if not any(_TRAIN_NAME.search(s.rpartition("/")[2]) for s in runs):
        return runs, {}
    aside = {s: how for s, how in runs.items() if _ASIDE_NAME.search(s.rpartition("/")[2])}
    return {s: how for s, how in runs.items() if s not in aside}, aside


# A script named in a README's prose as the thing to run: CSRNet's "2. Run 'train.py'" (no command line).
_PROSE_RUN = re.compile(r"\b[Rr]un\s+['\"`]?(?:python3?\s+)?([\w./-]+\.py)\b")


def _prose_runs(text: str, root: Path, present: set[str]) -> Entries:
    """The scripts a README's prose says to run, where it has no command: the default path (a README that trains
    lists its test script apart, ``_aside_split``)."""
    found = [m.group(1).removeprefix("./") for m in _PROSE_RUN.finditer(text)]
    runs = {s: f"README: `python {s}` (its prose says to run {s})" for s in found if s in present}
    runs = {s: how for s, how in runs.items() if context_of_path(s) is None}
    current, aside = _aside_split(runs)
    out = _with_path_dirs(root, current, present) if current else Entries()
    out.aside = aside
    return out


# Scripts a README runs beside its training run that their names mark as demos, evaluations, exports or timings.
_ASIDE_NAME = re.compile(
    r"^(?:demo|test|eval|evaluate|speed|bench|benchmark|export|visuali[sz]e|webcam)(?:[_.-]|\.py$)", re.I
)
_TRAIN_NAME = re.compile(r"^(?:train|pretrain|finetune|fine_tune)(?:[_.-]|\.py$)", re.I)
_LEGACY = re.compile(r"(?:^|[_.-])(?:legacy|deprecated|old)(?:[_.-]|$)", re.IGNORECASE)


# What a README runs besides its commands (an entry's ``how`` starts so; a command's holds ``: `cmd` ``).
_README_RUNS = ("README example", "README: the first notebook")


def says_what_runs(entries: Mapping[str, str]) -> bool:
    """Some entry point is a README command, example or notebook: the README says what runs (a library with none
    leaves its precision and validation to its users)."""
    return any(": `" in how or how.startswith(_README_RUNS) for how in entries.values())


def _installs(script: str) -> bool:
    """``python setup.py build_ext --inplace`` (SAM 2's INSTALL.md), ``python setup.py develop`` (StreamingLLM's
    README): the package's build, an install step, not a run."""
    return script.rpartition("/")[2] == "setup.py"


_NOTEBOOK_LINK = re.compile(r"\]\(\s*(\.?/?[\w./-]+\.ipynb)\s*\)")  # ``[image2pointcloud.ipynb](point_e/...)``


def _folder_entries(text: str, root: Path, present: set[str]) -> Entries:
    """With no command, example or notebook of the README's own (only an install: torchdiffeq's "pip install
    torchdiffeq"), the commands of the first sub-folder document it sends the user to (its ``examples/README.md``:
    ``python ode_demo.py --viz``), run in that folder, which they promote to the default path."""
    for doc in folder_documents(text, root):
        rel = doc.relative_to(root).as_posix()
        found, _ = readme_entry_points(_read(doc) or "", present, doc.parent.relative_to(root).as_posix())
        runs = {s: f"{rel}: `{_HTML_TAG.sub('', c).strip()}`" for s, c in found.items() if not _installs(s)}
        if runs:
            promoted = promoted_folders(runs)
            return Entries({s: how for s, how in runs.items() if context_of_path(s, promoted=promoted) is None})
    return Entries()


def default_entries(root: Path, present: set[str]) -> EntryPoints:
    """The default entry points: README (and linked documents') commands and the scripts they run; else the
    README's Python example; else root scripts by name."""
    entries, text = _command_entries(root, present)
    if entries:
        wraps = {e: m for e in entries if (m := _wrapped_main(root, e, present)) is not None}
        for e, m in wraps.items():
            entries.setdefault(m, f"{_RUN_BY} {e}, {entries[e]}")
        wraps |= {e: m for e, m in _script_launchers(entries).items() if e not in wraps}
        run = _with_path_dirs(root, entries, present)
        run.others = getattr(entries, "others", {})
        run.superseded = getattr(entries, "superseded", {})
        run.aside = getattr(entries, "aside", {})
        return EntryPoints(how=run, wraps=wraps)
    prose = _prose_runs(text, root, present) if text is not None else Entries()
    if prose:
        return EntryPoints(how=prose)
    if text is not None:
        scopes, how = example_entries(text, root, present)
        if scopes:
            return EntryPoints(how={rel: h for rel, h in how.items() if context_of_path(rel) is None}, scopes=scopes)
        notebook = next((n for n in _NOTEBOOK_LINK.findall(text) if n.removeprefix("./") in present), None)
        if notebook is not None:
            # Point-E's README: install, then "to get started, see the following notebooks": the first is the run
            return EntryPoints(how={notebook.removeprefix("./"): f"README: the first notebook it links ({notebook})"})
        folder = _folder_entries(text, root, present)
        if folder:
            return EntryPoints(how=_with_path_dirs(root, folder, present))
    return EntryPoints(
        how=_with_path_dirs(
            root,
            {
                rel: "a script named as an entry point at the repository's root"
                for rel in sorted(present)
                if "/" not in rel
                and rel.endswith(".py")
                and entry_script(rel)
                and not _EVAL_NAME.match(rel)
                and context_of_path(rel) is None
                and _runs_as_script(root / rel)
            },
            present,
        )
    )


# ``sys.path.append('core')``, ``sys.path.insert(0, os.path.join(os.path.dirname(__file__), "src"))``: a folder put
# on the module search path (the last string literal of the call).
_SYS_PATH = re.compile(
    r"^[ \t]*sys\.path\.(?:append|insert)\([^\n]*?['\"]([\w.-][\w./-]*)['\"]\s*\)+[ \t]*(?:#.*)?$", re.M
)


def _with_path_dirs(root: Path, how: dict[str, str], present: set[str]) -> Entries:
    """``how`` with the tree folders its scripts put on ``sys.path`` at module level or in a function, each read
    beside the script and else from the root (where a README command runs)."""
    out = Entries(how)
    # every folder holding a scanned file at any depth (HRNet's ``lib/`` holds only packages)
    folders = {rel.rsplit("/", k)[0] for rel in present for k in range(1, rel.count("/") + 1)}
    dirs: set[str] = set()
    for script in how:
        text = _read(root / script) if script.endswith(".py") else None
        here = script.rpartition("/")[0]
        for m in _SYS_PATH.finditer(text or ""):
            cands = (posixpath.normpath(posixpath.join(here, m.group(1))), posixpath.normpath(m.group(1)))
            hit = next((c for c in cands if _tree_folder(c, folders)), None)
            if hit is not None:
                dirs.add(hit)
        for helper in _path_helpers(root, here, text or "", present):
            dirs |= _joined_path_dirs(helper, here, folders)
    out.path_dirs = frozenset(dirs)
    return out


# ``import _init_paths`` beside the script (HRNet's and Faster R-CNN's ``tools/``): a sibling module imported by its
# bare name at module level, read when it edits ``sys.path``.
_BARE_IMPORT = re.compile(r"^import[ \t]+(\w+)[ \t]*(?:#.*)?$", re.M)
# ``osp.join(this_dir, '..', 'lib')``: the folder a path helper joins from its own (the string parts after the first).
_JOINED = re.compile(r"""\.join\(\s*[\w.()]+\s*,\s*((?:['"][\w.-]+['"]\s*,\s*)*['"][\w./-]+['"])\s*\)""")


def _tree_folder(cand: str, folders: set[str]) -> bool:
    """``cand`` (normalised, from the root) is a folder of the tree, not the root nor above it."""
    return cand not in (".", "") and not cand.startswith("..") and cand in folders


def _path_helpers(root: Path, here: str, text: str, present: set[str]) -> list[str]:
    """The texts of the sibling modules ``text`` imports by a bare name that edit ``sys.path``."""
    out = []
    for m in _BARE_IMPORT.finditer(text):
        rel = posixpath.join(here, f"{m.group(1)}.py") if here else f"{m.group(1)}.py"
        helper = _read(root / rel) if rel in present else None
        if helper is not None and "sys.path." in helper:
            out.append(helper)
    return out


def _joined_path_dirs(text: str, here: str, folders: set[str]) -> set[str]:
    """The tree folders a path helper joins from its own folder and puts on ``sys.path`` (``add_path(lib_path)``
    after ``lib_path = osp.join(this_dir, '..', 'lib')``)."""
    out = set()
    for m in _JOINED.finditer(text):
        rel = "/".join(re.findall(r"['\"]([^'\"]+)['\"]", m.group(1)))
        cand = posixpath.normpath(posixpath.join(here, rel))
        if _tree_folder(cand, folders):
            out.add(cand)
    return out


# ``python -m multiproc train.py ...`` / ``python launch.py train.py``: a runner given another script of the tree.
_RUNS_SCRIPT = re.compile(r"python3?(?:\s+-u)?\s+(?:-m\s+([\w.]+)|([\w./-]+\.py))\s+([\w./-]+\.py)\b")


def _script_launchers(entries: Mapping[str, str]) -> dict[str, str]:
    """Entry -> the script it launches, for a README command that runs a tree module with another entry point as
    its argument (Tacotron 2's ``python -m multiproc train.py``) when the README also runs that script directly:
    the runner is an alternative launcher."""
    out: dict[str, str] = {}
    for e, how in entries.items():
        m = _RUNS_SCRIPT.search(how)
        if m is None:
            continue
        runner = f"{m.group(1).replace('.', '/')}.py" if m.group(1) else m.group(2).removeprefix("./")
        script = m.group(3).removeprefix("./")
        direct = entries.get(script, _RUN_BY)
        if runner == e and script != e and not direct.startswith(_RUN_BY) and _RUNS_SCRIPT.search(direct) is None:
            out[e] = script
    return out


def _wrapped_main(root: Path, script: str, present: set[str]) -> str | None:
    """The script whose ``main()`` ``script`` calls through an import of it (``import main_pretrain as trainer`` ...
    ``trainer.main(args)``; ``from main import main`` ... ``main(args)``; dinov2's launcher ``from dinov2.train import
    main as train_main``, a package that re-exports ``main`` from ``dinov2/train/train.py``), else None."""
    text = _read(root / script)
    if text is None or "main(" not in text:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    mods = _module_names(present)
    modules: dict[str, str] = {}  # local name of an imported module of the tree -> its file
    mains: dict[str, str] = {}  # local name of an imported ``main`` -> the file defining it
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if mods.get(a.name, script) != script:
                    modules[a.asname or a.name] = mods[a.name]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module is not None and node.module in mods:
            for a in node.names:
                target = _defining_main(root, mods[node.module], mods) if a.name == "main" else None
                if target is not None and target != script:
                    mains[a.asname or a.name] = target
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "main" and isinstance(f.value, ast.Name):
            target = modules.get(f.value.id)
        elif isinstance(f, ast.Name):
            target = mains.get(f.id)
        else:
            target = None
        if target is not None and _runs_as_script(root / target):
            return target
    return None


def _defining_main(root: Path, rel: str, mods: dict[str, str]) -> str | None:
    """The file that defines the ``main`` that module ``rel`` offers: ``rel`` itself, or for a package
    ``__init__.py`` the module it re-exports ``main`` from (``from .train import main``)."""
    if not rel.endswith("__init__.py"):
        return rel
    text = _read(root / rel)
    try:
        tree = ast.parse(text or "")
    except (SyntaxError, ValueError):
        return None
    package = rel.rpartition("/")[0].replace("/", ".").removeprefix("src.")
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(a.name == "main" and a.asname is None for a in node.names):
            dotted = f"{package}.{node.module}" if node.level == 1 and node.module else node.module or ""
            return mods.get(dotted)
    return None


def _runs_as_script(path: Path) -> bool:
    """A ``__main__`` block, or a flat script with no ``def`` (a module of functions is a library: ``runner.py``)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "__main__" in text or re.search(r"^\s*def\s", text, re.M) is None
