"""The item a finding belongs to: its key and label, by the rule's ``item`` scope (a kernel, a package, a setting, a
file, the repository) and the joins that make one unit of porting work (issue 27)."""

from __future__ import annotations

import re

from accelpilot.porting.findings import CONFIG_DEVICE, VENDORED_PATH, Finding, normalise_snippet
from accelpilot.porting.rules import RULES


def _subject_key(text: str) -> str:
    """``flash-attn>=2.5`` and ``flash_attn`` name the same package."""
    return re.split(r"[=<>!~\[;@ ]", text.strip(), maxsplit=1)[0].lower().replace("-", "_")


# Rules that stand for several packages (the subject tells which); the others are one package each.
_NAMED_PACKAGES = frozenset(
    {
        "cuda-only-library",
        "cloud-storage-sdk",
        "aws-storage-sdk",
        "cuda-kernel-library",
        "training-runtime",
        "model-parallel-library",
    }
)


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


# Top folders that hold launch scripts only, one sub-folder per experiment: their jobs are one launcher change.
_JOB_FOLDERS = frozenset({"scripts", "script", "jobs", "slurm", "launch", "launchers", "exps", "experiments_scripts"})


def job_family(rel: str | None) -> str:
    """One job and its copies: the files of one kind in one folder (``slurm/train_8x.slurm`` and
    ``slurm/train_16x.slurm`` are ``slurm/*.slurm``), or under a top folder of launch scripts with one sub-folder per
    experiment (VideoMAE's ``scripts/kinetics/<experiment>/pretrain.sh``, nine folders: ``scripts/**/*.sh``, one
    launcher change); a job in another folder (a package's ``torchtitan/models/flux/``) or format is another job."""
    folder, _, name = (rel or "").rpartition("/")
    stem, dot, ext = name.rpartition(".")
    pattern = f"*.{ext}" if dot and stem else name
    top = folder.split("/", 1)[0]
    if "/" in folder and top in _JOB_FOLDERS:
        return f"{top}/**/{pattern}"
    return f"{folder}/{pattern}" if folder else pattern


# Kernel rules whose kernels of one defining file make one item (a family), keyed with FAMILY for the kernel name:
# Triton's, and numba's ``@cuda.jit`` kernels (OpenPCDet's rotated-IoU evaluation: 12 device functions and one kernel
# in one file, one port).
FAMILY_RULES = frozenset({"triton-kernel", "numba-cuda"})
FAMILY = "*"
_LANGUAGE = {"triton-kernel": "Triton", "numba-cuda": "numba.cuda"}


def kernel_definition(rule: str, message: str) -> bool:
    """A kernel's decorator (``@triton.jit``, ``@nki.jit``; numba's ``@cuda.jit`` resolves to numba.cuda.jit), not an
    import of the language."""
    if message.startswith(("import ", "from ", "package ", "string ")):
        return False
    return message.startswith("@") or (rule == "numba-cuda" and message.endswith(".jit"))


