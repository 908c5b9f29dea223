"""Porting items, not lines (issue 12): grouping, not-porting-work classes, severity that follows reach."""

from __future__ import annotations

import json
from pathlib import Path

from accelpilot.porting.scan import scan_path

ITEMS = Path(__file__).parent / "fixtures" / "items"
REACH_OPTIONAL = "optional path behind an availability check or an ImportError fallback"


def _items(root: Path) -> list[tuple[str, str, str, list[tuple[str | None, int | None]]]]:
    log = scan_path(root, jobs=1)
    return [(i.key, i.severity, i.effort, [(ln.file, ln.line) for ln in i.lines]) for i in log.items]


def test_items_group_kernels_dependencies_images_and_settings() -> None:
    assert _items(ITEMS) == [
        # one item per family: the Triton kernels of one file (issue 27), with the file's imports of triton, the
        # launches of any of them in another file, that file's import of them and its import of triton; triton
        # named in requirements goes with the kernels' port (no item of its own, and it sets no severity)
        (
            "kernel|triton-kernel|kernels/fused.py|*",
            "blocking",
            "weeks",
            [
                ("kernels/fused.py", 3),
                ("kernels/fused.py", 4),
                ("kernels/fused.py", 7),
                ("kernels/fused.py", 14),
                ("kernels/fused.py", 21),
                ("kernels/fused.py", 22),
                ("ops/launch.py", 4),
                ("ops/launch.py", 5),
                ("ops/launch.py", 11),
                ("requirements.txt", 2),
            ],
        ),
        # one library dependency: every import across files and the requirements line; imported at module level
        # with no guard, the default path cannot import without it: blocking (issue 27)
        (
            "package|flash-attn|flash-attn",
            "blocking",
            "days",
            [
                ("ops/attention.py", 2),
                ("ops/attention_varlen.py", 1),
                ("ops/attention_varlen.py", 2),
                ("ops/attention_varlen.py", 4),
                ("requirements.txt", 1),
            ],
        ),
        # one container image across two Dockerfiles
        ("image|nvcr.io/nvidia/pytorch:24.01-py3", "warning", "days", [("Dockerfile", 1), ("Dockerfile.dev", 1)]),
        # severity follows reach: a kernel in a benchmark script or behind an availability check is a warning
        (
            "kernel|triton-kernel|benchmarks/bench_fused.py|*",
            "warning",
            "weeks",
            [("benchmarks/bench_fused.py", 2), ("benchmarks/bench_fused.py", 3), ("benchmarks/bench_fused.py", 7)],
        ),
        (
            "kernel|triton-kernel|ops/optional.py|*",
            "warning",
            "weeks",
            [("ops/optional.py", 8), ("ops/optional.py", 9), ("ops/optional.py", 15)],
        ),
        # one device-count setting across three copies of a job file
        (
            "setting|device-count|jobs/*.slurm",
            "warning",
            "hours",
            [("jobs/a.slurm", 3), ("jobs/b.slurm", 3), ("jobs/c.slurm", 3)],
        ),
    ]


def test_reasons_are_given_where_severity_differs_from_the_rule() -> None:
    log = scan_path(ITEMS, jobs=1)
    reasons = {i.key.split("|")[2]: i.reason for i in log.items if i.key.startswith("kernel|")}
    assert reasons["benchmarks/bench_fused.py"] == "in a benchmark script, not on the model's forward/backward path"
    assert reasons["ops/optional.py"] is not None and reasons["ops/optional.py"].startswith("optional path")
    # a blocking item says why and which line reaches it: the first unguarded launch
    assert reasons["kernels/fused.py"] == (
        "on the default path: launches kernel add_kernel[grid](...) (kernels/fused.py) at ops/launch.py:11 "
        "(no flag, fallback or guard)"
    )


