"""Rules on the model graph (compile-ahead hazards) and on container images."""

from __future__ import annotations

from accelpilot.porting.rules.schema import GPU, NEURON, Rule

MODEL_RULES: tuple[Rule, ...] = (
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
        id="moe-experts-dispatch",
        # One task for every MoE model of the library: the shared dispatcher, not each model's eager loop.
        item="repo",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="MoE experts behind the library's experts dispatcher",
        why="transformers' @use_experts_implementation replaces each experts module's forward by the configured "
        "implementation, grouped_mm by default (torch grouped_mm on CUDA SM80+, else a registered fallback op), with "
        "data-dependent token counts per expert. Choose and validate the implementation Neuron compiles with fixed "
        "shapes (batched_mm, or the eager loop with capacity padding) once for all MoE models.",
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
    Rule(
        id="torchvision-op",
        item="repo",
        category="unsupported_operator",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="torchvision C++ ops (NMS, RoIAlign/RoIPool, deformable convolution) on the device",
        why="`torchvision.ops` NMS, RoI pooling and deformable convolution dispatch to torchvision's own C++ "
        "operators, which torchvision builds for CPU and CUDA only: on the `neuron` device the call errors or runs "
        "through a per-op CPU fallback with its copies in the hot path. Run them on host tensors on purpose, or "
        "write them in plain tensor ops (a fixed-size NMS as a masked IoU matrix), and check the detections match.",
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
    Rule(
        id="fft-op",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="FFT / STFT",
        why="`torch.fft.*` and `torch.stft` compute in complex numbers, which the Neuron compiler does not lower; "
        "rewrite the transform as real DFT matrix products (a fixed size makes them matmuls) or move it into host "
        "preprocessing, and re-check accuracy.",
    ),
    Rule(
        id="nested-tensor",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="nested tensor",
        why="`torch.nested` tensors carry a different length per row, a layout the Neuron compiler does not lower; "
        "pad to a fixed (bucketed) size with a mask instead.",
    ),
    Rule(
        id="parity-validation",
        item="repo",
        category="unsupported_operator",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="output parity on the neuron device (against the repository's own reference)",
        why="A port is done when the default path's outputs on the `neuron` device match the source's: the metrics "
        "the README reports, the repository's tests, or CPU outputs recorded first where it ships neither. The "
        "exit test counts this re-validation once (2 engineer-days); the item says what it is checked against.",
    ),
    Rule(
        id="model-bringup",
        item="repo",
        category="unsupported_operator",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="model bring-up on the neuron device (operator coverage, torch.compile)",
        why="Only compiling a model says which of its operators TorchNeuron lowers. Run the models the default path "
        'builds on the `neuron` device in eager, then under `torch.compile(backend="neuron")`; read the compile '
        "log for unsupported operators (NCC_EUOC002) and CPU fallbacks, compare outputs with the CPU and time the "
        "first compile. `accelpilot scan --model module:factory` lists a model's operators against a supported list. "
        "An unsupported operator found this way becomes its own item.",
    ),
    Rule(
        id="compile-step",
        item="repo",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title='the default step under torch.compile(backend="neuron") (nothing on the default path is compiled)',
        why="TorchNeuron runs the default path in eager as it is, one operator at a time; its speed on Trainium comes "
        'from `torch.compile(backend="neuron")`. Compile the step: remove or accept the graph breaks listed (a '
        "Python branch on a tensor, `.item()` in a forward, a data-dependent op), bucket or mark dynamic the shapes "
        "that change per batch, and time the first compile and the number of graphs against the step. The bring-up "
        "item checks the operators; this one is the speed path.",
    ),
    Rule(
        id="checkpoint-map-location",
        item="repo",
        category="data_movement",
        dimension="source",
        severity="warning",
        targets=NEURON,
        effort="hours",
        title="checkpoint loaded without `map_location`",
        why="`torch.load(f)` restores each tensor on the device it was saved from: a checkpoint saved from CUDA "
        'tensors raises "Attempting to deserialize object on a CUDA device" on a host without CUDA, as a '
        'Trainium host is. Pass `map_location="cpu"` (then move the model) and `weights_only=` explicitly.',
    ),
    Rule(
        id="memory-fit",
        item="repo",
        category="unsupported_operator",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="runs sized for more device memory than a NeuronCore has",
        why="The README sizes its runs for a GPU with more memory than a NeuronCore addresses (16 GiB on trn1: 32 GiB "
        "per chip over 2 cores; a Trainium2 chip has 96 GiB over 8). The per-device batch, gradient accumulation, "
        "activation checkpointing or sharding must be re-fitted to the target; the compiler reports NCC_EOOM001/002 "
        "when a graph does not fit.",
    ),
    Rule(
        id="remote-model-code",
        item="repo",
        category="device_code",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="model code downloaded from the Hub (`trust_remote_code=True`)",
        why="`from_pretrained(..., trust_remote_code=True)` runs the model's Python code (modeling_*.py) from the Hub "
        "at load time: it is not in the repository, so the port's model-side edits (a static KV cache, the "
        "attention, the sampling loop) need that code vendored at a pinned revision first.",
    ),
)
