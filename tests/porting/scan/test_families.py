"""Units of porting work across files (issue 27): one item per kernel family read from imports, and a repository's
own package never an external CUDA dependency."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.families import families, own_packages

KERNEL = """\
import torch
import triton
import triton.language as tl
{imports}

@triton.jit
def {name}_kernel(x_ptr, n):
    pass


def {name}(x):
    with torch.cuda.device(x.device):
        {name}_kernel[(1,)](x, 4)
    return x
"""

HELPER = """\
import triton


@triton.jit
def softplus(x):
    return x
"""


def _kernel(name: str, imports: str = "") -> str:
    return KERNEL.format(name=name, imports=imports)


def _tree(root: Path) -> Path:
    files = {
        "pkg/__init__.py": "",
        "pkg/ops/__init__.py": "",
        # the scan op: its entry file imports two more kernel files and the shared norm
        "pkg/ops/scan_combined.py": _kernel(
            "combined",
            "from pkg.ops.scan_state import state\nfrom pkg.ops.scan_chunk import chunk\n"
            "from pkg.ops.norm import norm\n",
        ),
        "pkg/ops/scan_state.py": _kernel("state", "from pkg.ops.softplus import softplus\n"),
        "pkg/ops/scan_chunk.py": _kernel("chunk"),
        "pkg/ops/norm.py": _kernel("norm"),  # imported by the model too: its own family
        "pkg/ops/update.py": _kernel("update", "from .softplus import softplus\n"),
        "pkg/ops/softplus.py": HELPER,  # a helper of two families
        # one op in two kernel languages (folders of one name) that the same model module imports: one family
        "pkg/ops/a/v3/fwd.py": _kernel("fwd"),
        "pkg/ops/a/v3/bench_only.py": _kernel("bench"),  # imported by tests alone: its folder's family
        "pkg/ops/b/v3/step.py": _kernel("step"),
        "pkg/model.py": "from pkg.ops.scan_combined import combined\nfrom pkg.ops.norm import norm\n"
        "from pkg.ops.update import update\nimport pkg\n",
        "pkg/model3.py": "from pkg.ops.a.v3.fwd import fwd\nfrom pkg.ops.b.v3.step import step\n",
        "tests/test_v3.py": "from pkg.ops.a.v3.bench_only import bench\n",
        "other.py": "import pkg.model\nfrom pkg import model3\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_kernel_files_group_by_the_op_they_serve(tmp_path: Path) -> None:
    log = scan_path(_tree(tmp_path), jobs=1)
    fams = {i.key: sorted({ln.file or "" for ln in i.lines}) for i in log.items if i.key.startswith("kernel|")}
    assert fams == {
        "kernel|triton-kernel|pkg/ops/norm.py|*": ["pkg/ops/norm.py"],
        "kernel|triton-kernel|pkg/ops/scan_combined.py|*": [
            "pkg/ops/scan_chunk.py",
            "pkg/ops/scan_combined.py",
            "pkg/ops/scan_state.py",
            "pkg/ops/softplus.py",  # a helper two families import goes with its first importer by path
        ],
        "kernel|triton-kernel|pkg/ops/update.py|*": ["pkg/ops/update.py"],
        "kernel|triton-kernel|pkg/ops/a/v3/fwd.py|*": [
            "pkg/ops/a/v3/bench_only.py",
            "pkg/ops/a/v3/fwd.py",
            "pkg/ops/b/v3/step.py",
        ],
    }
    # three independent ops of one flat folder that one model file imports stay three items (norm, scan, update)
    # the wrappers' torch.cuda.device calls are lines of their family, not per-file device items
    assert not [i.key for i in log.items if i.key.startswith("file|")]
    by_key = {i.key: i for i in log.items}
    # the helper file (never launched) is inlined into its callers: not a kernel of the count (3 + 0.25 + 0.25 days)
    scan = by_key["kernel|triton-kernel|pkg/ops/scan_combined.py|*"]
    assert scan.message.endswith("3 kernels: chunk_kernel, combined_kernel, state_kernel")
    assert (scan.days_low, scan.days_high) == (3 + 0.25 * 2, 10 + 1 * 2)


def test_a_wrapper_in_a_kernel_folder_joins_the_family(tmp_path: Path) -> None:
    """``ops/v3/combined.py`` only wraps the folder's kernels (no kernel of its own): the model imports the wrapper,
    and the kernels it imports are the same family."""
    imports = {
        "m.py": {"ops/v3/combined.py", "ops/v3/step.py"},
        "ops/v3/combined.py": {"ops/v3/fwd.py", "ops/v3/bwd.py"},
        "ops/v3/fwd.py": set(),
        "ops/v3/bwd.py": set(),
        "ops/v3/step.py": set(),
        "ops/other.py": {"ops/v3/step.py"},
    }
    fam = families({"ops/v3/fwd.py", "ops/v3/bwd.py", "ops/v3/step.py"}, imports)
    assert set(fam.values()) == {"ops/v3/combined.py", "ops/v3/step.py"}  # step.py also serves ops/other.py
    assert fam["ops/v3/fwd.py"] == fam["ops/v3/bwd.py"] == "ops/v3/combined.py"


def test_the_repositorys_own_package_is_not_a_cuda_library(tmp_path: Path) -> None:
    for rel, text in {
        "mamba_ssm/__init__.py": "",
        "mamba_ssm/model.py": "x = 1\n",
        "train.py": "import mamba_ssm\nimport causal_conv1d\n",
    }.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert own_packages(["src/pkg/__init__.py", "mamba_ssm/__init__.py", "a/b/__init__.py"]) == {"pkg", "mamba_ssm"}
    log = scan_path(tmp_path, jobs=1)
    assert [i.key for i in log.items if i.rule == "cuda-kernel-library"] == [
        "package|cuda-kernel-library|causal_conv1d"
    ]


def test_headers_beside_an_extensions_sources_are_that_extension(tmp_path: Path) -> None:
    """``csrc/scan/*.cuh`` beside the ``.cu`` files setup.py builds into one extension are its sources; a header in
    a folder whose sources build two extensions stays an item of its folder."""
    files = {
        "setup.py": "from torch.utils.cpp_extension import CUDAExtension\n"
        "ext = CUDAExtension('scan_cuda', sources=['csrc/scan/scan_fwd.cu'])\n"
        "a = CUDAExtension('a_cuda', sources=['csrc/two/a.cu'])\n"
        "b = CUDAExtension('b_cuda', sources=['csrc/two/b.cu'])\n",
        "csrc/scan/scan_fwd.cu": "__global__ void k() {}\n",
        "csrc/scan/scan_kernel.cuh": "#pragma once\n",
        "csrc/two/a.cu": "__global__ void a() {}\n",
        "csrc/two/b.cu": "__global__ void b() {}\n",
        "csrc/two/common.cuh": "#pragma once\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    items = {i.key: sorted(ln.file or "" for ln in i.lines) for i in scan_path(tmp_path, jobs=1).items}
    assert items["kernel|cpp-extension-cuda|setup.py|scan_cuda"][:2] == [
        "csrc/scan/scan_fwd.cu",
        "csrc/scan/scan_kernel.cuh",
    ]
    assert items["kernel|cuda-source-file|csrc/two"] == ["csrc/two/common.cuh"]


def test_kernel_modules_at_the_root_are_families_of_their_own_and_a_scripts_kernels_its_run(tmp_path: Path) -> None:
    """modded-nanogpt's root: ``triton_kernels.py`` and ``dc_triton_kernels.py`` beside the ``train_gpt.py`` that
    imports both, and ``train_gpt_medium.py`` with kernels of its own. Kernel files outnumber the trainer, but the
    root is no op folder: two families (the trainer is their user, not their wrapper); the medium script, imported
    by nothing and run by no README command, is its own family that blocks when it is run."""
    files = {
        "README.md": "# speedrun\n\n```\ntorchrun --standalone --nproc_per_node=8 train_gpt.py\n```\n",
        "triton_kernels.py": _kernel("xxt"),
        "dc_triton_kernels.py": _kernel("dc"),
        "train_gpt_medium.py": _kernel("medium"),
        "train_gpt.py": "from triton_kernels import xxt\nfrom dc_triton_kernels import dc\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).write_text(text)
    items = {i.title: (i.severity, i.reason) for i in scan_path(tmp_path, jobs=1).items if i.rule == "triton-kernel"}
    assert sorted(items) == [
        "Triton kernel: kernel family dc_triton_kernels.py",
        "Triton kernel: kernel family train_gpt_medium.py",
        "Triton kernel: kernel family triton_kernels.py",
    ]
    assert items["Triton kernel: kernel family triton_kernels.py"][0] == "blocking"
    assert items["Triton kernel: kernel family train_gpt_medium.py"] == (
        "warning",
        "blocks when train_gpt_medium.py is run: a script with its own kernels that no file imports and no README "
        "command runs",
    )


def test_the_repositorys_own_megatron_package_is_not_the_megatron_runtime(tmp_path: Path) -> None:
    """GPT-NeoX carries its own ``megatron/`` package: ``from megatron.training import pretrain`` is its code, not
    the Megatron-LM training runtime. Near miss: megablocks, a runtime the tree does not hold, stays."""
    for rel, text in {
        "megatron/__init__.py": "",
        "megatron/training.py": "def pretrain():\n    pass\n",
        "train.py": "from megatron.training import pretrain\nimport megablocks.ops\n",
    }.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    log = scan_path(tmp_path, jobs=1)
    assert [i.key for i in log.items if i.rule == "training-runtime"] == ["package|training-runtime|megablocks"]
