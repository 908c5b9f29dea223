"""The effort model of the portability log: engineer-days per porting item, as a range with its assumption.

A table kept as data: one row per rule (a rule without a row takes its effort class's row), each with the range in
engineer-days for one item of that rule, what the range assumes, and where it comes from (a source, or the reasoning
stated). The log carries the rows it used, the totals as ranges, and the Neuron stack the estimate assumes, so a
porting lead can check every figure against their own.
"""

from __future__ import annotations

from dataclasses import dataclass

# The stack every estimate assumes (seed 002: Neuron release 2.32.0 recommends TorchNeuron Native, documents eager
# execution, torch.compile and standard distributed APIs; the XLA-based torch-neuronx is not in 2.32.0 and later).
NEURON_STACK = (
    "TorchNeuron native (the `neuron` device) in Neuron SDK 2.32, eager and torch.compile; the XLA-based "
    "torch-neuronx is not in 2.32 and later, so XLA-era fixed-shape hazards are labelled as such"
)

# Compile hazards whose cost comes from XLA's fixed-shape tracing: under TorchNeuron native eager they run as they
# are, under torch.compile they are graph breaks or recompiles (a speed cost). Their range starts at checking and
# accepting that cost.
XLA_ERA_RULES = frozenset(
    {
        "data-dependent-op",
        "boolean-mask-index",
        "item-in-forward",
        "tensor-control-flow",
        "growing-sequence",
        "dynamic-padding",
        "varlen-packing",
        "int64-index",
        "size-readback",
        "partial-last-batch",
    }
)
XLA_ERA_NOTE = (
    "XLA-era hazard: under torch-neuronx's XLA tracing each new shape recompiled or failed; under TorchNeuron native "
    "eager it runs, and under torch.compile it is a graph break or a recompile, fixed only where the profile shows it"
)


@dataclass(frozen=True, slots=True)
class EffortRow:
    """Engineer-days for one item of a rule: ``low``-``high``, assuming ``assumption``; ``basis`` says why."""

    low: float
    high: float
    assumption: str
    basis: str


_REASONED = "stated reasoning (no published per-item figure exists; a porting lead should replace it with their own)"

# Rows per effort class, for a rule without its own row.
BY_CLASS: dict[str, EffortRow] = {
    "hours": EffortRow(0.1, 0.5, "an edit in one place and a re-run", _REASONED),
    "days": EffortRow(1, 3, "a change of one component and its tests", _REASONED),
    "weeks": EffortRow(5, 15, "a rewrite of one component, validated for numerics and speed", _REASONED),
}

# A project copied into the repository (``findings.VENDORED_PATH``): one item, whatever its own kernels and devices.
VENDORED_PROJECT = EffortRow(
    1,
    5,
    "port the few entry points of the copy the repository calls, or replace the copy with the upstream release "
    "for the target; the rest of the copy stays unported",
    _REASONED,
)

