"""Findings into porting items: the key of a finding's item (``item_keys.py``), then the joins (serving lines,
same-function hazards), then each item's severity, reason and days."""

from __future__ import annotations

import re

from accelpilot.porting.effort import (
    ALTERNATIVE_COMMAND,
    BY_CLASS,
    DECLARED_ONLY,
    EAGER_EQUIVALENT,
    EAGER_SWAP,
    FALLBACK_CHECK,
    FAMILY_NOTE,
    FAMILY_STEP,
    KERNEL_LANGUAGE,
    NUMPY_NAMES,
    OPTIONAL_LIBRARY,
    PKG_RESOURCES_CALLS,
    ROWS,
    SMALL_EXTENSION,
    SMALL_KERNEL_BYTES,
    VENDORED_PROJECT,
    XLA_ERA_RULES,
)
from accelpilot.porting.findings import INSTALL_FAILS, UNRUN_SCRIPT, Finding, Item, ItemLine
from accelpilot.porting.item_keys import (
    FAMILY,
    FAMILY_RULES,
    HF_GENERATE,
    item_key,
    job_family,
    kernel_definition,
    stack_library,
)
from accelpilot.porting.rules import EFFORT_RANK, RULES, SEVERITY_RANK

__all__ = ["FAMILY", "FAMILY_RULES", "HF_GENERATE", "build_items", "item_key", "job_family", "stack_library"]


# A finding's subject ``serves:<rule>:<line>`` (set by the scanner): the line only serves the work of that finding of
# its file (a hub kernel's wrapper packing the kernel's inputs, a package adapter's device default), so it joins
# that finding's item.
SERVES = "serves:"


def _join_serving(groups: dict[str, tuple[str, list[Finding]]], serving: list[Finding]) -> None:
    """Each serving finding joins the item holding the finding it names; one whose target is not an item (another
    scan, a filtered log) keeps its own item."""
    where = {(f.file, f.line, f.rule): k for k, (_, fs) in groups.items() for f in fs}
    by_file = {(f.file, f.rule): k for k, (_, fs) in groups.items() for f in fs}
    for f in serving:
        rule, _, line = (f.subject or "")[len(SERVES) :].rpartition(":")
        if line.startswith("@"):  # modules the line's class imports: the first that holds a ``rule`` finding
            files = [_module_file(f.file or "", m) for m in line[1:].split(",")]
            target = next((by_file[(p, rule)] for c in files for p in c if (p, rule) in by_file), None)
        else:
            target = where.get((f.file, int(line) if line.isdigit() else None, rule))
        if target is None:
            key, label = item_key(f)
            groups.setdefault(key, (label, []))[1].append(f)
        else:
            groups[target][1].append(f)


def _module_file(file: str, module: str) -> tuple[str, str]:
    """The files (``x.py``, ``x/__init__.py``) a relative import ``..a.b`` made in ``file`` names, as scan paths."""
    level = len(module) - len(module.lstrip("."))
    parts = file.split("/")[:-1]
    if level - 1 > len(parts):  # above the scan root: no file of this scan
        return "", ""
    base = parts[: len(parts) - (level - 1)]
    stem = "/".join(base + [p for p in module.lstrip(".").split(".") if p])
    return f"{stem}.py", f"{stem}/__init__.py"


# Compile hazards of the model graph: one rewrite of a function (static shapes, no host sync) fixes all of them in
# that function, whichever rules fired. float64/complex are left out: a dtype change is its own work (and its own
# accuracy check), not part of the shape rewrite.
SAME_FUNCTION_RULES = frozenset(
    r.id
    for r in RULES.values()
    if r.category == "compile_hazard" and r.item == "file" and r.id not in {"float64-dtype", "complex-dtype"}
)


def _line_order(f: Finding) -> tuple[str, int, int, str]:
    return (f.file or "", f.cell or 0, f.line or 0, f.rule)


