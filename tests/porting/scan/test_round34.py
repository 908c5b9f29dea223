"""Round 34's tuning fixes (issue 27): Jukebox copies NVIDIA apex and tensorboardX into its tree as whole
distributions (``apex/setup.py`` beside ``apex/apex/``), which its sampling path never imports."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import write_tree

from accelpilot.porting.items import build_items
from accelpilot.porting.scan import scan_path


def test_a_distribution_copied_into_the_tree_is_one_vendored_item_and_no_oracle(tmp_path: Path) -> None:
    """``apex/`` with its own ``setup.py`` and an ``apex/apex/`` package: its CUDA calls, extension build and tests
    are one vendored warning item, and the parity item names the repository's own test. Near miss: a sub-project
    whose package has another name (Depth-Anything-V2's ``metric_depth/depth_anything_v2/``) stays the
    repository's code."""
    root = write_tree(
        tmp_path,
        {
            "README.md": "```\npython sample.py\n```\n",
            "sample.py": "import torch\n\nx = torch.zeros(2)\n",
            "tests/test_sample.py": "def test_ok():\n    assert True\n",
            "apex/setup.py": "from torch.utils.cpp_extension import CUDAExtension\n"
            "ext = CUDAExtension('amp_C', ['csrc/amp_C.cu'])\n",
            "apex/csrc/amp_C.cu": "__global__ void k() {}\n",
            "apex/apex/__init__.py": "",
            "apex/apex/amp.py": "import torch\n\ndef f():\n    torch.cuda.synchronize()\n    return torch.zeros(1).cuda()\n",
            "apex/tests/test_amp.py": "def test_amp():\n    assert True\n",
            "metric_depth/setup.py": "",
            "metric_depth/depth_anything_v2/__init__.py": "",
            "metric_depth/depth_anything_v2/dpt.py": "import torch\n\ndef g():\n    return torch.zeros(1).cuda()\n",
        },
    )
    log = scan_path(root, jobs=1)
    items = build_items(log.findings)
    apex = [i for i in items if any((ln.file or "").startswith("apex/") for ln in i.lines)]
    assert [(i.key, i.severity) for i in apex] == [("vendored|apex", "warning")]
    parity = next(i for i in items if i.rule == "parity-validation")
    assert "tests/test_sample.py" in parity.message or parity.file == "tests/test_sample.py"
    sub = [f.context for f in log.findings if f.file == "metric_depth/depth_anything_v2/dpt.py"]
    assert sub and "vendored" not in sub


def test_a_cuda_grad_scalers_state_read_by_key_blocks_on_the_default_path(tmp_path: Path) -> None:
    """Swin's ``loss_scale_value = loss_scaler.state_dict()["scale"]`` in the entry point, and VideoMAE's in the
    ``train_one_epoch`` it calls: a CUDA GradScaler is disabled without CUDA and its state_dict() is empty, so the
    read raises KeyError at the first step (torch 2.13, tried). Near misses: the read under
    ``if torch.cuda.is_available():``, and ``optimizer.state_dict()["scale"]`` (no scaler)."""
    root = write_tree(
        tmp_path,
        {
            "README.md": "```\npython main.py\n```\n",
            "main.py": "import torch\nfrom engine import train_one_epoch\n\n"
            "def main(loss_scaler, optimizer):\n"
            "    train_one_epoch(loss_scaler)\n"
            "    a = loss_scaler.state_dict()['scale']\n"
            "    b = optimizer.state_dict()['scale']\n\n"
            "if __name__ == '__main__':\n    main(None, None)\n",
            "engine.py": "import torch\n\n"
            "def train_one_epoch(loss_scaler):\n"
            "    for _ in range(3):\n"
            "        loss_scale_value = loss_scaler.state_dict()['scale']\n"
            "    if torch.cuda.is_available():\n"
            "        other = loss_scaler.state_dict()['scale']\n",
        },
    )
    reads = {
        (f.file, f.line): f.severity
        for f in scan_path(root, jobs=1).findings
        if f.rule == "amp-cuda" and f.message.startswith("GradScaler state_dict()['scale']")
    }
    assert reads == {("main.py", 6): "blocking", ("engine.py", 5): "blocking", ("engine.py", 7): "warning"}


def test_typed_cuda_tensors_and_nvtx_ranges_in_a_called_function_block(tmp_path: Path) -> None:
    """WaveGlow's ``torch.cuda.FloatTensor(...)`` and RFdiffusion's ``torch.cuda.nvtx.range_push`` in a function
    the entry point calls: both raise on a torch build without CUDA (TypeError, RuntimeError; torch 2.13, tried).
    Near miss: ``isinstance(x, torch.cuda.LongTensor)`` constructs nothing."""
    root = write_tree(
        tmp_path,
        {
            "README.md": "```\npython infer.py\n```\n",
            "infer.py": "import torch\nfrom glow import infer\n\ninfer(None)\n",
            "glow.py": "import torch\n\n"
            "def infer(x):\n"
            "    z = torch.cuda.FloatTensor(2, 3).normal_()\n"
            "    torch.cuda.nvtx.range_push('glow')\n"
            "    ok = isinstance(x, torch.cuda.LongTensor)\n"
            "    return z, ok\n",
        },
    )
    found = {(f.line, f.severity) for f in scan_path(root, jobs=1).findings if f.file == "glow.py"}
    assert found == {(4, "blocking"), (5, "blocking"), (6, "warning")}
