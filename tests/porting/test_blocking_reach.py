"""Blocking means it stops the default path (issue 27): a kernel whose every launch is behind a fast-path flag or
has a fallback off CUDA is a warning that says which; one launched unguarded somewhere stays blocking."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path

GUARDED = """\
import torch
import triton


@triton.jit
def fast_kernel(x_ptr, n):
    pass


@triton.jit
def flag_kernel(x_ptr, n):
    pass


def fast(x):
    if x.is_cuda:
        fast_kernel[(1,)](x, 4)
    else:
        x = x * 2
    return x


def early(x):
    if x.is_cuda:
        fast_kernel[(1,)](x, 4)
        return x
    return x * 2


class Block(torch.nn.Module):
    def forward(self, x):
        if self.use_fast_path:
            flag_kernel[(1,)](x, 4)
        return x
"""

UNGUARDED = """\
import torch
import triton


@triton.jit
def needed_kernel(x_ptr, n):
    pass


def run(x):
    if x.is_cuda:
        needed_kernel[(1,)](x, 4)
    return x


def always(x):
    needed_kernel[(1,)](x, 4)
    return x
"""


def test_a_kernel_behind_a_flag_or_with_a_fallback_is_a_warning_naming_it(tmp_path: Path) -> None:
    (tmp_path / "kern.py").write_text(GUARDED)
    [item] = scan_path(tmp_path, jobs=1).items
    launches = {ln.line: (ln.severity, ln.reason) for ln in item.lines if ln.message.startswith("launches")}
    assert launches == {
        17: ("warning", "performance item: off CUDA the fallback runs (`x = x * 2`)"),
        25: ("warning", "performance item: off CUDA the fallback runs (`return x * 2`)"),
        33: ("warning", "blocks when `self.use_fast_path` is set: the kernel runs only under this flag"),
    }
    assert item.severity == "warning"
    assert item.reason is not None and "blocks when `self.use_fast_path` is set" in item.reason


def test_a_kernel_launched_without_a_fallback_somewhere_stays_blocking(tmp_path: Path) -> None:
    """A CUDA test with nothing after it is no fallback (the default path needs the kernel on CUDA and skips work
    elsewhere silently, a requirement), and one unguarded launch keeps the item blocking; the item says so and names
    the first line that reaches it."""
    (tmp_path / "kern.py").write_text(UNGUARDED)
    [item] = scan_path(tmp_path, jobs=1).items
    launches = {ln.line: ln.severity for ln in item.lines if ln.message.startswith("launches")}
    assert launches == {12: "blocking", 17: "blocking"}
    assert (item.severity, item.reason) == (
        "blocking",
        "on the default path: launches kernel needed_kernel[grid](...) (kern.py) at kern.py:12 (no flag, fallback or "
        "guard)",
    )


TRAINER = """\
import deepspeed
from megatron.core import parallel_state

try:
    import apex
except ImportError:
    apex = None


def build():
    import bitsandbytes

    return deepspeed.initialize(), parallel_state, apex, bitsandbytes
"""


def test_a_runtime_imported_at_module_level_without_a_guard_blocks_and_is_weeks_of_work(tmp_path: Path) -> None:
    """DeepSpeed and Megatron imported at the top of a trainer: the default path does not even import without them,
    so each is one blocking item sized as replacing a training runtime (10-30 engineer-days). Stay warnings: a
    package behind an ImportError fallback, and one imported inside a function."""
    (tmp_path / "trainer.py").write_text(TRAINER)
    items = {i.key: (i.severity, i.days_low, i.days_high) for i in scan_path(tmp_path, jobs=1).items}
    assert items == {
        "package|deepspeed|deepspeed": ("blocking", 10, 30),
        "package|training-runtime|megatron": ("blocking", 10, 30),
        "package|apex|apex": ("warning", 1, 5),
        "package|bitsandbytes|bitsandbytes": ("warning", 3, 10),
    }


def test_example_and_demo_code_is_listed_apart(tmp_path: Path) -> None:
    """Issue 27: examples and demos (``examples/``, ``demo/``, ``demo_*.py``, ``*_demo.py``) are run by hand: their
    lines are counted apart as ``example``, never blocking and no item. Stays: the same code in the package."""
    code = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n"
    for rel in ("examples/run.py", "demo/app.py", "scripts/demo_infer.py", "tools/viz_demo.py", "pkg/model.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code)
    log = scan_path(tmp_path, jobs=1)
    contexts = {f.file: (f.context, f.porting) for f in log.findings}
    assert contexts == {
        "demo/app.py": ("example", False),
        "examples/run.py": ("example", False),
        "pkg/model.py": (None, True),
        "scripts/demo_infer.py": ("example", False),
        "tools/viz_demo.py": ("example", False),
    }
    assert [i.key for i in log.items] == ["file|device-placement|pkg/model.py"]
    assert log.summary.not_porting == {"example": 4}
