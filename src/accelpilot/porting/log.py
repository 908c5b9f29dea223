"""The portability log: findings, skipped files, summary counts, the op inventory, and the baseline diff.

Kept free of torch so a log can be read, diffed and rendered anywhere. A finding's ``fingerprint`` is
rule + file + the normalised source line (not the line number), so edits above a finding do not make it
"new" against a baseline.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Container
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from accelpilot.jsonfile import check_header, read_model
from accelpilot.porting.rules import DIMENSIONS, EFFORT_RANK, RECORD_CATEGORIES, RULES, SEVERITY_RANK, Rule

SCHEMA_VERSION = 1
_WS = re.compile(r"\s+")

# How a line is reached, when that means it is not porting work: never blocking, counted apart from the items.
NOT_PORTING: dict[str, str] = {
    "probe": "availability or version probe: it only asks whether something is installed",
    "skip-guard": "test skip guard",
    "benchmark-tool": "benchmark helper (triton.testing), not a code path of the model",
    "test-only": "test-only: code only reached from tests",
    "host-side": "host-side code (tokeniser, processor, data loading, trainer): not part of the compiled model graph",
    "generator-source": "code-generation source: the module generated from it is what runs, and is scanned",
    "reference-fallback": "the eager reference body of a module whose forward a dispatcher replaces by default "
    "(@use_experts_implementation runs grouped_mm unless eager is asked for): the dispatcher is the porting item",
    "other-runtime": "export to or run on another runtime (ONNX Runtime, OpenVINO, ExecuTorch, TFLite, Core ML): "
    "not the PyTorch path a Neuron port compiles",
    "weight-init": "weight initialisation: reached only from `_init_weights`/`initialize_weights`, which run when "
    "weights are created (on the host) and not for loaded checkpoints; not the compiled forward",
    "no-op-elsewhere": "a torch.cuda call that does nothing where no CUDA device is initialised (empty_cache, "
    "manual_seed[_all], seed[_all]), or an NCCL variable library code only reads or sets as a default: on the target "
    "it runs and changes nothing",
    "overridden-default": "a parameter's default that every call in the repository overrides (each passes that "
    "argument by keyword): the default never runs; the callers' values are scanned where they are made",
    "backend-branch": "one backend's branch of a per-backend dispatch with a fallback: the target takes its own "
    "branch or the fallback, and this call (not placement) only serves the backend it names",
}
# Contexts that hold for every line of a file, whatever the line's own reach.
FILE_WIDE = frozenset({"generator-source", "other-runtime"})
# Porting work off the model's main path: at most a warning, with the reason.
REACH_WARNING: dict[str, str] = {
    "optional": "optional path behind an availability check or an ImportError fallback",
    "benchmark": "in a benchmark script, not on the model's forward/backward path",
    "example": "in an example script, not on the model's forward/backward path",
    "requirement": "a requirement check: this path raises unless the probed device or package is there",
    "lazy-import": "imported only inside a function (a lazy import): on the path that calls it, which the scan "
    "cannot show is the model's forward path",
}
# Porting work the rule rates lower that a line's reach makes blocking, with the reason.
REACH_BLOCKING: dict[str, str] = {
    "no-fallback": "no fallback: without this kernel the code returns a placeholder (zeros/empty) instead of the "
    "result, so a port runs silently wrong until the kernel is replaced",
}
_TEST_PATH = re.compile(r"(^|/)(tests?|testing)/|(^|/)(test_[^/]*|[^/]*_tests?|conftest|testing_utils)\.py$")
_BENCH_PATH = re.compile(r"(^|/)(benchmarks?|bench)/|(^|/)bench[^/]*\.py$")
_EXAMPLE_PATH = re.compile(r"(^|/)examples?/")


_HOST_PATH = re.compile(
    r"(^|/)(\w*tokeniz\w*|\w*image_processing\w*|\w*video_processing\w*|\w*feature_extraction\w*|processing_\w+"
    r"|\w*_processor\w*|audio_utils|image_utils|video_utils|data|datasets?|\w*dataloader\w*|\w*collat\w*|trainer\w*"
    r"|pipelines?)(\.py$|/)"
)


def host_side(rel: str) -> bool:
    """Files that run on the host around the model (their compile hazards are not hazards of the model graph)."""
    return _HOST_PATH.search(rel) is not None


# A file named for another inference runtime (``exporter_onnx.py``, ``onnxruntime_fusions.py``, ``runner_openvino.py``,
# ``quantizer_nncf.py``, ``executorch.py``) or in a folder so named: it exports to or runs on that runtime. TensorRT is
# not one: it is NVIDIA's own (CUDA-only) runtime, so its code is the GPU path a port replaces. torch.export/dynamo
# files are not either: a Neuron flow can go through torch.export, so their lines stay porting work.
_OTHER_RUNTIME = re.compile(r"(^|/)\w*(onnx|openvino|nncf|executorch|tflite|coreml)\w*(\.py$|/)", re.I)


_MODULAR = re.compile(r"(^|.*/)modular_(\w+)\.py$")


def generated_twin(rel: str, present: Container[str]) -> str | None:
    """transformers' ``modular_X.py`` is the source ``modeling_X.py`` (same folder) is generated from: when the
    generated file is in the tree, it is what runs (and is scanned), so the modular file is not porting work."""
    m = _MODULAR.match(rel)
    if m is None:
        return None
    twin = f"{m.group(1)}modeling_{m.group(2)}.py"
    return twin if twin in present else None


def generator_reason(twin: str) -> str:
    return f"code-generation source of {twin}: that generated file is what runs, and its lines are scanned there"


def context_of_path(rel: str, present: Container[str] = ()) -> str | None:
    """Reach told by where a file lives: tests, benchmark scripts, examples, a code-generation source whose
    generated module is in ``present`` (else None: the project's code)."""
    if present and generated_twin(rel, present) is not None:
        return "generator-source"
    if _TEST_PATH.search(rel):
        return "test-only"
    if _BENCH_PATH.search(rel):
        return "benchmark"
    if _EXAMPLE_PATH.search(rel):
        return "example"
    if _OTHER_RUNTIME.search(rel):
        return "other-runtime"
    return None


def normalise_snippet(text: str) -> str:
    """Whitespace-collapsed source text; what a baseline matches on besides rule and file."""
    return _WS.sub(" ", text).strip()[:200]


def fingerprint(rule: str, file: str | None, snippet: str) -> str:
    return hashlib.sha1(f"{rule}\0{file or ''}\0{normalise_snippet(snippet)}".encode()).hexdigest()[:16]


class Finding(BaseModel):
    """One entry of the log: where (file, line), what (rule, message), why, and how much work (effort)."""

    model_config = ConfigDict(extra="ignore")

    rule: str
    category: str
    record_category: str
    dimension: str
    severity: str
    effort: str
    targets: list[str]
    file: str | None = None
    line: int | None = None
    cell: int | None = None  # notebooks: the code cell (numbered from 1 among all cells); ``line`` is within it
    message: str
    why: str
    snippet: str = ""
    source: str = "static"  # "static" (scanner) or "model" (op inventory)
    fingerprint: str = ""
    # What the porting item is about: kernel, package, image, setting; for a compile hazard the enclosing function
    # (``name:line of its def``), which decides its item (``_merge_same_function``).
    subject: str | None = None
    context: str | None = (
        None  # how the line is reached (NOT_PORTING, REACH_WARNING or REACH_BLOCKING keys), None = main path
    )
    porting: bool = True  # False: not porting work (a probe, a skip guard, test-only code), never blocking
    reason: str | None = None  # why severity differs from the rule's (reach), or why it is not porting work
    defined_in: str | None = None  # a use of a kernel or built extension defined in another file: that file

    @classmethod
    def from_rule(
        cls,
        rule: Rule,
        *,
        file: str | None,
        line: int | None,
        message: str,
        snippet: str = "",
        source: str = "static",
        cell: int | None = None,
        subject: str | None = None,
        context: str | None = None,
        defined_in: str | None = None,
    ) -> Finding:
        snip = normalise_snippet(snippet)
        severity: str = rule.severity
        lazy_in = None
        if context is not None and context.startswith("lazy-import:"):  # the visitor names the enclosing def
            context, lazy_in = context.split(":", 1)
        reason = NOT_PORTING.get(context or "")
        porting = reason is None
        if context == "generator-source" and file is not None and (m := _MODULAR.match(file)):
            reason = generator_reason(f"{m.group(1)}modeling_{m.group(2)}.py")
        if not porting:
            severity = "info"
        elif context in REACH_BLOCKING:
            severity, reason = "blocking", REACH_BLOCKING[context]
        elif context in REACH_WARNING and (severity == "blocking" or context == "requirement"):
            severity, reason = "warning", REACH_WARNING[context]
            if lazy_in is not None:
                reason = f"imported only inside `{lazy_in}` (a lazy import): " + reason.split(": ", 1)[1]
        return cls(
            rule=rule.id,
            category=rule.category,
            record_category=rule.record_category,
            dimension=rule.dimension,
            severity=severity,
            effort=rule.effort,
            targets=sorted(rule.targets),
            file=file,
            line=line,
            cell=cell,
            message=message,
            why=rule.why,
            snippet=snip,
            source=source,
            fingerprint=fingerprint(rule.id, file, snip),
            subject=subject,
            context=context,
            porting=porting,
            reason=reason,
            defined_in=defined_in,
        )


class Skipped(BaseModel):
    path: str
    reason: str


class ItemLine(BaseModel):
    """One line of evidence under an item."""

    file: str | None = None
    line: int | None = None
    cell: int | None = None
    rule: str
    message: str
    severity: str
    reason: str | None = None


class Item(BaseModel):
    """One piece of porting work a team would sign off: a kernel, a dependency, an image, a setting across copies,
    or a rule's lines in one file. Effort, the exit test and the blocking gate count these, not lines."""

    id: str
    key: str
    rule: str
    category: str
    record_category: str
    dimension: str
    severity: str
    effort: str
    targets: list[str]
    title: str
    file: str | None = None  # the first line's location, for readers that cite one place
    line: int | None = None
    message: str
    why: str
    reason: str | None = None
    files: int = 0
    lines: list[ItemLine] = Field(default_factory=list)


def _subject_key(text: str) -> str:
    """``flash-attn>=2.5`` and ``flash_attn`` name the same package."""
    return re.split(r"[=<>!~\[;@ ]", text.strip(), maxsplit=1)[0].lower().replace("-", "_")


# Rules that stand for several packages (the subject tells which); the others are one package each.
_NAMED_PACKAGES = frozenset({"cuda-only-library", "cloud-storage-sdk", "cuda-kernel-library"})


# Rules that are one piece of work within a file: hard-coded CUDA placement is fixed once per file (one device
# setting), whether it shows as ``.cuda()``, ``"cuda"`` or ``torch.cuda.set_device``.
_FILE_FAMILIES = {
    "cuda-call": "device-placement",
    "cuda-device-literal": "device-placement",
    "torch-cuda-api": "device-placement",
}


# Settings that say how many devices a job uses per node: the GPU request (Slurm ``--gres=gpu:N``/``--gpus*``,
# Kubernetes ``nvidia.com/gpu``) and the process count that follows it (``GPUS_PER_NODE``, ``--nproc_per_node``).
# A port changes them together (GPUs per node -> NeuronCores per node), so they are one item per job.
_DEVICE_COUNT = re.compile(r"--gres[= ]gpu|--gpus|nvidia\.com/gpu|GPUS_PER_NODE|--nproc[_-]per[_-]node")
_DEVICE_COUNT_RULES = frozenset({"slurm-gpu-gres", "k8s-gpu-resource", "gpu-launcher-setting"})


def job_family(rel: str | None) -> str:
    """One job and its copies: the files of one kind in one folder (``slurm/train_8x.slurm`` and
    ``slurm/train_16x.slurm`` are ``slurm/*.slurm``); a job in another folder or format is another job."""
    folder, _, name = (rel or "").rpartition("/")
    stem, dot, ext = name.rpartition(".")
    pattern = f"*.{ext}" if dot and stem else name
    return f"{folder}/{pattern}" if folder else pattern


def item_key(f: Finding) -> tuple[str, str]:
    """(key, label) of the item a finding belongs to; the rule's ``item`` scope decides."""
    rule = RULES.get(f.rule)
    if f.rule in _DEVICE_COUNT_RULES and _DEVICE_COUNT.match(f.subject or ""):
        family = job_family(f.file)
        return f"setting|device-count|{family}", f"devices per node of the job {family}"
    scope = rule.item if rule is not None else "file"
    sub = f.subject
    if scope == "kernel":
        if f.defined_in is not None and sub:  # a launch, an import or a use of a kernel defined elsewhere
            rid = "cpp-extension-cuda" if f.rule == "cuda-source-file" else f.rule  # the sources of an extension
            return f"kernel|{rid}|{f.defined_in}|{sub}", f"kernel {sub} ({f.defined_in})"
        if f.rule == "cuda-source-file":
            folder = (f.file or "").rpartition("/")[0] or "."
            return f"kernel|{f.rule}|{folder}", f"CUDA sources in {folder}/"
        if f.message.startswith(("import ", "from ", "package ", "string ")):  # the kernel language, not a kernel
            return f"package|{f.rule}|{_subject_key(sub or f.rule)}", f"{_subject_key(sub or f.rule)} dependency"
        if sub:
            return f"kernel|{f.rule}|{f.file}|{sub}", f"kernel {sub} ({f.file})"
        return f"kernel|{f.rule}|{f.file}", f"kernels in {f.file}"
    if scope == "package":
        name = _subject_key(sub) if sub and f.rule in _NAMED_PACKAGES else f.rule
        return f"package|{f.rule}|{name}", f"{name} dependency"
    if scope == "image":
        name = (sub or f.message).strip().strip("\"'").lower()
        return f"image|{name}", f"image {name}"
    if scope == "setting":
        name = normalise_snippet(sub or f.message)
        return f"setting|{f.rule}|{name}", name
    if f.rule == "cuda-graphs" and f.subject in _COMPILE_MODES:
        # torch.compile's ``mode`` is an argument of the compile call (or of the config feeding it) whose backend the
        # compile-backend item already changes: the port sets backend and mode in one edit, it captures no graph
        return "repo|compile-backend", "whole repository"
    if scope == "repo":
        return f"repo|{f.rule}", "whole repository"
    if scope == "op":
        name = sub or f.snippet or f.message
        return f"op|{f.rule}|{name}", name
    if f.rule == "growing-sequence":
        gen = _GENERATION_DIR.match(f.file or "")
        if gen is not None:  # the library's generate loops: a port replaces them once, with a fixed-size decode
            return f"repo|{f.rule}|{gen.group(0)}", f"the generate loops of {gen.group(0)}/"
    family = _FILE_FAMILIES.get(f.rule, f.rule)
    return f"file|{family}|{f.file}", f.file or "model"


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


# torch.compile modes that capture CUDA graphs (the scanner reads them as ``cuda-graphs`` strings).
_COMPILE_MODES = frozenset({"reduce-overhead", "max-autotune"})

# A ``generation/`` package (transformers' decode loops, assisted decoding, candidate generators): its growing
# sequences are one item, as a port swaps the generate machinery for one fixed-size decode loop, not file by file.
_GENERATION_DIR = re.compile(r"^(?:.*/)?generation(?=/)")


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
        generate = parts[0] == "repo" and parts[1] == "growing-sequence"  # the generate loops (``item_key``)
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
    loops = {(f.file or "", k) for k, (_, fs) in groups.items() if k.startswith("repo|growing-sequence|") for f in fs}
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
    for k in [k for k in groups if k.startswith(("kernel|", "package|"))]:
        kept: list[Finding] = []
        for f in groups[k][1]:
            target = first_kernel.get((f.rule, f.file or ""))
            if target is not None and target != k and k.count("|") != 3:
                groups[target][1].append(f)
            else:
                kept.append(f)
        if kept:
            groups[k] = (groups[k][0], kept)
        else:
            del groups[k]
    _join_serving(groups, serving)
    _merge_same_function(groups)
    items: list[Item] = []
    for key, (label, fs) in groups.items():
        fs.sort(key=lambda f: (f.file or "", f.cell or 0, f.line or 0, f.rule))
        top = max(fs, key=lambda f: SEVERITY_RANK.get(f.severity, 0))
        # a repository item takes the rule its key names when it holds a line of that rule (lines of another rule
        # may join it, as compile modes join compile-backend)
        first = next((f for f in fs if key == f"repo|{f.rule}"), fs[0])
        rule = RULES.get(first.rule)
        effort = max((f.effort for f in fs), key=lambda e: EFFORT_RANK.get(e, 0))
        severity, reason = top.severity, top.reason if all(f.reason for f in fs) else None
        if key.startswith("package|") and rule is not None and rule.item == "kernel":
            # Depending on a kernel language is not writing a kernel: each kernel is its own item.
            effort = "days"
            if severity == "blocking":
                severity, reason = "warning", "imports the kernel language; each kernel it defines is its own item"
        files = sorted({f.file or "" for f in fs})
        where = f"{len(fs)} line{'s' if len(fs) != 1 else ''} in {len(files)} file{'s' if len(files) != 1 else ''}"
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
                if key.startswith("setting|device-count|")
                else f"{rule.title if rule else first.rule}: {label}",
                file=first.file,
                line=first.line,
                message=where,
                why=first.why,
                reason=reason,
                files=len(files),
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


class Summary(BaseModel):
    total: int = 0
    by_category: dict[str, int] = Field(default_factory=dict)
    by_record_category: dict[str, int] = Field(default_factory=dict)
    by_dimension: dict[str, int] = Field(default_factory=dict)
    by_severity: dict[str, int] = Field(default_factory=dict)
    by_rule: dict[str, int] = Field(default_factory=dict)
    # Porting items (what effort, the exit test and the blocking gate count) and the lines that are not porting work.
    items: int = 0
    items_by_severity: dict[str, int] = Field(default_factory=dict)
    items_by_effort: dict[str, int] = Field(default_factory=dict)
    items_by_record_category: dict[str, int] = Field(default_factory=dict)
    not_porting: dict[str, int] = Field(default_factory=dict)

    @classmethod
    def of(cls, findings: list[Finding], items: list[Item] | None = None) -> Summary:
        rec = Counter(f.record_category for f in findings)
        dim = Counter(f.dimension for f in findings)
        its = items or []
        return cls(
            items=len(its),
            items_by_severity={k: sum(i.severity == k for i in its) for k in SEVERITY_RANK},
            items_by_effort={k: sum(i.effort == k for i in its) for k in EFFORT_RANK},
            items_by_record_category={k: sum(i.record_category == k for i in its) for k in RECORD_CATEGORIES},
            not_porting=dict(sorted(Counter(f.context or "" for f in findings if not f.porting).items())),
            total=len(findings),
            by_category=dict(sorted(Counter(f.category for f in findings).items())),
            by_record_category={k: rec.get(k, 0) for k in RECORD_CATEGORIES},
            by_dimension={k: dim.get(k, 0) for k in DIMENSIONS},
            by_severity={k: Counter(f.severity for f in findings).get(k, 0) for k in SEVERITY_RANK},
            by_rule=dict(sorted(Counter(f.rule for f in findings).items())),
        )


class OpCount(BaseModel):
    op: str  # normalised "aten::name" (a custom op keeps its namespace: "mylib::name")
    count: int
    supported: bool | None = None  # None: no supported-ops list given, or one not compared (another op set)
    core: bool | None = None  # in the inventory's op set (core ATen); False: kept as is (custom op, no decomposition)
    call_site: str | None = None  # "file:line" of the first occurrence, when known


class GraphBreak(BaseModel):
    reason: str
    location: str | None = None


class OpInventory(BaseModel):
    """What the model actually runs: ATen operators with counts, graph breaks, data-dependent ops, dtypes."""

    model: str
    method: str  # capture path: "torch.export", "dispatch-trace" (the fallback trace) or "failed"
    op_set: str | None = None  # what the op names are in: "core_aten" (None: a log written before op sets)
    export_error: str | None = None
    ops: list[OpCount] = Field(default_factory=list)
    graph_breaks: list[GraphBreak] = Field(default_factory=list)
    graph_count: int | None = None
    data_dependent_ops: list[str] = Field(default_factory=list)
    dtypes: list[str] = Field(default_factory=list)
    supported_ops_file: str | None = None
    supported_ops_op_set: str | None = None  # the op set the list is in
    support_percentage: float | None = None  # of distinct ops, or the analyze dict's figure
    unsupported_ops: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # how the capture was made when that matters (cache off)
    findings: list[Finding] = Field(default_factory=list)


class PortabilityLog(BaseModel):
    """The log a team keeps during the trial (seed 000), one JSON file."""

    kind: Literal["portability_log"] = "portability_log"  # what this file is; checked before use
    schema_version: int = SCHEMA_VERSION
    root: str | None = None
    targets: list[str] | None = None  # filter applied, None = all
    files_scanned: int = 0
    findings: list[Finding] = Field(default_factory=list)
    skipped: list[Skipped] = Field(default_factory=list)
    suppressed: int = 0
    summary: Summary = Field(default_factory=Summary)
    items: list[Item] = Field(default_factory=list)
    inventory: OpInventory | None = None
    baseline: str | None = None  # when set, findings are only those new against this baseline
    baseline_known: int = 0  # findings hidden because the baseline already had them
    elapsed_s: float | None = None

    def refresh(self) -> PortabilityLog:
        """Sort findings and recompute the summary; call after changing ``findings``."""
        self.findings.sort(key=lambda f: (f.record_category, f.file or "", f.cell or 0, f.line or 0, f.rule))
        self.items = build_items(self.findings)
        self.summary = Summary.of(self.findings, self.items)
        return self

    def with_inventory(self, inv: OpInventory) -> PortabilityLog:
        """Merge an op inventory and its findings into this log."""
        self.inventory = inv
        # The same line found statically and by capture is one finding: keep the static one, say it was confirmed.
        static = {(f.rule, f.line): f for f in self.findings if f.source == "static" and f.file}
        for f in inv.findings:
            twin = static.get((f.rule, f.line)) if f.file else None
            if twin is not None and twin.file and f.file and (f.file.endswith(twin.file) or twin.file.endswith(f.file)):
                if "confirmed by" not in twin.message:
                    twin.message += " (confirmed by the op inventory)"
                continue
            self.findings.append(f)
        return self.refresh()

    def only_targets(self, targets: frozenset[str] | None) -> PortabilityLog:
        if targets is not None:
            self.targets = sorted(targets)
            self.findings = [f for f in self.findings if targets.intersection(f.targets)]
        return self.refresh()

    def new_since(self, baseline: PortabilityLog, baseline_path: str | None = None) -> PortabilityLog:
        """Keep only findings the baseline did not have (multiset match on rule + file + snippet)."""
        known = Counter(_key(f) for f in baseline.findings)
        fresh: list[Finding] = []
        hidden = 0
        for f in self.findings:
            k = _key(f)
            if known[k] > 0:
                known[k] -= 1
                hidden += 1
            else:
                fresh.append(f)
        self.findings = fresh
        self.baseline = baseline_path
        self.baseline_known = hidden
        return self.refresh()

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)


def _key(f: Finding) -> tuple[str, str, str]:
    return (f.rule, f.file or "", normalise_snippet(f.snippet) if f.snippet else f.message)


def load_log(path: str | Path) -> PortabilityLog:
    """Read a log written by ``accelpilot scan --format json`` (e.g. a ``--baseline``)."""
    fix = "write one with `accelpilot scan --json --out`"

    def header(data: dict[str, Any]) -> None:
        # Every field has a default, so `{}` or a pilot result would validate as an empty log and the gate would
        # read "no blocking finding". Logs written before `kind` existed still carry findings and files_scanned.
        if "kind" not in data and {"findings", "files_scanned"} <= data.keys():
            data = {**data, "kind": "portability_log"}
        check_header(data, path, "portability log", SCHEMA_VERSION, kinds=("portability_log",), fix=fix)

    return read_model(path, PortabilityLog, "portability log", fix=fix, check=header)
