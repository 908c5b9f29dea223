"""The pattern tables: which names, strings and imports mean which rule.

Its own module because both the pruning pass (``prune.py``, which must find every line a detector could report)
and the Python visitor (``visitor.py``, which decides) read these tables; neither imports the other.
"""

from __future__ import annotations

import re

# (rule id, line, message, snippet, subject, context); plain tuples so worker processes return them cheaply.
# ``subject`` names the thing a porting item is about (a kernel, a package, an image, a setting); ``context`` says
# how the line is reached when that changes what it means ("probe", "skip-guard", "benchmark-tool", "optional").
RawFinding = tuple[str, int | None, str, str, str | None, str | None]

# Patterns shared by text files and Python string constants.
STRING_RULES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("object-store-uri", re.compile(r"\b(?:s3|gs|az|abfss|wasbs)://[\w.\-{}$/]*"), "object-store location {m}"),
    # ``--gpus`` with a value a scheduler reads (a count, ``type:count``, ``all``, a variable), not a word of prose
    # ("--gpus must be at least 1" in a CLI's error message)
    (
        "slurm-gpu-gres",
        re.compile(r"--gres[= ]gpu\S*|--gpus(?:-per-\w+)?[= ](?:(?:[A-Za-z][\w.-]*:)?\d|all\b|[$%{<\[])\S*"),
        "Slurm GPU request {m}",
    ),
    ("k8s-gpu-resource", re.compile(r"nvidia\.com/gpu"), "Kubernetes resource {m}"),
    ("k8s-neuron-resource", re.compile(r"aws\.amazon\.com/neuron\w*"), "Kubernetes resource {m}"),
    ("nvidia-smi", re.compile(r"\bnvidia-smi\b"), "calls {m}"),
    ("dcgm", re.compile(r"\bdcgm\w*|\bDCGM\w*", re.I), "NVIDIA DCGM ({m})"),
    ("neuron-tools", re.compile(r"\bneuron-(?:ls|top|monitor)\b"), "calls {m}"),
    # ``CUDA_VISIBLE_DEVICES=-1`` (or ``""``) hides every GPU (a CPU run of JAX or torch): no selection of one
    (
        "cuda-visible-devices",
        re.compile(r"""\bCUDA_VISIBLE_DEVICES\b(?!["']?\]?[ \t]*=[ \t]*(?:["']-1["']|-1\b|""|''))"""),
        "device selection via {m}",
    ),
    ("nccl-backend", re.compile(r"\bNCCL_[A-Z_]+\b"), "NCCL setting {m}"),
    ("cloudwatch", re.compile(r"\bcloudwatch\b", re.I), "CloudWatch integration ({m})"),
    (
        "gpu-launcher-setting",
        re.compile(
            r"\bGPUS_PER_NODE\b\S*|--nproc[_-]per[_-]node\S*|\bLD_PRELOAD=\S*(?:cuda|nvidia)\S*"
            r"|\bPYTORCH_CUDA_ALLOC_CONF\b\S*|\bTORCH_NCCL_\w+"
        ),
        "launcher setting {m}",
    ),
    (
        "local-nvme-path",
        re.compile(
            r"(?:/mnt/nvme\w*|/nvme\d\w*|/local_nvme\w*|/opt/dlami/nvme|/scratch\b|/raid\b"
            r"|/local_disk\w*)"
        ),
        "local path {m}",
    ),
)
STRING_TRIGGER = re.compile(
    r"://|gres|--gpus|nvidia|neuron|dcgm|DCGM|CUDA_VISIBLE|NCCL_|cloudwatch|CloudWatch|nvme|/scratch|/raid|/local_disk"
    r"|GPUS_PER_NODE|nproc|LD_PRELOAD|PYTORCH_CUDA"
)


