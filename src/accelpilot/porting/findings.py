"""One finding and how its line is reached: reach contexts, path classes (tests, host-side, generated twins), the
finding, skipped-file and item models.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Container, Iterable

from pydantic import BaseModel, ConfigDict, Field

from accelpilot.porting.rules import Rule

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
    "manual_seed[_all], seed[_all]), a cuDNN/TF32 switch, or an NCCL variable library code only reads or sets as a "
    "default: on the target it runs and changes nothing",
    "ci": "a CI workflow (`.github/workflows/`, `.gitlab-ci.yml`, `.circleci/`): builds and tests on the CI's own "
    "runners, no path the model is trained or served on (listed apart)",
    "install-time": "run by `setup.py` when the package is built or installed (a prebuilt wheel fetched), not when "
    "the model runs",
    "data-prep": "a download in a data preparation script: run once on any host before training, the same whatever "
    "the accelerator",
    "any-host-download": "weights or data downloaded at run time from the Hugging Face Hub, torch.hub or a URL "
    "(`from_pretrained`, `load_dataset`, `hf_hub_download`, `requests.get`, `urlopen`): the same on any "
    "accelerator; an environment note (egress, a pinned revision, a local cache), listed apart, not porting work",
    "overridden-default": "a parameter's default that every call in the repository overrides (each passes that "
    "argument by keyword): the default never runs; the callers' values are scanned where they are made",
    "forwarded-default": "a device default of a subclass's `__init__` that hands the device unchanged to "
    "`super().__init__`: the base class places with it, and its own default and callers are scanned where they are",
    "backend-branch": "one backend's branch of a per-backend dispatch with a fallback: the target takes its own "
    "branch or the fallback, and this call (not placement) only serves the backend it names",
    "example": "example or demo code (`examples/`, `demo/`, `demo_*.py`, notebooks): run by hand, not the path the "
    "model is trained or served on (listed apart)",
    "numpy-constant": "a graph break on a numpy value (a constant array, numpy arithmetic on host values): dynamo "
    "declines host code there; not a hazard of the model's graph on the target",
    "host-setup": "float64 used only while the module is built (`__init__`/`reset_parameters`, or a helper only they "
    "call) and converted before it is kept: it runs once on the host and the compiled forward never sees it",
    "unreached-module": "a module of a scripts repository that no file imports, no command runs and that has no "
    "`__main__` block: it runs on no path (listed apart)",
    "unused-def": "a function defined inside another function that nothing there names (not called, returned or "
    "passed on): it never runs",
    "unused-helper": "in a top-level function or class that no Python source of the tree names (not called, "
    "imported or passed on): it never runs",
    "main-block": 'in an `if __name__ == "__main__":` block of a module: a demo or smoke run by hand, not the '
    "path the model is trained or served on (listed apart; in an entry script such as train.py it stays porting work)",
}


# CUDA-only packages and framework runtimes (item scope: one package): imported at module level with no guard on
# the default path, the code does not even import without them (issue 27: a trainer standing on DeepSpeed is not a
# warning).
RUNTIME_RULES = frozenset(
    {"deepspeed", "training-runtime", "apex", "bitsandbytes", "flash-attn", "xformers", "cupy", "cuda-only-library"}
)
RUNTIME_REASON = "imported at module level with no guard: the default path does not even import without it"


# Contexts that hold for every line of a file, whatever the line's own reach.
FILE_WIDE = frozenset({"generator-source", "other-runtime"})
# The subject ``scan/config_device.py`` gives a shipped config's ``device: cuda`` line (one item per repository).
CONFIG_DEVICE = "config-device"
# The reason text of a package line the README's install cannot build (``scan/install.py``): a declared dependency
# that blocks the install itself, which the item keeps blocking (``items.py``).
INSTALL_FAILS = "compiles CUDA kernels at install"
# Why a line of a script nothing runs blocks only when that script is run (``items._days`` sizes its item so).
UNRUN_SCRIPT = "a script no README command runs and no file imports"


# Porting work off the model's main path: at most a warning, with the reason.
REACH_WARNING: dict[str, str] = {
    "optional": "optional path behind an availability check or an ImportError fallback",
    "benchmark": "in a benchmark script, not on the model's forward/backward path",
    "requirement": "a requirement check: this path raises unless the probed device or package is there",
    "count-query": "`torch.cuda.device_count()` compared with a count: it returns 0 without CUDA (no error), so the "
    "branch it decides is skipped on the target and behaviour differs silently from a multi-GPU host",
    "lazy-import": "imported only inside a function (a lazy import): on the path that calls it, which the scan "
    "cannot show is the model's forward path",
    "vendored": "a vendored copy of another project (under `dependencies/`, `third_party/`, `vendor/`, or a folder "
    "with its own `setup.py` and package): its own "
    "tools run it, not the repository's default commands",
}


# Porting work the rule rates lower that a line's reach makes blocking, with the reason.
REACH_BLOCKING: dict[str, str] = {
    "version-gated-double-backward": "the custom op exists to give the stock op a double backward and its gate "
    "enables it only on old PyTorch versions: on the PyTorch 2.x TorchNeuron requires the stock op runs, and the "
    "default path's double backward (create_graph=True) then rests on the stock op's second derivative",
    "no-fallback": "no fallback: without this kernel the code returns a placeholder (zeros/empty) instead of the "
    "result, so a port runs silently wrong until the kernel is replaced",
}


_TEST_PATH = re.compile(r"(^|/)(tests?|testing)/|(^|/)(test_[^/]*|[^/]*_tests?|conftest|testing_utils)\.py$")


# A project copied into the repository: a folder under ``dependencies/`` and the like (the copy's own folder).
VENDORED_PATH = re.compile(r"(^|/)(dependencies|third_party|thirdparty|3rdparty|vendor|vendored)/[^/]+/")
_BENCH_PATH = re.compile(r"(^|/)(benchmarks?|bench)/|(^|/)bench[^/]*\.py$")


_CI_PATH = re.compile(
    r"(^|/)\.github/workflows/|(^|/)\.github/[^/]+\.ya?ml$|(^|/)azure-pipelines\.ya?ml$|(^|/)\.gitlab-ci\.ya?ml$"
    r"|(^|/)\.circleci/|(^|/)\.buildkite/"
)


# Notebooks are demos run by hand too (issue 27: "demo/example code listed apart"), and so is a module written for them
# (latent-diffusion's ``notebook_helpers.py``).
# A script under ``docs/`` (open_clip's ``docs/script_examples/``) illustrates the documentation: an example too.
_EXAMPLE_PATH = re.compile(
    r"(^|/)(examples?|demos?|notebooks?)/|(^|/)(demo_[^/]*|[^/]*_demo)\.py$|\.ipynb$|(^|/)[^/]*notebook[^/]*\.py$"
    r"|(^|/)(\w+_demos?|demos?_\w+)/"  # CoTracker's ``gradio_demo/``
    r"|^docs?/"
)


_HOST_PATH = re.compile(
    r"(^|/)(\w*tokeniz\w*|\w*image_processing\w*|\w*video_processing\w*|\w*feature_extraction\w*|processing_\w+"
    r"|\w*_processor\w*|audio_utils|image_utils|video_utils|data|datasets?|\w*data_?loaders?\w*|\w*data_?providers?"
    r"|\w*collat\w*|trainer\w*"
    r"|pipelines?|plots?|plotting|loggers?)(\.py$|/)"
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


# Scripts whose ``__main__`` block is the run itself (a training or serving entry point), not a demo.
_ENTRY_SCRIPT = re.compile(
    r"(^|/)scripts?/|(^|/)(train|pretrain|finetune|fine_tune|main|run|launch|serve|server|app|infer|inference|generate"
    r"|eval|evaluate|sample|predict)[\w-]*\.py$"
)


def entry_script(rel: str) -> bool:
    """Whether ``rel`` is a script a user runs (its ``__main__`` block is the run), by its name or folder."""
    return _ENTRY_SCRIPT.search(rel) is not None


def promoted_folders(entries: Iterable[str]) -> frozenset[str]:
    """The example folders a README command runs an entry point from (LoRA's ``examples/NLG/``, where the README
    sends the user to reproduce its results): their code is the default path, not a demo. The folder is the one
    just under the ``examples/`` (or ``demo/``) match, so a sibling example (``examples/NLU/``) stays apart."""
    out: set[str] = set()
    for rel in entries:
        if rel.endswith(".ipynb"):
            out.add(rel)  # a notebook the README sends the user to first (Point-E's): that notebook, not its folder
            continue
        m = _EXAMPLE_PATH.search(rel)
        if m is None or not m.group(2) or m.group(2).startswith("notebook"):
            continue
        head, _, rest = rel[m.end() :].partition("/")
        out.add(rel[: m.end()] + (f"{head}/" if rest else ""))
    return frozenset(out)


def nested_distribution(rel: str, present: Container[str]) -> str | None:
    """The top-level folder holding ``rel`` when that folder is another project's distribution copied into the
    tree: its own ``setup.py`` or ``pyproject.toml`` beside a package of the folder's own name (Jukebox's
    ``apex/setup.py`` and ``apex/apex/``, ``tensorboardX/tensorboardX/``). A sub-project of the repository itself
    (Depth-Anything-V2's ``metric_depth/``, whose package is ``depth_anything_v2``) is not one."""
    top, sep, _ = rel.partition("/")
    if not sep or not any(f"{top}/{n}" in present for n in ("setup.py", "pyproject.toml")):
        return None
    return top if f"{top}/{top}/__init__.py" in present or f"{top}/src/{top}/__init__.py" in present else None


def context_of_path(rel: str, present: Container[str] = (), promoted: Collection[str] = ()) -> str | None:
    """Reach told by where a file lives: tests, benchmark scripts, examples (not under a ``promoted`` folder, one
    a README command runs), a code-generation source whose generated module is in ``present`` (else None: the
    project's code)."""
    if present and generated_twin(rel, present) is not None:
        return "generator-source"
    if _TEST_PATH.search(rel):
        return "test-only"
    # an example folder no README command runs holds its own benchmarks too (LoRA's vendored transformers copy in
    # ``examples/NLU/src/transformers/benchmark/``): off the repository's path, as the example is
    if _EXAMPLE_PATH.search(rel) and not (promoted and rel.startswith(tuple(promoted))):
        return "example"
    if VENDORED_PATH.search(rel) or (present and nested_distribution(rel, present) is not None):
        return "vendored"  # OLMo's ``inference/compression/dependencies/AutoGPTQ/``, Jukebox's ``apex/``
    if _BENCH_PATH.search(rel):
        return "benchmark"
    if _CI_PATH.search(rel):
        return "ci"
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
    family: str | None = None  # in (or a use of) a kernel file: its kernel family's name (``scan/families.py``)

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
        guard = None
        if context is not None and context.startswith(("flag:", "fallback:")):  # a launch reached only so
            guard = context
        reason = NOT_PORTING.get(context or "")
        porting = reason is None
        if context == "generator-source" and file is not None and (m := _MODULAR.match(file)):
            reason = generator_reason(f"{m.group(1)}modeling_{m.group(2)}.py")
        if not porting:
            severity = "info"
        elif context in REACH_BLOCKING:
            severity, reason = "blocking", REACH_BLOCKING[context]
        elif context in REACH_WARNING and (severity == "blocking" or context in ("requirement", "count-query")):
            severity, reason = "warning", REACH_WARNING[context]
            if lazy_in is not None:
                reason = f"imported only inside `{lazy_in}` (a lazy import): " + reason.split(": ", 1)[1]
        if (
            rule.id in RUNTIME_RULES
            and context is None
            and severity == "warning"
            and message.startswith(("import ", "from "))
        ):
            severity, reason = "blocking", RUNTIME_REASON
        if guard is not None and guard.startswith("fallback:") and severity == "warning" and porting:
            reason = f"performance item: off CUDA the fallback runs (`{guard.partition(':')[2]}`)"
        if guard is not None and severity == "blocking":
            kind, _, what = guard.partition(":")
            severity = "warning"
            reason = (
                f"blocks when `{what}` is set: the kernel runs only under this flag"
                if kind == "flag"
                else f"performance item: off CUDA the fallback runs (`{what}`)"
            )
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
    # The effort model (porting/effort.py): engineer-days for this item as a range, what it assumes, and whether its
    # hazard is one of the XLA era (fixed-shape tracing) that TorchNeuron native runs eagerly.
    days_low: float = 0.0
    days_high: float = 0.0
    assumption: str | None = None
    era: str | None = None
    lines: list[ItemLine] = Field(default_factory=list)
