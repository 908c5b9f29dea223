"""One file, a chunk of files, a whole tree: reads each file once and turns every failure into a skip reason."""

from __future__ import annotations

import os
import re
import signal
import tempfile
import time
from collections.abc import Callable, Container, Iterable
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from pathlib import Path

from accelpilot.errors import InputFileError
from accelpilot.porting.findings import REACH_WARNING, entry_script, nested_distribution
from accelpilot.porting.log import (
    FILE_WIDE,
    NOT_PORTING,
    Finding,
    PortabilityLog,
    Skipped,
    context_of_path,
    generated_twin,
    host_side,
    promoted_folders,
)
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.bringup import commanded, default_sources, model_bringup
from accelpilot.porting.scan.call_reach import mark_called_cuda, wanted_files
from accelpilot.porting.scan.checkpoints import checkpoint_loads, mark_device_checkpoint_loads
from accelpilot.porting.scan.compile_step import compile_step
from accelpilot.porting.scan.config_device import mark_config_devices, readme_example_devices
from accelpilot.porting.scan.dead_code import mark_record_requirements, mark_unreached_modules, mark_unrun_scripts
from accelpilot.porting.scan.declared_deps import undeclared_dependencies
from accelpilot.porting.scan.default_path import default_roots
from accelpilot.porting.scan.defaults import Mentions, overridden_in, parse_subject
from accelpilot.porting.scan.documents import readme_path
from accelpilot.porting.scan.entry import EntryPoints, default_entries
from accelpilot.porting.scan.entry_blocking import mark_entry_blocking
from accelpilot.porting.scan.ext_join import join_fallback_builds
from accelpilot.porting.scan.fallback_reach import fallback_reach, reach_tree
from accelpilot.porting.scan.families import (
    Prepared,
    _module_names,
    assign_families,
    drop_own_package,
    own_packages,
    resolve_imports,
)
from accelpilot.porting.scan.guarded_reach import mark_guarded_runtime_imports
from accelpilot.porting.scan.hf_stack import launch_settings, mark_trainer_stack, stack_pins
from accelpilot.porting.scan.install import install_pins
from accelpilot.porting.scan.launch_flags import (
    device_flag,
    drop_held_lightning,
    lightning_settings,
    local_rank_flag,
)
from accelpilot.porting.scan.launch_reach import mark_launched_setup
from accelpilot.porting.scan.load_reach import mark_called_loads
from accelpilot.porting.scan.memory_fit import memory_fit
from accelpilot.porting.scan.old_syntax import MARK, repaired_source
from accelpilot.porting.scan.one_file import DEFAULT_MAX_BYTES, FileOutcome, scan_chunk
from accelpilot.porting.scan.option_guards import option_guards
from accelpilot.porting.scan.precision import fp32_training
from accelpilot.porting.scan.prefixed_imports import prefixed_imports
from accelpilot.porting.scan.refs import Index, find_refs, jit_sources
from accelpilot.porting.scan.setting_reach import mark_setting_gated
from accelpilot.porting.scan.settings import default_settings
from accelpilot.porting.scan.setup_ext import glob_extensions
from accelpilot.porting.scan.stack_blocking import mark_stack_blocking
from accelpilot.porting.scan.step_syncs import configured_syncs, cross_file_syncs
from accelpilot.porting.scan.submodules import unscanned_submodules
from accelpilot.porting.scan.timm_pins import mark_timm_mixup, timm_pin
from accelpilot.porting.scan.trainer_subclass import trainer_subclass_calls
from accelpilot.porting.scan.validation import parity_validation
from accelpilot.porting.scan.walk import display_name, walk