# import name (longest dotted prefix wins) -> rule
LIBRARIES: dict[str, str] = {
    "flash_attn": "flash-attn",
    "flash_attn_interface": "flash-attn",
    "xformers": "xformers",
    "apex": "apex",
    "bitsandbytes": "bitsandbytes",
    "deepspeed": "deepspeed",
    "megatron": "training-runtime",
    "megablocks": "training-runtime",
    "grouped_gemm": "training-runtime",
    "fairscale": "model-parallel-library",
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
    "boto3": "aws-storage-sdk",
    "botocore": "aws-storage-sdk",
    "google.cloud.storage": "cloud-storage-sdk",
    "gcsfs": "cloud-storage-sdk",
    "s3fs": "aws-storage-sdk",
    "azure.storage": "cloud-storage-sdk",
    "sagemaker": "sagemaker",
    "pynvml": "nvidia-smi",
    # CUDA-only kernel libraries seen in public training code (issue 12)
    "causal_conv1d": "cuda-kernel-library",
    # flash-attention's csrc extensions, built from its source tree and imported by name (lit-gpt derivatives)
    "rotary_emb": "cuda-kernel-library",
    "dropout_layer_norm": "cuda-kernel-library",
    "xentropy_cuda_lib": "cuda-kernel-library",
    "fused_dense_lib": "cuda-kernel-library",
    "ft_attention": "cuda-kernel-library",
    "selective_scan_cuda": "cuda-kernel-library",
    "mamba_ssm": "cuda-kernel-library",
    "tilelang": "cuda-kernel-library",
    "cutlass": "cuda-kernel-library",
    "quack": "cuda-kernel-library",
    "flashinfer": "cuda-kernel-library",
    # NATTEN's neighborhood-attention kernels (k-diffusion's NeighborhoodSelfAttentionBlock): CUDA only
    "natten": "cuda-kernel-library",
    # MinkowskiEngine's sparse convolutions (ConvNeXt-V2's FCMAE encoder): a C++/CUDA extension
    "MinkowskiEngine": "cuda-kernel-library",
    "liger_kernel": "cuda-kernel-library",
    "torchao.ops": "cuda-kernel-library",
    "torchao.kernel": "cuda-kernel-library",
    "deep_gemm": "cuda-kernel-library",
    "pydcgm": "dcgm",
    "dcgm_structs": "dcgm",
    "dcgm_fields": "dcgm",
}
# Exact string constants (dynamic imports, device names, attention backends).
# transformers' ``optim=`` names whose optimizer the Trainer builds from bitsandbytes (``OptimizerNames``, 5.17.0).
BNB_OPTIMIZERS = frozenset(
    {
        "adamw_bnb_8bit",
        "adamw_8bit",
        "ademamix_8bit",
        "lion_8bit",
        "lion_32bit",
        "paged_adamw_32bit",
        "paged_adamw_8bit",
        "paged_ademamix_32bit",
        "paged_ademamix_8bit",
        "paged_lion_32bit",
        "paged_lion_8bit",
        "rmsprop_bnb",
        "rmsprop_bnb_8bit",
        "rmsprop_bnb_32bit",
    }
)
EXACT_STRINGS: dict[str, str] = {
    **{
        name: rule
        for name, rule in LIBRARIES.items()
        if "." not in name
        and name not in ("cuda", "nki", "apex", "quack", "cutlass", "megatron", "megablocks", "grouped_gemm")
    },
    "nccl": "nccl-backend",
    "flash_attention_2": "flash-attn",
    "flash_attention_3": "flash-attn",
    "reduce-overhead": "cuda-graphs",
    "max-autotune": "cuda-graphs",
    **{name: "bnb-optimizer" for name in sorted(BNB_OPTIMIZERS)},
}
QUOTED_WORDS = frozenset(k.encode() for k in EXACT_STRINGS)
# torch's per-device backend string (``"cuda:nccl,cpu:gloo"``, modded-nanogpt's ``init_process_group``): NCCL for the
# CUDA tensors, as ``"nccl"`` alone.
BACKEND_SPEC = re.compile(r"^(?:[a-z]+:[a-z]+,)*cuda:nccl(?:,[a-z]+:[a-z]+)*$")
# ``"cuda:0"``, and a template of one: ``"cuda:{:d}".format(rank)`` (HiFi-GAN), ``"cuda:%d" % rank``. A bare
# ``"cuda:"`` (``"cuda:" + str(k)``, an f-string's head) is not read: DLRM's builds its devices only in a
# multi-device forward the default command never calls, which the entry-point reach cannot tell.
DEVICE = re.compile(r"^(cuda|neuron|xla|mps)(?::(?:\d+|\{[^}]*\}|%[ds]))?$")
# The message of ``'cuda:' + str(i) if torch.cuda.is_available() else 'cpu'`` (the visitor's ``v_ifexp``): a CUDA
# device with a CPU fallback, whatever lines the expression spans.
INDEXED_CHOICE = "device string 'cuda:' + index, if torch.cuda.is_available()"
# The end of the message of a ``"cuda"`` arm whose ``torch.cuda.is_available()`` test is on a later line.
CHOICE_SUFFIX = ", if torch.cuda.is_available()"
# The message of ``loss_scale_value = loss_scaler.state_dict()["scale"]`` (Swin's and VideoMAE's step, on timm's
# ``NativeScaler`` over ``torch.cuda.amp.GradScaler``): a CUDA GradScaler is disabled without CUDA and its
# ``state_dict()`` is ``{}`` (torch 2.13, tried), so the read raises KeyError.
SCALER_STATE = "GradScaler state_dict()['scale']"
DEVICE_RULE = {"cuda": "cuda-device-literal", "neuron": "neuron-api", "xla": "xla-api", "mps": "mps-device"}
NON_TORCH_MODULES = ("numpy", "pandas", "jax", "tensorflow", "scipy", "cupy")
DEFAULT_ALIASES = {"np": "numpy", "pd": "pandas", "jnp": "jax.numpy", "tf": "tensorflow"}
DATA_DEPENDENT_METHODS = frozenset({"nonzero", "unique", "unique_consecutive", "masked_select", "argwhere", "bincount"})
HOST_SYNC_METHODS = frozenset({"item", "tolist", "numpy"})
TENSOR_VALUE_METHODS = frozenset({"any", "all", "item", "sum", "max", "min", "mean", "norm", "equal", "allclose"})
HUB_CALLS = frozenset(
    {"from_pretrained", "hf_hub_download", "snapshot_download", "load_state_dict_from_url", "download_url_to_file"}
)
# torchaudio's spectral transforms: each computes a ``torch.stft`` (or ``istft``) in its forward, so a model that
# builds one (voxceleb_trainer's ``torchaudio.transforms.MelSpectrogram`` front end) runs complex STFTs on the device.
TORCHAUDIO_STFT = frozenset(
    {
        *("torchaudio.transforms.Spectrogram", "torchaudio.transforms.InverseSpectrogram"),
        *("torchaudio.transforms.MelSpectrogram", "torchaudio.transforms.MFCC", "torchaudio.transforms.LFCC"),
        *("torchaudio.transforms.GriffinLim", "torchaudio.transforms.SpectralCentroid"),
        *("torchaudio.functional.spectrogram", "torchaudio.functional.inverse_spectrogram"),
        *("torchaudio.functional.griffinlim", "torchaudio.functional.spectral_centroid"),
    }
)
CUDA_GRAPH_NAMES = (
    "torch.cuda.graph",
    "torch.cuda.CUDAGraph",
    "torch.cuda.make_graphed_callables",
    "torch.cuda.graphs",
)


