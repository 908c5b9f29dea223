"""Dependencies the default path imports that no file declares (``scan/declared_deps.py``; issue 27's held-out labels:
DeepSDF, VideoMAE, GPTQ and CIFAR ship no requirements file)."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import write_tree

from accelpilot.porting.scan import scan_path

TRAIN = """\
import os
import torch
import numpy as np
from PIL import Image
import cv2
import lab.cross_ssl.models.builder
from models import net
try:
    import yaml
except ImportError:
    yaml = None
if torch.__version__ >= "2":
    import packaging


def main():
    import scipy
"""


def _item(root: Path) -> list[tuple[str, str, float, float]]:
    return [
        (i.severity, i.lines[0].message, i.days_low, i.days_high)
        for i in scan_path(root, jobs=1).items
        if i.rule == "undeclared-dependencies"
    ]


def test_a_repository_without_a_dependency_file_names_the_packages_its_default_path_imports(tmp_path: Path) -> None:
    """Named: numpy, PIL and cv2, imported at module level by the README's script. Not named: the standard library,
    torch, the repository's own modules (``models``, and ``builder`` under an internal prefix the tree lacks), an
    import under ``try`` or a version test, one inside a function, and what the README's ``pip install`` line
    declares (``opencv-python`` for ``cv2``)."""
    files = {
        "README.md": "Run `python train.py`.\n",
        "train.py": TRAIN,
        "models/net.py": "import torch\n",
        "models/builder.py": "import torch\n",
    }
    write_tree(tmp_path, files)
    msg = "no requirements, setup or environment file: the default path imports 3 packages: cv2, numpy, PIL"
    assert _item(tmp_path) == [("warning", msg, 0.25, 0.5)]
    (tmp_path / "README.md").write_text("```\npip install opencv-python\n```\nRun `python train.py`.\n")
    msg = "no requirements, setup or environment file: the default path imports 2 packages: numpy, PIL"
    assert _item(tmp_path) == [("warning", msg, 0.25, 0.5)]
    (tmp_path / "requirements.txt").write_text("numpy\n")
    assert _item(tmp_path) == []
