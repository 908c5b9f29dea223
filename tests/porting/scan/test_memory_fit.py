"""The ``memory-fit`` item (``scan/memory_fit.py``): a README that sizes its runs for more GPU memory than a trn1
NeuronCore's 16 GiB, read from the README and the root documents it links; near misses: a figure that fits, a figure
with no GPU word on its line (FLOPs), a model card's compute spent, a README that says nothing runs."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path


def _fit(root: Path) -> list[tuple[str, int, str]]:
    return [(f.file or "", f.line or 0, f.message) for f in scan_path(root, jobs=1).findings if f.rule == "memory-fit"]


def test_a_readme_sized_for_a_larger_gpu_is_one_memory_fit_item(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("print('train')\n")
    (tmp_path / "README.md").write_text(
        "# Train\n\n`python train.py`\n\n| Swin-B | 88M | 15.4G FLOPs |\n\nBatch sizes are for V100-16GB GPUs.\n"
        "See [HW](HARDWARE.md).\n"
    )
    (tmp_path / "HARDWARE.md").write_text(
        "Trained on 3.3M GPU hours of A100-80GB.\nWe fit batch 8 into a 40GB GPU RAM.\n"
    )
    assert _fit(tmp_path) == [("HARDWARE.md", 2, "runs sized for 40 GB of GPU memory; a trn1 NeuronCore has 16 GiB")]
    items = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "memory-fit"]
    assert [(i.severity, i.days_low, i.days_high) for i in items] == [("warning", 0.5, 2)]
    (tmp_path / "HARDWARE.md").write_text("A 12 GB GPU is enough.\n")
    assert _fit(tmp_path) == []  # every figure fits a NeuronCore
    (tmp_path / "HARDWARE.md").write_text("We fit batch 8 into a 40GB GPU RAM.\n")
    (tmp_path / "README.md").write_text("A library. See [HW](HARDWARE.md).\n")
    assert _fit(tmp_path) == []  # no command says what runs