def _merge_same_function(groups: dict[str, tuple[str, list[Finding]]]) -> None:
    """One item per rewrite: the per-file items of the hazard rules that share an enclosing function (a finding's
    ``subject``, set by the scanner) become one item, transitively (union-find over items); the repository item of
    a ``generation/`` package's growing sequences takes part, and absorbs what shares its functions. Otherwise the
    merged item keeps the key of the member holding its earliest line, so its key, rule and title all name that
    first line. Logs written before findings named their function (subject None) keep one item per rule and file."""
    parent: dict[str, str] = {}

    def root(k: str) -> str:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    owner: dict[tuple[str, int, str], str] = {}  # (file, cell, function) -> the first item seen holding it
    for k, (_, fs) in groups.items():
        parts = k.split("|")
        # the generate loops (``item_key``); not Hugging Face's generate() calls, one library port of their own
        generate = parts[0] == "repo" and parts[1] == "growing-sequence" and parts[-1] != HF_GENERATE
        if not generate and (parts[0] != "file" or parts[1] not in SAME_FUNCTION_RULES):
            continue
        parent.setdefault(k, k)
        for f in fs:
            if f.subject is None:
                continue
            other = owner.setdefault((f.file or "", f.cell or 0, f.subject), k)
            a, b = root(other), root(k)
            if a != b:
                parent[b] = a
    # A file of the generate loops (it holds a growing sequence of the ``generation/`` item: the decode loop, assisted
    # decoding's candidate generators) is rewritten with them: its other hazards join that item whatever function
    # holds them. A ``generation/`` file with no such line (the logits processors) keeps its own items.
    loops = {
        (f.file or "", k)
        for k, (_, fs) in groups.items()
        if k.startswith("repo|growing-sequence|") and not k.endswith(HF_GENERATE)
        for f in fs
    }
    for k in list(parent):
        parts = k.split("|")
        for file, repo_key in loops:
            if parts[0] == "file" and parts[2] == file:
                a, b = root(repo_key), root(k)
                if a != b:
                    parent[b] = a
    members: dict[str, list[str]] = {}
    for k in parent:
        members.setdefault(root(k), []).append(k)
    for ks in members.values():
        if len(ks) < 2:
            continue
        # the generate loops' repository item absorbs the hazards of its functions (one rewrite of the loops)
        keep = min(ks, key=lambda k: (not k.startswith("repo|"), min(_line_order(f) for f in groups[k][1])))
        for k in ks:
            if k != keep:
                groups[keep][1].extend(groups.pop(k)[1])


# Files that declare dependencies: a line there installs a package, it runs no code path.
_DECLARATIONS = re.compile(
    r"(^|/)(pyproject\.toml|setup\.py|setup\.cfg|Pipfile|requirements[\w.-]*\.txt|environment[\w.-]*\.ya?ml)$"
)
DECLARED_REASON = (
    "declared as an install dependency, and no code path of the scan imports it unguarded: it blocks only if it "
    "does not install on the target (make it an optional extra)"
)


# A CUDA-only library (TensorRT, DALI, ...) that nothing installs and that only a function imports where it is used
# (yolov5's TensorRT export and ``.engine`` backend): an optional integration, not the workload's engine.
OPTIONAL_LIBRARY_REASON = (
    "optional integration: imported only inside the functions that use it (or behind an ImportError fallback), or "
    "launched only by a script no default command runs, and installed by no requirement; it blocks only the path "
    "that selects it"
)
_WHERE_USED = ("lazy-import", "optional")


# Libraries a port replaces whose item is only an optional integration when nothing imports them unguarded and no
# requirement installs them: a CUDA-only library, and a training runtime used by one alternative path (lit-llama's
# DeepSpeed checkpoint conversion imported inside a function; ChatGLM's ``ds_train_finetune.sh``, a launcher script
# that is no default command).
_OPTIONAL_KEYS = ("package|cuda-only-library|", "package|deepspeed|", "package|training-runtime|")