ROWS: dict[str, EffortRow] = {
    # custom kernels: an item is one kernel (a Triton file's kernels are one family item) or one extension
    "triton-kernel": EffortRow(
        3,
        10,
        "rewrite the kernel (family) in NKI, or route to its PyTorch reference where one exists and accept "
        "the speed; numerics tests against the CUDA output",
        _REASONED + ": 3 days with a reference path, two working weeks for an NKI rewrite with tests",
    ),
    "cuda-source-file": EffortRow(
        5, 15, "rewrite one CUDA source's kernels in NKI or replace them with PyTorch ops", _REASONED
    ),
    "cpp-extension-cuda": EffortRow(
        5, 15, "rewrite the extension's kernels and drop its CUDA build (setup.py / load() JIT)", _REASONED
    ),
    "numba-cuda": EffortRow(3, 10, "rewrite the numba.cuda kernel in NKI or PyTorch", _REASONED),
    "nki-kernel": EffortRow(0.5, 2, "already a Neuron kernel: re-validate on the pinned SDK", _REASONED),
    "fp8-matmul": EffortRow(
        2,
        5,
        "move the FP8 GEMMs and their scale bookkeeping to bf16 (or a Trn2 FP8 path); re-validate the loss",
        _REASONED,
    ),
    "hub-kernel": EffortRow(
        3, 10, "replace a hub-fetched CUDA kernel with the library's reference path or an NKI kernel", _REASONED
    ),
    "cuda-kernel-library": EffortRow(
        5,
        15,
        "replace a CUDA-only kernel library (mamba-ssm, causal-conv1d, flashinfer, ...) with reference ops "
        "or NKI kernels for the calls the code makes",
        _REASONED,
    ),
    # framework runtimes and CUDA libraries: an item is one package across the repository
    "deepspeed": EffortRow(
        10,
        30,
        "replace the training runtime (ZeRO sharding, optimizer, checkpoint format, launcher) with "
        "NeuronX Distributed or torch FSDP on Neuron and re-validate convergence",
        _REASONED + ": a whole trainer stands on it (issue 27: weeks, not a warning)",
    ),
    "model-parallel-library": EffortRow(
        1,
        3,
        "run the tensor-parallel layers' collectives on the neuron backend and reshard checkpoints to the "
        "NeuronCore count where one shard does not fit a core",
        _REASONED + ": the layers are Python over torch.distributed; a rewrite on neuronx-distributed is weeks",
    ),
    "undeclared-dependencies": EffortRow(
        0.25,
        0.5,
        "write and pin a requirements file for the default path's imports, checked beside TorchNeuron's torch",
        _REASONED + ": finding and pinning a handful of packages is hours",
    ),
    "memory-fit": EffortRow(
        0.5,
        2,
        "re-fit the per-device batch, accumulation, activation checkpointing or sharding to the NeuronCore's memory "
        "and check the global batch and learning-rate recipe still hold",
        _REASONED,
    ),
    "remote-model-code": EffortRow(
        0.5,
        1,
        "vendor the model's Hub code at a pinned revision so the port can edit and review it",
        _REASONED,
    ),
    "parity-validation": EffortRow(
        0,
        0,
        "counted once as the exit test's re-validation on the destination (2 d): this item names the reference",
        _REASONED,
    ),
    "model-bringup": EffortRow(
        0.5,
        2,
        "run the default path's models on the neuron device in eager and under torch.compile(backend='neuron'), "
        "read the compile log for unsupported operators and CPU fallbacks, compare outputs with the CPU and time the "
        "first compile",
        _REASONED + ": standard layers are assumed lowered (seed 004: Neuron supports the common building blocks "
        "well); an unsupported operator found this way is its own item",
    ),
    "compile-step": EffortRow(
        1,
        3,
        "wrap the default step in torch.compile(backend='neuron'), remove or accept the graph breaks the item lists, "
        "bucket the shapes that change per batch, and time the first compile and the graph count against the step",
        _REASONED + ": issue 27's held-out labellers sized this item at 0.5-4 days (median 1.5) where they listed it",
    ),
    "checkpoint-map-location": EffortRow(
        0.1,
        0.25,
        "add map_location='cpu' (and weights_only) to each load and load one CUDA-saved checkpoint",
        _REASONED,
    ),
    "hf-trainer": EffortRow(
        1,
        4,
        "run the Trainer/Accelerator loop on the neuron device (transformers >= 5.4, accelerate >= 1.13 place "
        "there; a stack pinned below them is upgraded first) and re-check the loss curve, precision, accumulation "
        "and eval/save cadence",
        _REASONED + ": a pinned-stack upgrade plus a re-validated loop is days, not weeks",
    ),
    "lightning-trainer": EffortRow(
        1,
        4,
        "register a Lightning Accelerator for the neuron device (or move the step to a plain PyTorch loop) and "
        "re-check the loss curve, precision plugin and checkpoint cadence",
        _REASONED + ": the same work as a Trainer taught a new device, days, not weeks",
    ),
    "training-runtime": EffortRow(
        10,
        30,
        "rebuild the training step (parallel layout, MoE dispatch, grouped matmuls, checkpoints) on "
        "NeuronX Distributed and re-validate convergence",
        _REASONED + ": a runtime a trainer stands on is weeks",
    ),
    "flash-attn": EffortRow(2, 5, "swap to SDPA or an NKI flash-attention kernel and re-check numerics", _REASONED),
    "xformers": EffortRow(1, 4, "swap memory-efficient attention to SDPA", _REASONED),
    "apex": EffortRow(1, 5, "replace fused optimizers/norms with torch equivalents", _REASONED),
    "bitsandbytes": EffortRow(
        3, 10, "replace 8-bit optimizers/quantization (no Neuron build) or drop them and re-fit memory", _REASONED
    ),
    "cupy": EffortRow(2, 5, "replace CuPy array code with torch or numpy", _REASONED),
    "cuda-only-library": EffortRow(
        3,
        10,
        "replace a CUDA-only library (Transformer Engine, TensorRT, DALI, ...) with the Neuron equivalent",
        _REASONED,
    ),
    # graph
    "unsupported-op": EffortRow(3, 10, "an NKI op or a decomposition for one operator", _REASONED),
    "graph-break": EffortRow(0.5, 3, "rewrite the code dynamo cannot trace, or accept the break", _REASONED),
    "export-failure": EffortRow(0.5, 3, "make the model traceable for capture", _REASONED),
    "float64-dtype": EffortRow(0.5, 2, "move the computation to float32 and re-check accuracy", _REASONED),
    "fft-op": EffortRow(1, 5, "rewrite the transform as real DFT matmuls or move it to host preprocessing", _REASONED),
    "nested-tensor": EffortRow(1, 4, "pad to a fixed size with a mask instead of nested tensors", _REASONED),
    "complex-dtype": EffortRow(1, 3, "rewrite complex arithmetic as real pairs", _REASONED),
    "moe-experts-dispatch": EffortRow(
        2, 5, "route the experts dispatcher to an eager or NKI grouped matmul", _REASONED
    ),
    # device code
    "cuda-graphs": EffortRow(1, 3, "drop or replace hand-written CUDA graph capture", _REASONED),
    "neuron-api": EffortRow(0.5, 2, "re-validate calls of the Neuron API on the pinned SDK", _REASONED),
    "xla-api": EffortRow(1, 3, "move torch_xla calls to TorchNeuron native", _REASONED),
    # containers and operations
    "cuda-base-image": EffortRow(1, 3, "rebuild the image on a Neuron deep learning container", _REASONED),
    "nccl-in-container": EffortRow(
        0.5, 2, "drop the NCCL build from the image; Neuron's collectives ship with it", _REASONED
    ),
}
for _r in XLA_ERA_RULES:
    ROWS.setdefault(
        _r,
        EffortRow(
            0.25,
            3,
            "check the graph break or recompile under torch.compile; rewrite the function only "
            "where the profile shows it",
            _REASONED + "; " + XLA_ERA_NOTE,
        ),
    )

