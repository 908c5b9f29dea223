"""False-positive classes of transformers samples 13 and 14 (issue 12, scanfp12), each beside the near misses that
must stay findings: exact findings and items, and pruned scans equal to full parses."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.porting.scan.scan_kit import findings_in, item_lines

from accelpilot.porting.scan import scan_python

EXPORT = """\
import torch


def torch_compilable_check(cond, msg):
    torch._check(cond, lambda: msg)


def export_safe_attention(self, hidden_states, cu_seqlens):
    seq_length = hidden_states.shape[0]
    num_segments = cu_seqlens.shape[0] - 1
    segment_lengths = cu_seqlens[1:] - cu_seqlens[:-1]
    torch_compilable_check((segment_lengths == segment_lengths[0]).all(), "segments must be equal")
    assert len(cu_seqlens) > 1
    q = hidden_states.unflatten(0, (num_segments, seq_length // num_segments))
    return torch.nn.functional.scaled_dot_product_attention(q, q, q)


def varlen_loop(self, hidden_states, cu_seqlens):
    outputs = []
    for i in range(1, len(cu_seqlens)):
        outputs.append(self.attn(hidden_states[cu_seqlens[i - 1] : cu_seqlens[i]]))
    return torch.cat(outputs)


def checked_then_split(self, hidden_states, cu_seqlens):
    lengths = cu_seqlens[1:] - cu_seqlens[:-1]
    torch_compilable_check(lengths.min() > 0, "no empty segment")
    return torch.split(hidden_states, lengths.tolist())


def prepare_vision_inputs(model, inputs):
    inputs["cu_seqlens"] = torch.cumsum(inputs["grid_thw"].prod(-1), 0)
    cu_seqlens = inputs["cu_seqlens"]
    inputs["max_seqlen"] = (cu_seqlens[1:] - cu_seqlens[:-1]).max()


def prepare_and_return(model, inputs):
    inputs["cu_seqlens"] = torch.cumsum(inputs["grid_thw"].prod(-1), 0)
    return inputs
"""


def test_offsets_read_only_for_their_count_or_a_check_and_inputs_prepared_for_a_call_are_not_packing(
    tmp_path: Path,
) -> None:
    """An export-safe attention that reads ``cu_seqlens`` only for the number of segments (``.shape[0]``, ``len``)
    and for a check that they are equal (through one local) runs one fixed-shape computation: no finding. A def that
    fills its caller's ``inputs`` mapping with precomputed offsets and returns nothing prepares a later call, eagerly:
    ``host-side``. A real varlen loop slicing by the offsets, a local read by a check AND by a split, and a preparer
    that returns the mapping stay findings."""
    (tmp_path / "export.py").write_text(EXPORT)
    found = findings_in(tmp_path, "export.py")
    assert [f for f in found if f[2] is None and f[0] != "sdpa-attention"] == [
        ("varlen-packing", line, None) for line in (18, 20, 21, 25, 26, 38)
    ]
    assert [f for f in found if f[2] is not None] == [("varlen-packing", line, "host-side") for line in (32, 33, 34)]
    assert item_lines(tmp_path) == [
        ("file|varlen-packing|export.py", [18, 20, 21, 25, 26, 38]),
        ("repo|sdpa-attention", [15]),  # the attention a port runs: its speed is re-measured
    ]


NPU = """\
import torch

from .utils import is_flash_attn_available, is_torch_npu_available

if is_torch_npu_available():
    from torch_npu import npu_fusion_attention

if is_flash_attn_available():
    from flash_attn import flash_attn_varlen_func


def npu_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, causal=False):
    if not causal:
        out = npu_fusion_attention(q, k, v, actual_seq_qlen=tuple(cu_seqlens_q[1:].cpu().numpy().tolist()))
    else:
        out = npu_fusion_attention(q, k, v, actual_seq_kvlen=tuple(cu_seqlens_k[1:].cpu().numpy().tolist()))
    return out[0]


def flash_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k):
    return flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k)


def npu_or_eager(q, cu_seqlens_q, causal=False):
    if causal:
        return npu_fusion_attention(q, q, q, actual_seq_qlen=tuple(cu_seqlens_q[1:].tolist()))
    return torch.cat([q[a:b] for a, b in zip(cu_seqlens_q[:-1], cu_seqlens_q[1:])])
"""


def test_a_def_that_needs_a_kernel_imported_only_for_another_accelerator_is_that_backends_binding(
    tmp_path: Path,
) -> None:
    """``from torch_npu import npu_fusion_attention`` under ``if is_torch_npu_available():``, and a module-level def
    that calls it on every path (both branches): without an Ascend NPU the name is unbound and the def cannot run, so
    its lines are ``backend-branch``. A def calling a flash-attn kernel imported under its own probe (CUDA's path,
    the port's work) and a def that calls the NPU kernel on one branch only (the other path is generic) stay."""
    (tmp_path / "npu_attn.py").write_text(NPU)
    found = findings_in(tmp_path, "npu_attn.py")
    assert [f for f in found if f[0] == "varlen-packing"] == [
        ("varlen-packing", line, "backend-branch") for line in (12, 14, 16)
    ] + [("varlen-packing", line, None) for line in (20, 21, 24, 26, 27)]
    assert [key for key, _ in item_lines(tmp_path) if "varlen" in key] == ["file|varlen-packing|npu_attn.py"]
    assert dict(item_lines(tmp_path))["file|varlen-packing|npu_attn.py"] == [20, 21, 24, 26, 27]


DEVICES = """\
from contextlib import contextmanager

import torch


@contextmanager
def on_device(device):
    device_type = getattr(device, "type", None)
    if device_type == "cuda":
        with torch.cuda.device(device):
            yield
            return
    if device_type == "xpu":
        with torch.xpu.device(device):
            yield
            return
    yield


@contextmanager
def on_device_or_refuse(device):
    if device.type == "cuda":
        with torch.cuda.device(device):
            yield
            return
    if device.type == "xpu":
        with torch.xpu.device(device):
            yield
            return
    raise ValueError(f"unsupported device {device}")


@contextmanager
def cuda_only(device):
    if device.type == "cuda":
        with torch.cuda.device(device):
            yield
            return
    yield
"""


def test_consecutive_leaving_branches_on_two_device_types_with_a_generic_fall_through_are_a_dispatch(
    tmp_path: Path,
) -> None:
    """``if device_type == "cuda": with torch.cuda.device(device): yield; return``, its xpu twin, then a bare
    ``yield``: an if/elif/else dispatch written as early-leaving branches; the generic ``yield`` is what an XLA
    device takes, so the CUDA body is ``backend-branch``. The same run whose fall-through raises, and one lone
    leaving CUDA branch (scanfp2's ``only_cuda`` near miss), stay porting work."""
    (tmp_path / "devices.py").write_text(DEVICES)
    assert findings_in(tmp_path, "devices.py") == [
        ("torch-cuda-api", 10, "backend-branch"),
        ("torch-cuda-api", 23, None),
        ("torch-cuda-api", 36, None),
    ]
    assert item_lines(tmp_path) == [("file|device-placement|devices.py", [23, 36])]


@pytest.mark.parametrize("source", [EXPORT, NPU, DEVICES], ids=["export", "npu", "devices"])
def test_pruned_scan_equals_full_parse_on_scanfp12_classes(source: str) -> None:
    pruned = sorted((r, ln, m, str(ctx)) for r, ln, m, _, _, ctx in scan_python(source))
    full = sorted((r, ln, m, str(ctx)) for r, ln, m, _, _, ctx in scan_python(source, prune=False))
    assert pruned == full