# Compile hazards whose cause is host-side code by nature: a collator padding each batch to its longest sample runs
# in the data loader, and the shapes it makes reach the device; timm's Mixup is built in the data module (Swin's
# ``data/build.py``) and applied to the device batch in the training loop.
_FROM_HOST = frozenset({"dynamic-padding", "device-augmentation"})
# ... but a processor's padding is a library's option, not the batches the default path makes (a repository's own
# tokenizer wrapper, ColBERT's ``doc_tokenization.py``, pads the batches its encoder runs: porting work).
_LIBRARY_HOST = re.compile(r"processing|processor|_utils\.py$")
# Not compile hazards, but host work in a data file: a loader mixing datasets draws which one to read next with
# ``probs.multinomial(1)`` on the CPU (SAM 2's ``training/dataset/``), no token sampled on the device.
_HOST_IN_DATA = frozenset({"sampling-ops"})


def _from_host(rel: str, rule_id: str) -> bool:
    return rule_id in _FROM_HOST and _LIBRARY_HOST.search(rel.rpartition("/")[2]) is None


PARALLEL_MIN_FILES = 200
CHUNK = 48


def _chunks(items: list[tuple[str, str, str]], n: int) -> Iterable[list[tuple[str, str, str]]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def _importers(prepared: dict[str, Prepared], rels: list[str]) -> dict[str, set[str]]:
    """Each Python file's imports (any level), resolved from what the workers read: who imports a script."""
    mods = _module_names(rels)
    return {rel: resolve_imports(rel, raw, mods)[0] for rel, (raw, _) in prepared.items()}


def _repaired_copies(files: list[tuple[str, str, str]], fixed: set[str], into: Path) -> list[tuple[str, str, str]]:
    """``files`` with each file of ``fixed`` (written for an older Python, ``old_syntax.repair``) read from its
    repaired text in ``into``: every later pass reads the source the first pass scanned, at the same line numbers."""
    out = []
    for k, (path, rel, kind) in enumerate(files):
        if rel in fixed:
            dest = into / f"{k}.py"
            dest.write_bytes(repaired_source(Path(path).read_bytes()))
            path = str(dest)
        out.append((path, rel, kind))
    return out


def _python_sources(files: list[tuple[str, str, str]], unread: set[str]) -> Iterable[tuple[str, bytes]]:
    for path, rel, kind in files:
        if kind == "python" and rel not in unread:
            try:
                yield rel, Path(path).read_bytes()
            except OSError:
                continue  # already a skip reason of the first pass


def _reader(files: list[tuple[str, str, str]], unread: set[str]) -> Callable[[str], bytes | None]:
    """One Python source by its path in the scan, read when asked (None: not a readable Python file)."""
    paths = {rel: path for path, rel, kind in files if kind == "python" and rel not in unread}

    def read(rel: str) -> bytes | None:
        try:
            return Path(paths[rel]).read_bytes() if rel in paths else None
        except OSError:
            return None

    return read


def _text_reader(files: list[tuple[str, str, str]], unread: set[str]) -> Callable[[str], str | None]:
    """Any scanned text file by its path in the scan, read when asked (None: not readable)."""
    paths = {rel: path for path, rel, _ in files if rel not in unread}

    def read(rel: str) -> str | None:
        try:
            return Path(paths[rel]).read_text(encoding="utf-8", errors="replace") if rel in paths else None
        except OSError:
            return None

    return read


def _cross_file(
    files: list[tuple[str, str, str]],
    findings: list[Finding],
    unread: set[str],
    tap: Mentions | None = None,
    promoted: frozenset[str] = frozenset(),
    globbed: dict[str, tuple[str, str]] | None = None,
) -> list[Finding]:
    """The findings with launches and imports of the tree's kernels and importers of its built extensions added
    as lines of the item they belong to (second pass: reads again only the few files that may use one). ``tap``
    sees every source this pass reads (the defaults check's, so that the tree is read once)."""
    index = Index((f.rule, f.file, f.subject, f.message) for f in findings if f.subject and f.file)
    if index.empty():
        return findings

    def sources() -> Iterable[tuple[str, bytes]]:
        for rel, data in _python_sources(files, unread):
            if tap is not None:
                tap.see(rel, data)
            yield rel, data

    have = {(f.rule, f.file, f.line) for f in findings}
    present = {rel for _, rel, _ in files}
    out: list[Finding] = []
    refs, built = find_refs(sources(), index)
    built = {**(globbed or {}), **built}  # a setup file's globbed sources (``setup_ext.py``), literal lists first
    # a CUDA source an extension builds from is part of that extension's item, and so are the headers beside its
    # sources (``csrc/scan/*.cuh`` included by the ``.cu`` files setup.py lists)
    exts: dict[str, set[tuple[str, str]]] = {}
    for rel, built_ext in built.items():
        exts.setdefault(rel.rpartition("/")[0], set()).add(built_ext)
    folders = {folder: next(iter(e)) for folder, e in exts.items() if len(e) == 1}  # one extension's folder
    loads = [
        (f.file, f.line, f.subject)
        for f in findings
        if f.message.startswith("load(") and f.file and f.line and f.subject
    ]
    built |= jit_sources(loads, _reader(files, unread), present) if loads else {}
    # a source only an example's (or an unreached script's) ``load()`` compiles is in that script's context
    builder = {(f.file, f.subject): f.context for f in findings if f.message.startswith("load(")}
    for i, f in enumerate(findings):
        if f.rule == "cuda-source-file" and f.file is not None:
            ext = built.get(f.file) or folders.get(f.file.rpartition("/")[0])
            if ext is not None:
                f.defined_in, f.subject = ext
                if f.context is None and (ctx := builder.get(ext)) is not None:
                    findings[i] = Finding.from_rule(
                        RULES[f.rule],
                        file=f.file,
                        line=f.line,
                        message=f.message,
                        context=ctx,
                        subject=f.subject,
                        defined_in=f.defined_in,
                    )
    for rule, rel, line, message, subject, context, defined_in, text in refs:
        if (rule, rel, line) in have:
            continue
        out.append(
            Finding.from_rule(
                RULES[rule],
                file=rel,
                line=line,
                message=message,
                snippet=text,
                subject=subject,
                context=_line_context(rel, present, context, promoted),
                defined_in=defined_in,
            )
        )
    # An import of a module this tree builds is that extension's line, not a third-party library dependency
    # (``import selective_scan_cuda`` where setup.py builds it).
    own = {(f.file, f.line) for f in out if f.rule == "cpp-extension-cuda"}
    kept = [f for f in findings if (f.file, f.line) not in own or RULES[f.rule].item != "package"]
    joined = kept + out
    join_fallback_builds(joined, _text_reader(files, unread))
    return joined


def _holding_chunk(items: list[tuple[str, str]], names: list[str]) -> list[str]:
    """The files of a chunk (path, rel) that mention any of ``names`` as a word (a worker's share of the defaults
    check: the parent then reads only these)."""
    mentions = Mentions(set(names))
    out: list[str] = []
    for path, rel in items:
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue  # already a skip reason of the first pass
        if mentions.names_in(data):
            out.append(rel)
    return out


def _wanted_defaults(findings: list[Finding]) -> set[tuple[str, str]]:
    """(def, parameter) of the porting findings that lie in a parameter's default."""
    return {p for f in findings if f.porting and (p := parse_subject(f.subject)) is not None}


def _overridden_defaults(
    files: list[tuple[str, str, str]],
    findings: list[Finding],
    unread: set[str],
    mentions: Mentions | None,
    pool: ProcessPoolExecutor | None = None,
) -> list[Finding]:
    """Device findings in a parameter default that every call of the repository overrides become
    ``overridden-default`` (``defaults.py``). ``mentions`` gathered the sources during ``_cross_file``; when that
    pass read nothing (no kernel in the tree), the files are read here: by the workers of ``pool`` when there is
    one (each reads its chunks and names the files that mention a wanted def; the parent reads only those)."""
    wanted = _wanted_defaults(findings)
    if not wanted or mentions is None:
        return findings
    if mentions.seen == 0:
        sources = [(p, rel, k) for p, rel, k in files if k == "python" and rel not in unread]
        if pool is not None:
            names = sorted({f for f, _ in wanted})
            pairs = [[(p, rel) for p, rel, _ in chunk] for chunk in _chunks(sources, CHUNK)]
            holding = {rel for part in pool.map(_holding_chunk, pairs, [names] * len(pairs)) for rel in part}
            sources = [f for f in sources if f[1] in holding]
        for rel, data in _python_sources(sources, unread):
            mentions.see(rel, data)
    done = overridden_in(mentions, wanted)
    out: list[Finding] = []
    for f in findings:
        if f.porting and parse_subject(f.subject) in done:
            f = Finding.from_rule(
                RULES[f.rule],
                file=f.file,
                line=f.line,
                message=f.message,
                snippet=f.snippet,
                cell=f.cell,
                subject=f.subject,
                context="overridden-default",
                defined_in=f.defined_in,
            )
        out.append(f)
    return out


def _mark_vendored(findings: list[Finding], present: set[str]) -> None:
    """A line of a distribution copied into the tree (``findings.nested_distribution``: Jukebox's ``apex/``) that a
    pass left project code or an optional path joins the copy's one vendored item (``item_keys.item_key``)."""
    for f in findings:
        if f.file and (f.context is None or f.context in REACH_WARNING) and nested_distribution(f.file, present):
            f.context = "vendored"


def _line_context(rel: str, present: set[str], context: str | None, promoted: frozenset[str]) -> str | None:
    """A cross-file line's context: the file's own when it holds for the whole file, else the line's, else the
    file's."""
    if generated_twin(rel, present):
        return "generator-source"
    path_context = context_of_path(rel, present, promoted)
    return path_context if path_context in FILE_WIDE or _outranks(path_context, context) else context or path_context


def _outranks(path_context: str | None, context: str | None) -> bool:
    """A file that is not porting work (test code) stays so under a line's porting reach (``optional``,
    ``requirement``, a lazy import): ``elif torch.cuda.is_available(): torch_device = "cuda"`` in ``testing_utils.py``
    is a guarded path of test code, still test code. A line's own not-porting context (a probe) is kept."""
    return path_context in NOT_PORTING and (context is None or context.split(":", 1)[0] not in NOT_PORTING)


# Downloads run when data is prepared, before training (``data/openwebtext/prepare.py``, ``download_data.py``).
_DATA_PREP = re.compile(r"(^|/)(data|datasets?)/|(^|/)(prepare|preprocess|download_?data)[\w-]*\.py$")


def _when_it_runs(rel: str, rule_id: str) -> str | None:
    """The not-porting context of a line whose run is not the model's: a cuDNN/TF32 switch (a no-op off NVIDIA
    GPUs), a download ``setup.py`` makes at install, a download in a data preparation script, any other run-time
    download (the Hub, torch.hub, a URL)."""
    if rule_id == "cudnn-tf32-flag":
        return "no-op-elsewhere"
    if rule_id in ("http-download", "hub-download"):
        if rel.rpartition("/")[2] == "setup.py":
            return "install-time"
        if rule_id == "http-download" and _DATA_PREP.search(rel):
            return "data-prep"
        return "any-host-download"
    return None


def _file_findings(
    outcomes: list[FileOutcome],
    files: list[tuple[str, str, str]],
    skipped: list[Skipped],
    run_scripts: Container[str] = (),
    promoted: frozenset[str] = frozenset(),
) -> tuple[list[Finding], int]:
    """The findings of every file's outcome, each with its file's context (and the count of suppressed ones); a
    file's skip reason is appended to ``skipped``. A ``__main__`` block of a script in ``run_scripts`` (one a
    README command runs) or named as an entry script is the run, not a demo."""
    findings: list[Finding] = []
    suppressed = 0
    present = {rel for _, rel, _ in files}
    for rel, found, reason, sup in outcomes:
        suppressed += sup
        if reason is not None:
            skipped.append(Skipped(path=rel, reason=reason))
        path_context = context_of_path(rel, present, promoted)
        host = host_side(rel)
        entry = entry_script(rel) or rel in run_scripts
        for rule_id, line, message, snippet, cell, subject, context in found:
            if context is not None and context.startswith("main-block"):
                # the __main__ block of train.py is the run, not a demo: a guard inside it still holds
                context = (context.partition(">")[2] or None) if entry else "main-block"
            if context is None:
                context = _when_it_runs(rel, rule_id)
            if path_context in FILE_WIDE or _outranks(path_context, context):
                context = path_context  # generated elsewhere, or another runtime's exporter: no line of it is ported
            elif (
                host
                and context is None
                and (RULES[rule_id].category == "compile_hazard" or rule_id in _HOST_IN_DATA)
                and not _from_host(rel, rule_id)
            ):
                context = "host-side"
            findings.append(
                Finding.from_rule(
                    RULES[rule_id],
                    file=rel,
                    line=line,
                    message=message,
                    snippet=snippet,
                    cell=cell,
                    subject=subject,
                    context=context or path_context,
                )
            )
    return findings, suppressed


def scan_path(
    path: str | Path,
    *,
    targets: frozenset[str] | None = None,
    jobs: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    follow_symlinks: bool = False,
) -> PortabilityLog:
    """Scan a file or directory tree into a PortabilityLog. Never imports or executes what it reads, and never
    reads outside ``path`` (links leading out are listed as skipped)."""
    t0 = time.perf_counter()
    root = Path(path)
    if not root.exists():
        raise InputFileError("no such file or directory", file=str(path), fix="give the path of a repository to scan")
    files, skipped = walk(root, follow_symlinks=follow_symlinks)
    n_jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    with ExitStack() as stack:
        pool: ProcessPoolExecutor | None = None
        if n_jobs > 1 and len(files) >= PARALLEL_MIN_FILES:
            # Workers ignore Ctrl-C (each would print a traceback); the parent cancels the queued chunks and stops.
            ignore_sigint = (signal.SIGINT, signal.SIG_IGN)
            pool = stack.enter_context(
                ProcessPoolExecutor(max_workers=n_jobs, initializer=signal.signal, initargs=ignore_sigint)
            )
        try:
            if pool is not None:
                chunks = pool.map(scan_chunk, _chunks(files, CHUNK), [max_bytes] * len(files))
                pairs = [pair for chunk_out in chunks for pair in chunk_out]
            else:
                pairs = scan_chunk(files, max_bytes)
            outcomes = [outcome for outcome, *_ in pairs]
            prepared = {outcome[0]: prep for outcome, prep, *_ in pairs if prep is not None}
            ckpt_facts = {outcome[0]: f for outcome, _, f, *_ in pairs if f is not None}
            precision = {outcome[0]: p for outcome, _, _, p, _ in pairs if p is not None}
            steps = {outcome[0]: s for outcome, *_, s in pairs if s}
            rels = [rel for _, rel, _ in files]
            if fixed := {rel for rel, found_in, *_ in outcomes if any(f[2].endswith(MARK) for f in found_in)}:
                files = _repaired_copies(files, fixed, Path(stack.enter_context(tempfile.TemporaryDirectory())))
            found = default_entries(root, set(rels)) if root.is_dir() else EntryPoints()
            promoted = promoted_folders(found.how)  # example folders a README command runs: the default path
            findings, suppressed = _file_findings(outcomes, files, skipped, found.run_scripts(), promoted)
            unread = {s.path for s in skipped}
            wanted = _wanted_defaults(findings)
            mentions = Mentions({f for f, _ in wanted}) if wanted else None
            ext_lines, ext_sources = glob_extensions(rels, _reader(files, unread))
            findings += ext_lines
            findings = _cross_file(files, findings, unread, mentions, promoted, ext_sources)
            findings = _overridden_defaults(files, findings, unread, mentions, pool)
            present = set(rels)
            findings += cross_file_syncs(
                steps,
                rels,
                found.how,
                _reader(files, unread),
                findings,
                lambda r: _line_context(r, present, None, promoted),
            )
            own = own_packages(rels)
            findings = drop_own_package(findings, own)
            entries = found.how
            roots = default_roots(rels, own, entries)
            findings = configured_syncs(findings, entries, _text_reader(files, unread))
            readme = readme_path(root) if root.is_dir() else None
            mark_unreached_modules(
                findings,
                _python_sources(files, unread),
                rels,
                entries,
                _text_reader(files, unread),
                readme.read_text(encoding="utf-8", errors="replace") if readme is not None else "",
            )
            assign_families(findings, _python_sources(files, unread), rels, roots, prepared, _reader(files, unread))
            mark_stack_blocking(findings, roots, entries, _reader(files, unread), rels)
            findings += trainer_subclass_calls(findings, entries, _text_reader(files, unread))
            mark_entry_blocking(findings, found, _text_reader(files, unread))
            mark_unrun_scripts(findings, lambda: _importers(prepared, rels), entries, _reader(files, unread))
            if commanded(entries):
                mark_guarded_runtime_imports(findings, _python_sources(files, unread), rels, roots)
            pins = stack_pins(_text_reader(files, unread), rels)
            mark_trainer_stack(findings, pins)
            findings += launch_settings(root, entries, _reader(files, unread), pins, rels)
            findings += lightning_settings(root, entries, rels) + local_rank_flag(root, entries, rels)
            findings += device_flag(root, entries)
            findings = drop_held_lightning(findings)
            mark_launched_setup(findings, entries, _python_sources(files, unread), rels)
            called = wanted_files(findings, entries)
            if called:
                mark_called_cuda(findings, entries, _reader(files, unread), rels)
            option_guards(findings, root, entries)
            settings = default_settings(root, entries, set(rels), _text_reader(files, unread))
            tree = reach_tree(_python_sources(files, unread), settings)
            findings = fallback_reach(findings, tree)
            mark_setting_gated(findings, tree, entries)
            reached_sources = default_sources(entries, _reader(files, unread), rels) if commanded(entries) else {}
            bringup = model_bringup(entries, reached_sources)
            findings += bringup + compile_step(bringup, findings, reached_sources)
            findings += parity_validation(root, entries, rels) if root.is_dir() else []
            findings += memory_fit(root, entries) if root.is_dir() else []
            findings += undeclared_dependencies(entries, reached_sources, rels, root) if root.is_dir() else []
            findings += (
                install_pins(root, _text_reader(files, unread), rels, findings, entries) if root.is_dir() else []
            )
            mark_record_requirements(findings)
            mark_timm_mixup(findings, lambda: timm_pin(root, rels, _text_reader(files, unread)))
            findings += unscanned_submodules(root, rels, _text_reader(files, unread), promoted) if root.is_dir() else []
            findings += prefixed_imports(entries, rels, _text_reader(files, unread))
            findings += checkpoint_loads(entries, ckpt_facts, rels, _reader(files, unread))
            mark_called_loads(findings, entries, _reader(files, unread), rels)
            mark_device_checkpoint_loads(findings, entries, lambda: _python_sources(files, unread))
            mark_config_devices(findings, entries, _text_reader(files, unread), rels)
            findings += readme_example_devices(root, entries, rels) if root.is_dir() else []
            findings += fp32_training(entries, precision, _importers(prepared, rels))
            _mark_vendored(findings, set(rels))
        except KeyboardInterrupt:
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
            raise
    log = PortabilityLog(
        root=display_name(str(root)),
        files_scanned=len(files),
        findings=findings,
        skipped=sorted(skipped, key=lambda s: s.path),
        suppressed=suppressed,
    )
    log.only_targets(targets)
    log.elapsed_s = round(time.perf_counter() - t0, 3)
    return log