# Training-path hazards (rules/train_rules.py): validations and small rewrites, not kernels.
ROWS.update(
    {
        "private-torch-op": EffortRow(
            0.5, 2, "port the op to the public ATen API, or check the stock op's gradients on the target", _REASONED
        ),
        "fp32-training": EffortRow(
            0.5,
            1.5,
            "run the training step under bf16 autocast on the neuron device and re-validate the reported metrics "
            "against the fp32 run",
            _REASONED + ": a context manager and a loss-scale check; the days are the metric re-validation",
        ),
        "sampling-ops": EffortRow(
            0.25,
            0.5,
            "run the sampling operators on the neuron device (or move sampling to the host) and compare the token "
            "distribution with the CPU",
            _REASONED,
        ),
        "manual-attention": EffortRow(
            0.5,
            1.5,
            "replace the hand-written attention with F.scaled_dot_product_attention (mask and scale kept), compare "
            "outputs with the CPU and re-fit the batch at the default sequence length",
            _REASONED + ": one attention module per model; more variants are more of the same change",
        ),
        "double-backward": EffortRow(0.5, 1.5, "validate second-order op coverage of the regularizers", _REASONED),
        "torchscript-on-device": EffortRow(
            0.5, 1.5, "validate the scripted model on the target, or run it on the CPU", _REASONED
        ),
        "float16-manual": EffortRow(0.25, 1, "validate the fp16 path's numerics, or switch it to bf16", _REASONED),
        "host-array-to-device": EffortRow(0.25, 1, "keep float32 buffers on the device once", _REASONED),
        "pretrained-encoder-in-loop": EffortRow(
            0.5, 1.5, "validate the encoder on the target, or precompute its outputs offline", _REASONED
        ),
        "checkpoint-weights-only": EffortRow(
            0.1,
            0.5,
            "pass weights_only=False to the loads of the repository's own checkpoints (or allow their classes), "
            "and load one checkpoint of each kind on the current torch",
            _REASONED + ": a keyword per load; the time is finding a checkpoint of each kind to load",
        ),
        "fid-evaluation": EffortRow(
            0.5,
            1.5,
            "run the Inception feature extractor on the device (or the host) and check the FID against the CUDA "
            "reference on the same samples",
            _REASONED,
        ),
        "lightning-ddp": EffortRow(
            1,
            3,
            "move Lightning's DDP launch to torchrun (or a current Lightning's Neuron strategy), one process per "
            "NeuronCore on the neuron backend; re-check the learning-rate scaling and rank-zero hooks",
            _REASONED,
        ),
        "mpi-launch": EffortRow(
            0.5,
            2,
            "replace the mpi4py rank, sharding and broadcast reads with torch.distributed under torchrun (or map "
            "mpirun's ranks onto NeuronCores); re-check data sharding and checkpoint loading",
            _REASONED,
        ),
        "data-parallel": EffortRow(
            0.5,
            1.5,
            "replace DataParallel with one process per NeuronCore under torchrun (DistributedDataParallel, a "
            "DistributedSampler, rank-aware logging and checkpoints) and re-check the loss curve",
            _REASONED,
        ),
        "sync-batchnorm": EffortRow(
            0.5,
            1.5,
            "run SyncBatchNorm on two or more NeuronCores and compare its running statistics with per-core "
            "BatchNorm; fall back to per-core BN (or GroupNorm) if the neuron backend lacks its kernels",
            _REASONED + ": a multi-core validation run and a comparison, a day if a fallback is needed",
        ),
        "install-pin": EffortRow(
            0.5,
            2,
            "lift the torch pin to the Neuron SDK's torch (or replace the TensorFlow 1.x dependency), re-resolve the "
            "rest of the requirements against it and re-run the default command",
            _REASONED + ": the pin is one line; the days are the libraries pinned with it",
        ),
        "stack-upgrade": EffortRow(
            1,
            3,
            "replace the removed torch/numpy APIs, lift the version pin (and the pinned library's own old APIs), "
            "and re-run the training path on the torch 2.x stack",
            _REASONED + ": each site is a one-line change; the days are the pinned library's upgrade and the re-run",
        ),
        "device-augmentation": EffortRow(
            0.25, 1, "keep the augmentation outside the compiled region or move it to the loader", _REASONED
        ),
        "model-ema-per-step": EffortRow(0.1, 0.5, "switch to a foreach EMA update (timm ModelEmaV3)", _REASONED),
        "host-solver-in-step": EffortRow(0.25, 1, "measure the host solve per step and overlap it", _REASONED),
        "lightning-cuda": EffortRow(
            3,
            8,
            "replace Lightning's launcher and Fabric strategy with torchrun, torch.distributed and FSDP2 on the "
            "neuron device, and re-check the loss curve and checkpoints",
            _REASONED + ": the runtime a trainer stands on, but a thin one (Fabric wraps stock torch.distributed)",
        ),
        "lightning-legacy": EffortRow(
            2,
            6,
            "port the LightningModule to a current Lightning (or a plain torch loop): hooks, logging, checkpoints",
            _REASONED + ": the hooks map one to one, the trainer flags and the checkpoint format do not",
        ),
        "bnb-optimizer": EffortRow(0.25, 0.5, "switch to a torch optimizer and re-check memory", _REASONED),
        "torch-companion": EffortRow(0.1, 0.25, "pin torchvision/torchaudio to the Neuron torch's pair", _REASONED),
        "vocab-resize": EffortRow(0.1, 0.25, "pad the resized vocabulary to a multiple of 128", _REASONED),
        "sparse-tensor": EffortRow(
            0.25, 0.5, "keep the tensor dense or on the host and re-check its readers", _REASONED
        ),
        "trainer-cuda-setting": EffortRow(0.1, 0.25, "drop the CUDA-only setting from the command", _REASONED),
        "trainer-fsdp": EffortRow(
            1,
            5,
            "validate the Trainer's FSDP2 sharding on the neuron device: wrap policy, memory per NeuronCore, "
            "checkpoint save",
            _REASONED + ": a sharded fine-tune brought up on a new device and its checkpoints checked is days",
        ),
        "host-sync-in-loop": EffortRow(
            0.1, 0.5, "accumulate the logged values on the device and read them every N steps", _REASONED
        ),
    }
)