def test_not_porting_work_is_never_blocking_and_counted_apart() -> None:
    log = scan_path(ITEMS, jobs=1)
    apart = sorted((f.file, f.line, f.context) for f in log.findings if not f.porting)
    assert apart == [
        ("benchmarks/bench_fused.py", 4, "benchmark-tool"),  # import triton.testing
        ("ops/probes.py", 9, "probe"),  # importlib.util.find_spec("triton")
        ("ops/probes.py", 10, "probe"),  # _is_package_available("triton")
        ("ops/probes.py", 12, "probe"),  # torch.cuda.is_available()
        ("tests/test_kernels.py", 4, "probe"),  # pytest.importorskip("triton")
        ("tests/test_kernels.py", 7, "skip-guard"),  # skipif(not torch.cuda.is_available())
        ("tests/test_kernels.py", 9, "test-only"),  # .cuda() in a test
    ]
    assert all(f.severity == "info" for f in log.findings if not f.porting)
    assert log.summary.not_porting == {"benchmark-tool": 1, "probe": 4, "skip-guard": 1, "test-only": 1}
    assert log.summary.items == 6  # three kernels of kernels/fused.py are one family
    assert log.summary.items_by_severity == {"info": 0, "warning": 4, "blocking": 2}
    assert log.summary.items_by_effort == {"hours": 1, "days": 2, "weeks": 3}
    data = json.loads(log.to_json())
    assert len(data["items"]) == 6 and data["items"][0]["lines"][0] == {
        "file": "kernels/fused.py",
        "line": 3,
        "cell": None,
        "rule": "triton-kernel",
        "message": "import triton",
        "severity": "blocking",
        "reason": None,
    }


def test_markdown_lists_the_lines_under_each_item() -> None:
    from accelpilot.porting.render import render_markdown

    md = render_markdown(scan_path(ITEMS, jobs=1))
    block = md.split("- **I6**", 1)[1].split("\n## ", 1)[0].splitlines()
    assert block[1:4] == [
        "  - `jobs/a.slurm:3`: Slurm GPU request --gres=gpu:8",
        "  - `jobs/b.slurm:3`: Slurm GPU request --gres=gpu:8",
        "  - `jobs/c.slurm:3`: Slurm GPU request --gres=gpu:8",
    ]
    assert "## Not porting work (never blocking)" in md


def test_cuda_placement_in_one_file_is_one_item(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(
        "import torch\ndevice = 'cuda'\ntorch.cuda.set_device(0)\nmodel = torch.nn.Linear(2, 2).cuda()\n"
    )
    (tmp_path / "eval.py").write_text("import torch\nx = torch.ones(2).cuda()\n")
    assert _items(tmp_path) == [
        # train.py is an entry point by its name (no README here): its CUDA placement blocks (scan/entry.py);
        # eval.py is an evaluation script
        ("file|device-placement|train.py", "blocking", "hours", [("train.py", 2), ("train.py", 3), ("train.py", 4)]),
        ("file|device-placement|eval.py", "warning", "hours", [("eval.py", 2)]),
    ]


def test_device_count_settings_of_one_job_are_one_item(tmp_path: Path) -> None:
    """GPU request and process count of one job (and its copies: same folder, same kind) are one item; another
    job (another folder or format) is another item; other launcher settings stay items of their own."""
    (tmp_path / "slurm").mkdir()
    (tmp_path / "slurm" / "pretrain_8x.slurm").write_text(
        "#!/bin/bash\n#SBATCH --gres=gpu:8\nexport GPUS_PER_NODE=8\nexport PYTORCH_CUDA_ALLOC_CONF=expandable\n"
        "torchrun --nproc_per_node=$GPUS_PER_NODE train.py\n"
    )
    (tmp_path / "slurm" / "pretrain_16x.slurm").write_text(
        "#!/bin/bash\n#SBATCH --gpus-per-node=8\nsrun torchrun --nproc-per-node 8 train.py\n"
    )
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "job.yaml").write_text(
        "spec:\n  containers:\n    - resources:\n        limits:\n          nvidia.com/gpu: 4\n"
    )
    (tmp_path / "k8s" / "plugin.yaml").write_text("image: nvcr.io/nvidia/k8s-device-plugin:v0.14.0\n")
    (tmp_path / "launch").mkdir()
    (tmp_path / "launch" / "run.sh").write_text("torchrun --nproc_per_node 4 train.py\n")
    settings = [(k, lines) for k, _, _, lines in _items(tmp_path) if k.startswith("setting|")]
    assert settings == [
        ("setting|device-count|k8s/*.yaml", [("k8s/job.yaml", 5)]),
        ("setting|device-count|launch/*.sh", [("launch/run.sh", 1)]),
        (
            "setting|device-count|slurm/*.slurm",
            [
                ("slurm/pretrain_16x.slurm", 2),
                ("slurm/pretrain_16x.slurm", 3),
                ("slurm/pretrain_8x.slurm", 2),
                ("slurm/pretrain_8x.slurm", 3),
                ("slurm/pretrain_8x.slurm", 5),
            ],
        ),
        ("setting|gpu-launcher-setting|PYTORCH_CUDA_ALLOC_CONF=expandable", [("slurm/pretrain_8x.slurm", 4)]),
        ("setting|k8s-gpu-resource|k8s-device-plugin:v0.14.0", [("k8s/plugin.yaml", 1)]),
    ]
    log = scan_path(tmp_path, jobs=1)
    assert log.summary.items == 6  # the five settings and the CUDA image of the device plugin
    titles = {i.key: i.title for i in log.items}
    assert titles["setting|device-count|slurm/*.slurm"] == "devices per node of the job slurm/*.slurm"


