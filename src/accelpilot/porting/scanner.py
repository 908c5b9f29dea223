"""The static scanner: walks a repository, never imports or executes it, and writes a PortabilityLog.

Python is read with ``ast``; Dockerfiles, shell scripts, YAML/JSON job specs, requirements and pyproject/setup.cfg
line by line. Speed comes from not parsing what cannot match: a trigger regex finds the lines where some rule's
token appears; only the top-level blocks (``def``/``class``/statement) that hold such a line are parsed, and the
single-pass visitor skips every subtree whose line span holds no trigger. A file without a trigger token is read
but not parsed (so a syntax error in it is not reported). Every detector's evidence contains one of the trigger
tokens, which is what makes the pruning exact; ``tests/porting/test_scanner.py`` checks pruned and full scans agree.
"""

from __future__ import annotations

import ast
import bisect
import os
import re
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from accelpilot.errors import InputFileError
from accelpilot.porting.log import Finding, PortabilityLog, Skipped
from accelpilot.porting.rules import RULES

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
EXCLUDED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        "node_modules",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".eggs",
        ".ipynb_checkpoints",
    }
)
CACHE_DIRS = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints"})
PARALLEL_MIN_FILES = 200
CHUNK = 48

# (rule id, line, message, snippet); plain tuples so worker processes return them cheaply.
RawFinding = tuple[str, int | None, str, str]


# ---------------------------------------------------------------------------------------------------------------
# File kinds
# ---------------------------------------------------------------------------------------------------------------


def classify(name: str) -> str | None:
    """The kind of file by its name, or None if the scanner does not read it."""
    low = name.lower()
    if low.endswith(".py"):
        return "python"
    if low.endswith((".cu", ".cuh")):
        return "cuda"
    if low in ("dockerfile", "containerfile") or low.startswith("dockerfile.") or low.endswith(".dockerfile"):
        return "dockerfile"
    if low.endswith((".sh", ".bash", ".slurm", ".sbatch", ".zsh")):
        return "shell"
    if low.endswith((".yaml", ".yml")):
        return "yaml"
    if low.endswith(".json"):
        return "json"
    if low.endswith(".txt") and (low.startswith("requirements") or low.startswith("constraints")):
        return "requirements"
    if low in ("pyproject.toml", "setup.cfg", "environment.yml", "pipfile"):
        return "packaging"
    return None


# ---------------------------------------------------------------------------------------------------------------
# Suppression comments: "# accelpilot: ignore[rule-a, rule-b]" on the line or the line above; bare "ignore" = all.
# ---------------------------------------------------------------------------------------------------------------

_SUPPRESS = re.compile(r"#\s*accelpilot:\s*ignore(?:\[([^\]]*)\])?")


def _suppressions(text: str) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for i, line in enumerate(text.splitlines(), start=1):
        m = _SUPPRESS.search(line)
        if m:
            ids = {s.strip() for s in (m.group(1) or "*").split(",") if s.strip()} or {"*"}
            out[i] = ids
    return out


def _apply_suppressions(found: list[RawFinding], text: str) -> tuple[list[RawFinding], int]:
    if "accelpilot:" not in text:
        return found, 0
    sup = _suppressions(text)
    kept: list[RawFinding] = []
    dropped = 0
    for f in found:
        line = f[1] or 1
        ids = sup.get(line, set()) | sup.get(line - 1, set())
        if f[0] in ids or "*" in ids:
            dropped += 1
        else:
            kept.append(f)
    return kept, dropped


# ---------------------------------------------------------------------------------------------------------------
# Patterns shared by text files and Python string constants
# ---------------------------------------------------------------------------------------------------------------

STRING_RULES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("object-store-uri", re.compile(r"\b(?:s3|gs|az|abfss|wasbs)://[\w.\-{}$/]*"), "object-store location {m}"),
    ("slurm-gpu-gres", re.compile(r"--gres[= ]gpu\S*|--gpus(?:-per-\w+)?[= ]\S+"), "Slurm GPU request {m}"),
    ("k8s-gpu-resource", re.compile(r"nvidia\.com/gpu"), "Kubernetes resource {m}"),
    ("k8s-neuron-resource", re.compile(r"aws\.amazon\.com/neuron\w*"), "Kubernetes resource {m}"),
    ("nvidia-smi", re.compile(r"\bnvidia-smi\b"), "calls {m}"),
    ("dcgm", re.compile(r"\bdcgm\w*|\bDCGM\w*", re.I), "NVIDIA DCGM ({m})"),
    ("neuron-tools", re.compile(r"\bneuron-(?:ls|top|monitor)\b"), "calls {m}"),
    ("cuda-visible-devices", re.compile(r"\bCUDA_VISIBLE_DEVICES\b"), "device selection via {m}"),
    ("nccl-backend", re.compile(r"\bNCCL_[A-Z_]+\b"), "NCCL setting {m}"),
    ("cloudwatch", re.compile(r"\bcloudwatch\b", re.I), "CloudWatch integration ({m})"),
    (
        "local-nvme-path",
        re.compile(
            r"(?:/mnt/nvme\w*|/nvme\d\w*|/local_nvme\w*|/opt/dlami/nvme|/scratch\b|/raid\b"
            r"|/local_disk\w*)"
        ),
        "local path {m}",
    ),
)
_STRING_TRIGGER = re.compile(
    r"://|gres|--gpus|nvidia|neuron|dcgm|DCGM|CUDA_VISIBLE|NCCL_|cloudwatch|CloudWatch|nvme|/scratch|/raid|/local_disk"
)

