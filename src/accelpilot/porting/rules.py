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
# What one porting item is for a rule (log.py groups findings into items by it): one kernel, one package across
# files, one container image, one setting repeated across copies of a job file, one integration for the whole
# repository, one operator, or (the default) the rule's lines in one file.
ItemScope = Literal["kernel", "package", "image", "setting", "repo", "op", "file"]

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
EFFORT_RANK: dict[str, int] = {"hours": 0, "days": 1, "weeks": 2}

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


@dataclass(frozen=True, slots=True, kw_only=True)
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
    item: ItemScope = "file"

    @property
    def record_category(self) -> str:
        return RECORD_CATEGORY[self.category]


_RULES: tuple[Rule, ...] = (
    # --- device-specific code paths (source) ---------------------------------------------------------------
    Rule(
        id="cuda-call",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="hours",
        title="`.cuda()` call",
        why="`.cuda()` hard-codes an NVIDIA device; on Trainium/Inferentia the device is `neuron` (TorchNeuron) and "
        "`.cuda()` raises. Route every placement through one device setting (`.to(device)`).",
    ),
    Rule(
        id="torch-cuda-api",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="hours",
        title="`torch.cuda.*` API",
        why="`torch.cuda` streams, events, memory statistics and synchronisation have no Neuron meaning; "
        "Neuron uses `torch.neuron.synchronize()` and its own memory reporting. Each call needs a device-neutral path.",
    ),
    Rule(
        id="cuda-device-literal",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="hours",
        title='`"cuda"` device string',
        why='A literal `"cuda"` device pins the code to NVIDIA GPUs; the Neuron device is `"neuron"`. '
        "Make the device a configuration value.",
    ),
    Rule(
        id="cudnn-tf32-flag",
        item="repo",
        category="device_code",
        dimension="source",
        severity="info",
        targets=NEURON,
        effort="hours",
        title="cuDNN / TF32 flag",
        why="cuDNN and TF32 switches do nothing off NVIDIA GPUs, and numerics tuned with TF32 differ from Trainium's "
        "BF16/FP32 casting: accuracy results must be re-validated on the target.",
    ),
    Rule(
        id="torch-backends",
        item="repo",
        category="device_code",
        dimension="source",
        severity="info",
        targets=ALL,
        effort="hours",
        title="`torch.backends.*` setting",
        why="Backend switches are device- and library-specific; check each one has an equivalent (or no effect) on "
        "the target platform.",
    ),
    Rule(
        id="nccl-backend",
        item="repo",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="hours",
        title="NCCL collectives",
        why='NCCL is NVIDIA\'s collective library; Neuron runs collectives through `backend="neuron"` over EFA, '
        "and `NCCL_*` tuning does not carry over.",
    ),
    Rule(
        id="cuda-graphs",
        item="repo",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="CUDA graphs",
        why="CUDA graph capture (`torch.cuda.graph`, `make_graphed_callables`, torch.compile `reduce-overhead`) is "
        "NVIDIA-only; Neuron compiles whole graphs ahead of time instead, so capture code and static buffers "
        "must be removed or rewritten.",
    ),
    Rule(
        id="amp-cuda",
        item="repo",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="hours",
        title="CUDA-specific mixed precision",
        why='`torch.cuda.amp`, `autocast("cuda")` and CUDA GradScaler are CUDA-only; Neuron uses '
        '`torch.autocast(device_type="neuron")` with BF16 and needs no loss scaling.',
    ),
    Rule(
        id="neuron-api",
        item="package",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=GPU,
        effort="days",
        title="AWS Neuron API",
        why='torch-neuronx / neuronx-distributed / `"neuron"` devices exist only on Trainium and Inferentia; running '
        "on GPUs (or elsewhere) needs the generic PyTorch path for each of these calls.",
    ),
    Rule(
        id="xla-api",
        item="package",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=ALL,
        effort="days",
        title="PyTorch/XLA API",
        why="torch_xla code (`xm.xla_device()`, `mark_step`, XLA devices) ties the loop to XLA; GPUs run eager or "
        "torch.compile, and Neuron 2.32 replaced torch-neuronx's XLA path with TorchNeuron native.",
    ),
    Rule(
        id="mps-device",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=ALL,
        effort="hours",
        title="Apple MPS device",
        why="MPS is Apple-silicon only; code selecting it needs a device-neutral path on any server accelerator.",
    ),
    # --- custom kernels and CUDA-only libraries (source) -----------------------------------------------------
    Rule(
        id="cuda-source-file",
        item="kernel",
        category="custom_kernel",
        dimension="source",
        severity="blocking",
        targets=NEURON,
        effort="weeks",
        title="CUDA source file",
        why="A `.cu`/`.cuh` kernel runs only on NVIDIA GPUs. On Trainium it must be rewritten (NKI kernel) or replaced "
        "by framework operators: this is the most expensive kind of port.",
    ),
    Rule(
        id="cpp-extension-cuda",
        item="kernel",
        category="custom_kernel",
        dimension="source",
        severity="blocking",
        targets=NEURON,
        effort="weeks",
        title="CUDA C++ extension",
        why="`CUDAExtension` / `load_inline` / `cpp_extension.load` build native kernels for NVIDIA GPUs; each kernel "
        "needs a Neuron (NKI) or pure-PyTorch replacement (a `CppExtension`'s operators are invisible to the Neuron "
        "compiler and run on the host). The Python files that import the built module are part of the item.",
    ),
    Rule(
        id="triton-kernel",
        item="kernel",
        category="custom_kernel",
        dimension="source",
        severity="blocking",
        targets=NEURON,
        effort="weeks",
        title="Triton kernel",
        why="Triton kernels compile for NVIDIA/AMD GPUs only; on Trainium each becomes an NKI kernel or a composition "
        "of supported operators.",
    ),
    Rule(
        id="nki-kernel",
        item="kernel",
        category="custom_kernel",
        dimension="source",
        severity="blocking",
        targets=GPU,
        effort="weeks",
        title="NKI kernel",
        why="Neuron Kernel Interface kernels run only on NeuronCores; on GPUs each needs a CUDA/Triton kernel or an "
        "equivalent PyTorch composition.",
    ),
    Rule(
        id="flash-attn",
        item="package",
        category="custom_kernel",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="flash-attn",
        why="flash-attn ships CUDA kernels only. On Neuron the attention path must fall back to SDPA or an NKI "
        "attention kernel: check the fallback exists, is exercised, and is fast enough.",
    ),
    Rule(
        id="xformers",
        item="package",
        category="custom_kernel",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="xformers",
        why="xformers' memory-efficient attention and fused ops are CUDA kernels; Neuron needs another path.",
    ),
    Rule(
        id="apex",
        item="package",
        category="custom_kernel",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="NVIDIA apex",
        why="apex fused optimisers, layer norms and AMP are CUDA extensions; use the PyTorch equivalents "
        "(torch.optim fused=False, nn.LayerNorm) on Neuron.",
    ),
    Rule(
        id="bitsandbytes",
        item="package",
        category="custom_kernel",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="bitsandbytes",
        why="bitsandbytes 8-/4-bit quantisation and 8-bit optimisers are CUDA kernels; Neuron quantises differently "
        "(its own weight-only INT8/FP8 formats), so quantised checkpoints and optimiser states do not carry over.",
    ),
    Rule(
        id="deepspeed",
        item="package",
        category="custom_kernel",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="weeks",
        title="DeepSpeed",
        why="DeepSpeed's fused ops are CUDA extensions and its engine assumes NCCL; on Trainium sharding and "
        "pipelining go through neuronx-distributed instead, which changes the training loop and checkpoints.",
    ),
    Rule(
        id="cupy",
        item="package",
        category="custom_kernel",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="CuPy",
        why="CuPy arrays and raw kernels live in CUDA device memory; on Neuron use NumPy on the host or torch ops.",
    ),
    Rule(
        id="numba-cuda",
        item="kernel",
        category="custom_kernel",
        dimension="source",
        severity="blocking",
        targets=NEURON,
        effort="days",
        title="numba.cuda kernel",
        why="`numba.cuda` JIT kernels run on NVIDIA GPUs only and need a rewrite for any other accelerator.",
    ),
    Rule(
        id="cuda-only-library",
        item="package",
        category="custom_kernel",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="CUDA-only library",
        why="This library (TensorRT, Transformer Engine, DALI, PyCUDA, cuda-python) exists only for NVIDIA GPUs; "
        "the feature it provides needs a Neuron equivalent or removal.",
    ),
    # --- compile-ahead hazards (model) -----------------------------------------------------------------------
    Rule(
        id="data-dependent-op",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="data-dependent output shape",
        why="`nonzero`, `unique`, `masked_select`, `argwhere`, `bincount` and one-argument `where` produce shapes that "
        "depend on values. Neuron compiles fixed shapes ahead of time: these ops fail to compile (NCC_EMOD025), "
        "fall back to the CPU, or force recompilation. Rewrite with fixed-size masks (e.g. `torch.where(m, x, 0)`).",
    ),
    Rule(
        id="boolean-mask-index",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="boolean-mask indexing",
        why="`x[mask]` has a data-dependent result shape, a dynamic shape the Neuron compiler cannot lower for fixed "
        "shapes. Multiply by the mask or use `torch.where` to keep shapes static.",
    ),
    Rule(
        id="item-in-forward",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="host sync inside forward",
        why="`.item()`, `.tolist()` and `.numpy()` inside `forward` pull a value to the host: the compiled graph is "
        "cut there (graph break, device-to-host copy every step) and anything decided from the value is "
        "recompiled or runs on the CPU.",
    ),
    Rule(
        id="tensor-control-flow",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="control flow on tensor values",
        why="An `if`/`while` on a tensor's value inside `forward` cannot be compiled ahead of time: the graph splits "
        "at the branch and one branch is baked in. Use `torch.where` or move the decision out of the model.",
    ),
    Rule(
        id="float64-dtype",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="float64",
        why="float64 is not a Trainium/Inferentia2 compute type: the compiler downcasts or the op falls back to the "
        "CPU. Keep float64 on the host or move to float32/bf16 and re-validate accuracy.",
    ),
    Rule(
        id="complex-dtype",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="complex dtype",
        why="Complex types are only partly supported by the Neuron compiler (2.32): rotary embeddings and FFTs "
        "written with complex numbers usually need a real-valued rewrite.",
    ),
    Rule(
        id="int64-index",
        # One check for the repository, not an item per file: a static scan cannot see value ranges, and the work
        # is the same wherever the casts are (confirm no index or count reaches 2^31; where one can, keep it
        # int32-safe). Two hand-judged transformers samples found no per-file int64 item a port would record.
        item="repo",
        category="compile_hazard",
        dimension="model",
        severity="info",
        targets=NEURON,
        effort="hours",
        title="int64 inside forward",
        why="Trn1 computes int64 as int32: indices above 2^31 overflow and int64-heavy index arithmetic is slow. "
        "One check for the whole model: confirm the value ranges of the lines listed; prefer int32 where it is safe.",
    ),
    Rule(
        id="graph-break",
        item="op",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="graph break",
        why="A graph break splits the model into several compiled graphs with host round trips between them; on "
        "Neuron each piece compiles separately and host hops cost throughput.",
    ),
    Rule(
        id="export-failure",
        item="op",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="model does not export",
        why="torch.export could not capture the model as one graph; ahead-of-time compilers (Neuron) need a "
        "capturable graph, so the failing construct must be rewritten before a port.",
    ),
    Rule(
        id="unsupported-op",
        item="op",
        category="unsupported_operator",
        dimension="model",
        severity="blocking",
        targets=NEURON,
        effort="weeks",
        title="unsupported operator",
        why="The operator is not in the target's supported list: it falls back to the CPU (which wrecks throughput "
        "in a hot path) or the compile fails (NCC_EUOC002). Check operator coverage before promising a date.",
    ),
    # --- container differences (operational) ----------------------------------------------------------------
    Rule(
        id="cuda-base-image",
        item="image",
        category="container",
        dimension="operational",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="CUDA base image",
        why="The image is built on a CUDA base (nvidia/cuda, NGC, pytorch CUDA tags); Trainium needs the Neuron "
        "driver/runtime and an AWS Neuron DLC or Neuron SDK layers instead, so the image is rebuilt and re-tested.",
    ),
    Rule(
        id="rocm-base-image",
        item="image",
        category="container",
        dimension="operational",
        severity="warning",
        targets=NEURON | GPU,
        effort="days",
        title="ROCm base image",
        why="The image targets AMD ROCm; NVIDIA and Neuron need different base images, drivers and wheels.",
    ),
    Rule(
        id="neuron-base-image",
        item="image",
        category="container",
        dimension="operational",
        severity="warning",
        targets=GPU,
        effort="days",
        title="AWS Neuron base image",
        why="The image is an AWS Neuron DLC or carries the Neuron SDK; a GPU target needs a CUDA image and wheels.",
    ),
    Rule(
        id="cuda-version-pin",
        item="setting",
        category="container",
        dimension="operational",
        severity="warning",
        targets=NEURON,
        effort="hours",
        title="CUDA version pin",
        why="A CUDA-specific wheel or version pin (`+cu121`, cu12 index URLs, `nvidia-*-cu12`, CUDA env) will not "
        "install or is dead weight on Neuron; the Neuron SDK pins its own torch and compiler versions.",
    ),
    Rule(
        id="neuron-package-pin",
        item="setting",
        category="container",
        dimension="operational",
        severity="warning",
        targets=GPU,
        effort="hours",
        title="Neuron package pin",
        why="Neuron packages (neuronx-cc, torch-neuronx, the Neuron pip repository) install only for Neuron hosts.",
    ),
    # --- data movement (commercial / model / operational) ----------------------------------------------------
    Rule(
        id="object-store-uri",
        item="setting",
        category="data_movement",
        dimension="commercial",
        severity="info",
        targets=ALL,
        effort="hours",
        title="object-store location",
        why="Data or checkpoints live in a cloud object store: running elsewhere means egress fees, a copy to keep "
        "in sync, or read latency across regions or clouds.",
    ),
    Rule(
        id="cloud-storage-sdk",
        item="package",
        category="data_movement",
        dimension="commercial",
        severity="info",
        targets=ALL,
        effort="hours",
        title="cloud storage SDK",
        why="boto3 / GCS / Azure storage clients bind the data path to one provider's API, credentials and region.",
    ),
    Rule(
        id="hub-download",
        item="repo",
        category="data_movement",
        dimension="model",
        severity="info",
        targets=ALL,
        effort="hours",
        title="run-time model download",
        why="Weights are downloaded at run time (Hub, URL): the target needs egress and the same revision, and on "
        "Neuron the compiled artefacts must be cached next to the weights or every cold start recompiles.",
    ),
    Rule(
        id="local-nvme-path",
        item="setting",
        category="data_movement",
        dimension="operational",
        severity="info",
        targets=ALL,
        effort="hours",
        title="local NVMe / scratch path",
        why="The code assumes a local NVMe or scratch mount; instance families differ in local storage, so the "
        "staging step needs re-planning on the target.",
    ),
    # --- operational integrations ----------------------------------------------------------------------------
    Rule(
        id="slurm-gpu-gres",
        item="setting",
        category="operational",
        dimension="operational",
        severity="warning",
        targets=NEURON,
        effort="hours",
        title="Slurm GPU request",
        why="`--gres=gpu` / `--gpus` asks Slurm for NVIDIA GPUs; Trainium clusters schedule Neuron devices "
        "(e.g. ParallelCluster with Neuron gres), so job scripts change.",
    ),
    Rule(
        id="k8s-gpu-resource",
        item="setting",
        category="operational",
        dimension="operational",
        severity="warning",
        targets=NEURON,
        effort="hours",
        title="Kubernetes nvidia.com/gpu",
        why="`nvidia.com/gpu` needs the NVIDIA device plugin; Neuron nodes expose `aws.amazon.com/neuron` "
        "(or neuroncore) through the Neuron device plugin and scheduler extension.",
    ),
    Rule(
        id="k8s-neuron-resource",
        item="setting",
        category="operational",
        dimension="operational",
        severity="warning",
        targets=GPU,
        effort="hours",
        title="Kubernetes Neuron resource",
        why="`aws.amazon.com/neuron*` resources exist only on Neuron nodes; GPU nodes expose `nvidia.com/gpu`.",
    ),
    Rule(
        id="cuda-visible-devices",
        item="setting",
        category="operational",
        dimension="operational",
        severity="info",
        targets=NEURON,
        effort="hours",
        title="CUDA_VISIBLE_DEVICES",
        why="Device selection by `CUDA_VISIBLE_DEVICES` has no effect on Neuron, which uses `NEURON_RT_VISIBLE_CORES`.",
    ),
    Rule(
        id="sagemaker",
        item="setting",
        category="operational",
        dimension="commercial",
        severity="info",
        targets=GPU,
        effort="days",
        title="Amazon SageMaker",
        why="SageMaker jobs, estimators and instance types (`ml.*`) tie orchestration and billing to AWS; running "
        "on premises or in another cloud needs a different job runner.",
    ),
    Rule(
        id="cloudwatch",
        item="repo",
        category="operational",
        dimension="operational",
        severity="info",
        targets=GPU,
        effort="hours",
        title="Amazon CloudWatch",
        why="Metrics and logs go to CloudWatch, an AWS service; elsewhere the monitoring integration is rebuilt.",
    ),
    Rule(
        id="dcgm",
        item="repo",
        category="operational",
        dimension="operational",
        severity="info",
        targets=NEURON,
        effort="hours",
        title="NVIDIA DCGM",
        why="DCGM (and its exporter) monitors NVIDIA GPUs only; Neuron hosts use `neuron-monitor`.",
    ),
    Rule(
        id="nvidia-smi",
        item="repo",
        category="operational",
        dimension="operational",
        severity="warning",
        targets=NEURON,
        effort="hours",
        title="nvidia-smi / NVML",
        why="`nvidia-smi` and NVML (pynvml) exist only with NVIDIA drivers; Neuron uses `neuron-ls` and "
        "`neuron-top`/`neuron-monitor`. Scripts that parse its output break.",
    ),
    Rule(
        id="neuron-tools",
        item="repo",
        category="operational",
        dimension="operational",
        severity="info",
        targets=GPU,
        effort="hours",
        title="Neuron tools",
        why="`neuron-ls`, `neuron-top`, `neuron-monitor` exist only on Neuron hosts; GPU hosts use nvidia-smi/DCGM.",
    ),
    # --- added for real code (issue 12) -----------------------------------------------------------------------
    Rule(
        id="cuda-kernel-library",
        item="package",
        category="custom_kernel",
        dimension="source",
        severity="blocking",
        targets=NEURON,
        effort="weeks",
        title="CUDA kernel library",
        why="A library of hand-written CUDA/Triton/CUTLASS kernels (causal-conv1d, selective scan, TileLang, CuTe DSL, "
        "quack, FlashInfer, Liger, torchao's CUDA ops). None run on Trainium/Inferentia; each kernel the model "
        "calls needs an NKI or plain-PyTorch replacement, validated for numerics.",
    ),
    Rule(
        id="hub-kernel",
        item="setting",
        category="custom_kernel",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="weeks",
        title="kernel fetched from a hub",
        why="`kernels.get_kernel(...)` downloads a compiled CUDA kernel at run time: nothing to load on Neuron, and "
        "the kernel's source is not in the repository. Hub kernels are usually a fast path with a fallback (a "
        "warning); where the model has no fallback it needs a replacement. A run-time download is also a data "
        "movement step.",
    ),
    Rule(
        id="growing-sequence",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="sequence grown each step",
        why="`torch.cat` onto the sequence inside a loop gives a new shape every step; an ahead-of-time compiler "
        "recompiles per length. Decode into a fixed-size (bucketed) buffer with a KV cache instead.",
    ),
    Rule(
        id="varlen-packing",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="variable-length packing (cu_seqlens)",
        why="Packed variable-length batches (`cu_seqlens`) have data-dependent shapes; on Neuron they recompile per "
        "batch or need padding to buckets.",
    ),
    Rule(
        id="compile-backend",
        item="repo",
        category="device_code",
        dimension="source",
        severity="info",
        targets=NEURON,
        effort="hours",
        title="`torch.compile` without the target's backend",
        why="`torch.compile` without `backend=` uses inductor, which generates Triton/C++ for GPUs and CPUs; on "
        "Neuron the backend must be the Neuron one. Make the backend a setting.",
    ),
    Rule(
        id="nccl-in-container",
        item="setting",
        category="container",
        dimension="operational",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="NCCL built or installed in the image",
        why="The image builds or installs NCCL (or NCCL tests / aws-ofi-nccl); Neuron collectives use the Neuron "
        "runtime and EFA plugin instead, so this part of the image differs on the target.",
    ),
    Rule(
        id="gpu-launcher-setting",
        item="setting",
        category="operational",
        dimension="operational",
        severity="warning",
        targets=NEURON,
        effort="hours",
        title="GPU launcher setting",
        why="Launcher settings written for GPUs (`GPUS_PER_NODE`, `--nproc_per_node`, `--gpus`, `LD_PRELOAD` of CUDA "
        "libraries, `PYTORCH_CUDA_ALLOC_CONF`, `TORCH_NCCL_*`): on Trainium the process count follows NeuronCores "
        "and these variables do nothing or break the launch.",
    ),
    Rule(
        id="http-download",
        category="data_movement",
        dimension="operational",
        severity="info",
        targets=ALL,
        effort="hours",
        title="download at run time",
        why="`requests`/`urllib` fetch data at run time: egress, availability and an extra dependency on the network "
        "of the target region.",
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
