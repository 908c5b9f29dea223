"""timm's Mixup on a pinned timm before 0.5 (``scan/timm_pins.py``): its soft targets default to ``device='cuda'``
(read in the 0.3.2 and 0.4.12 wheels), so the default path's Mixup line blocks."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path

MAIN = (
    "import torch\nfrom timm.data import Mixup\n\n"
    "def main(args):\n    mixup_fn = Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, num_classes=1000)\n"
    "    for samples, targets in loader:\n        samples, targets = mixup_fn(samples, targets)\n\n"
    "if __name__ == '__main__':\n    main(None)\n"
)


def _tree(root: Path, install: str) -> Path:
    (root / "README.md").write_text("# vit\n\nSee [INSTALL.md](INSTALL.md).\n\n```\npython main.py --model vit\n```\n")
    (root / "INSTALL.md").write_text(f"# Install\n\n```\n{install}\n```\n")
    (root / "main.py").write_text(MAIN)
    return root


def _mixup(root: Path) -> list[tuple[str | None, str, str | None]]:
    return [(f.file, f.severity, f.reason) for f in scan_path(root, jobs=1).findings if f.rule == "device-augmentation"]


def test_mixup_blocks_on_a_pinned_timm_before_0_5(tmp_path: Path) -> None:
    """ConvNeXt's INSTALL.md: ``pip install timm==0.3.2``, and ``Mixup`` called in the entry point's loop. Near
    misses: ``timm==0.5.4`` (it passes the batch's device), and no pin at all (a warning, as before)."""
    [(file, severity, reason)] = _mixup(_tree(tmp_path, "pip install timm==0.3.2 tensorboardX six"))
    assert (file, severity) == ("main.py", "blocking")
    assert reason is not None and reason.startswith("timm 0.3.2 (pinned at INSTALL.md:4)")
    assert [s for _, s, _ in _mixup(_tree(tmp_path, "pip install timm==0.5.4"))] == ["warning"]
    assert [s for _, s, _ in _mixup(_tree(tmp_path, "pip install tensorboardX"))] == ["warning"]


def test_a_version_assert_is_a_pin(tmp_path: Path) -> None:
    """MAE's ``assert timm.__version__ == "0.3.2"`` in every entry point."""
    _tree(tmp_path, "pip install tensorboardX")
    (tmp_path / "main.py").write_text('import timm\nassert timm.__version__ == "0.3.2"\n' + MAIN)
    assert [s for _, s, _ in _mixup(tmp_path)] == ["blocking"]


def test_a_mixup_built_in_the_data_module_is_the_training_loops(tmp_path: Path) -> None:
    """Swin builds its Mixup in ``data/build.py`` (a host-side path) and applies it to the device batch in
    ``main.py``'s loop: the line is no host-side code, and blocks on Swin's pinned ``timm==0.4.12``."""
    _tree(tmp_path, "pip install timm==0.4.12")
    (tmp_path / "data").mkdir()
    (tmp_path / "data/__init__.py").write_text("")
    (tmp_path / "data/build.py").write_text(
        "from timm.data import Mixup\n\ndef build_loader(config):\n"
        "    mixup_fn = Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, num_classes=1000)\n    return mixup_fn\n"
    )
    (tmp_path / "main.py").write_text(
        "import torch\nfrom data.build import build_loader\n\ndef main(config):\n    mixup_fn = build_loader(config)\n"
        "    for samples, targets in loader:\n        samples, targets = mixup_fn(samples, targets)\n\n"
        "if __name__ == '__main__':\n    main(None)\n"
    )
    assert [(file, severity) for file, severity, _ in _mixup(tmp_path)] == [("data/build.py", "blocking")]