# Text-only rules (job specs, Dockerfiles, shell, requirements).
_PACKAGES: tuple[tuple[str, str], ...] = (
    (r"flash[-_]attn", "flash-attn"),
    (r"xformers", "xformers"),
    (r"bitsandbytes", "bitsandbytes"),
    (r"deepspeed", "deepspeed"),
    (r"cupy(?:-cuda\w*)?", "cupy"),
    (r"apex", "apex"),
    (r"triton", "triton-kernel"),
    (r"tensorrt|torch[-_]tensorrt|transformer[-_]engine|pycuda|nvidia-dali\S*|cuda-python", "cuda-only-library"),
    (r"numba-cuda", "numba-cuda"),
    (r"sagemaker", "sagemaker"),
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
    ("sagemaker", re.compile(r"\bml\.(?:p\d\w*|g\d\w*|trn\d\w*|inf\d\w*)\.\w+"), "SageMaker instance type {m}"),
    (
        "hub-download",
        re.compile(r"\bhf_hub_download\b|\bsnapshot_download\b|huggingface-cli download|hf download"),
        "downloads weights at run time ({m})",
    ),
    *((rule, re.compile(rf"(?<![\w./-])(?:{pat})(?![\w/])"), "package {m}") for pat, rule in _PACKAGES),
)
_IMAGE = re.compile(r"""["']?image["']?\s*:\s*["']?([\w./:@-]+)""")
_FROM = re.compile(r"^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)", re.I)


def _image_rule(image: str) -> str | None:
    low = image.lower()
    if "neuron" in low:
        return "neuron-base-image"
    if "rocm" in low:
        return "rocm-base-image"
    if low.startswith(("nvidia/cuda", "nvcr.io/", "nvidia/")) or "cuda" in low or "cudnn" in low:
        return "cuda-base-image"
    return None


def scan_text(text: str, kind: str) -> list[RawFinding]:
    """Line rules over a non-Python file; ``#`` comment lines are skipped except Slurm/PBS directives."""
    found: list[RawFinding] = []
    seen: set[tuple[str, int]] = set()
    hash_comments = kind in ("dockerfile", "shell", "yaml", "requirements", "packaging")
    for lineno, line in enumerate(text.splitlines(), start=1):
        if "accelpilot:" in line:
            line = _SUPPRESS.sub("", line)  # a suppression comment's own rule ids are not findings
        stripped = line.lstrip()
        if not stripped:
            continue
        if hash_comments and stripped.startswith("#") and not stripped.startswith(("#SBATCH", "#PBS", "#$")):
            continue
        if kind in ("yaml", "json"):
            for m3 in _IMAGE.finditer(line):
                rule = _image_rule(m3.group(1))
                if rule and (rule, lineno) not in seen:
                    found.append((rule, lineno, f"container image {m3.group(1)}", line))
                    seen.add((rule, lineno))
        if kind == "dockerfile":
            m = _FROM.match(line)
            if m:
                rule = _image_rule(m.group(1))
                if rule:
                    found.append((rule, lineno, f"base image {m.group(1)}", line))
                    seen.add((rule, lineno))
                continue
        for rule, pat, template in TEXT_RULES:
            if (rule, lineno) in seen:
                continue
            m2 = pat.search(line)
            if m2:
                seen.add((rule, lineno))
                found.append((rule, lineno, template.format(m=m2.group(0)), line))
    return found


# ---------------------------------------------------------------------------------------------------------------
# Python
# ---------------------------------------------------------------------------------------------------------------


def _not_code(data: bytes, i: int) -> bool:
    """The position is on a comment line or a doctest line (``>>>``/``...``), which never holds code paths."""
    ls = data.rfind(b"\n", 0, i) + 1
    head = data[ls:i].lstrip()
    return head.startswith((b"#", b">>>", b"... "))


def _in_forward(data: bytes, i: int) -> bool:
    """Lexically: the nearest ``def``/``class`` header indented less than this line is ``def forward``."""
    ls = data.rfind(b"\n", 0, i) + 1
    line = data[ls:i]
    ci = len(line) - len(line.lstrip(b" \t"))
    k = i
    while k > 0:
        k = max(data.rfind(b"def ", 0, k), data.rfind(b"class ", 0, k))
        if k < 0:
            return False
        hs = data.rfind(b"\n", 0, k) + 1
        head = data[hs:k]
        pad = head.lstrip(b" \t")
        if pad in (b"", b"async ") and len(head) - len(pad) < ci:
            return data.startswith(b"def forward", k) and not data[k + 11 : k + 12].isalnum()
    return False


def _one_argument(data: bytes, j: int) -> bool:
    """``torch.where(`` at ``j`` (just past "where"): True unless a top-level comma shows two or more arguments."""
    depth = 0
    for k in range(j, min(len(data), j + 400)):
        c = data[k]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
            if depth == 0:
                return True
        elif c == 44 and depth == 1:  # ","
            return False
    return True


