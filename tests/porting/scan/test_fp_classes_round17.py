"""Classes read on round 17's repositories after their first score: a script's own ``--gpus`` argument (RAFT), numpy
boolean masks and ``torch.nonzero`` on host data (RAFT, modded-nanogpt), a skip connection's concat (NeRF), and a past
record's launch script (modded-nanogpt)."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path, scan_python
from accelpilot.porting.scan.text import scan_text


def _rules(src: str, rule: str) -> list[int | None]:
    return [ln for r, ln, *_ in scan_python(src) if r == rule]


def test_a_scripts_own_gpus_argument_is_no_slurm_request() -> None:
    """RAFT's train_standard.sh: ``python -u train.py ... --gpus 0 1`` passes DataParallel device ids to the script.
    Near misses: ``srun --gpus=8 python train.py`` and ``#SBATCH --gpus=4`` ask Slurm."""
    text = (
        "#!/bin/bash\n"
        "python -u train.py --name raft-chairs --gpus 0 1 --num_steps 100000\n"
        "srun --gpus=8 python train.py\n"
        "#SBATCH --gpus=4\n"
    )
    assert [ln for r, ln, *_ in scan_text(text, "shell") if r == "slurm-gpu-gres"] == [3, 4]


def test_numpy_masks_and_torch_nonzero_on_host_data_are_not_device_hazards() -> None:
    """RAFT's augmentor indexes numpy arrays (``coords[valid >= 1]`` after ``.astype(np.float32)``); modded-nanogpt's
    HellaSwag loader calls ``torch.nonzero`` on a ``torch.tensor(list)`` built on the CPU. Near misses: the same
    mask on a tensor, and ``torch.nonzero`` of a tensor given a device."""
    src = (
        "import numpy as np\nimport torch\n\n"
        "def resize(flow, valid):\n"
        "    coords = flow.reshape(-1, 2).astype(np.float32)\n"
        "    return coords[valid >= 1]\n\n"
        "def mask(x, valid):\n"
        "    return x[valid >= 1]\n\n"
        "def docs(inputs, dev):\n"
        "    t = torch.tensor(inputs, dtype=torch.int32)\n"
        "    a = torch.nonzero(t == 50256)\n"
        "    u = torch.tensor(inputs, device=dev)\n"
        "    return a, torch.nonzero(u == 50256)\n"
    )
    assert _rules(src, "boolean-mask-index") == [9]
    assert _rules(src, "data-dependent-op") == [15]


def test_a_skip_connections_concat_in_a_layer_loop_grows_nothing() -> None:
    """NeRF's MLP: ``xyz_ = torch.cat([input_xyz, xyz_], -1)`` at the skip layer, then ``xyz_ = layer(xyz_)``: the
    next iteration carries the layer's output. Near miss: a decode loop whose sequence is only read after the
    concat (``logits = model(seq)``) grows a step at a time."""
    src = (
        "import torch\n\n"
        "def forward(self, x):\n"
        "    xyz_ = x\n"
        "    for i in range(self.D):\n"
        "        if i in self.skips:\n"
        "            xyz_ = torch.cat([x, xyz_], -1)\n"
        "        xyz_ = getattr(self, f'layer_{i}')(xyz_)\n"
        "    return xyz_\n\n"
        "def generate(model, seq, n):\n"
        "    for _ in range(n):\n"
        "        tok = model(seq).argmax(-1, keepdim=True)\n"
        "        seq = torch.cat([seq, tok], -1)\n"
        "        logits = model(seq)\n"
        "    return seq\n"
    )
    assert _rules(src, "growing-sequence") == [14]


def test_a_past_records_launch_script_is_on_no_path(tmp_path: Path) -> None:
    """modded-nanogpt's ``records/.../run.sh`` launches the trainer snapshot beside it, which nothing imports and
    no README command runs and whose name copies the entry script's (``train_gpt_old.py``): a record, listed apart
    with its ``requirements.txt``. Near misses: a shell script in a sub-folder that runs the root's trainer, and
    one that runs its own folder's differently named script (ChatGLM's ``ptuning/train.sh``), stay work."""
    files = {
        "README.md": "# speedrun\n\n```\npip install -r requirements.txt\n./run.sh\n```\n",
        "run.sh": "torchrun --standalone --nproc_per_node=8 train_gpt.py\n",
        "train_gpt.py": "import torch\nx = torch.zeros(1).cuda()\n",
        "requirements.txt": "numpy\n",
        "records/r1/run.sh": '"$PY" data/cached_fineweb10B.py 9\n'
        'torchrun --standalone --nproc_per_node="${GPUS}" "${DIR}/train_gpt_old.py"\n',
        "data/cached_fineweb10B.py": "import sys\nprint(sys.argv)\n",  # the data download it runs first
        "records/r1/train_gpt_old.py": "import torch\nx = torch.zeros(1).cuda()\n",
        "records/r1/requirements.txt": "torch==2.10\n",
        "scripts/train8.sh": "torchrun --nproc_per_node=8 train_gpt.py\n",
        "scripts/plot.py": "import torch\nx = torch.zeros(1).cuda()\n",
        "ptuning/train.sh": "deepspeed --num_gpus=4 main.py --deepspeed ds.json\n",
        "ptuning/main.py": "import torch\nx = torch.zeros(1).cuda()\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    log = scan_path(tmp_path, jobs=1)
    ctx = {(f.file, f.rule): f.context for f in log.findings}
    assert ctx[("records/r1/run.sh", "gpu-launcher-setting")] == "unreached-module"
    assert ctx[("records/r1/requirements.txt", "install-pin")] == "unreached-module"
    assert ctx[("scripts/train8.sh", "gpu-launcher-setting")] is None
    assert {c for (file, _), c in ctx.items() if file == "ptuning/train.sh"} == {None}


def test_a_cpp_extension_with_no_cuda_source_is_no_cuda_kernel() -> None:
    """YOLOX's ``jit_ops.py`` builds the COCOeval op from ``.cpp`` sources with ``CppExtension`` (or its JIT ``load``
    fallback): host C++, no CUDA kernel. Near miss: the same file naming a ``.cu`` source stays a CUDA extension."""
    src = (
        "import glob\n\n"
        "class FastCOCOEvalOp:\n"
        "    def sources(self):\n"
        "        return glob.glob('cocoeval/*.cpp')\n\n"
        "    def build_op(self):\n"
        "        from torch.utils.cpp_extension import CppExtension\n"
        "        return CppExtension(name='fast_cocoeval', sources=self.sources())\n\n"
        "    def jit_load(self):\n"
        "        from torch.utils.cpp_extension import load\n"
        "        return load(name='fast_cocoeval', sources=self.sources())\n"
    )
    assert _rules(src, "cpp-extension-cuda") == []
    assert _rules(src.replace("'cocoeval/*.cpp'", "'cocoeval/*.cu'"), "cpp-extension-cuda") == [8, 9, 12, 13]


def test_a_benchmark_inside_an_example_folder_is_an_example() -> None:
    """LoRA's vendored transformers copy under ``examples/NLU/src/transformers/benchmark/``: off the repository's
    path, as the example is (listed apart), not a benchmark script's porting work. Near misses: a top-level
    ``benchmarks/`` script, and a benchmark inside the example folder a README command runs."""
    from accelpilot.porting.findings import context_of_path

    assert context_of_path("examples/NLU/src/transformers/benchmark/benchmark.py") == "example"
    assert context_of_path("benchmarks/run_speed.py") == "benchmark"
    promoted = ["examples/NLG/"]
    assert context_of_path("examples/NLG/src/benchmark/bench.py", (), promoted) == "benchmark"
