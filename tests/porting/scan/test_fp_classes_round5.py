"""Classes read on round 5's repositories (segment-anything, yolov5, TinyLlama) after their first score: package
names in a linter's section, plotting and logger code, an MPS branch, and flash-attention's csrc extensions imported
by module name (``test_kernel_libraries.py``)."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.text import scan_text


def test_package_names_in_a_linters_section_are_no_dependency() -> None:
    cfg = "[isort]\nknown_third_party=torch,torchvision\n[options]\ninstall_requires =\n    torchvision\n"
    assert [(r, ln) for r, ln, *_ in scan_text(cfg, "packaging")] == [("torch-companion", 5)]


def test_plotting_and_logger_code_is_host_side(tmp_path: Path) -> None:
    src = "import torch\n\ndef f(targets, i):\n    return targets[targets[:, 0] == i]\n"
    for rel in ("utils/plots.py", "utils/loggers/comet/__init__.py", "utils/metrics.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(src)
    (tmp_path / "train.py").write_text("from utils import plots, metrics\nfrom utils.loggers import comet\n")
    ctx = {f.file: f.context for f in scan_path(tmp_path, jobs=1).findings if f.rule == "boolean-mask-index"}
    assert ctx == {
        "utils/plots.py": "host-side",
        "utils/loggers/comet/__init__.py": "host-side",
        "utils/metrics.py": None,
    }


def test_an_mps_branch_is_no_trainium_work(tmp_path: Path) -> None:
    (tmp_path / "dev.py").write_text("import torch\n\ndef pick():\n    return torch.device('mps')\n")
    (item,) = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "mps-device"]
    assert "trainium" not in item.targets and "gpu" in item.targets
