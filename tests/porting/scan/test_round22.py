"""Round 22's tuning fixes (issue 27): imports a current stack removed (deep-text-recognition-benchmark's
``torch._utils._accumulate``, FourCastNet's ``numpy.lib.arraypad``, ``scipy.misc.imread``), and an entry point's
``torch.load`` without ``map_location`` of a state dict the repository saves from its CUDA model (RAFT, FourCastNet)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.porting.scan.scan_kit import rule_lines

from accelpilot.porting.scan import scan_path


def _stack(root: Path) -> list[tuple[str, str]]:
    return [(f.severity, f.message) for f in scan_path(root, jobs=1).findings if f.rule == "stack-upgrade"]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("from torch._utils import _accumulate", "not in torch 2.13"),
        ("from numpy.lib.arraypad import pad", "private since numpy 2.0"),
        ("import numpy.lib.function_base", "private since numpy 2.0"),
        ("from scipy.misc import imread, imresize", "not in scipy 1.17"),
    ],
)
def test_an_import_the_current_stack_removed_blocks_where_the_default_path_imports_it(
    tmp_path: Path, line: str, says: str
) -> None:
    (tmp_path / "README.md").write_text("```\npython demo.py --image_folder demo_image/\n```\n")
    (tmp_path / "dataset.py").write_text(f"{line}\n\n\nclass RawDataset:\n    pass\n")
    (tmp_path / "demo.py").write_text(
        "from dataset import RawDataset\n\nif __name__ == '__main__':\n    RawDataset()\n"
    )
    [(severity, message)] = _stack(tmp_path)
    assert severity == "blocking" and says in message


def test_a_removed_import_with_a_fallback_or_a_name_still_there_is_no_finding(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("```\npython demo.py\n```\n")
    (tmp_path / "dataset.py").write_text(
        "try:\n    from torch._utils import _accumulate\nexcept ImportError:\n    from itertools import accumulate as"
        " _accumulate\nfrom numpy.lib.stride_tricks import as_strided\nfrom scipy.misc import face\n"
    )
    (tmp_path / "demo.py").write_text("import dataset\n\nif __name__ == '__main__':\n    print(dataset)\n")
    assert _stack(tmp_path) == []


_TRAIN = """\
import torch


def main(args):
    model = torch.nn.Linear(2, 2).cuda()
    torch.save({SAVED}, args.path)


if __name__ == "__main__":
    main(None)
"""

_DEMO = """\
import torch


def demo(args):
    model = torch.nn.Linear(2, 2)
    model.load_state_dict({LOAD})


if __name__ == "__main__":
    demo(None)
"""


def _ckpt(root: Path, saved: str = "model.state_dict()", load: str = "torch.load(args.model)") -> tuple[str, str]:
    (root / "README.md").write_text("```\npython demo.py --model=models/raft-things.pth\n```\n")
    (root / "train.py").write_text(_TRAIN.replace("{SAVED}", saved))
    (root / "demo.py").write_text(_DEMO.replace("{LOAD}", load))
    [f] = [f for f in scan_path(root, jobs=1).findings if f.rule == "checkpoint-map-location" and f.file == "demo.py"]
    return f.severity, f.reason or ""


def test_an_entry_point_load_of_a_state_dict_saved_from_cuda_blocks(tmp_path: Path) -> None:
    severity, reason = _ckpt(tmp_path)
    assert severity == "blocking"
    assert "train.py:6" in reason and "Attempting to deserialize object on a CUDA device" in reason


def test_a_saved_dict_holding_the_state_dict_counts_and_one_moved_to_the_cpu_does_not(tmp_path: Path) -> None:
    assert _ckpt(tmp_path, saved="{'model_state': model.state_dict(), 'iters': 1}")[0] == "blocking"
    assert _ckpt(tmp_path, saved="{k: v.cpu() for k, v in model.state_dict().items()}")[0] == "warning"


def test_a_load_on_the_cuda_branch_or_under_an_option_keeps_its_severity(tmp_path: Path) -> None:
    """Wav2Lip: ``if use_cuda: torch.load(path)`` / ``else: torch.load(path, map_location=...)``."""
    (tmp_path / "README.md").write_text("```\npython demo.py\n```\n")
    (tmp_path / "train.py").write_text(_TRAIN.replace("{SAVED}", "model.state_dict()"))
    (tmp_path / "demo.py").write_text(
        "import torch\nuse_cuda = torch.cuda.is_available()\n\n\ndef demo(args):\n    if use_cuda:\n"
        "        return torch.load(args.model)\n    return torch.load(args.model, map_location='cpu')\n\n\n"
        "if __name__ == '__main__':\n    demo(None)\n"
    )
    found = [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "checkpoint-map-location"]
    assert [(f.file, f.severity) for f in found] == [("demo.py", "warning")]
    assert _ckpt(tmp_path, load="torch.load(args.model) if args.resume else None")[0] == "warning"


def test_the_install_document_a_readme_links_is_its_install(tmp_path: Path) -> None:
    """VideoMAE's README: "Please follow the instructions in [INSTALL.md](INSTALL.md)"; ConvNeXt's pins torch there."""
    (tmp_path / "README.md").write_text("Please follow the instructions in [INSTALL.md](INSTALL.md).\n")
    (tmp_path / "INSTALL.md").write_text(
        "# Installation\n\n`DS_BUILD_OPS=1 pip install deepspeed`\n\n```\npip install torch==1.8.0+cu111\n```\n"
    )
    (tmp_path / "train.py").write_text("import torch\n")
    assert rule_lines(tmp_path, "install-pin") == [("INSTALL.md", 3, "blocking"), ("INSTALL.md", 6, "blocking")]
    [ds] = [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "install-pin" and f.line == 3]
    assert "DS_BUILD_OPS=1" in ds.message and "nvcc" in ds.message
    (tmp_path / "README.md").write_text("See the [notes](NOTES.md).\n")  # a linked document that is no install
    (tmp_path / "NOTES.md").write_text((tmp_path / "INSTALL.md").read_text())
    (tmp_path / "INSTALL.md").unlink()
    assert rule_lines(tmp_path, "install-pin") == []


def test_deepspeed_installed_without_prebuilt_ops_is_no_install_stop(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("```\npip install deepspeed\nDS_BUILD_OPS=0 pip install deepspeed\n```\n")
    (tmp_path / "train.py").write_text("import torch\n")
    assert rule_lines(tmp_path, "install-pin") == []


def test_a_load_read_by_keys_takes_its_evidence_from_the_saves_of_a_dict_with_those_keys(tmp_path: Path) -> None:
    """diffusion_policy: the evaluation reads ``payload['cfg']``, its workspace's checkpoint, whose state dicts are
    copied to the CPU; a vendored trainer elsewhere saves its CUDA model's state dict, another checkpoint. Near miss:
    a load read by the trainer's own key keeps that save as its evidence."""
    (tmp_path / "workspace.py").write_text(
        "import torch\n\n\ndef save(model, cfg, path):\n"
        "    payload = {'cfg': cfg, 'state_dicts': {k: v.cpu() for k, v in model.state_dict().items()}}\n"
        "    torch.save(payload, path)\n"
    )
    load = "torch.load(args.model)['cfg']"
    assert _ckpt(tmp_path, saved="model.state_dict()", load=load)[0] == "warning"
    severity, reason = _ckpt(tmp_path, saved="{'net': model.state_dict()}", load="torch.load(args.model)['net']")
    assert severity == "blocking" and "train.py:6" in reason
