"""The rule registry: every finding the scanner can emit names one rule here.

A rule says what kind of portability problem it is (category), which of the seed's four portability dimensions
it touches (source, model, operational, commercial), how bad it is, which target platforms it concerns, a rough
effort class, and *why* it matters on the target. The scanner's detectors only decide *where*; this table says
*what*, so a procurement reader gets the same explanation for every occurrence.

Category -> the seed's five portability-log record categories ("every device-specific code path, container
difference, unsupported operator, data movement step and operational integration"):

- ``device_code`` and ``custom_kernel`` -> *device-specific code path* (a hand-written kernel is the most
  device-specific code path there is; the port is a rewrite, which the effort class says);
- ``compile_hazard`` and ``unsupported_operator`` -> *unsupported operator* (a compile-ahead hazard is an
  operator or pattern the ahead-of-time compiler cannot lower for fixed shapes: it falls back to the CPU, breaks
  the graph or fails to compile; an unsupported operator is the measured case);
- ``container`` -> *container difference*; ``data_movement`` -> *data movement step*;
  ``operational`` -> *operational integration*.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from accelpilot.errors import UnknownNameError, did_you_mean

Category = Literal[
    "device_code",
    "custom_kernel",
    "compile_hazard",
    "container",
    "data_movement",
    "operational",
    "unsupported_operator",
]
Dimension = Literal["source", "model", "operational", "commercial"]
Severity = Literal["info", "warning", "blocking"]
Effort = Literal["hours", "days", "weeks"]

RECORD_CATEGORIES: tuple[str, ...] = (
    "device-specific code path",
    "container difference",
    "unsupported operator",
    "data movement step",
    "operational integration",
)
RECORD_CATEGORY: dict[str, str] = {
    "device_code": "device-specific code path",
    "custom_kernel": "device-specific code path",
    "compile_hazard": "unsupported operator",
    "unsupported_operator": "unsupported operator",
    "container": "container difference",
    "data_movement": "data movement step",
    "operational": "operational integration",
}
DIMENSIONS: tuple[str, ...] = ("source", "model", "operational", "commercial")
SEVERITIES: tuple[str, ...] = ("info", "warning", "blocking")
SEVERITY_RANK: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}

# Target platforms a rule can concern. "gpu" means moving *to* a GPU (the reverse direction).
TARGETS: tuple[str, ...] = ("trainium", "inferentia", "gpu")
TARGET_ALIASES: dict[str, frozenset[str]] = {
    "trainium": frozenset({"trainium"}),
    "trn": frozenset({"trainium"}),
    "inferentia": frozenset({"inferentia"}),
    "inf": frozenset({"inferentia"}),
    "neuron": frozenset({"trainium", "inferentia"}),
    "aws": frozenset({"trainium", "inferentia"}),
    "gpu": frozenset({"gpu"}),
    "cuda": frozenset({"gpu"}),
    "nvidia": frozenset({"gpu"}),
}
NEURON = frozenset({"trainium", "inferentia"})
GPU = frozenset({"gpu"})
ALL = frozenset(TARGETS)


@dataclass(frozen=True, slots=True)
class Rule:
    """One kind of finding. ``why`` is written for the person who reads the log, not the developer."""

    id: str
    category: Category
    dimension: Dimension
    severity: Severity
    targets: frozenset[str]
    effort: Effort
    title: str
    why: str

    @property
    def record_category(self) -> str:
        return RECORD_CATEGORY[self.category]


def _r(
    id: str,
    category: Category,
    dimension: Dimension,
    severity: Severity,
    targets: frozenset[str],
    effort: Effort,
    title: str,
    why: str,
) -> Rule:
    return Rule(id, category, dimension, severity, targets, effort, title, why)


_RULES: tuple[Rule, ...] = (
    # --- device-specific code paths (source) ---------------------------------------------------------------
    _r(
        "cuda-call",
        "device_code",
        "source",
        "warning",
        NEURON,
        "hours",
        "`.cuda()` call",
        "`.cuda()` hard-codes an NVIDIA device; on Trainium/Inferentia the device is `neuron` (TorchNeuron) and "
        "`.cuda()` raises. Route every placement through one device setting (`.to(device)`).",
    ),
    _r(
        "torch-cuda-api",
        "device_code",
        "source",
        "warning",
        NEURON,
        "hours",
        "`torch.cuda.*` API",
        "`torch.cuda` streams, events, memory statistics and synchronisation have no Neuron meaning; "
        "Neuron uses `torch.neuron.synchronize()` and its own memory reporting. Each call needs a device-neutral path.",
    ),
    _r(
        "cuda-device-literal",
        "device_code",
        "source",
        "warning",
        NEURON,
        "hours",
        '`"cuda"` device string',
        'A literal `"cuda"` device pins the code to NVIDIA GPUs; the Neuron device is `"neuron"`. '
        "Make the device a configuration value.",
    ),
    _r(
        "cudnn-tf32-flag",
        "device_code",
        "source",
        "info",
        NEURON,
        "hours",
        "cuDNN / TF32 flag",
        "cuDNN and TF32 switches do nothing off NVIDIA GPUs, and numerics tuned with TF32 differ from Trainium's "
        "BF16/FP32 casting: accuracy results must be re-validated on the target.",
    ),
    _r(
        "torch-backends",
        "device_code",
        "source",
        "info",
        ALL,
        "hours",
        "`torch.backends.*` setting",
        "Backend switches are device- and library-specific; check each one has an equivalent (or no effect) on "
        "the target platform.",
    ),
    _r(
        "nccl-backend",
        "device_code",
        "source",
        "warning",
        NEURON,
        "hours",
        "NCCL collectives",
        'NCCL is NVIDIA\'s collective library; Neuron runs collectives through `backend="neuron"` over EFA, '
        "and `NCCL_*` tuning does not carry over.",
    ),
    _r(
        "cuda-graphs",
        "device_code",
        "source",
        "warning",
        NEURON,
        "days",
        "CUDA graphs",
        "CUDA graph capture (`torch.cuda.graph`, `make_graphed_callables`, torch.compile `reduce-overhead`) is "
        "NVIDIA-only; Neuron compiles whole graphs ahead of time instead, so capture code and static buffers "
        "must be removed or rewritten.",
    ),
    _r(
        "amp-cuda",
        "device_code",
        "source",
        "warning",
        NEURON,
        "hours",
        "CUDA-specific mixed precision",
        '`torch.cuda.amp`, `autocast("cuda")` and CUDA GradScaler are CUDA-only; Neuron uses '
        '`torch.autocast(device_type="neuron")` with BF16 and needs no loss scaling.',
    ),
    _r(
        "neuron-api",
        "device_code",
        "source",
        "warning",
        GPU,
        "days",
        "AWS Neuron API",
        'torch-neuronx / neuronx-distributed / `"neuron"` devices exist only on Trainium and Inferentia; running '
        "on GPUs (or elsewhere) needs the generic PyTorch path for each of these calls.",
    ),
    _r(
        "xla-api",
        "device_code",
        "source",
        "warning",
        ALL,
        "days",
        "PyTorch/XLA API",
        "torch_xla code (`xm.xla_device()`, `mark_step`, XLA devices) ties the loop to XLA; GPUs run eager or "
        "torch.compile, and Neuron 2.32 replaced torch-neuronx's XLA path with TorchNeuron native.",
    ),
    _r(
        "mps-device",
        "device_code",
        "source",
        "warning",
        ALL,
        "hours",
        "Apple MPS device",
        "MPS is Apple-silicon only; code selecting it needs a device-neutral path on any server accelerator.",
    ),
    # --- custom kernels and CUDA-only libraries (source) -----------------------------------------------------
    _r(
        "cuda-source-file",
        "custom_kernel",
        "source",
        "blocking",
        NEURON,
        "weeks",
        "CUDA source file",
        "A `.cu`/`.cuh` kernel runs only on NVIDIA GPUs. On Trainium it must be rewritten (NKI kernel) or replaced "
        "by framework operators: this is the most expensive kind of port.",
    ),
    _r(
        "cpp-extension-cuda",
        "custom_kernel",
        "source",
        "blocking",
        NEURON,
        "weeks",
        "CUDA C++ extension",
        "`CUDAExtension` / `load_inline` / `cpp_extension.load` build native kernels for NVIDIA GPUs; each kernel "
        "needs a Neuron (NKI) or pure-PyTorch replacement.",
    ),
    _r(
        "triton-kernel",
        "custom_kernel",
        "source",
        "blocking",
        NEURON,
        "weeks",
        "Triton kernel",
        "Triton kernels compile for NVIDIA/AMD GPUs only; on Trainium each becomes an NKI kernel or a composition "
        "of supported operators.",
    ),
    _r(
        "nki-kernel",
        "custom_kernel",
        "source",
        "blocking",
        GPU,
        "weeks",
        "NKI kernel",
        "Neuron Kernel Interface kernels run only on NeuronCores; on GPUs each needs a CUDA/Triton kernel or an "
        "equivalent PyTorch composition.",
    ),
    _r(
        "flash-attn",
        "custom_kernel",
        "source",
        "warning",
        NEURON,
        "days",
        "flash-attn",
        "flash-attn ships CUDA kernels only. On Neuron the attention path must fall back to SDPA or an NKI "
        "attention kernel: check the fallback exists, is exercised, and is fast enough.",
    ),
    _r(
        "xformers",
        "custom_kernel",
        "source",
        "warning",
        NEURON,
        "days",
        "xformers",
        "xformers' memory-efficient attention and fused ops are CUDA kernels; Neuron needs another path.",
    ),
    _r(
        "apex",
        "custom_kernel",
        "source",
        "warning",
        NEURON,
        "days",
        "NVIDIA apex",
        "apex fused optimisers, layer norms and AMP are CUDA extensions; use the PyTorch equivalents "
        "(torch.optim fused=False, nn.LayerNorm) on Neuron.",
    ),
    _r(
        "bitsandbytes",
        "custom_kernel",
        "source",
        "warning",
        NEURON,
        "days",
        "bitsandbytes",
        "bitsandbytes 8-/4-bit quantisation and 8-bit optimisers are CUDA kernels; Neuron quantises differently "
        "(its own weight-only INT8/FP8 formats), so quantised checkpoints and optimiser states do not carry over.",
    ),
    _r(
        "deepspeed",
        "custom_kernel",
        "source",
        "warning",
        NEURON,
        "weeks",
        "DeepSpeed",
        "DeepSpeed's fused ops are CUDA extensions and its engine assumes NCCL; on Trainium sharding and "
        "pipelining go through neuronx-distributed instead, which changes the training loop and checkpoints.",
    ),
    _r(
        "cupy",
        "custom_kernel",
        "source",
        "warning",
        NEURON,
        "days",
        "CuPy",
        "CuPy arrays and raw kernels live in CUDA device memory; on Neuron use NumPy on the host or torch ops.",
    ),
    _r(
        "numba-cuda",
        "custom_kernel",
        "source",
        "blocking",
        NEURON,
        "days",
        "numba.cuda kernel",
        "`numba.cuda` JIT kernels run on NVIDIA GPUs only and need a rewrite for any other accelerator.",
    ),
    _r(
        "cuda-only-library",
        "custom_kernel",
        "source",
        "warning",
        NEURON,
        "days",
        "CUDA-only library",
        "This library (TensorRT, Transformer Engine, DALI, PyCUDA, cuda-python) exists only for NVIDIA GPUs; "
        "the feature it provides needs a Neuron equivalent or removal.",
    ),
    # --- compile-ahead hazards (model) -----------------------------------------------------------------------
    _r(
        "data-dependent-op",
        "compile_hazard",
        "model",
        "warning",
        NEURON,
        "days",
        "data-dependent output shape",
        "`nonzero`, `unique`, `masked_select`, `argwhere`, `bincount` and one-argument `where` produce shapes that "
        "depend on values. Neuron compiles fixed shapes ahead of time: these ops fail to compile (NCC_EMOD025), "
        "fall back to the CPU, or force recompilation. Rewrite with fixed-size masks (e.g. `torch.where(m, x, 0)`).",
    ),
    _r(
        "boolean-mask-index",
        "compile_hazard",
        "model",
        "warning",
        NEURON,
        "days",
        "boolean-mask indexing",
        "`x[mask]` has a data-dependent result shape, a dynamic shape the Neuron compiler cannot lower for fixed "
        "shapes. Multiply by the mask or use `torch.where` to keep shapes static.",
    ),
    _r(
        "item-in-forward",
        "compile_hazard",
        "model",
        "warning",
        NEURON,
        "days",
        "host sync inside forward",
        "`.item()`, `.tolist()` and `.numpy()` inside `forward` pull a value to the host: the compiled graph is "
        "cut there (graph break, device-to-host copy every step) and anything decided from the value is "
        "recompiled or runs on the CPU.",
    ),
    _r(
        "tensor-control-flow",
        "compile_hazard",
        "model",
        "warning",
        NEURON,
        "days",
        "control flow on tensor values",
        "An `if`/`while` on a tensor's value inside `forward` cannot be compiled ahead of time: the graph splits "
        "at the branch and one branch is baked in. Use `torch.where` or move the decision out of the model.",
    ),
    _r(
        "float64-dtype",
        "compile_hazard",
        "model",
        "warning",
        NEURON,
        "days",
        "float64",
        "float64 is not a Trainium/Inferentia2 compute type: the compiler downcasts or the op falls back to the "
        "CPU. Keep float64 on the host or move to float32/bf16 and re-validate accuracy.",
    ),
    _r(
        "complex-dtype",
        "compile_hazard",
        "model",
        "warning",
        NEURON,
        "days",
        "complex dtype",
        "Complex types are only partly supported by the Neuron compiler (2.32): rotary embeddings and FFTs "
        "written with complex numbers usually need a real-valued rewrite.",
    ),
    _r(
        "int64-index",
        "compile_hazard",
        "model",
        "info",
        NEURON,
        "hours",
        "int64 inside forward",
        "Trn1 computes int64 as int32: indices above 2^31 overflow and int64-heavy index arithmetic is slow. "
        "Check value ranges; prefer int32 where it is safe.",
    ),
    _r(
        "graph-break",
        "compile_hazard",
        "model",
        "warning",
        NEURON,
        "days",
        "graph break",
        "A graph break splits the model into several compiled graphs with host round trips between them; on "
        "Neuron each piece compiles separately and host hops cost throughput.",
    ),
    _r(
        "export-failure",
        "compile_hazard",
        "model",
        "warning",
        NEURON,
        "days",
        "model does not export",
        "torch.export could not capture the model as one graph; ahead-of-time compilers (Neuron) need a "
        "capturable graph, so the failing construct must be rewritten before a port.",
    ),
    _r(
        "unsupported-op",
        "unsupported_operator",
        "model",
        "blocking",
        NEURON,
        "weeks",
        "unsupported operator",
        "The operator is not in the target's supported list: it falls back to the CPU (which wrecks throughput "
        "in a hot path) or the compile fails (NCC_EUOC002). Check operator coverage before promising a date.",
    ),
    # --- container differences (operational) ----------------------------------------------------------------
    _r(
        "cuda-base-image",
        "container",
        "operational",
        "warning",
        NEURON,
        "days",
        "CUDA base image",
        "The image is built on a CUDA base (nvidia/cuda, NGC, pytorch CUDA tags); Trainium needs the Neuron "
        "driver/runtime and an AWS Neuron DLC or Neuron SDK layers instead, so the image is rebuilt and re-tested.",
    ),
    _r(
        "rocm-base-image",
        "container",
        "operational",
        "warning",
        NEURON | GPU,
        "days",
        "ROCm base image",
        "The image targets AMD ROCm; NVIDIA and Neuron need different base images, drivers and wheels.",
    ),
    _r(
        "neuron-base-image",
        "container",
        "operational",
        "warning",
        GPU,
        "days",
        "AWS Neuron base image",
        "The image is an AWS Neuron DLC or carries the Neuron SDK; a GPU target needs a CUDA image and wheels.",
    ),
    _r(
        "cuda-version-pin",
        "container",
        "operational",
        "warning",
        NEURON,
        "hours",
        "CUDA version pin",
        "A CUDA-specific wheel or version pin (`+cu121`, cu12 index URLs, `nvidia-*-cu12`, CUDA env) will not "
        "install or is dead weight on Neuron; the Neuron SDK pins its own torch and compiler versions.",
    ),
    _r(
        "neuron-package-pin",
        "container",
        "operational",
        "warning",
        GPU,
        "hours",
        "Neuron package pin",
        "Neuron packages (neuronx-cc, torch-neuronx, the Neuron pip repository) install only for Neuron hosts.",
    ),
    # --- data movement (commercial / model / operational) ----------------------------------------------------
    _r(
        "object-store-uri",
        "data_movement",
        "commercial",
        "info",
        ALL,
        "hours",
        "object-store location",
        "Data or checkpoints live in a cloud object store: running elsewhere means egress fees, a copy to keep "
        "in sync, or read latency across regions or clouds.",
    ),
    _r(
        "cloud-storage-sdk",
        "data_movement",
        "commercial",
        "info",
        ALL,
        "hours",
        "cloud storage SDK",
        "boto3 / GCS / Azure storage clients bind the data path to one provider's API, credentials and region.",
    ),
    _r(
        "hub-download",
        "data_movement",
        "model",
        "info",
        ALL,
        "hours",
        "run-time model download",
        "Weights are downloaded at run time (Hub, URL): the target needs egress and the same revision, and on "
        "Neuron the compiled artefacts must be cached next to the weights or every cold start recompiles.",
    ),
    _r(
        "local-nvme-path",
        "data_movement",
        "operational",
        "info",
        ALL,
        "hours",
        "local NVMe / scratch path",
        "The code assumes a local NVMe or scratch mount; instance families differ in local storage, so the "
        "staging step needs re-planning on the target.",
    ),
    # --- operational integrations ----------------------------------------------------------------------------
    _r(
        "slurm-gpu-gres",
        "operational",
        "operational",
        "warning",
        NEURON,
        "hours",
        "Slurm GPU request",
        "`--gres=gpu` / `--gpus` asks Slurm for NVIDIA GPUs; Trainium clusters schedule Neuron devices "
        "(e.g. ParallelCluster with Neuron gres), so job scripts change.",
    ),
    _r(
        "k8s-gpu-resource",
        "operational",
        "operational",
        "warning",
        NEURON,
        "hours",
        "Kubernetes nvidia.com/gpu",
        "`nvidia.com/gpu` needs the NVIDIA device plugin; Neuron nodes expose `aws.amazon.com/neuron` "
        "(or neuroncore) through the Neuron device plugin and scheduler extension.",
    ),
    _r(
        "k8s-neuron-resource",
        "operational",
        "operational",
        "warning",
        GPU,
        "hours",
        "Kubernetes Neuron resource",
        "`aws.amazon.com/neuron*` resources exist only on Neuron nodes; GPU nodes expose `nvidia.com/gpu`.",
    ),
    _r(
        "cuda-visible-devices",
        "operational",
        "operational",
        "info",
        NEURON,
        "hours",
        "CUDA_VISIBLE_DEVICES",
        "Device selection by `CUDA_VISIBLE_DEVICES` has no effect on Neuron, which uses `NEURON_RT_VISIBLE_CORES`.",
    ),
    _r(
        "sagemaker",
        "operational",
        "commercial",
        "info",
        GPU,
        "days",
        "Amazon SageMaker",
        "SageMaker jobs, estimators and instance types (`ml.*`) tie orchestration and billing to AWS; running "
        "on premises or in another cloud needs a different job runner.",
    ),
    _r(
        "cloudwatch",
        "operational",
        "operational",
        "info",
        GPU,
        "hours",
        "Amazon CloudWatch",
        "Metrics and logs go to CloudWatch, an AWS service; elsewhere the monitoring integration is rebuilt.",
    ),
    _r(
        "dcgm",
        "operational",
        "operational",
        "info",
        NEURON,
        "hours",
        "NVIDIA DCGM",
        "DCGM (and its exporter) monitors NVIDIA GPUs only; Neuron hosts use `neuron-monitor`.",
    ),
    _r(
        "nvidia-smi",
        "operational",
        "operational",
        "warning",
        NEURON,
        "hours",
        "nvidia-smi / NVML",
        "`nvidia-smi` and NVML (pynvml) exist only with NVIDIA drivers; Neuron uses `neuron-ls` and "
        "`neuron-top`/`neuron-monitor`. Scripts that parse its output break.",
    ),
    _r(
        "neuron-tools",
        "operational",
        "operational",
        "info",
        GPU,
        "hours",
        "Neuron tools",
        "`neuron-ls`, `neuron-top`, `neuron-monitor` exist only on Neuron hosts; GPU hosts use nvidia-smi/DCGM.",
    ),
)

RULES: dict[str, Rule] = {r.id: r for r in _RULES}
assert len(RULES) == len(_RULES), "duplicate rule id"


def get_rule(rule_id: str) -> Rule:
    """The rule with this id, or an UnknownNameError with "did you mean"."""
    try:
        return RULES[rule_id]
    except KeyError:
        raise UnknownNameError(
            f"unknown rule {rule_id!r}; {did_you_mean(rule_id, list(RULES))}",
            field="rule",
            fix="`accelpilot scan --list-rules` prints every rule id",
        ) from None


def resolve_targets(names: list[str] | tuple[str, ...] | None) -> frozenset[str] | None:
    """Map ``--target`` values (trainium, inferentia, gpu, neuron, ...) to platform names; None means all."""
    if not names:
        return None
    out: set[str] = set()
    for raw in names:
        for name in raw.split(","):
            key = name.strip().lower()
            if not key:
                continue
            if key not in TARGET_ALIASES:
                raise UnknownNameError(
                    f"unknown target {name!r}; {did_you_mean(key, list(TARGET_ALIASES))}", field="--target"
                )
            out |= TARGET_ALIASES[key]
    return frozenset(out)