IMPORT_ROOTS = frozenset(
    {k.split(".")[0].encode() for k in LIBRARIES}
    | {b"torch", b"google", b"azure", b"transformers", b"trl", b"lightning", b"pytorch_lightning", b"torchvision"}
    | {b"torchaudio"}  # its spectral transforms are `fft-op` lines wherever the module is aliased
)


def import_root(module: bytes) -> bool:
    return module.split(b".", 1)[0] in IMPORT_ROOTS


def lib_rule(dotted: str) -> str | None:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        rule = LIBRARIES.get(".".join(parts[:i]))
        if rule:
            return rule
    return None


# Rules whose item is one kernel: a finding inside ``def k`` belongs to kernel ``k``.
KERNEL_RULES = frozenset({"triton-kernel", "nki-kernel", "numba-cuda", "cpp-extension-cuda"})
# Modules whose use is benchmarking, not a code path to port (``triton.testing.do_bench``).
BENCHMARK_MODULES = ("triton.testing",)
# Calls that only ask whether something is there: their arguments are not porting work.
_PROBE_NAMES = frozenset({"is_available", "find_spec", "importorskip", "_is_package_available", "is_package_available"})
_SKIP_NAMES = frozenset({"skipif", "skipIf", "skipUnless", "skip", "xfail"})
_PROBE_PATTERN = re.compile(r"^_?is_\w+_available$|^is_torch_\w+$|^require_\w+$")


def probe_kind(name: str, recv: str | None) -> str | None:
    """ "probe" for an availability/version check, "skip-guard" for a test skip decorator or call, else None."""
    if name in _SKIP_NAMES and (recv is None or recv.startswith(("pytest", "unittest")) or recv.endswith("mark")):
        return "skip-guard"
    if name in _PROBE_NAMES or _PROBE_PATTERN.match(name):
        return "probe"
    return None


def package_of(rule: str, dotted: str) -> str:
    """The dependency an import names: its top-level package (``flash_attn.bert_padding`` -> ``flash_attn``)."""
    return dotted.split(".", 1)[0]


# Class decorators that replace the decorated module's forward by a registered implementation BY DEFAULT: the class
# body is then the eager reference, run only when asked for. transformers 5.x: @use_experts_implementation
# dispatches by ``config._experts_implementation``, which ``get_correct_experts_implementation`` sets to grouped_mm
# when none is requested. (Not @use_kernel_forward_from_hub: its default is the module's own forward.)
DISPATCHED_BY_DEFAULT = frozenset({"use_experts_implementation"})
