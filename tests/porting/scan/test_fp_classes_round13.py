"""Classes read on round 13's repositories after their first score: the CUDA arm of an ``if device.type ==
"cuda": ... else: ...`` choice (k-diffusion's step timing), and NATTEN as a CUDA kernel library."""

from __future__ import annotations

from accelpilot.porting.scan import scan_python

TIMING = """\
import time

import torch


def step(device):
    if device.type == "cuda":
        start = torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
    else:
        start = time.time()
    if device.type == "cuda":
        x = torch.ones(2).cuda()
    return start
"""


def test_the_cuda_arm_of_a_device_type_choice_is_a_guarded_path() -> None:
    """k-diffusion times its steps with CUDA events under ``if device.type == 'cuda':`` and with ``time.time()``
    in the else: the CUDA arm runs only on CUDA, an optional path. Near miss: the same test with no else, whose
    body places work (``.cuda()``), keeps its line on the main path."""
    found = {(ln, ctx) for r, ln, _, _, _, ctx in scan_python(TIMING) if r in ("torch-cuda-api", "cuda-call")}
    assert found == {(8, "optional"), (9, "optional"), (13, None)}


def test_natten_is_a_cuda_kernel_library() -> None:
    """k-diffusion's neighborhood attention imports NATTEN, whose kernels are CUDA only."""
    found = [(ln, r) for r, ln, *_ in scan_python("import natten\n") if r == "cuda-kernel-library"]
    assert found == [(1, "cuda-kernel-library")]


def test_minkowski_engine_is_a_cuda_kernel_library() -> None:
    """ConvNeXt-V2's FCMAE encoder imports MinkowskiEngine, a C++/CUDA extension (round 14)."""
    found = [ln for r, ln, *_ in scan_python("import MinkowskiEngine as ME\n") if r == "cuda-kernel-library"]
    assert found == [1]