def _inside_brackets(data: bytes, i: int) -> bool:
    ls = data.rfind(b"\n", 0, i) + 1
    head = data[ls:i]
    return head.count(b"[") > head.count(b"]")


def _on_condition_line(data: bytes, i: int) -> bool:
    """The token sits on a line with an if/elif/while/assert (a branch on a tensor value)."""
    ls = data.rfind(b"\n", 0, i) + 1
    head = data[ls:i]
    return b"if " in head or b"while " in head or b"assert " in head


# Each detector's evidence contains one of these tokens (or a match of PY_REGEXES below); a token with a check
# counts only where the check holds. Few passes matter more than few hits: each pass reads every byte.
_Check = Callable[[bytes, int, int], bool] | None
_SCHEMES = (b"s3", b"gs", b"az", b"abfss", b"wasbs")


def _uri(data: bytes, i: int, n: int) -> bool:
    return data[max(0, i - 5) : i].endswith(_SCHEMES)


PY_TOKENS: tuple[tuple[bytes, _Check], ...] = (
    *(
        (t, None)
        for t in (
            b"cuda",
            b"CUDA",
            b"NCCL",
            b"nvidia",
            b"neuron",
            b"dcgm",
            b"DCGM",
            b"load_inline",
            b"download",
            b"from_url",
            b"--g",
            b"nvme",
            b"/scratch",
            b"/raid",
            b"/local_disk",
            b"loudwatch",
            b"loudWatch",
            b"mask]",
        )
    ),
    (b"://", _uri),
)
_CONDITION_METHODS = frozenset({b"any", b"all", b"sum", b"max", b"min", b"mean", b"norm", b"equal", b"allclose"})
_FORWARD_ONLY = frozenset({b"item", b"tolist", b"numpy", b"long"}) | _CONDITION_METHODS
_DOT = re.compile(
    rb"\.(item|tolist|numpy|long(?=\()|double|float64|any|all|sum|max|min|mean|norm|equal|allclose|nonzero|unique"
    rb"|unique_consecutive|masked_select|argwhere|bincount|where|complex\w*|cfloat|cdouble|chalf|polar"
    rb"|view_as_complex|backends|hub|from_pretrained|jit|autotune|mps|neuron|cuda)\b|\.bool\(\)"
)
# "[" then a comparison later on the line, or "[name_mask," / "[name_mask]": boolean-mask indexing candidates.
_BRACKET_COMPARE = re.compile(rb"\[(?:(?:[^\[\]\n]|\[[^\[\]\n]*\])*?(?:[<>]|[=!]=)|[\w.\s]*mask\w*\s*[\],])")
_IMPORT_LINE = re.compile(rb"[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import|import[ \t]+([\w.]+))")
# Short quoted words, then a set lookup: far faster than one regex alternation of every name.
_QUOTED = re.compile(rb"[\"']([a-z_][\w:.-]{1,30})[\"']")
_DEVICE_BYTES = re.compile(rb"(?:cuda|neuron|xla|mps)(?::\d+)?$")


# import name (longest dotted prefix wins) -> rule
LIBRARIES: dict[str, str] = {
    "flash_attn": "flash-attn",
    "flash_attn_interface": "flash-attn",
    "xformers": "xformers",
    "apex": "apex",
    "bitsandbytes": "bitsandbytes",
    "deepspeed": "deepspeed",
    "cupy": "cupy",
    "cupyx": "cupy",
    "numba.cuda": "numba-cuda",
    "triton": "triton-kernel",
    "pycuda": "cuda-only-library",
    "tensorrt": "cuda-only-library",
    "torch_tensorrt": "cuda-only-library",
    "transformer_engine": "cuda-only-library",
    "nvidia.dali": "cuda-only-library",
    "cuda": "cuda-only-library",
    "torch_neuronx": "neuron-api",
    "torch_neuron": "neuron-api",
    "neuronx_distributed": "neuron-api",
    "libneuronxla": "neuron-api",
    "transformers_neuronx": "neuron-api",
    "optimum.neuron": "neuron-api",
    "neuronxcc": "neuron-api",
    "neuronxcc.nki": "nki-kernel",
    "nki": "nki-kernel",
    "torch_xla": "xla-api",
    "boto3": "cloud-storage-sdk",
    "botocore": "cloud-storage-sdk",
    "google.cloud.storage": "cloud-storage-sdk",
    "gcsfs": "cloud-storage-sdk",
    "s3fs": "cloud-storage-sdk",
    "azure.storage": "cloud-storage-sdk",
    "sagemaker": "sagemaker",
    "pynvml": "nvidia-smi",
    "pydcgm": "dcgm",
    "dcgm_structs": "dcgm",
    "dcgm_fields": "dcgm",
}
# Exact string constants (dynamic imports, device names, attention backends).
EXACT_STRINGS: dict[str, str] = {
    **{name: rule for name, rule in LIBRARIES.items() if "." not in name and name not in ("cuda", "nki", "apex")},
    "nccl": "nccl-backend",
    "flash_attention_2": "flash-attn",
    "flash_attention_3": "flash-attn",
    "reduce-overhead": "cuda-graphs",
    "max-autotune": "cuda-graphs",
}
_QUOTED_WORDS = frozenset(k.encode() for k in EXACT_STRINGS)
_DEVICE = re.compile(r"^(cuda|neuron|xla|mps)(?::\d+)?$")
_DEVICE_RULE = {"cuda": "cuda-device-literal", "neuron": "neuron-api", "xla": "xla-api", "mps": "mps-device"}
NON_TORCH_MODULES = ("numpy", "pandas", "jax", "tensorflow", "scipy", "cupy")
DEFAULT_ALIASES = {"np": "numpy", "pd": "pandas", "jnp": "jax.numpy", "tf": "tensorflow"}
DATA_DEPENDENT_METHODS = frozenset({"nonzero", "unique", "unique_consecutive", "masked_select", "argwhere", "bincount"})
HOST_SYNC_METHODS = frozenset({"item", "tolist", "numpy"})
TENSOR_VALUE_METHODS = frozenset({"any", "all", "item", "sum", "max", "min", "mean", "norm", "equal", "allclose"})
HUB_CALLS = frozenset(
    {"from_pretrained", "hf_hub_download", "snapshot_download", "load_state_dict_from_url", "download_url_to_file"}
)
CUDA_GRAPH_NAMES = (
    "torch.cuda.graph",
    "torch.cuda.CUDAGraph",
    "torch.cuda.make_graphed_callables",
    "torch.cuda.graphs",
)


