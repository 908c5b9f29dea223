"""flash-attention's csrc extensions imported by module name (TinyLlama's lit_gpt, round 5): one item each, sized as
swapping the stock PyTorch op back in (``effort.EAGER_EQUIVALENT``), not as writing a kernel."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.items import build_items
from accelpilot.porting.scan import scan_path


def test_flash_attention_csrc_extensions_are_items_sized_as_an_op_swap(tmp_path: Path) -> None:
    pkg = tmp_path / "lit_gpt"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from lit_gpt.rmsnorm import FusedRMSNorm\n")
    (pkg / "rmsnorm.py").write_text(
        "import torch\nimport dropout_layer_norm\n\nclass FusedRMSNorm(torch.nn.Module):\n    pass\n"
    )
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='lit_gpt')\n")
    items = [i for i in build_items(scan_path(tmp_path, jobs=1).findings) if i.rule == "cuda-kernel-library"]
    assert [(i.severity, i.days_low, i.days_high) for i in items] == [("blocking", 0.5, 2)]
    assert "torch's LayerNorm/RMSNorm" in (items[0].assumption or "")