def _optional_library(key: str, fs: list[Finding]) -> bool:
    return key.startswith(_OPTIONAL_KEYS) and all(
        f.context in _WHERE_USED or f.message.startswith("string ") or (f.file or "").endswith(".sh") for f in fs
    )


def _declared(f: Finding) -> bool:
    return f.message.startswith("package ") and _DECLARATIONS.search(f.file or "") is not None


def _fold_kernel_languages(groups: dict[str, tuple[str, list[Finding]]]) -> set[int]:
    """In a tree that defines kernels in a language, its dependency on that language (``import triton`` in a
    utility, ``triton>=3`` in pyproject.toml) goes with the kernels' port: its lines join the first kernel item of
    that language on a main path (not a benchmark's) instead of an item of their own. Returns the folded findings
    (by id), which do not set the severity of the item they join."""
    folded: set[int] = set()
    for k in [k for k in groups if k.startswith("package|")]:
        rule = k.split("|")[1]
        if RULES.get(rule) is None or RULES[rule].item != "kernel":
            continue
        target = next(
            (
                t
                for t in sorted(groups)
                if t.startswith(f"kernel|{rule}|") and any(f.context is None for f in groups[t][1])
            ),
            None,
        )
        if target is not None:
            moved = groups.pop(k)[1]
            folded.update(id(f) for f in moved)
            groups[target][1].extend(moved)
    return folded


def _blocking_reason(fs: list[Finding]) -> str:
    """Why a blocking item stops the default path, and the line that reaches it: the first unguarded launch, call or
    import of it from another file, else its definition (a kernel whose launches the scan does not follow), else its
    first blocking line."""
    blocking = [f for f in fs if f.severity == "blocking"]
    for f in blocking:
        if f.reason and f"{f.file}:{f.line}" in f.reason:  # a line that says why it blocks, naming itself
            return f.reason
    for prefix in ("launches ", "calls ", "imports ", "@"):
        uses = [f for f in blocking if f.message.startswith(prefix)]
        if uses:
            break
    builds = [f for f in blocking if "Extension(" in f.message or f.message.startswith("load(")]
    f = (uses or builds or blocking or fs)[0]
    out = f"on the default path: {f.message} at {f.file or '?'}:{f.line or '?'} (no flag, fallback or guard)"
    if not uses:  # a build with no blocking use: name the code that imports what it builds
        use = next((u for u in fs if u.message.startswith(("imports the built", "calls "))), None)
        if use is not None:
            out += f"; the code reaches it at {use.file}:{use.line} ({use.message})"
    return out


def _nested_build(f: Finding) -> bool:
    """A builder's definition line (``CUDAExtension('ft_attention')``) in a setup script below the root."""
    name = (f.file or "").rpartition("/")[2]
    return (
        "/" in (f.file or "")
        and name.startswith("setup")
        and name.endswith(".py")
        and f.message.startswith(("CUDAExtension(", "Extension("))
    )


def family_kernels(fs: list[Finding]) -> list[str]:
    """The kernels of a family: those defined in its files, less the files none of whose kernels is launched (a
    file of ``@triton.jit`` helpers that other kernels call is inlined into them: part of their port)."""
    launched = {f.subject for f in fs if f.subject and f.message.startswith("launches kernel")}
    by_file: dict[str, set[str]] = {}
    for f in fs:
        if f.subject and kernel_definition(f.rule, f.message):
            by_file.setdefault(f.file or "", set()).add(f.subject)
    kept = [names for names in by_file.values() if names & launched] or list(by_file.values())
    defined = set().union(*kept)
    if defined & launched and all(f.rule == "numba-cuda" for f in fs if f.subject in defined):
        # numba's device functions (``@cuda.jit(device=True)``) are compiled into the kernels that call them: only
        # the kernels launched with ``[grid]`` are ported (OpenPCDet's rotated IoU: 11 functions, one kernel)
        defined &= launched
    return sorted(defined) or ["(kernels)"]


