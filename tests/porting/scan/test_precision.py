"""The ``fp32-training`` item (``scan/precision.py``): a repository whose README runs a training step and whose code
names no precision (no autocast, bf16 or fp16) gets one item at an entry point's step; near misses: a precision named
anywhere in the code, a precision word only in a comment (still fp32), a repository with no command (a library)."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path

TRAIN = """import torch


def step(model, x, opt):
    loss = model(x).sum()
    loss.backward()  # fp16 would overflow here
    opt.step()
"""


def _fp32(root: Path) -> list[tuple[str, int, str]]:
    return [
        (f.file or "", f.line or 0, f.severity) for f in scan_path(root, jobs=1).findings if f.rule == "fp32-training"
    ]


def test_a_training_step_with_no_precision_anywhere_is_one_item(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "engine.py").write_text(TRAIN)
    (tmp_path / "README.md").write_text("Train with `python train.py`.\n")
    assert _fp32(tmp_path) == [("train.py", 6, "warning")]
    items = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "fp32-training"]
    assert [(i.days_low, i.days_high) for i in items] == [(0.5, 1.5)]
    (tmp_path / "lib" / "amp.py").write_text("import torch\n\nctx = torch.autocast('cuda', dtype=torch.bfloat16)\n")
    assert _fp32(tmp_path) == []  # the repository names a precision: its own items say what to do
    (tmp_path / "lib" / "amp.py").unlink()
    (tmp_path / "README.md").write_text("A library: `import lib`.\n")
    assert _fp32(tmp_path) == []  # no command says what runs