def test_modular_source_with_its_generated_twin_is_not_porting_work(tmp_path: Path) -> None:
    """transformers' ``modular_X.py`` generates ``modeling_X.py`` beside it: only the generated file runs, so the
    modular file's lines are set apart (generator-source); a modular file without its twin is scanned as code."""
    body = "import torch\nx = torch.ones(2).cuda()\n"
    for rel in ("models/foo/modeling_foo.py", "models/foo/modular_foo.py", "models/bar/modular_bar.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(body)
    log = scan_path(tmp_path, jobs=1)
    assert _items(tmp_path) == [
        ("file|device-placement|models/bar/modular_bar.py", "warning", "hours", [("models/bar/modular_bar.py", 2)]),
        ("file|device-placement|models/foo/modeling_foo.py", "warning", "hours", [("models/foo/modeling_foo.py", 2)]),
    ]
    apart = [(f.file, f.line, f.context, f.severity, f.reason) for f in log.findings if not f.porting]
    assert apart == [
        (
            "models/foo/modular_foo.py",
            2,
            "generator-source",
            "info",
            "code-generation source of models/foo/modeling_foo.py: that generated file is what runs, and its lines "
            "are scanned there",
        )
    ]
    assert log.summary.not_porting == {"generator-source": 1}


def test_a_lazy_or_conditional_kernel_library_import_is_a_warning_with_its_reason(tmp_path: Path) -> None:
    """A module-level import of a CUDA-only kernel library blocks; one inside a def (a lazy import, reached only when
    that def runs) or under an ``if`` is an optional path; the probe naming the package is not porting work."""
    (tmp_path / "model.py").write_text("import torch\nfrom causal_conv1d import causal_conv1d_fn\n")
    (tmp_path / "liger.py").write_text(
        "def apply_liger(model):\n"
        "    if not is_liger_kernel_available():\n"
        '        raise ImportError("set use_liger_kernel=True")\n'
        "    from liger_kernel.transformers import patch\n"
        "    patch(model)\n"
    )
    (tmp_path / "opt.py").write_text('import os\nif os.environ.get("FAST"):\n    import flashinfer\n')
    (tmp_path / "probes.py").write_text(
        'def is_liger_kernel_available():\n    return _is_package_available("liger_kernel")\n'
    )
    log = scan_path(tmp_path, jobs=1)
    assert [(i.key, i.severity, i.reason, [(ln.file, ln.line) for ln in i.lines]) for i in log.items] == [
        (
            "package|cuda-kernel-library|causal_conv1d",
            "blocking",
            "on the default path: from causal_conv1d import causal_conv1d_fn at model.py:2 (no flag, fallback or guard)",
            [("model.py", 2)],
        ),
        ("package|cuda-kernel-library|flashinfer", "warning", REACH_OPTIONAL, [("opt.py", 3)]),
        (
            "package|cuda-kernel-library|liger_kernel",
            "warning",
            "imported only inside `apply_liger` (a lazy import): on the path that calls it, which the scan cannot "
            "show is the model's forward path",
            [("liger.py", 4)],
        ),
    ]
    assert [(f.file, f.line, f.context) for f in log.findings if not f.porting] == [("probes.py", 2, "probe")]


def test_a_probe_whose_branch_raises_is_a_requirement_not_a_probe(tmp_path: Path) -> None:
    """``if not torch.cuda.is_available(): raise`` says this path needs CUDA (a warning item, with the reason); a probe
    that only picks a branch stays not porting work."""
    (tmp_path / "quant.py").write_text(
        "import torch\n\ndef validate():\n    if not torch.cuda.is_available():\n"
        '        raise RuntimeError("GPU is required")\n\n'
        "def pick():\n    if torch.cuda.is_available():\n        return 1\n    return 0\n"
    )
    log = scan_path(tmp_path, jobs=1)
    assert [(i.key, i.severity, i.reason, [(ln.file, ln.line) for ln in i.lines]) for i in log.items] == [
        (
            "file|device-placement|quant.py",
            "warning",
            "a requirement check: this path raises unless the probed device or package is there",
            [("quant.py", 4)],
        )
    ]
    assert [(f.file, f.line, f.context) for f in log.findings if not f.porting] == [("quant.py", 8, "probe")]


def test_tf32_switches_of_every_backend_do_nothing_on_the_target(tmp_path: Path) -> None:
    """cuDNN's, MUSA's (mudnn) and the backend-wide ``fp32_precision`` TF32 switches run and change nothing off
    NVIDIA GPUs (issue 27): not porting work (``no-op-elsewhere``); another backend switch stays an item."""
    (tmp_path / "tf32.py").write_text(
        "import torch\n"
        'torch.backends.fp32_precision = "tf32"\n'
        "torch.backends.mudnn.allow_tf32 = True\n"
        "torch.backends.cudnn.allow_tf32 = True\n"
        "torch.backends.opt_einsum.enabled = True\n"
    )
    assert _items(tmp_path) == [("repo|torch-backends", "info", "hours", [("tf32.py", 5)])]
    log = scan_path(tmp_path, jobs=1)
    assert sorted((f.line, f.context) for f in log.findings if f.rule == "cudnn-tf32-flag") == [
        (2, "no-op-elsewhere"),
        (3, "no-op-elsewhere"),
        (4, "no-op-elsewhere"),
    ]


def test_a_device_query_that_only_decides_a_log_message_is_a_probe(tmp_path: Path) -> None:
    """``if torch.cuda.device_count() > 1: logger.warning(...)`` changes no code path; the same query choosing
    what runs (``DataParallel``) is porting work."""
    (tmp_path / "m.py").write_text(
        "import torch\n"
        "if torch.cuda.device_count() > 1:\n"
        '    logger.warning("several GPUs")\n'
        "if torch.cuda.device_count() > 1:\n"
        "    model = torch.nn.DataParallel(model)\n"
    )
    log = scan_path(tmp_path, jobs=1)
    assert _items(tmp_path) == [
        ("file|device-placement|m.py", "warning", "hours", [("m.py", 4)]),
        ("repo|data-parallel", "warning", "days", [("m.py", 5)]),
    ]
    assert [(f.file, f.line, f.context) for f in log.findings if not f.porting] == [("m.py", 2, "probe")]


OTHER_RUNTIME = (
    "export to or run on another runtime (ONNX Runtime, OpenVINO, ExecuTorch, TFLite, Core ML): not the PyTorch "
    "path a Neuron port compiles"
)


def test_exporters_for_other_runtimes_are_counted_apart(tmp_path: Path) -> None:
    """A file named for another runtime (ONNX, OpenVINO/NNCF, ExecuTorch) exports to or runs on it: every line is
    set apart, whatever its own reach (a requirement included). torch.export/dynamo files and TensorRT (NVIDIA's own
    runtime) stay porting work."""
    body = (
        "import torch\n"
        "if not torch.cuda.is_available():\n"
        '    raise RuntimeError("needs CUDA")\n'
        'x = torch.ones(2, device="cuda")\n'
        "y = torch.view_as_complex(z)\n"
    )
    rels = (
        "exporters/exporter_onnx.py",
        "exporters/onnxruntime_fusions.py",
        "exporters/runners/runner_openvino.py",
        "exporters/quantizers/quantizer_nncf.py",
        "integrations/executorch.py",
        "exporters/exporter_dynamo.py",
        "exporters/exporter_tensorrt.py",
    )
    for rel in rels:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(body)
    log = scan_path(tmp_path, jobs=1)
    assert sorted(i.key for i in log.items) == [
        "file|complex-dtype|exporters/exporter_dynamo.py",
        "file|complex-dtype|exporters/exporter_tensorrt.py",
        "file|device-placement|exporters/exporter_dynamo.py",
        "file|device-placement|exporters/exporter_tensorrt.py",
    ]
    apart = {(f.file, f.line, f.rule) for f in log.findings if not f.porting}
    assert {f for f, _, _ in apart} == set(rels[:5])
    assert len(apart) == 5 * 3  # the requirement, the device string, the complex view in each of the five
    assert {f.reason for f in log.findings if not f.porting} == {OTHER_RUNTIME}
    assert log.summary.not_porting == {"other-runtime": 15}


def test_video_processors_are_host_side(tmp_path: Path) -> None:
    """Video processors (``video_processing_*.py``, ``video_utils.py``) pad and sample frames on the host, like image
    processors; the same loop in a modeling file is a hazard of the model graph."""
    body = "import torch\nfor f in frames:\n    video = torch.cat((video, f[None]), dim=0)\n"
    for rel in ("models/foo/video_processing_foo.py", "video_utils.py", "models/foo/modeling_foo.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(body)
    log = scan_path(tmp_path, jobs=1)
    assert _items(tmp_path) == [
        ("file|growing-sequence|models/foo/modeling_foo.py", "warning", "days", [("models/foo/modeling_foo.py", 3)])
    ]
    apart = sorted((f.file, f.line, f.context) for f in log.findings if not f.porting)
    assert apart == [("models/foo/video_processing_foo.py", 3, "host-side"), ("video_utils.py", 3, "host-side")]


def test_float64_reached_only_from_weight_initialisation_is_set_apart(tmp_path: Path) -> None:
    """float64 in a helper that only ``_init_weights``/``initialize_weights`` call (directly or through another
    helper) builds initial values; the same helper also called from ``forward`` or at module level, one nobody in
    the file calls, and float64 in ``__init__`` (a buffer forward reads) stay findings."""
    (tmp_path / "modeling_init.py").write_text(
        "import torch\n"
        "def build_pos(n, device=None):\n"
        "    return torch.arange(n, dtype=torch.float64, device=device)\n"  # 3: init only
        "class Model(PreTrainedModel):\n"
        "    def _init_weights(self, module):\n"
        "        module.pos.copy_(build_pos(4))\n"
        "    def initialize_weights(self):\n"
        "        self._fill()\n"
        "    def _fill(self):\n"
        "        self.p.copy_(self.make(3))\n"
        "    def make(self, n):\n"
        "        return torch.zeros(n, dtype=torch.float64)\n"  # 12: init only, through _fill
        "    def __init__(self):\n"
        "        self.register_buffer('b', torch.ones(2).double())\n"  # 14: a float64 buffer
    )
    (tmp_path / "modeling_fwd.py").write_text(
        "import torch\n"
        "def build_pos(n, device=None):\n"
        "    return torch.arange(n, dtype=torch.float64, device=device)\n"  # 3: also on the forward path
        "def unused(n):\n"
        "    return torch.zeros(n, dtype=torch.float64)\n"  # 5: no caller in this file
        "class Model(PreTrainedModel):\n"
        "    def _init_weights(self, module):\n"
        "        module.pos.copy_(build_pos(4) + table())\n"
        "    def forward(self, x):\n"
        "        return x + build_pos(x.shape[-1], x.device)\n"
        "def table():\n"
        "    return torch.ones(2, dtype=torch.float64)\n"  # 12: also run at import (module level)
        "TABLE = table()\n"
    )
    log = scan_path(tmp_path, jobs=1)
    assert _items(tmp_path) == [
        (
            "file|float64-dtype|modeling_fwd.py",
            "warning",
            "days",
            [("modeling_fwd.py", 3), ("modeling_fwd.py", 5), ("modeling_fwd.py", 12)],
        ),
        ("file|float64-dtype|modeling_init.py", "warning", "days", [("modeling_init.py", 14)]),
    ]
    apart = sorted((f.file, f.line, f.context) for f in log.findings if not f.porting)
    assert apart == [("modeling_init.py", 3, "weight-init"), ("modeling_init.py", 12, "weight-init")]
    assert log.summary.not_porting == {"weight-init": 2}


def test_growing_sequences_of_a_generation_package_are_one_repository_item(tmp_path: Path) -> None:
    """The decode loops of a ``generation/`` package (the default loop, assisted decoding, candidate generators) are
    one item: a port replaces the generate machinery once. A model's own ``generation_foo.py``, a modeling file's
    loop and another hazard rule in ``generation/`` stay items of their files; a hazard in the same function as a
    generate loop (assisted decoding's ``nonzero``) is a line of the loop's item, like any same-function hazard."""
    grow = (
        "import torch\ndef decode(ids, n):\n    for _ in range(n):\n        ids = torch.cat([ids, ids[:, -1:]], -1)\n"
    )
    files = {
        "generation/utils.py": grow
        + "def assisted(ids, n):\n    while n:\n        ids = torch.cat([ids, ids], -1)\n        n = ids.nonzero()\n",
        "generation/candidate_generator.py": grow,
        "generation/beam.py": "import torch\ndef beam(ids, n):\n    k = ids.nonzero()\n    for _ in range(n):\n"
        "        ids = torch.cat([ids, k], -1)\n",
        "generation/logits.py": "import torch\ndef f(x):\n    return torch.nonzero(x)\n",
        "models/foo/generation_foo.py": grow,
        "models/foo/modeling_foo.py": grow,
    }
    for rel, body in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(body)
    assert sorted((k, lines) for k, _, _, lines in _items(tmp_path)) == [
        ("file|data-dependent-op|generation/logits.py", [("generation/logits.py", 3)]),
        ("file|growing-sequence|models/foo/generation_foo.py", [("models/foo/generation_foo.py", 4)]),
        ("file|growing-sequence|models/foo/modeling_foo.py", [("models/foo/modeling_foo.py", 4)]),
        (
            "repo|growing-sequence|generation",
            [
                ("generation/beam.py", 3),
                ("generation/beam.py", 5),
                ("generation/candidate_generator.py", 4),
                ("generation/utils.py", 4),
                ("generation/utils.py", 7),
                ("generation/utils.py", 8),
            ],
        ),
    ]


def test_a_compile_mode_joins_the_compile_backend_item_and_graph_capture_stays_its_own(tmp_path: Path) -> None:
    """``mode="reduce-overhead"`` (in the compile call or in a config default feeding it) is set beside the compile
    backend: one edit, so it joins repo|compile-backend, which keeps its own rule. Capturing a CUDA graph by hand
    (``torch.cuda.CUDAGraph()``) stays repo|cuda-graphs."""
    (tmp_path / "run.py").write_text(
        "import torch\n\n"
        "class CompileConfig:\n"
        '    mode: str = "reduce-overhead"\n\n'
        "def run(model):\n"
        '    return torch.compile(model, mode="max-autotune")\n'
    )
    (tmp_path / "capture.py").write_text("import torch\n\ng = torch.cuda.CUDAGraph()\n")
    log = scan_path(tmp_path, jobs=1)
    got = {i.key: (i.rule, [(ln.file, ln.line, ln.rule) for ln in i.lines]) for i in log.items}
    assert got == {
        "repo|compile-backend": (
            "compile-backend",
            [("run.py", 4, "cuda-graphs"), ("run.py", 7, "compile-backend"), ("run.py", 7, "cuda-graphs")],
        ),
        "repo|cuda-graphs": ("cuda-graphs", [("capture.py", 3, "cuda-graphs")]),
    }


def test_launch_scripts_in_per_experiment_folders_under_scripts_are_one_job() -> None:
    """VideoMAE's ``scripts/kinetics/<experiment>/pretrain.sh`` (nine folders) is one launcher change; folders of a
    package (torchtitan's ``torchtitan/models/flux/``) stay separate jobs."""
    from accelpilot.porting.items import job_family

    assert job_family("scripts/kinetics/vit_b_800/pretrain.sh") == "scripts/**/*.sh"
    assert job_family("scripts/ssv2/vit_s_2400/finetune.sh") == "scripts/**/*.sh"
    assert job_family("scripts/run.sh") == "scripts/*.sh"
    assert job_family("torchtitan/models/flux/run_train.sh") == "torchtitan/models/flux/*.sh"
    assert job_family("train.slurm") == "*.slurm"


def test_a_package_item_is_titled_by_its_package_whatever_line_joined_it_first() -> None:
    """SimCSE's ``_setup_devices``: CUDA device lines serving an optional ``import deepspeed`` later in the function
    join DeepSpeed's item, which keeps DeepSpeed's rule and title (it took the first line's, a device string's)."""
    from accelpilot.porting.findings import Finding
    from accelpilot.porting.items import build_items
    from accelpilot.porting.rules import RULES

    def line(rule: str, n: int, message: str, subject: str) -> Finding:
        return Finding.from_rule(RULES[rule], file="train.py", line=n, message=message, subject=subject)

    items = build_items(
        [
            line("cuda-device-literal", 216, "device string 'cuda:0'", "serves:deepspeed:233"),
            line("deepspeed", 233, "import deepspeed", "deepspeed"),
        ]
    )
    [item] = items
    assert (item.key, item.rule, item.title) == (
        "package|deepspeed|deepspeed",
        "deepspeed",
        "DeepSpeed: deepspeed dependency",
    )
    assert [ln.line for ln in item.lines] == [216, 233]
