"""The effort model in the log (issue 27): engineer-days per item as a range with its assumption, totals, the Neuron
stack assumed, XLA-era hazards labelled, and Triton kernels of one file as one family item."""

from __future__ import annotations

import json
from pathlib import Path

from accelpilot.porting.render import render_markdown
from accelpilot.porting.scan import scan_path

KERNELS = """\
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, n):
    pass


@triton.jit
def mul_kernel(x_ptr, n):
    pass
"""

MODEL = """\
import torch
from kernels import add_kernel


class Net(torch.nn.Module):
    def forward(self, x):
        add_kernel[(1,)](x, 4)
        if x.sum().item() > 0:
            return x
        return x.cuda()
"""


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "kernels.py").write_text(KERNELS)
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def test_the_triton_kernels_of_one_file_are_one_family_sized_by_its_kernels(tmp_path: Path) -> None:
    log = scan_path(_tree(tmp_path), jobs=1)
    [family] = [i for i in log.items if i.rule == "triton-kernel"]
    assert family.key == "kernel|triton-kernel|kernels.py|*"
    assert ("model.py", 7) in {(ln.file, ln.line) for ln in family.lines}  # the launch in another file joins it
    assert family.message.endswith("2 kernels: add_kernel, mul_kernel")
    # the table's row for one Triton kernel is 3-10 days; a second kernel of the family adds 0.25-1 day
    assert (family.days_low, family.days_high) == (3 + 0.25, 10 + 1)


def test_the_log_carries_ranges_totals_the_stack_and_its_rows(tmp_path: Path) -> None:
    log = scan_path(_tree(tmp_path), jobs=1)
    days = {i.rule: (i.days_low, i.days_high, i.era) for i in log.items}
    assert days == {
        "triton-kernel": (3.25, 11.0, None),
        "item-in-forward": (0.25, 3.0, "xla"),  # an XLA-era hazard: from checking the graph break to a rewrite
        "cuda-call": (0.1, 0.5, None),  # the 'hours' class: one edit and a re-run
    }
    s = log.summary
    assert (s.days_low, s.days_high) == (3.25 + 0.25 + 0.1, 11 + 3 + 0.5)
    assert (s.blocking_days_low, s.blocking_days_high) == (3.25, 11.0)  # the kernel family is the blocking item
    m = log.effort_model
    assert "TorchNeuron native" in m.neuron_stack and "2.32" in m.neuron_stack
    assert [r.rule for r in m.rows] == ["cuda-call", "item-in-forward", "triton-kernel"]
    assert all(r.assumption and r.basis for r in m.rows)
    data = json.loads(log.to_json())
    assert data["effort_model"]["rows"][2]["days_high"] == 10
    md = render_markdown(log)
    assert "## Effort model" in md and "Total: 3.6-14.5 engineer-days over 3 items; blocking items 3.25-11." in md
    assert "XLA-era hazard" in md


def test_an_item_that_falls_back_or_is_only_declared_takes_the_row_of_its_work(tmp_path: Path) -> None:
    """A kernel library every import of which has an ImportError fallback is measuring the fallback (0.5-2 d, not
    the library's 5-15 d); a package only declared in pyproject.toml is an edit of the dependency list (0.25-1 d);
    the log's effort model lists both rows. Stays: a library imported unguarded takes its rule's row."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["quack-kernels>=0.3"]\n')
    (tmp_path / "mixer.py").write_text(
        "try:\n    from causal_conv1d import causal_conv1d_fn\nexcept ImportError:\n    causal_conv1d_fn = None\n"
    )
    (tmp_path / "scan.py").write_text("import flashinfer\n")
    log = scan_path(tmp_path, jobs=1)
    days = {i.key.split("|")[2]: (i.severity, i.days_low, i.days_high) for i in log.items}
    assert days == {
        "causal_conv1d": ("warning", 0.5, 2),
        "quack_kernels": ("warning", 0.25, 1),
        "flashinfer": ("blocking", 5, 15),
    }
    rows = {r.rule: (r.days_low, r.days_high) for r in log.effort_model.rows}
    assert rows["(fallback off CUDA)"] == (0.5, 2) and rows["(declared only)"] == (0.25, 1)


def test_the_markdown_log_shows_the_exit_test_built_from_its_ranges(tmp_path: Path) -> None:
    from accelpilot.decide.exit_cost import REVALIDATION_DAYS as DECIDE_REVALIDATION
    from accelpilot.porting.effort import REVALIDATION_DAYS

    assert float(DECIDE_REVALIDATION) == REVALIDATION_DAYS
    md = render_markdown(scan_path(_tree(tmp_path), jobs=1))
    # items 3.25-11 (family of two kernels) + 0.25-3 (item-in-forward) + 0.1-0.5 (cuda-call) = 3.6-14.5 days;
    # 2 d re-validation + (3.6 + 14.5) / 2 = 2 + 9.05 = 11.05 (11.1 to one decimal: the float is 11.0500...07)
    assert "2 d re-validation + the midpoint of 3.6-14.5 = 11.1 engineer-days." in md
    assert "kernel families: the row of their first kernel, then each further kernel of the family 0.25-1 d" in md


def test_a_cuda_only_library_imported_only_where_it_is_used_is_an_optional_integration(tmp_path: Path) -> None:
    """yolov5's TensorRT: imported only inside the export function and the ``.engine`` branch of a backend, and no
    requirement installs it: an optional integration (0.25-1 d, with the reason), not the 3-10 d of replacing an
    engine the workload runs on. Stays: the same library imported at module level takes its rule's row."""
    (tmp_path / "export.py").write_text("def export_engine(model):\n    import tensorrt as trt\n    return trt\n")
    log = scan_path(tmp_path, jobs=1)
    [item] = [i for i in log.items if i.rule == "cuda-only-library"]
    assert (item.severity, item.days_low, item.days_high) == ("warning", 0.25, 1)
    assert item.reason is not None and item.reason.startswith("optional integration")
    assert {r.rule: (r.days_low, r.days_high) for r in log.effort_model.rows}["(optional integration)"] == (0.25, 1)
    (tmp_path / "serve.py").write_text("import tensorrt\n")
    [item] = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "cuda-only-library"]
    assert (item.days_low, item.days_high) == (3, 10) and item.severity == "blocking"


