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


def test_a_separate_scripts_autocast_does_not_hide_the_default_paths_fp32(tmp_path: Path) -> None:
    """Time-Series-Library / CoTracker: the script the README runs trains in fp32 while another script (run by no
    README command) uses autocast; DLRM's ``quantize_dtype = torch.float16`` is inference quantization; LLaMA's
    ``set_default_tensor_type(torch.cuda.HalfTensor)`` is fp16 everywhere."""
    (tmp_path / "train.py").write_text(TRAIN + "\nquantize_dtype = torch.float16\n")
    (tmp_path / "README.md").write_text("Train with `python train.py`.\n")
    (tmp_path / "tools").mkdir()
    amp = "import torch\nfrom tools import helpers\n\nif __name__ == '__main__':\n    torch.autocast('cuda')\n"
    (tmp_path / "tools" / "train_amp.py").write_text(amp)
    (tmp_path / "tools" / "helpers.py").write_text("import torch\n\nDTYPE = torch.bfloat16\n")
    assert _fp32(tmp_path) == [("train.py", 6, "warning")]
    (tmp_path / "train.py").write_text("from tools import helpers\n" + TRAIN)
    assert _fp32(tmp_path) == []  # the default path imports the bf16 helper
    half = "import torch\n\ntorch.set_default_tensor_type(torch.cuda.HalfTensor)\n" + TRAIN
    (tmp_path / "train.py").write_text(half)
    assert _fp32(tmp_path) == []


def test_an_inference_example_in_fp32_is_the_item_at_its_forward(tmp_path: Path) -> None:
    """Point-E / SAM: a README example that runs a model under ``no_grad`` with no precision named anywhere."""
    readme = "# Lib\n\n## Usage\n\n```python\nfrom lib import predict\n\npredict('x.png')\n```\n"
    code = "import torch\n\n\ndef predict(path):\n    with torch.no_grad():\n        return torch.ones(2)\n"
    (tmp_path / "README.md").write_text(readme)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "__init__.py").write_text(code)
    assert _fp32(tmp_path) == [("lib/__init__.py", 5, "warning")]
    found = next(f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "fp32-training")
    assert found.message.startswith("inference in fp32")
    (tmp_path / "lib" / "__init__.py").write_text(code.replace("torch.ones(2)", "torch.ones(2).half()"))
    assert _fp32(tmp_path) == []
