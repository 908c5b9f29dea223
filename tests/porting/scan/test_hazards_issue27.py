"""Hazards issue 27 asked for, each with its near miss: FFT/STFT, nested tensors, a KV cache grown with torch.cat."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.porting.scan.scan_kit import findings_in

from accelpilot.porting.scan import scan_python

SPECTRAL = """\
import numpy as np
import torch


class Mixer(torch.nn.Module):
    def forward(self, x):
        y = torch.fft.fftn(x, dim=(-2, -1)).real
        s = x.stft(64, return_complex=True)
        host = np.fft.rfft(np.ones(8))
        nt = torch.nested.as_nested_tensor([x[0], x[1]])
        return y, s, host, nt
"""


def test_fft_stft_and_nested_tensors_are_hazards_and_numpys_fft_is_not(tmp_path: Path) -> None:
    (tmp_path / "mixer.py").write_text(SPECTRAL)
    assert findings_in(tmp_path, "mixer.py") == [
        ("fft-op", 7, None),
        ("fft-op", 8, None),
        ("nested-tensor", 10, None),
    ]


FRONT_END = """\
import torch
import torchaudio
from torchaudio.transforms import MFCC
import torchaudio.transforms as AT


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fb = torchaudio.transforms.MelSpectrogram(sample_rate=16000, n_fft=512)
        self.spec = AT.Spectrogram(n_fft=400)
        self.resample = torchaudio.transforms.Resample(16000, 8000)
"""


def test_torchaudio_spectral_transforms_are_ffts_and_its_resampler_is_not(tmp_path: Path) -> None:
    """voxceleb_trainer's MelSpectrogram front end runs torch.stft in the model's forward (round 40): each spectral
    transform, however imported, is an fft-op line; a resampler (a convolution) is none."""
    (tmp_path / "encoder.py").write_text(FRONT_END)
    assert findings_in(tmp_path, "encoder.py") == [("fft-op", 3, None), ("fft-op", 10, None), ("fft-op", 11, None)]


CACHE = """\
import torch


class Attention(torch.nn.Module):
    def forward(self, k, v, layer_past=None):
        self.k_cache = torch.cat([self.k_cache, k], dim=2)
        if layer_past is not None:
            layer_past = torch.cat([layer_past, v], dim=2)
        current_cache = self.v_cache.clone()
        current_cache = torch.cat([current_cache.new_zeros(1, 1, 4), current_cache], dim=2)
        both = torch.cat([k, v], dim=-1)
        return both, layer_past, current_cache
"""


def test_a_kv_cache_grown_with_cat_is_a_growing_sequence_outside_a_loop(tmp_path: Path) -> None:
    """A cache attribute, or a past-states parameter, concatenated onto itself grows each call. Stay quiet: a local
    padded copy of a fixed buffer (built in the def), and a one-off join."""
    (tmp_path / "attn.py").write_text(CACHE)
    assert findings_in(tmp_path, "attn.py") == [("growing-sequence", 6, None), ("growing-sequence", 8, None)]


@pytest.mark.parametrize("source", [SPECTRAL, FRONT_END, CACHE])
def test_pruned_scan_equals_full_parse_on_issue27_hazards(source: str) -> None:
    assert scan_python(source) == scan_python(source, prune=False)


READ_BACK = """\
import math

import numpy as np
import torch
import torch.nn.functional as F


class Pad(torch.nn.Module):
    def forward(self, x, lengths, mask):
        longest = int(lengths.max())
        count = int(torch.sum(mask))
        fixed = int(math.ceil(3.5))
        host = int(np.max([1, 2]))
        size = int(x.size(1))
        built = float(torch.tensor([2.0, 3.0]).max())
        return F.pad(x, (0, longest - size)), count, fixed, host, built


def helper(lengths):
    return int(lengths.max())
"""


def test_a_size_read_back_from_the_data_in_a_forward_is_a_host_sync(tmp_path: Path) -> None:
    """``int(lengths.max())`` or ``int(torch.sum(mask))`` in a forward reads a data-dependent size into Python (a
    pad, a buffer: a new shape per step). Stay quiet: math and numpy values, a static ``.size()``, a reduction of a
    tensor built from Python values, and the same read outside a forward."""
    (tmp_path / "pad.py").write_text(READ_BACK)
    assert findings_in(tmp_path, "pad.py") == [("item-in-forward", 10, None), ("item-in-forward", 11, None)]


def test_pruned_scan_equals_full_parse_on_a_read_back() -> None:
    assert scan_python(READ_BACK) == scan_python(READ_BACK, prune=False)


def test_an_fp8_gemm_is_a_precision_item_and_its_definition_is_not() -> None:
    """modded-nanogpt's FP8 lm_head: ``torch._scaled_mm(x_f8, w_f8.T, out_dtype=torch.bfloat16, scale_a=..., ...)``.
    Near misses: a comment naming it, and a ``def`` of a wrapper with that name."""
    src = (
        "import torch\n\n"
        "def mm(x, w, sa, sb):\n"
        "    # torch._scaled_mm(x, w) is the FP8 path\n"
        "    return torch._scaled_mm(x, w.T, out_dtype=torch.bfloat16, scale_a=sa, scale_b=sb)\n\n"
        "def _scaled_mm(a, b):\n"
        "    return a @ b\n"
    )
    assert [ln for r, ln, *_ in scan_python(src) if r == "fp8-matmul"] == [5]


def test_a_shuffled_loader_without_drop_last_has_a_smaller_last_batch() -> None:
    """CIFAR's ``DataLoader(trainset, batch_size=128, shuffle=True)``: 50,000 images end each epoch with a batch of
    80, one more shape; so does DeiT's evaluation loader, which asks for it (``drop_last=False``), and an unshuffled
    loader over a set named for evaluation (RepDistiller's ``test_set``, round 40), which ends. Near misses:
    ``drop_last=True`` or a caller's ``drop_last=is_train``; a loader neither
    shuffled nor sampled (an IterableDataset streams, llama2.c's); batch size 1; and the repository's own class
    named DataLoader (DLRM's ``data_loader_terabyte.DataLoader``)."""
    src = (
        "import torch\nimport data_loader_terabyte\nfrom torch.utils.data import DataLoader\n\n"
        "a = torch.utils.data.DataLoader(trainset, batch_size=128, shuffle=True, num_workers=2)\n"
        "b = DataLoader(trainset, batch_size=128, shuffle=True, drop_last=True)\n"
        "c = DataLoader(trainset, batch_size=128, sampler=sampler, drop_last=is_train)\n"
        "d = DataLoader(stream, batch_size=64, pin_memory=True)\n"
        "e = DataLoader(trainset, batch_size=1, shuffle=True)\n"
        "f = data_loader_terabyte.DataLoader(data, batch_size=128, shuffle=True)\n"
        "g = DataLoader(trainset, batch_size=bs, sampler=DistributedSampler(trainset))\n"
        "h = DataLoader(valset, batch_size=int(1.5 * bs), sampler=val_sampler, drop_last=False)\n"
        "i = DataLoader(stream, batch_size=bs, drop_last=False)\n"
        "j = DataLoader(test_set, batch_size=int(bs / 2), shuffle=False, num_workers=4)\n"
        "k = DataLoader(dataset=self.val_dataset, batch_size=bs)\n"
        "m = DataLoader(contest_stream, batch_size=bs)\n"
    )
    assert [ln for r, ln, *_ in scan_python(src) if r == "partial-last-batch"] == [5, 11, 12, 14, 15]