def test_a_training_runtime_only_an_alternative_path_uses_is_an_optional_integration(tmp_path: Path) -> None:
    """lit-llama imports DeepSpeed's zero_to_fp32 only inside the function that converts a multi-device checkpoint:
    an optional integration (0.25-1 d), not the 10-30 d of replacing the runtime a trainer stands on. Stays: the same
    runtime in the requirements (installed with the workload)."""
    (tmp_path / "convert.py").write_text(
        "def convert(path):\n    from deepspeed.utils.zero_to_fp32 import convert_zero_checkpoint_to_fp32_state_dict\n"
        "    return convert_zero_checkpoint_to_fp32_state_dict(path)\n"
    )
    [item] = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "deepspeed"]
    assert (item.severity, item.days_low, item.days_high) == ("warning", 0.25, 1)
    (tmp_path / "requirements.txt").write_text("deepspeed==0.12.6\n")
    [item] = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "deepspeed"]
    assert (item.days_low, item.days_high) != (0.25, 1)


NUMBA = """\
import numba
import numpy as np
from numba import cuda


@cuda.jit("(float32[:],)", device=True, inline=True)
def area(corners):
    return corners[0]


@cuda.jit("(float32[:], float32[:])", device=True, inline=True)
def inter(a, b):
    return area(a) + area(b)


@cuda.jit("(int64, float32[:], float32[:])")
def iou_kernel(n, boxes, out):
    i = cuda.threadIdx.x
    out[i] = inter(boxes, boxes)


def rotate_iou(boxes):
    out = np.zeros(4, dtype=np.float32)
    iou_kernel[1, 4](4, boxes, out)
    return out
"""


def test_the_numba_cuda_kernels_of_one_file_are_one_family_sized_by_the_kernels_it_launches(tmp_path: Path) -> None:
    """OpenPCDet's rotated IoU: numba device functions (``device=True``) are compiled into the one kernel launched
    with ``[grid]``, so the file is one item of one kernel (the numba row, 3-10 days), not three items."""
    (tmp_path / "rotate_iou.py").write_text(NUMBA)
    [family] = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "numba-cuda"]
    assert family.key == "kernel|numba-cuda|rotate_iou.py|*"
    assert family.title == "numba.cuda kernel: numba.cuda kernels of rotate_iou.py"
    assert (family.days_low, family.days_high) == (3, 10)


def test_a_library_only_an_unrun_script_imports_is_sized_as_an_alternative_command(tmp_path: Path) -> None:
    """YOLOX's ``tools/trt.py`` (TensorRT export, run by no README command, imported by no file): its TensorRT item
    blocks only when that script is run, and is sized as giving that command the target's equivalent (0.25-1 d),
    not as replacing a library the workload runs on (3-10 d). Near miss: the README runs the script."""
    (tmp_path / "README.md").write_text("Train with `python train.py`.\n")
    (tmp_path / "train.py").write_text("import torch\n\nif __name__ == '__main__':\n    print(1)\n")
    (tmp_path / "trt.py").write_text("import tensorrt\n\nif __name__ == '__main__':\n    print(tensorrt)\n")
    [item] = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "cuda-only-library"]
    assert item.severity == "warning" and (item.reason or "").startswith("blocks when trt.py is run")
    assert (item.days_low, item.days_high) == (0.25, 1)
    (tmp_path / "README.md").write_text("Train with `python train.py`, export with `python trt.py`.\n")
    [item] = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "cuda-only-library"]
    assert (item.days_low, item.days_high) == (3, 10)