def _days(
    key: str, rule: str, effort: str, fs: list[Finding], severity: str, reason: str | None
) -> tuple[float, float, str]:
    """Engineer-days of one item from the effort table: a kernel family's range grows with its kernels (each further
    kernel adds ``FAMILY_STEP``: the reference, tests and tiling are shared); an item that only imports a kernel
    language is removing that dependency; a kernel or library that falls back off CUDA is measuring the fallback;
    a package only declared is an edit of the dependency list."""
    r = ROWS.get(rule) or BY_CLASS.get(effort) or BY_CLASS["days"]
    if key.startswith("vendored|"):
        return VENDORED_PROJECT.low, VENDORED_PROJECT.high, VENDORED_PROJECT.assumption
    if key == "repo|stack-upgrade|numpy":
        return NUMPY_NAMES.low, NUMPY_NAMES.high, NUMPY_NAMES.assumption
    if key == "repo|stack-upgrade|setuptools":
        return PKG_RESOURCES_CALLS.low, PKG_RESOURCES_CALLS.high, PKG_RESOURCES_CALLS.assumption
    if key.startswith("package|") and RULES.get(rule) is not None and RULES[rule].item == "kernel":
        r = KERNEL_LANGUAGE
    if key.startswith("package|cuda-kernel-library|") and key.rpartition("|")[2] in EAGER_EQUIVALENT:
        eq = EAGER_EQUIVALENT[key.rpartition("|")[2]]
        return EAGER_SWAP.low, EAGER_SWAP.high, f"{EAGER_SWAP.assumption} ({eq})"
    if key.startswith(("kernel|", "package|")) and severity != "blocking" and reason is not None:
        if reason == DECLARED_REASON:
            r = DECLARED_ONLY
        elif reason.startswith(OPTIONAL_LIBRARY_REASON):
            r = OPTIONAL_LIBRARY
        elif reason.startswith(ALTERNATIVE_REASON) or (reason.startswith("blocks when ") and UNRUN_SCRIPT in reason):
            r = ALTERNATIVE_COMMAND
        elif reason.startswith(FALLBACK_REASONS):
            return FALLBACK_CHECK.low, FALLBACK_CHECK.high, FALLBACK_CHECK.assumption
    if rule in ("cpp-extension-cuda", "cuda-source-file") and r is ROWS.get(rule):
        size = source_bytes(fs)
        if 0 < size < SMALL_KERNEL_BYTES:
            s = SMALL_EXTENSION
            return s.low, s.high, f"{s.assumption} ({size / 1024:.1f} KB of CUDA source)"
    if key.endswith(f"|{FAMILY}"):
        n = len(family_kernels(fs))
        step_low, step_high = FAMILY_STEP
        return (
            r.low + step_low * (n - 1),
            r.high + step_high * (n - 1),
            f"{r.assumption}; {n} kernel{'s' if n != 1 else ''}, {FAMILY_NOTE}",
        )
    return r.low, r.high, r.assumption


_SOURCE_BYTES = re.compile(r"^CUDA source file .+, (\d+) bytes$")


def source_bytes(fs: list[Finding]) -> int:
    """The bytes of the CUDA sources an item holds (its ``cuda-source-file`` lines; ``scan/one_file.py`` puts each
    file's size in its message), 0 when it holds none (a kernel whose sources the scan did not join to it)."""
    return sum(int(m.group(1)) for f in fs if f.rule == "cuda-source-file" and (m := _SOURCE_BYTES.match(f.message)))


# ``scan/hf_stack.py``'s reason for a runtime only another README command uses.
ALTERNATIVE_REASON = "blocks when used: another command"
# Reasons that say the code runs off CUDA by another path (``findings.REACH_WARNING['optional']``, the launch guards).
FALLBACK_REASONS = ("optional path behind an availability check", "performance item: off CUDA")


