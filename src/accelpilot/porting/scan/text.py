"""Line rules for files that are not Python: Dockerfiles, shell and Slurm scripts, YAML/JSON job specs,
requirements and packaging files."""

from __future__ import annotations

import re

from accelpilot.porting.scan.config_device import CONFIG_DEVICE, config_device_line
from accelpilot.porting.scan.mounts import drop_container_paths
from accelpilot.porting.scan.patterns import STRING_RULES, RawFinding
from accelpilot.porting.scan.suppress import SUPPRESS
from accelpilot.porting.scan.torch_wheels import join_torch_wheels

# Text-only rules (job specs, Dockerfiles, shell, requirements).
_PACKAGES: tuple[tuple[str, str], ...] = (
    (r"flash[-_]attn", "flash-attn"),
    (r"xformers", "xformers"),
    (r"bitsandbytes", "bitsandbytes"),
    (r"deepspeed", "deepspeed"),
    (r"megatron[-_]core|megatron[-_]lm|megablocks|grouped[-_]gemm", "training-runtime"),
    (r"cupy(?:-cuda\w*)?", "cupy"),
    (r"apex", "apex"),
    # not the Triton Inference Server (F5-TTS's run.sh: ``echo "Starting triton server"``, ``tritonserver``)
    (r"triton(?![ \t]+(?:inference[ \t]+)?(?:server|client)\b)", "triton-kernel"),
    (r"tensorrt|torch[-_]tensorrt|transformer[-_]engine|pycuda|nvidia-dali\S*|cuda-python", "cuda-only-library"),
    (r"numba-cuda", "numba-cuda"),
    (r"torchvision|torchaudio", "torch-companion"),
    (r"sagemaker", "sagemaker"),
    (
        r"causal[-_]conv1d|mamba[-_]ssm|tilelang|nvidia-cutlass(?:-dsl)?|quack-kernels|flashinfer(?:-python)?"
        r"|liger[-_]kernel|deep[-_]gemm|natten",
        "cuda-kernel-library",
    ),
)
TEXT_RULES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    *STRING_RULES,
    (
        "cuda-version-pin",
        re.compile(
            r"\+cu\d{2,3}\b|download\.pytorch\.org/whl/cu\d+|\bnvidia-[\w-]+-cu1\d\b"
            r"|\bcudatoolkit\S*|\bcuda-toolkit\S*|\bCUDA_VERSION\b\S*|\bTORCH_CUDA_ARCH_LIST\b"
            r"|\bcuda-version\S*|\bpytorch-cuda\S*"
        ),
        "CUDA pin {m}",
    ),
    (
        "neuron-package-pin",
        re.compile(
            r"\b(?:neuronx-cc|torch-neuronx|torch-neuron|neuronx-distributed|aws-neuronx"
            r"[\w-]*|transformers-neuronx|libneuronxla)\b[\w.*=<>!~+-]*|pip\.repos\.neuron\.amazonaws"
            r"\.com"
        ),
        "Neuron package {m}",
    ),
    ("nccl-backend", re.compile(r"backend\W{1,4}nccl\b"), "NCCL backend {m}"),
    ("sagemaker", re.compile(r"--auto-resume\S*"), "SageMaker HyperPod auto-resume {m}"),
    (
        "k8s-gpu-resource",
        re.compile(r"\bnvidia-device-plugin[\w.:/-]*|\bk8s-device-plugin[\w.:/-]*|\bgpu-operator\b[\w.:/-]*"),
        "NVIDIA device plugin {m}",
    ),
    ("sagemaker", re.compile(r"\bml\.(?:p\d\w*|g\d\w*|trn\d\w*|inf\d\w*)\.\w+"), "SageMaker instance type {m}"),
    (
        "hub-download",
        re.compile(r"\bhf_hub_download\b|\bsnapshot_download\b|huggingface-cli download|hf download"),
        "downloads weights at run time ({m})",
    ),
    *((rule, re.compile(rf"(?<![\w./-])(?:{pat})(?![\w/])"), "package {m}") for pat, rule in _PACKAGES),
)
# a Python script (or module) run on the line: the flags after it are the script's arguments
_SCRIPT_RUN = re.compile(r"\bpython[\d.]*\s+(?:-\w+\s+)*(?:\S+\.py|-m\s+[\w.]+)\b")
_IMAGE = re.compile(r"""["']?image["']?\s*:\s*["']?([\w./:@-]+)""")
_FROM = re.compile(r"^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)", re.I)
# NCCL built or installed inside an image (a source build, the NCCL tests, aws-ofi-nccl, libnccl packages).
_NCCL_BUILD = re.compile(r"\bNVIDIA/nccl(?:-tests)?\b|\baws-ofi-nccl\b|\blibnccl[\w.-]*|\bnccl-tests\b", re.I)


def _image_rule(image: str) -> str | None:
    low = image.lower()
    if "neuron" in low:
        return "neuron-base-image"
    if "rocm" in low:
        return "rocm-base-image"
    if low.startswith(("nvidia/cuda", "nvcr.io/nvidia/", "nvcr.io/", "nvidia/")) or any(
        w in low for w in ("cuda", "cudnn", "nccl", "tensorrt", "triton-server")
    ):
        return "cuda-base-image"
    return None