# An item that only imports a kernel language (each kernel is its own item): removing the dependency.
KERNEL_LANGUAGE = EffortRow(0.25, 1, "drop or guard the import once the kernels are ported", _REASONED)
# A kernel or library every use of which falls back off CUDA: the port runs; the work is to measure the fallback.
FALLBACK_CHECK = EffortRow(
    0.5,
    2,
    "the code falls back off CUDA (an ImportError fallback, an availability check, a CPU path): measure the fallback "
    "on the target and port the kernel only if the profile shows it",
    _REASONED + ": replacing it is the row of its rule, counted only if the measurement asks for it",
)
# A CUDA extension whose sources are small (under SMALL_KERNEL_BYTES): an elementwise, activation or resampling kernel
# (StyleGAN2's fused_bias_act, 2.8 KB; upfirdn2d, 11.8 KB; Swin's fused window process, 9.5 KB), replaced by the
# PyTorch reference it stands for (often already in the repository: ``upfirdn2d_native``) and checked numerically.
SMALL_KERNEL_BYTES = 16 * 1024
SMALL_EXTENSION = EffortRow(
    1,
    4,
    "replace the small kernel (under 16 KB of CUDA source) with the PyTorch ops it fuses and check numerics",
    _REASONED
    + ": the held-out labels of such kernels (stylegan2-ada's bias_act 0.5 d and upfirdn2d 1.5 d, Swin's fused "
    "window process 0.5 d, score_sde's 0.25 and 1.5 d, RWKV's inference kernel 2 d) against 10-12 d for the "
    "80-120 KB scan kernels of mamba and RWKV-7 (tuning data, not held out)",
)
# A package only declared (no code path imports it unguarded): an edit of the dependency list.
# Fused kernels of a CUDA library that stand for one stock PyTorch op (flash-attention's csrc extensions): the port is
# swapping the op back in, not writing a kernel.
EAGER_EQUIVALENT = {
    "dropout_layer_norm": "torch's LayerNorm/RMSNorm (and dropout, residual add)",
    "rotary_emb": "rotary embedding in torch ops",
    "xentropy_cuda_lib": "F.cross_entropy",
    "fused_dense_lib": "nn.Linear and its activation",
}
EAGER_SWAP = EffortRow(
    0.5,
    2,
    "swap in the stock PyTorch op the fused kernel stands for and re-check numerics and speed",
    _REASONED + ": one op with a reference in torch, its calls and a numerics check",
)
# A runtime named only by another README command (an out-of-memory option): the work is its target equivalent.
ALTERNATIVE_COMMAND = EffortRow(
    0.25,
    1,
    "an alternative command the README offers: give it the target's equivalent (FSDP2 CPU offload for DeepSpeed "
    "offload) or drop it from the instructions",
    _REASONED + ": no code of the repository uses the runtime; one command and its note change",
)
OPTIONAL_LIBRARY = EffortRow(
    0.25,
    1,
    "an optional integration imported only where it is used: keep it off the target's path, or give the path that "
    "selects it the target's equivalent when that path is needed",
    _REASONED + ": the workload's default path does not run it",
)
DECLARED_ONLY = EffortRow(
    0.25, 1, "make the declared dependency an optional extra (or drop it) for the target", _REASONED
)
# A ``stack-upgrade`` item of numpy's removed names (``np.float``, ``np.RankWarning``, ``numpy.lib.function_base``):
# each site has a one-line replacement named in the rule, and numpy needs no pin lifted with it.
NUMPY_NAMES = EffortRow(
    0.25, 1, "replace numpy's removed names with the ones the rule names and re-run the path", _REASONED
)
# A ``stack-upgrade`` item of ``pkg_resources`` (gone from setuptools 82): ``importlib.resources`` and
# ``importlib.metadata`` replace its few calls, or setuptools is pinned below 82.
PKG_RESOURCES_CALLS = EffortRow(
    0.1, 0.5, "replace pkg_resources calls with importlib.resources/importlib.metadata and re-run the path", _REASONED
)
# Each further kernel of a family: its variants (forward/backward, varlen, autotuned configurations) share the op's
# reference, tests and tiling, so each adds a fraction of the first kernel's range.
FAMILY_STEP = (0.25, 1.0)
FAMILY_NOTE = "each further kernel of the family 0.25-1 d (variants share the op's reference, tests and tiling)"
# Re-validation on the destination that the exit test adds to the items' midpoints (decide/exit_cost.py's
# REVALIDATION_DAYS; a test holds them equal).
REVALIDATION_DAYS = 2.0
# The rows an item may take instead of its rule's, by the name the log's effort model lists them under.
SPECIAL_ROWS: dict[str, EffortRow] = {
    "(kernel language)": KERNEL_LANGUAGE,
    "(fallback off CUDA)": FALLBACK_CHECK,
    "(declared only)": DECLARED_ONLY,
    "(optional integration)": OPTIONAL_LIBRARY,
}


def row_for(rule: str, effort: str) -> EffortRow:
    """The row of ``rule``, or its effort class's row."""
    return ROWS.get(rule) or BY_CLASS.get(effort) or BY_CLASS["days"]