def build_items(findings: list[Finding]) -> list[Item]:
    """Group porting findings into items (not-porting findings stay lines only, counted apart)."""
    groups: dict[str, tuple[str, list[Finding]]] = {}
    serving: list[Finding] = []
    for f in findings:
        if not f.porting:
            continue
        if f.subject is not None and f.subject.startswith(SERVES):
            serving.append(f)
            continue
        key, label = item_key(f)
        groups.setdefault(key, (label, []))[1].append(f)
    # In a file that defines kernels, its module-level kernel lines and its imports of the kernel language belong
    # to its first kernel; elsewhere such imports make one dependency item for the whole repository.
    first_kernel: dict[tuple[str, str], str] = {}
    for k in sorted(groups):
        parts = k.split("|")
        if parts[0] == "kernel" and len(parts) == 4:
            first_kernel.setdefault((parts[1], parts[2]), k)
    # A file that only launches or imports kernels defined elsewhere: its imports of the kernel language serve
    # those launches, so they join the first kernel it uses (not a dependency item of their own).
    for k in sorted(groups):
        if k.count("|") == 3:
            for f in groups[k][1]:
                if f.defined_in is not None and f.file is not None:
                    first_kernel.setdefault((f.rule, f.file), k)
    imports_moved: set[int] = set()
    for k in [k for k in groups if k.startswith(("kernel|", "package|"))]:
        kept: list[Finding] = []
        for f in groups[k][1]:
            target = first_kernel.get((f.rule, f.file or ""))
            if target is not None and target != k and k.count("|") != 3:
                groups[target][1].append(f)
                if f.message.startswith(("import ", "from ")):
                    # ``from torch.utils.cpp_extension import load`` runs on any torch: the kernel's builds and
                    # launches say whether the default path stops, not the import of the kernel language
                    imports_moved.add(id(f))
            else:
                kept.append(f)
        if kept:
            groups[k] = (groups[k][0], kept)
        else:
            del groups[k]
    folded = _fold_kernel_languages(groups) | imports_moved
    _join_serving(groups, serving)
    _merge_same_function(groups)
    items: list[Item] = []
    for key, (label, fs) in groups.items():
        fs.sort(key=lambda f: (f.file or "", f.cell or 0, f.line or 0, f.rule))
        own = [f for f in fs if id(f) not in folded] or fs
        top = max(own, key=lambda f: SEVERITY_RANK.get(f.severity, 0))
        # a repository item takes the rule its key names when it holds a line of that rule (lines of another rule
        # may join it, as compile modes join compile-backend)
        first = next((f for f in fs if key == f"repo|{f.rule}"), fs[0])
        if key.startswith("package|"):  # a package's item, whatever line joined it first (SimCSE's device lines)
            first = next((f for f in fs if key.startswith(f"package|{f.rule}|")), first)
        if key.startswith("kernel|cpp-extension-cuda|"):  # an extension, whatever file of it sorts first
            first = next((f for f in fs if f.rule == "cpp-extension-cuda"), first)
        if key.endswith(f"|{FAMILY}"):  # a family is titled and sized by its kernels
            first = next((f for f in fs if f.message.startswith("@")), first)
        if key.startswith("vendored|"):  # a vendored copy is named by its weightiest line (a kernel before a string)
            first = max(fs, key=lambda f: EFFORT_RANK.get(f.effort, 0))
        rule = RULES.get(first.rule)
        effort = max((f.effort for f in fs), key=lambda e: EFFORT_RANK.get(e, 0))
        severity, reason = top.severity, top.reason if all(f.reason for f in own) else None
        launches = [f for f in fs if f.message.startswith("launches kernel")]
        if key.startswith("kernel|") and severity == "blocking" and launches:
            # a kernel runs where it is launched: if every launch is behind a flag or has a fallback, the default
            # path does not stop on it (its definition and imports run nothing)
            worst = max(launches, key=lambda f: SEVERITY_RANK.get(f.severity, 0))
            if worst.severity != "blocking":
                severity = worst.severity
                reason = "; ".join(sorted({f.reason for f in launches if f.reason})) or None
        uses = [f for f in fs if f.message.startswith(("imports the built extension", "calls "))]
        if (
            key.startswith("kernel|cpp-extension-cuda|")
            and severity == "blocking"
            and uses
            and all(f.severity != "blocking" for f in uses)
            and not any(
                INSTALL_FAILS in (f.reason or "") or f.file == "setup.py" for f in fs if f.severity == "blocking"
            )
        ):
            # GPTQ's ``try: import quant_cuda`` / ``except: print(...)``: the code runs without the extension, so
            # its own build script (``setup_cuda.py``, run only when someone runs it; not the package's ``setup.py``,
            # which installing the package runs, as Mamba's builds ``selective_scan_cuda``) does not stop the default
            # path
            worst = max(uses, key=lambda f: SEVERITY_RANK.get(f.severity, 0))
            severity = worst.severity
            reason = "; ".join(sorted({f.reason for f in uses if f.reason})) or None
        if key.startswith("kernel|cpp-extension-cuda|") and severity == "blocking" and not uses:
            builds = [  # the sources and the builder's import follow the build
                f
                for f in fs
                if f.severity == "blocking"
                and f.rule != "cuda-source-file"
                and not f.message.startswith(("import ", "from "))
            ]
            scripts = {f.file for f in builds}
            if builds and all(_nested_build(f) for f in builds) and len(scripts) == 1:
                # llm-awq's ``awq/kernels/csrc/attention/setup.py`` builds ``ft_attention``, which no file imports:
                # a build script of its own in a sub-folder, run only by someone who runs it (the package's root
                # ``setup.py`` is run by installing the package, and stays)
                severity = "warning"
                reason = (
                    f"blocks when {next(iter(scripts))} is run: no file of the tree imports the extension it builds, "
                    "and no install of the package runs that script"
                )
        if severity == "blocking" and reason is None:
            reason = _blocking_reason(own)
        if (
            key.startswith("package|")
            and severity == "blocking"
            and all(_declared(f) for f in fs if f.severity == "blocking")
            and not any(INSTALL_FAILS in (f.reason or "") for f in fs)  # the README's install cannot build it
        ):
            severity, reason = "warning", DECLARED_REASON
        if severity != "blocking" and reason is None and _optional_library(key, fs):
            reason = OPTIONAL_LIBRARY_REASON
        if key.startswith("package|") and rule is not None and rule.item == "kernel":
            # Depending on a kernel language is not writing a kernel: each kernel is its own item.
            effort = "days"
            if severity == "blocking":
                severity, reason = "warning", "imports the kernel language; each kernel it defines is its own item"
        files = sorted({f.file or "" for f in fs})
        where = f"{len(fs)} line{'s' if len(fs) != 1 else ''} in {len(files)} file{'s' if len(files) != 1 else ''}"
        low, high, assumption = _days(key, first.rule, effort, fs, severity, reason)
        if key.endswith(f"|{FAMILY}"):
            names = family_kernels(fs)
            where += f"; {len(names)} kernel{'s' if len(names) != 1 else ''}: {', '.join(names)}"
        items.append(
            Item(
                id="",
                key=key,
                rule=first.rule,
                category=first.category,
                record_category=first.record_category,
                dimension=first.dimension,
                severity=severity,
                effort=effort,
                targets=first.targets,
                title=label
                if key.startswith(("setting|device-count|", "vendored|"))
                else f"{rule.title if rule else first.rule}: {label}",
                file=first.file,
                line=first.line,
                message=where,
                why=first.why,
                reason=reason,
                files=len(files),
                days_low=low,
                days_high=high,
                assumption=assumption,
                era="xla" if first.rule in XLA_ERA_RULES else None,
                lines=[
                    ItemLine(
                        file=f.file,
                        line=f.line,
                        cell=f.cell,
                        rule=f.rule,
                        message=f.message,
                        severity=f.severity,
                        reason=f.reason,
                    )
                    for f in fs
                ],
            )
        )
    items.sort(key=lambda i: (-SEVERITY_RANK.get(i.severity, 0), i.record_category, i.key))
    for n, item in enumerate(items, start=1):
        item.id = f"I{n}"
    return items
