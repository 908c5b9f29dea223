"""Rules on data movement and operational integrations (launchers, clusters, downloads)."""

from __future__ import annotations

from accelpilot.porting.rules.schema import ALL, GPU, NEURON, Rule

OPS_RULES: tuple[Rule, ...] = (
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
        why="GCS / Azure storage clients bind the data path to one provider's API, credentials and region.",
    ),
    Rule(
        id="aws-storage-sdk",
        item="package",
        category="data_movement",
        dimension="commercial",
        severity="info",
        targets=GPU,
        effort="hours",
        title="AWS SDK (boto3, s3fs)",
        why="boto3 / botocore / s3fs bind the data path to AWS's API and credentials: native where Trainium and "
        "Inferentia run (AWS), so no work there; a GPU on another provider needs that provider's store.",
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
        why="`--gres=gpu` / `--gpus` (or submitit's `gpus_per_node=`, `slurm_constraint='volta32gb'`) asks Slurm "
        "for NVIDIA GPUs; Trainium clusters schedule Neuron devices (e.g. ParallelCluster with Neuron gres), so job "
        "scripts and launchers change (tasks per node follow NeuronCores, not GPUs).",
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
        id="dynamic-padding",
        item="repo",
        category="compile_hazard",
        dimension="model",
        severity="warning",
        targets=NEURON,
        effort="days",
        title="batches padded to their own longest sample",
        why="A data collator that pads each batch to its longest sample (`padding=True`/`'longest'`, "
        "`pad_sequence`, or by hand to `max(len(s) for s in batch)`), or a tokenizer asked to, gives the "
        "model a new sequence length per batch; a fixed-shape compile recompiles for each. Pad to a fixed length "
        "or a few buckets.",
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