IMPORT_ROOTS = frozenset({k.split(".")[0].encode() for k in LIBRARIES} | {b"torch", b"google", b"azure"})


def _import_root(module: bytes) -> bool:
    return module.split(b".", 1)[0] in IMPORT_ROOTS


def _lib_rule(dotted: str) -> str | None:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        rule = LIBRARIES.get(".".join(parts[:i]))
        if rule:
            return rule
    return None


def _is_masky(node: ast.AST, top: bool = True) -> bool:
    """A subscript index that is a boolean mask: a comparison, ``.bool()``, ``~``/``&``/``|`` of those, or a
    name ending in ``mask`` (only as the whole index, so ``tuple[Tensor | BlockMask]`` annotations do not count)."""
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)):
        return _is_masky(node.operand, top)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return _is_masky(node.left, False) or _is_masky(node.right, False)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "bool":
        return True
    if not top:
        return False
    if isinstance(node, ast.Name):
        return node.id.lower().endswith("mask")
    if isinstance(node, ast.Attribute):
        return node.attr.lower().endswith("mask")
    return False


class _PyVisitor:
    """One pass over the (pruned) tree; records RawFindings, at most one per rule and line."""

    def __init__(self, hits: list[int] | None, torch_file: bool) -> None:
        self.hits = hits  # sorted trigger lines, or None for "visit everything"
        self.torch_file = torch_file
        self.aliases: dict[str, str] = dict(DEFAULT_ALIASES)
        self.found: list[RawFinding] = []
        self._seen: set[tuple[str, int]] = set()
        self._consumed: set[int] = set()
        self.forward_depth = 0

    # -- plumbing --
    def add(self, rule: str, line: int, message: str) -> None:
        key = (rule, line)
        if key not in self._seen:
            self._seen.add(key)
            self.found.append((rule, line, message, ""))

    def _hit(self, start: int, end: int) -> bool:
        hits = self.hits
        if hits is None:
            return True
        i = bisect.bisect_left(hits, start)
        return i < len(hits) and hits[i] <= end

    def visit(self, node: ast.AST) -> None:
        ln = getattr(node, "lineno", None)
        if ln is not None and self.hits is not None:
            end = getattr(node, "end_lineno", None) or ln
            decorators = getattr(node, "decorator_list", None)
            if decorators:
                ln = min(ln, decorators[0].lineno)
            if not self._hit(ln, end):
                return
        handler = _HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node)
        else:
            self.generic(node)

    def generic(self, node: ast.AST) -> None:
        visit = self.visit
        for name in node._fields:
            v = getattr(node, name, None)
            if v.__class__ is list:
                for x in v:
                    if isinstance(x, ast.AST):
                        visit(x)
            elif isinstance(v, ast.AST):
                visit(v)

    def dotted(self, node: ast.AST) -> str | None:
        """``a.b.c`` with the root name resolved through import aliases; None if the root is not a name."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))

    # -- handlers --
    def v_expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstrings and bare strings are documentation, not code paths
        self.visit(node.value)

    def v_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """ "Inside forward" means: the innermost enclosing def (or class) is ``def forward``."""
        saved = self.forward_depth
        self.forward_depth = 1 if node.name == "forward" else 0
        try:
            self.generic(node)
        finally:
            self.forward_depth = saved

    def v_class(self, node: ast.ClassDef) -> None:
        saved = self.forward_depth
        self.forward_depth = 0
        try:
            self.generic(node)
        finally:
            self.forward_depth = saved

    def v_import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.asname:
                self.aliases[a.asname] = a.name
            rule = _lib_rule(a.name)
            if rule:
                self.add(rule, node.lineno, f"import {a.name}")

    def v_importfrom(self, node: ast.ImportFrom) -> None:
        mod = node.module or ""
        if node.level:
            return  # relative import: the project's own code
        flagged = False
        for a in node.names:
            full = f"{mod}.{a.name}"
            self.aliases[a.asname or a.name] = full
            if mod.startswith("torch.cuda"):
                self.check_dotted(full, node.lineno)
            rule = _lib_rule(full)
            if rule and not flagged:
                self.add(rule, node.lineno, f"from {mod} import {a.name}")
                flagged = rule == _lib_rule(mod)
        if mod == "torch.utils.cpp_extension":
            for a in node.names:
                if a.name in ("CUDAExtension", "load_inline", "load"):
                    self.add("cpp-extension-cuda", node.lineno, f"from {mod} import {a.name}")
                    break

    def v_attribute(self, node: ast.Attribute) -> None:
        d = self.dotted(node)
        if d is None:
            base: ast.AST = node
            while isinstance(base, ast.Attribute):
                base = base.value
            self.visit(base)
            return
        self.check_dotted(d, node.lineno)

    def check_dotted(self, d: str, line: int) -> None:
        if d.startswith("torch."):
            if d.startswith("torch.cuda."):
                if d.startswith("torch.cuda.amp"):
                    self.add("amp-cuda", line, d)
                elif d.startswith(CUDA_GRAPH_NAMES):
                    self.add("cuda-graphs", line, d)
                else:
                    self.add("torch-cuda-api", line, d)
            elif d.startswith(("torch.backends.cudnn", "torch.backends.cuda")):
                self.add("cudnn-tf32-flag", line, d)
            elif d.startswith(("torch.backends.mps", "torch.mps")):
                self.add("mps-device", line, d)
            elif d.startswith("torch.backends."):
                self.add("torch-backends", line, d)
            elif d.startswith("torch.neuron"):
                self.add("neuron-api", line, d)
            elif d in ("torch.float64", "torch.double"):
                self.add("float64-dtype", line, d)
            elif d.startswith(
                (
                    "torch.complex",
                    "torch.cfloat",
                    "torch.cdouble",
                    "torch.chalf",
                    "torch.polar",
                    "torch.view_as_complex",
                )
            ):
                self.add("complex-dtype", line, d)
            elif d.startswith("torch.utils.cpp_extension.") and d.rsplit(".", 1)[1] in (
                "CUDAExtension",
                "load_inline",
                "load",
            ):
                self.add("cpp-extension-cuda", line, d)
        elif d.startswith(("triton.jit", "triton.autotune")):
            self.add("triton-kernel", line, f"@{d}")
        elif d.startswith(("neuronxcc.nki.jit", "nki.jit")):
            self.add("nki-kernel", line, f"@{d}")
        elif d.startswith("numba.cuda."):
            self.add("numba-cuda", line, d)

    def v_call(self, node: ast.Call) -> None:
        f = node.func
        line = node.lineno
        name: str | None = None
        recv: str | None = None
        if isinstance(f, ast.Attribute):
            name = f.attr
            recv = self.dotted(f.value)
            line = f.end_lineno or line  # method calls: report the line holding ".name("
        elif isinstance(f, ast.Name):
            name = f.id
        if name is not None:
            root = (recv or "").split(".", 1)[0]
            is_module = root in ("torch", "numba") or root in NON_TORCH_MODULES
            if isinstance(f, ast.Attribute):
                if name == "cuda" and not is_module:
                    self.add("cuda-call", line, ".cuda()")
                elif name == "double" and self.torch_file and not is_module:
                    self.add("float64-dtype", line, ".double()")
                elif name in HOST_SYNC_METHODS and self.forward_depth and self.torch_file:
                    self.add("item-in-forward", line, f".{name}() inside forward")
                elif name == "long" and self.forward_depth and self.torch_file and not is_module:
                    self.add("int64-index", line, ".long() inside forward")
                elif name in DATA_DEPENDENT_METHODS and self.torch_file and root not in NON_TORCH_MODULES:
                    self.add("data-dependent-op", line, f"{name}()")
                elif name == "where" and root == "torch" and len(node.args) == 1 and not node.keywords:
                    self.add("data-dependent-op", line, "torch.where(condition) with one argument")
            if name in ("autocast", "GradScaler"):
                self._amp(node, name)
            elif name in ("load_inline", "CUDAExtension"):
                self.add("cpp-extension-cuda", node.lineno, f"{name}(...)")
            elif name in HUB_CALLS or (name == "load" and recv == "torch.hub"):
                self.add("hub-download", node.lineno, f"{name}(...)")
        self.generic(node)

    def _amp(self, node: ast.Call, name: str) -> None:
        cands: list[ast.expr] = list(node.args[:1]) + [k.value for k in node.keywords if k.arg == "device_type"]
        for c in cands:
            if isinstance(c, ast.Constant) and c.value == "cuda":
                self._consumed.add(id(c))
                self.add("amp-cuda", node.lineno, f'{name}("cuda")')

    def v_subscript(self, node: ast.Subscript) -> None:
        sl = node.slice
        # one-line rule (like the trigger): the index starts on the line of its "["
        if self.torch_file and sl.lineno == (node.value.end_lineno or node.lineno):
            elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
            if any(_is_masky(e) for e in elts):
                self.add("boolean-mask-index", sl.lineno, "boolean-mask indexing")
        self.generic(node)

    def _cond(self, test: ast.expr, keyword_line: int) -> None:
        """A tensor-value method called on the line of the ``if``/``while``/``assert`` keyword (one-line rule)."""
        if self.forward_depth and self.torch_file:
            for sub in ast.walk(test):
                if (
                    isinstance(sub, ast.Call)
                    and isinstance(sub.func, ast.Attribute)
                    and sub.func.attr in TENSOR_VALUE_METHODS
                    and (sub.func.end_lineno or sub.lineno) == keyword_line
                ):
                    self.add("tensor-control-flow", keyword_line, f"branch on .{sub.func.attr}() inside forward")
                    break

    def v_if(self, node: ast.If | ast.While | ast.Assert) -> None:
        self._cond(node.test, node.lineno)
        self.generic(node)

    def v_ifexp(self, node: ast.IfExp) -> None:
        self._cond(node.test, node.test.lineno)
        self.generic(node)

    def v_constant(self, node: ast.Constant) -> None:
        v = node.value
        if not isinstance(v, str) or id(node) in self._consumed or len(v) > 20000:
            return
        line = node.lineno
        m = _DEVICE.match(v)
        if m:
            self.add(_DEVICE_RULE[m.group(1)], line, f"device string {v!r}")
            return
        rule = EXACT_STRINGS.get(v)
        if rule:
            self.add(rule, line, f"string {v!r}")
            return
        if _STRING_TRIGGER.search(v):
            for rid, pat, template in STRING_RULES:
                mm = pat.search(v)
                if mm:
                    self.add(rid, line, template.format(m=mm.group(0)))


_HANDLERS: dict[type, Callable[[_PyVisitor, Any], None]] = {
    ast.Expr: _PyVisitor.v_expr,
    ast.FunctionDef: _PyVisitor.v_function,
    ast.ClassDef: _PyVisitor.v_class,
    ast.AsyncFunctionDef: _PyVisitor.v_function,
    ast.Import: _PyVisitor.v_import,
    ast.ImportFrom: _PyVisitor.v_importfrom,
    ast.Attribute: _PyVisitor.v_attribute,
    ast.Call: _PyVisitor.v_call,
    ast.Subscript: _PyVisitor.v_subscript,
    ast.If: _PyVisitor.v_if,
    ast.While: _PyVisitor.v_if,
    ast.IfExp: _PyVisitor.v_ifexp,
    ast.Assert: _PyVisitor.v_if,
    ast.Constant: _PyVisitor.v_constant,
}


def _trigger_lines(data: bytes) -> list[int]:
    """Sorted line numbers holding a trigger (``bytes.find`` per token and a few literal-first regexes)."""
    positions: list[int] = []
    find = data.find
    for tok, check in PY_TOKENS:
        n = len(tok)
        i = find(tok)
        while i != -1:
            if (check is None or check(data, i, n)) and not _not_code(data, i):
                positions.append(i)
            i = find(tok, i + n)
    for m in _DOT.finditer(data):
        i = m.start()
        word = m.group(1)
        if word in _FORWARD_ONLY:
            if word in _CONDITION_METHODS and not _on_condition_line(data, i):
                continue
            if not _in_forward(data, i):
                continue
        elif word == b"where" and not _one_argument(data, m.end()):
            continue
        elif word is None and not _inside_brackets(data, i):
            continue  # ".bool()" counts only inside an index
        if not _not_code(data, i):
            positions.append(i)
    for m in _BRACKET_COMPARE.finditer(data):
        if b" for " in m.group(0):
            continue  # a comprehension's filter, not an index
        if not _not_code(data, m.end() - 1):
            positions.append(m.end() - 1)
    quoted = set(_QUOTED.findall(data))
    if not (quoted & _QUOTED_WORDS or any(_DEVICE_BYTES.match(w) for w in quoted if w[:1] in b"cnxm")):
        quoted.clear()
    for m in _QUOTED.finditer(data) if quoted else ():
        w = m.group(1)
        if (w in _QUOTED_WORDS or _DEVICE_BYTES.match(w)) and not _not_code(data, m.end() - 1):
            positions.append(m.end() - 1)
    i = find(b"import ")
    while i != -1:
        ls = data.rfind(b"\n", 0, i) + 1
        im = _IMPORT_LINE.match(data, ls)
        if im and _import_root(im.group(1) or im.group(2)):
            positions.append(ls)
        i = find(b"import ", i + 7)
    if not positions:
        return []
    positions.sort()
    lines: list[int] = []
    pos = 0
    lineno = 1
    count = data.count
    for p in positions:
        lineno += count(b"\n", pos, p)
        pos = p
        if not lines or lines[-1] != lineno:
            lines.append(lineno)
    return lines


_CONTINUATION = (b"else", b"elif", b"except", b"finally", b"case")
# A newline-first pattern searches much faster than "^" with re.M (the engine skips to each "\n").
_COL0 = re.compile(rb"\n[^ \t\r\n#)\]}]")
_COL4 = re.compile(rb"\n    [^ \t\r\n#)\]}]")
_WORD = re.compile(rb"\w+")
_CLASS_WRAPPER = b"class _:\n"

# A unit is (first line, start offset, end offset, is_class_member): the smallest block parsed on its own.
Unit = tuple[int, int, int, bool]


def _blocks(data: bytes, rx: re.Pattern[bytes], start: int, end: int, indent: int, line0: int) -> list[Unit]:
    """Statements at one indentation between two offsets; decorators stay with their def/class."""
    starts: list[tuple[int, int]] = []
    pos = start
    lineno = line0
    pending_decorator = False
    count = data.count
    first = [] if start > 0 or data[:1] in (b"", b" ", b"\t", b"\r", b"\n", b"#", b")", b"]", b"}") else [None]
    for m in (*first, *rx.finditer(data, max(0, start - 1), end)):
        off = m.start() + 1 if m is not None else 0
        lineno += count(b"\n", pos, off)
        pos = off
        head = off + indent
        if data.startswith(_CONTINUATION, head):
            word = _WORD.match(data, head)
            if word and word.group(0) in _CONTINUATION:
                continue
        if pending_decorator:
            if data.startswith((b"def ", b"class ", b"async "), head):
                pending_decorator = False
            continue
        if data[head] == 64:  # "@"
            pending_decorator = True
        starts.append((lineno, off))
    member = indent > 0
    return [(ln, off, starts[i + 1][1] if i + 1 < len(starts) else end, member) for i, (ln, off) in enumerate(starts)]


def _units(data: bytes, hits: list[int]) -> list[Unit]:
    """The units holding a trigger line: top-level blocks, or single members (methods) of a top-level class."""
    tops = _blocks(data, _COL0, 0, len(data), 0, 1)
    top_lines = [u[0] for u in tops]
    chosen: dict[int, Unit] = {}
    split: dict[int, tuple[list[Unit], list[int]]] = {}
    for h in hits:
        i = bisect.bisect_right(top_lines, h) - 1
        if i < 0:
            continue
        ln, start, end, _ = tops[i]
        head = start
        while data.startswith(b"@", head):  # skip decorators to see whether this is a class
            nl = data.find(b"\n", head)
            head = nl + 1 if nl != -1 else end
        if not data.startswith(b"class ", head) or end - start < 2000:
            chosen[start] = tops[i]
            continue
        if i not in split:
            body = data.find(b"\n", head) + 1
            members = _blocks(data, _COL4, body, end, 4, ln + data.count(b"\n", start, body))
            first = members[0][1] if members else end
            header = (ln, start, first, False)  # "class X(...):" plus docstring and class attributes
            units = [header, *members]
            split[i] = (units, [u[0] for u in units])
        units, lines = split[i]
        j = bisect.bisect_right(lines, h) - 1
        if j >= 0:
            chosen[units[j][1]] = units[j]
    return [chosen[k] for k in sorted(chosen)]


def _parse_unit(data: bytes, unit: Unit) -> ast.Module:
    ln, start, end, member = unit
    if member:  # keep the indentation valid: a dummy class around one method, at the same line numbers
        return ast.parse(b"\n" * (ln - 2) + _CLASS_WRAPPER + data[start:end])
    return ast.parse(b"\n" * (ln - 1) + data[start:end])


def scan_python(source: str | bytes, *, prune: bool = True) -> list[RawFinding]:
    """Findings for one Python source. ``prune=False`` parses and visits everything (the reference for tests)."""
    data = source.encode("utf-8") if isinstance(source, str) else source
    torch_file = b"torch" in data
    if not prune:
        v = _PyVisitor(None, torch_file)
        v.visit(ast.parse(data))
        return v.found
    hits = _trigger_lines(data)
    if not hits:
        return []
    v = _PyVisitor(hits, torch_file)
    try:
        trees = [_parse_unit(data, u) for u in _units(data, hits)]
    except SyntaxError:
        trees = [ast.parse(data)]  # a block boundary guessed wrong (e.g. a column-0 line inside a string)
    for t in trees:
        v.visit(t)
    return v.found


# ---------------------------------------------------------------------------------------------------------------
# One file, a chunk of files, the walk
# ---------------------------------------------------------------------------------------------------------------

FileOutcome = tuple[str, list[RawFinding], str | None, int]  # rel path, findings, skip reason, suppressed


def scan_file(path: str, rel: str, kind: str, max_bytes: int = DEFAULT_MAX_BYTES, prune: bool = True) -> FileOutcome:
    """Scan one file; every failure becomes a skip reason, never an exception."""
    try:
        st = os.stat(path)
        if st.st_size > max_bytes:
            return rel, [], f"file is {st.st_size / 1e6:.1f} MB, over the {max_bytes / 1e6:.1f} MB limit", 0
        if kind == "cuda":
            return rel, [("cuda-source-file", None, f"CUDA source file {Path(rel).name}", "")], None, 0
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
        if len(data) > max_bytes:
            return rel, [], f"file grew over the {max_bytes / 1e6:.1f} MB limit while reading", 0
    except OSError as exc:
        return rel, [], f"unreadable: {exc.strerror or exc}", 0
    if b"\x00" in data:
        return rel, [], "binary file (contains NUL bytes)", 0
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return rel, [], f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})", 0
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        found = scan_python(data, prune=prune) if kind == "python" else scan_text(text, kind)
    except SyntaxError as exc:
        return rel, [], f"Python syntax error at line {exc.lineno}: {exc.msg}", 0
    except RecursionError:
        return rel, [], "nesting too deep to parse (RecursionError)", 0
    except MemoryError:
        return rel, [], "nesting too deep to parse (parser ran out of memory)", 0
    except Exception as exc:  # a scanner bug must not end the scan; it is recorded where the user sees it
        return rel, [], f"internal scanner error: {type(exc).__name__}: {exc}", 0
    if not found:
        return rel, [], None, 0
    found, suppressed = _apply_suppressions(found, text)
    if found and kind == "python":
        lines = text.splitlines()
        found = [(r, ln, msg, lines[ln - 1] if ln and ln <= len(lines) else "") for r, ln, msg, _ in found]
    return rel, found, None, suppressed


def _scan_chunk(items: list[tuple[str, str, str]], max_bytes: int) -> list[FileOutcome]:
    return [scan_file(p, rel, kind, max_bytes) for p, rel, kind in items]


def walk(root: Path) -> tuple[list[tuple[str, str, str]], list[Skipped]]:
    """Files to scan as (path, relative posix path, kind), and what was skipped on the way (loops, exclusions)."""
    files: list[tuple[str, str, str]] = []
    skipped: list[Skipped] = []
    if root.is_file():
        kind = classify(root.name) or "text"
        files.append((str(root), root.name, kind))
        return files, skipped
    visited = {os.path.realpath(root)}
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack:
        d, rel_d = stack.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as exc:
            skipped.append(Skipped(path=rel_d or ".", reason=f"unreadable directory: {exc.strerror or exc}"))
            continue
        for e in entries:
            rel = f"{rel_d}/{e.name}" if rel_d else e.name
            try:
                if e.is_symlink():
                    try:
                        real = os.path.realpath(e.path, strict=True)
                    except OSError as exc:
                        loop = "loop" in str(exc).lower() or getattr(exc, "errno", None) == 40
                        skipped.append(Skipped(path=rel, reason="symlink loop" if loop else "broken symlink"))
                        continue
                    if os.path.isdir(real):
                        if real in visited:
                            skipped.append(
                                Skipped(path=rel, reason="symlink loop: points to a directory already scanned")
                            )
                            continue
                        visited.add(real)
                        stack.append((e.path, rel))
                        continue
                    if not os.path.isfile(real):
                        continue
                    link_kind = classify(e.name)
                    if link_kind:
                        files.append((e.path, rel, link_kind))
                elif e.is_dir(follow_symlinks=False):
                    if e.name in EXCLUDED_DIRS:
                        if e.name not in CACHE_DIRS:  # caches are noise; a vendored .venv is worth saying
                            skipped.append(Skipped(path=rel, reason="excluded directory"))
                        continue
                    visited.add(os.path.realpath(e.path))
                    stack.append((e.path, rel))
                elif e.is_file(follow_symlinks=False):
                    file_kind = classify(e.name)
                    if file_kind:
                        files.append((e.path, rel, file_kind))
            except OSError as exc:
                skipped.append(Skipped(path=rel, reason=f"unreadable: {exc.strerror or exc}"))
    files.sort(key=lambda t: t[1])
    return files, skipped


def _chunks(items: list[tuple[str, str, str]], n: int) -> Iterable[list[tuple[str, str, str]]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def scan_path(
    path: str | Path,
    *,
    targets: frozenset[str] | None = None,
    jobs: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> PortabilityLog:
    """Scan a file or directory tree into a PortabilityLog. Never imports or executes what it reads."""
    t0 = time.perf_counter()
    root = Path(path)
    if not root.exists():
        raise InputFileError("no such file or directory", file=str(path), fix="give the path of a repository to scan")
    files, skipped = walk(root)
    n_jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    outcomes: list[FileOutcome] = []
    if n_jobs > 1 and len(files) >= PARALLEL_MIN_FILES:
        with ProcessPoolExecutor(max_workers=n_jobs) as pool:
            for chunk_out in pool.map(_scan_chunk, _chunks(files, CHUNK), [max_bytes] * len(files)):
                outcomes.extend(chunk_out)
    else:
        outcomes = _scan_chunk(files, max_bytes)
    findings: list[Finding] = []
    suppressed = 0
    for rel, found, reason, sup in outcomes:
        suppressed += sup
        if reason is not None:
            skipped.append(Skipped(path=rel, reason=reason))
        for rule_id, line, message, snippet in found:
            findings.append(Finding.from_rule(RULES[rule_id], file=rel, line=line, message=message, snippet=snippet))
    log = PortabilityLog(
        root=str(root),
        files_scanned=len(files),
        findings=findings,
        skipped=sorted(skipped, key=lambda s: s.path),
        suppressed=suppressed,
    )
    log.only_targets(targets)
    log.elapsed_s = round(time.perf_counter() - t0, 3)
    return log
