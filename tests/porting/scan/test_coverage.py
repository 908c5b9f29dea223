"""Coverage of what real code uses (issue 12, section 2): one fixture line per new rule and per false-positive
class, asserted exactly; pruned and full parses agree on the new Python rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelpilot.porting.scan import scan_path, scan_python

COVERAGE = Path(__file__).parent.parent / "fixtures" / "coverage"

# (file, line, rule, context): every finding the coverage fixture must produce, nothing else.
EXPECTED = [
    ("Dockerfile", 1, "cuda-base-image", None),  # NGC image
    ("Dockerfile", 2, "nccl-in-container", None),  # NCCL tests built in the image
    ("detect.py", 7, "torchvision-op", None),  # batched_nms: torchvision's C++ NMS (round 36)
    ("detect.py", 8, "torchvision-op", None),  # torchvision.ops.roi_align
    ("downloads.py", 8, "http-download", "any-host-download"),  # requests.get
    ("downloads.py", 9, "http-download", "any-host-download"),  # urllib.request.urlretrieve
    (
        "downloads.py",
        11,
        "hub-download",
        "any-host-download",
    ),  # load_dataset of a hub id (line 10, a local builder, is not)
    (
        "downloads.py",
        13,
        "hub-download",
        "any-host-download",
    ),  # from_pretrained of a hub id (line 12, a local dir, is not)
    ("hf_trainer.py", 4, "hf-trainer", None),
    (
        "hf_trainer.py",
        7,
        "dynamic-padding",
        None,
    ),  # each batch padded to its longest sample  # transformers.Trainer: the training loop accelerate runs
    ("cloud.py", 2, "cloud-storage-sdk", None),  # a GCS client
    ("ckpt.py", 4, "checkpoint-map-location", None),  # torch.load without map_location
    ("dp.py", 4, "data-parallel", None),  # nn.DataParallel; DistributedDataParallel is not it
    ("fp8.py", 4, "fp8-matmul", None),  # torch._scaled_mm
    ("fp8.py", 7, "precision-keyed-on-cuda", None),  # bf16 only when CUDA answers, else fp32
    ("fp8.py", 7, "torch-cuda-api", "probe"),
    ("fp8.py", 10, "grad-in-step", None),  # a gradient of an intermediate
    ("fp8.py", 16, "custom-checkpoint", None),  # autograd.grad in a Function's backward
    ("fp8.py", 19, "recurrent-layer", None),  # nn.LSTM
    ("lightning_ddp.py", 4, "lightning-ddp", None),  # the trainer config's accelerator set to ddp
    ("mpi_dist.py", 1, "mpi-launch", None),  # ranks from mpi4py
    ("fid_metric.py", 2, "fid-evaluation", None),  # pytorch-fid's InceptionV3
    ("loader.py", 4, "partial-last-batch", None),  # shuffled, no drop_last
    ("syncbn.py", 4, "sync-batchnorm", None),  # convert_sync_batchnorm; a plain BatchNorm2d is not it
    ("requirements-old.txt", 2, "install-pin", None),  # torch pinned below the Neuron SDK's
    ("requirements-old.txt", 3, "lightning-legacy", None),  # PyTorch Lightning 0.x
    ("ckpt_args.py", 10, "checkpoint-weights-only", None),  # a Namespace in the checkpoint, weights_only default
    ("parallel.py", 2, "model-parallel-library", None),  # fairscale's tensor-parallel layers
    ("attend.py", 6, "manual-attention", None),  # q @ k^T then softmax, no SDPA
    ("decode.py", 7, "sampling-ops", None),  # the multinomial draw of that loop
    ("decode.py", 8, "decode-host-sync", None),
    ("sample_loop.py", 10, "sampling-ops", None),  # multinomial after a top-k filter, every token
    (
        "sample_loop.py",
        11,
        "growing-sequence",
        None,
    ),  # torch.cat onto idx in the decode loop  # a sampled token tested in Python every decode step
    ("remote.py", 4, "hub-download", "any-host-download"),  # the weights from the Hub
    ("remote.py", 4, "remote-model-code", None),  # the model's code downloaded from the Hub
    ("README.md", 4, "lightning-cuda", None),  # lightning run model --accelerator=cuda
    ("timm_step.py", 7, "device-augmentation", None),  # timm Mixup
    ("timm_step.py", 8, "model-ema-per-step", None),  # timm ModelEma
    ("timm_step.py", 9, "host-solver-in-step", None),  # scipy linear_sum_assignment
    ("vocab.py", 4, "sparse-tensor", None),  # .to_sparse()
    ("vocab.py", 5, "vocab-resize", None),  # resize_token_embeddings without pad_to_multiple_of
    ("hf_trainer.py", 10, "trainer-cuda-setting", None),  # TrainingArguments(tf32=True)
    ("hf_trainer.py", 10, "trainer-fsdp", None),
    (
        "hf_trainer.py",
        13,
        "bnb-optimizer",
        None,
    ),  # optim="paged_adamw_32bit"  # TrainingArguments(fsdp="full_shard auto_wrap")
    ("speed_notes.py", 4, "sdpa-attention", None),  # SDPA relied on for flash speed
    ("speed_notes.py", 5, "fused-optimizer", None),  # fused AdamW
    ("speed_notes.py", 6, "hardcoded-peak-flops", None),  # A100 peak in an MFU
    ("helm/plugin.tf", 2, "k8s-gpu-resource", None),  # Terraform installs the NVIDIA device plugin
    ("helm/values.yaml-template", 3, "k8s-gpu-resource", None),  # template files are scanned
    ("model.py", 4, "cuda-kernel-library", None),  # causal-conv1d
    ("model.py", 7, "hub-kernel", None),  # kernels.get_kernel
    ("model.py", 10, "varlen-packing", None),  # cu_seqlens
    ("model.py", 12, "boolean-mask-index", None),  # a read x[mask]; line 11's assignment is not flagged
    ("model.py", 19, "growing-sequence", None),  # torch.cat onto the sequence in a loop
    ("model.py", 23, "compile-backend", None),  # torch.compile without backend; line 24 names one
    ("model.py", 28, "fft-op", None),  # torch.fft (issue 27)
    ("model.py", 29, "fft-op", None),  # torch.stft
    ("model.py", 30, "nested-tensor", None),  # torch.nested
    ("model.py", 31, "growing-sequence", None),  # a KV cache grown with torch.cat outside a loop; line 32 grows nothing
    ("pyproject.toml", 3, "cuda-kernel-library", None),  # flashinfer-python dependency
    ("pyproject.toml", 3, "training-runtime", None),  # megatron-core dependency (issue 27)
    ("pyproject.toml", 4, "torch-companion", None),  # torchvision beside the target's torch
    ("scripts/launch.sh", 2, "gpu-launcher-setting", None),  # GPUS_PER_NODE
    ("scripts/launch.sh", 3, "gpu-launcher-setting", None),  # PYTORCH_CUDA_ALLOC_CONF
    ("scripts/launch.sh", 4, "gpu-launcher-setting", None),  # TORCH_NCCL_*
    ("scripts/launch.sh", 5, "gpu-launcher-setting", None),  # LD_PRELOAD of a CUDA library
    ("scripts/launch.sh", 6, "sagemaker", None),  # HyperPod auto-resume
    ("setup.py", 3, "cuda-kernel-library", None),  # liger-kernel in install_requires
    ("tokenization_fast.py", 5, "boolean-mask-index", "host-side"),  # a tokeniser: not the model graph
    # training-path rules (rules/train_rules.py)
    ("train_loop.py", 8, "private-torch-op", None),  # torch._C op in an autograd Function, no gate
    ("train_loop.py", 12, "double-backward", None),  # create_graph=True
    ("train_loop.py", 13, "pin-memory-call", None),
    ("train_loop.py", 14, "torchscript-on-device", None),
    ("train_loop.py", 15, "float16-manual", None),  # .half()
    ("train_loop.py", 17, "size-readback", None),  # slice bound drawn by torch.randint
    ("train_loop.py", 18, "host-array-to-device", None),  # moved, then cast on the device
    ("train_loop.py", 24, "pretrained-encoder-in-loop", None),
    ("train_loop.py", 31, "host-sync-in-loop", None),  # loss.item() every step of a loop that calls backward
    ("old_stack.py", 5, "stack-upgrade", None),  # np.float, removed in numpy 1.24
    ("README.md", None, "parity-validation", None),  # the README runs something: what its outputs must match
]


def test_coverage_fixture_exact_findings() -> None:
    log = scan_path(COVERAGE, jobs=1)
    got = sorted(((f.file, f.line, f.rule, f.context) for f in log.findings), key=str)
    assert got == sorted(EXPECTED, key=str)
    host = [f for f in log.findings if f.context == "host-side"]
    assert host and all(not f.porting and f.severity == "info" for f in host)


def test_coverage_items() -> None:
    items = {i.key: len(i.lines) for i in scan_path(COVERAGE, jobs=1).items}
    assert items["package|cuda-kernel-library|causal_conv1d"] == 1
    assert items["package|cuda-kernel-library|flashinfer_python"] == 1
    assert items["package|cuda-kernel-library|liger_kernel"] == 1
    assert items["setting|hub-kernel|kernels-community/activation"] == 1
    # A download (the Hub or a URL) is the same on any host: listed apart, no item.
    assert "repo|hub-download" not in items and "file|http-download|downloads.py" not in items


@pytest.mark.parametrize("name", sorted(p.name for p in COVERAGE.glob("*.py")))
def test_pruned_scan_equals_full_parse_on_coverage(name: str) -> None:
    src = (COVERAGE / name).read_bytes()
    pruned = sorted((r, ln, m, str(sub), str(ctx)) for r, ln, m, _, sub, ctx in scan_python(src))
    full = sorted((r, ln, m, str(sub), str(ctx)) for r, ln, m, _, sub, ctx in scan_python(src, prune=False))
    assert pruned == full


def test_a_kernel_library_named_in_a_string_is_an_optional_fast_path(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("import torch\nconv = lazy_load_kernel('causal_conv1d')\n")
    [item] = scan_path(tmp_path).items
    assert (item.key, item.severity) == ("package|cuda-kernel-library|causal_conv1d", "warning")
    assert item.reason is not None and item.reason.startswith("optional path")