def item_key(f: Finding) -> tuple[str, str]:
    """(key, label) of the item a finding belongs to; the rule's ``item`` scope decides."""
    rule = RULES.get(f.rule)
    if (m := VENDORED_PATH.search(f.file or "")) is not None:
        # OLMo's AutoGPTQ copy under ``dependencies/``: one unit of work (port what the repository calls, or use
        # the upstream release), not its kernels and device lines one by one
        root = (f.file or "")[: m.end()].rstrip("/")
        return f"vendored|{root}", f"vendored project {root}/"
    if f.context == "vendored" and "/" in (f.file or ""):
        root = (f.file or "").partition("/")[0]  # a copied distribution at the top (``findings.nested_distribution``)
        return f"vendored|{root}", f"vendored project {root}/"
    if f.rule in _DEVICE_COUNT_RULES and _DEVICE_COUNT.match(f.subject or ""):
        family = job_family(f.file)
        return f"setting|device-count|{family}", f"devices per node of the job {family}"
    if f.family is not None:
        # one unit of porting work: the family's kernels, their wrappers, device calls and every launch site
        return f"kernel|triton-kernel|{f.family}|{FAMILY}", f"kernel family {f.family}"
    scope = rule.item if rule is not None else "file"
    sub = f.subject
    if scope == "kernel":
        if f.rule in FAMILY_RULES and sub and not f.message.startswith(("import ", "from ", "package ", "string ")):
            # the Triton kernels of one file are one family: one port (shared wrapper, tests, tuning), every launch
            # and import of any of them joined (issue 27: 57 kernels were 57 items of two weeks each)
            home = f.defined_in or f.file
            return f"kernel|{f.rule}|{home}|{FAMILY}", f"{_LANGUAGE[f.rule]} kernels of {home}"
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
        if f.rule == "object-store-uri" and (m := _BUCKET.search(name)) is not None:
            # one item per bucket, not per path: OLMo's configs name 6,600 object paths in a few buckets, one
            # data-movement decision each
            return f"setting|{f.rule}|{m.group(0)}", m.group(0)
        return f"setting|{f.rule}|{name}", name
    if f.rule == "cuda-graphs" and f.subject in _COMPILE_MODES:
        # torch.compile's ``mode`` is an argument of the compile call (or of the config feeding it) whose backend the
        # compile-backend item already changes: the port sets backend and mode in one edit, it captures no graph
        return "repo|compile-backend", "whole repository"
    if f.subject == CONFIG_DEVICE:
        # ``device: cuda`` in the shipped configs: one setting a port changes (or overrides) for every config
        return "setting|config-device", "the device the shipped configs set"
    if f.rule == "stack-upgrade":
        # one upgrade per library: numpy's removed aliases, torchaudio's I/O moved onto torchcodec and a timm pin are
        # different work (and different labels), not one repository-wide chore
        lib = stack_library(f.message)
        return f"repo|{f.rule}|{lib}", lib
    if scope == "repo":
        return f"repo|{f.rule}", "whole repository"
    if scope == "op":
        name = sub or f.snippet or f.message
        return f"op|{f.rule}|{name}", name
    if f.rule == "growing-sequence" and sub == HF_GENERATE:
        # every Hugging Face generate() call grows the same library cache: one port (a static cache, buckets)
        return f"repo|{f.rule}|{sub}", "Hugging Face generate() calls"
    if f.rule == "growing-sequence":
        gen = _GENERATION_DIR.match(f.file or "")
        if gen is not None:  # the library's generate loops: a port replaces them once, with a fixed-size decode
            return f"repo|{f.rule}|{gen.group(0)}", f"the generate loops of {gen.group(0)}/"
    family = _FILE_FAMILIES.get(f.rule, f.rule)
    return f"file|{family}|{f.file}", f.file or "model"


# The library a ``stack-upgrade`` line's message names (the scanner writes it: "np.float (numpy alias ...)",
# "torchaudio.load(...) (torchaudio >= 2.9 ...)", "assert on timm.__version__ ..."); torch's own removals otherwise.
_STACK_LIBRARY = re.compile(
    r"\b(torchaudio|torchtext|torchvision|timm|transformers|openai|numpy|scipy|scikit-learn|matplotlib|setuptools|"
    r"protobuf|librosa|Pillow|Python)\b"
)


def stack_library(message: str) -> str:
    """The library whose upgrade a ``stack-upgrade`` line belongs to."""
    m = _STACK_LIBRARY.search(message)
    if m is not None:
        return m.group(1).lower()
    return "transformers" if "TrainingArguments" in message else "torch"


_BUCKET = re.compile(r"\b(?:s3|gs|az|abfss|wasbs)://[\w.-]*")  # scheme and bucket (or container) of a URI


# torch.compile modes that capture CUDA graphs (the scanner reads them as ``cuda-graphs`` strings).
_COMPILE_MODES = frozenset({"reduce-overhead", "max-autotune"})


# A ``generation/`` package (transformers' decode loops, assisted decoding, candidate generators): its growing
# sequences are one item, as a port swaps the generate machinery for one fixed-size decode loop, not file by file.
_GENERATION_DIR = re.compile(r"^(?:.*/)?generation(?=/)")
HF_GENERATE = "hf-generate"  # the subject of a ``growing-sequence`` line of a Hugging Face generate() call
