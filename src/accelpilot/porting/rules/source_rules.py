"""Rules on source code: device-specific code paths, custom kernels and CUDA-only libraries."""

from __future__ import annotations

from accelpilot.porting.rules.schema import ALL, GPU, NEURON, Rule

SOURCE_RULES: tuple[Rule, ...] = (
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
        why='`torch.cuda.amp`, `autocast("cuda")` and CUDA GradScaler are CUDA-only (as are '
        "`TrainingArguments(fp16=True)` and accelerate's `mixed_precision='fp16'`, refused off GPUs); Neuron uses "
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
        targets=GPU,
        effort="hours",
        title="Apple MPS device",
        why="MPS is Apple-silicon only; code selecting it needs a device-neutral path on a GPU server. A Neuron port "
        "adds its own `neuron` branch beside it (the CUDA item's work) and leaves the MPS branch as it is.",
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
        id="training-runtime",
        item="package",
        category="custom_kernel",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="weeks",
        title="GPU training runtime",
        why="Megatron-LM/Megatron-Core, megablocks and grouped_gemm build the training step (tensor/pipeline "
        "parallelism, MoE dispatch, grouped matmuls) on CUDA kernels and NCCL; on Trainium that step is rebuilt on "
        "neuronx-distributed, which changes the training loop, the parallel layout and the checkpoints.",
    ),
    Rule(
        id="model-parallel-library",
        item="package",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="model-parallel layers from a third-party library",
        why="fairscale's tensor-parallel layers (`ColumnParallelLinear`, `RowParallelLinear`, `ParallelEmbedding`) "
        "are Python over torch.distributed collectives, so they run wherever the process group does; the work is "
        "validating them on the `neuron` backend and matching the parallel degree (and the checkpoint shards) to the "
        "NeuronCore count and memory. fairscale is no longer maintained: neuronx-distributed has the same layers.",
    ),
    Rule(
        id="hf-trainer",
        item="repo",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="Hugging Face Trainer / accelerate training loop",
        why="transformers' Trainer (through accelerate), or accelerate's `Accelerator` driving a loop directly, "
        "picks the device, wraps DDP, mixed precision and the eval/save loop itself, choosing CUDA or the CPU "
        "(assumed: stock accelerate has no TorchNeuron-native `neuron` device branch; unverified on hardware); "
        "TorchNeuron's `neuron` device needs either a Trainer taught that device (optimum-neuron's NeuronTrainer), "
        "an accelerate state patched to return it, or a plain PyTorch loop, then a re-check of loss.",
    ),
    Rule(
        id="lightning-trainer",
        item="repo",
        category="device_code",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="Lightning Trainer / Fabric training loop",
        why="A Lightning `Trainer` (or `Fabric`) drives the loop: it picks the accelerator (`'auto'` takes CUDA, "
        "else the CPU), the strategy (DDP over NCCL for several devices), the precision plugin and the checkpoint "
        "cadence. Lightning 2.6 ships no accelerator for TorchNeuron's native `neuron` device (its "
        "`XLAAccelerator` serves the XLA-era torch-neuronx; assumed, unverified on hardware), so as written the "
        "loop runs on the host CPU. The port registers a custom `Accelerator` for the neuron device (or moves the "
        "step to a plain PyTorch loop) and re-checks the loss curve, precision and checkpoints.",
    ),
    Rule(
        id="fused-optimizer",
        item="repo",
        category="device_code",
        dimension="source",
        severity="info",
        targets=NEURON,
        effort="hours",
        title="fused optimizer (`fused=True`)",
        why="torch's fused AdamW/Adam/SGD kernels exist for CUDA (and a few other backends), not the neuron device: "
        "the code must fall back to the foreach/for-loop optimizer there (check the switch and the step time).",
    ),
    Rule(
        id="sdpa-attention",
        item="repo",
        category="device_code",
        dimension="source",
        severity="info",
        targets=NEURON,
        effort="hours",
        title="`scaled_dot_product_attention` relied on for flash speed",
        why="On NVIDIA GPUs SDPA dispatches to FlashAttention; on the neuron device it runs through another kernel "
        "(or the math path), so attention speed and memory must be measured again, not assumed.",
    ),
    Rule(
        id="hardcoded-peak-flops",
        item="repo",
        category="device_code",
        dimension="source",
        severity="info",
        targets=NEURON,
        effort="hours",
        title="GPU peak FLOPS written in the code",
        why="A utilisation figure (MFU) divided by a GPU's peak written as a literal (A100 bf16: 312e12) is wrong on "
        "any other chip: take the peak from the target's specification (a setting), or the MFU misleads.",
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
)