_SECTION = re.compile(r"^\s*\[+([^\]]+)\]+\s*(?:#.*)?$")
# Sections of optional extras: pyproject's ``[project.optional-dependencies]`` and dependency groups, Poetry's extras
# and groups, setup.cfg's ``[options.extras_require]``, Pipfile's ``[dev-packages]``. A package there is installed
# only when asked for (``pip install pkg[extra]``), so its line is an optional path, not a hard dependency.
_OPTIONAL_SECTION = re.compile(
    r"^(project\.optional-dependencies|dependency-groups|tool\.poetry\.extras|tool\.poetry\.group\.[\w.-]+"
    r"|tool\.poetry\.dev-dependencies|options\.extras_require|dev-packages)$"
)


# Linter and formatter sections of setup.cfg/pyproject.toml/tox.ini: they list package names for import sorting or
# type checking, and install nothing.
_TOOL_SECTION = re.compile(
    r"^(?:tool\.)?(isort|flake8|pylint[\w.:-]*|mypy[\w.:-]*|ruff[\w.-]*|black|pycodestyle|yapf)$"
)


# A command that removes packages (OpenRLHF's Dockerfile: ``RUN pip uninstall xgboost transformer_engine ... -y``):
# the packages it names after it, up to the next ``&&``/``;``/``|``, are taken out of the image, not installed.
_REMOVAL = re.compile(r"\bpip3?\s+uninstall\b|\bconda\s+(?:remove|uninstall)\b|\bapt(?:-get)?\s+(?:remove|purge)\b")


def _removed_at(line: str, pos: int) -> bool:
    """Whether position ``pos`` of ``line`` names a package a removal command on that line takes out."""
    start = max(line.rfind(sep, 0, pos) for sep in ("&&", ";", "|"))
    return _REMOVAL.search(line, max(start, 0), pos) is not None


def scan_text(text: str, kind: str) -> list[RawFinding]:
    """Line rules over a non-Python file; ``#`` comment lines are skipped except Slurm/PBS directives."""
    found: list[RawFinding] = []
    seen: set[tuple[str, int]] = set()
    hash_comments = kind in ("dockerfile", "shell", "yaml", "requirements", "packaging")
    optional = False  # inside a packaging file's section of optional extras
    tooling = False  # inside a linter's section (``[isort] known_third_party=torchvision``): names, no dependencies
    for lineno, line in enumerate(text.splitlines(), start=1):
        if kind == "packaging" and (head := _SECTION.match(line)):
            optional = _OPTIONAL_SECTION.match(head.group(1).strip()) is not None
            tooling = _TOOL_SECTION.match(head.group(1).strip()) is not None
        if tooling:
            continue
        if "accelpilot:" in line:
            line = SUPPRESS.sub("", line)  # a suppression comment's own rule ids are not findings
        stripped = line.lstrip()
        if not stripped:
            continue
        if hash_comments and stripped.startswith("#") and not stripped.startswith(("#SBATCH", "#PBS", "#$")):
            continue
        if kind in ("yaml", "json") and (dev := config_device_line(line)) is not None:
            key, value = dev
            found.append(("cuda-device-literal", lineno, f"config sets {key}: {value}", line, CONFIG_DEVICE, None))
            seen.add(("cuda-device-literal", lineno))
        if kind in ("yaml", "json"):
            for m3 in _IMAGE.finditer(line):
                rule = _image_rule(m3.group(1))
                if rule and (rule, lineno) not in seen:
                    found.append((rule, lineno, f"container image {m3.group(1)}", line, m3.group(1), None))
                    seen.add((rule, lineno))
        if kind == "dockerfile":
            m = _FROM.match(line)
            if m:
                rule = _image_rule(m.group(1))
                if rule:
                    found.append((rule, lineno, f"base image {m.group(1)}", line, m.group(1), None))
                    seen.add((rule, lineno))
                continue
            m4 = _NCCL_BUILD.search(line)
            if m4:
                found.append(("nccl-in-container", lineno, f"NCCL in the image ({m4.group(0)})", line, "nccl", None))
                seen.add(("nccl-in-container", lineno))
        for rule, pat, template in TEXT_RULES:
            if (rule, lineno) in seen:
                continue
            m2 = pat.search(line)
            if m2 and rule == "slurm-gpu-gres" and _SCRIPT_RUN.search(line, 0, m2.start()):
                continue  # ``python -u train.py --gpus 0 1`` (RAFT): the script's own device ids, asked of no scheduler
            if m2 and template.startswith("package ") and _removed_at(line, m2.start()):
                continue
            if m2:
                seen.add((rule, lineno))
                context = "optional" if optional else None
                found.append((rule, lineno, template.format(m=m2.group(0)), line, m2.group(0), context))
    if kind == "requirements":
        return join_torch_wheels(text, found)  # torch's CUDA wheels in an exported lock: the torch pin's work
    return drop_container_paths(text, found) if kind in ("dockerfile", "shell", "yaml") else found
