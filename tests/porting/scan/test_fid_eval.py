"""Inception-based evaluation (``scan/fid_eval.py``, rule ``fid-evaluation``): the line that brings the feature
extractor in, per file, beside the near misses."""

from __future__ import annotations

import pytest

from accelpilot.porting.scan.fid_eval import fid_lines


@pytest.mark.parametrize(
    ("source", "line"),
    [
        ("import torch\nfrom pytorch_fid.inception import InceptionV3\n", 2),  # denoising-diffusion
        ("from cleanfid.inception_torchscript import InceptionV3W\n", 1),  # k-diffusion
        ("import tensorflow_gan as tfgan\n", 1),  # score_sde
        ("import torch\n\n\nclass InceptionV3(nn.Module):\n    pass\n", 4),  # rosinality, consistency models
        ("def fid_inception_v3():\n    return None\n", 1),
        ("from torchmetrics.image.fid import FrechetInceptionDistance\n", 1),
    ],
)
def test_a_feature_extractor_for_fid_is_found(source: str, line: int) -> None:
    assert [(r[0], r[1]) for r in fid_lines(source.encode())] == [("fid-evaluation", line)]


@pytest.mark.parametrize(
    "source",
    [
        "# compute fid with pytorch_fid later\nimport torch\n",  # a comment
        "fid = compute_fid(a, b)  # the repository's own number\n",  # no extractor brought in
        "from torchvision.models import inception_v3\nnet = inception_v3(weights=None)\n",  # a classifier
        "x = 'import pytorch_fid'\n",  # a string, not at a line's start
    ],
)
def test_near_misses_are_not_found(source: str) -> None:
    assert fid_lines(source.encode()) == []
