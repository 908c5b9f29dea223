"""Blocking from the default path of a library (issue 27): an optional model family chosen by a config value, the
kernels only it uses, and torch.cuda objects that raise without CUDA in modules the default path imports."""

from __future__ import annotations

import ast
from pathlib import Path

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.default_path import optional_classes

KERNEL = """\
import triton


@triton.jit
def {name}_kernel(x_ptr):
    pass


def {name}(x):
    {name}_kernel[(1,)](x)
    return x
"""

MODEL = """\
from pkg.layers.small import Small
from pkg.layers.big import Big
from pkg.layers.huge import Huge
from pkg.decode import decode


def create(cfg):
    layer = cfg.pop("layer", "Small")
    layers = {"Small": Small, "Big": Big, "Huge": Huge}
    return layers[layer]()
"""

DECODE = """\
import torch


def decode(x):
    start = torch.cuda.Event(enable_timing=False)
    return x
"""

ALT = """\
import torch
from pkg.ops.alt import alt


def timer():
    return torch.cuda.Event()
"""


def _tree(root: Path) -> Path:
    files = {
        "pkg/__init__.py": "from pkg.model import create\n",
        "pkg/model.py": MODEL,
        "pkg/decode.py": DECODE,
        "pkg/layers/__init__.py": "",
        "pkg/layers/small.py": "from pkg.ops.norm import norm\nclass Small: pass\n",
        "pkg/layers/big.py": "from pkg.ops.scan import scan\nclass Big: pass\n",
        "pkg/layers/huge.py": "from pkg.ops.scan import scan\nclass Huge: pass\n",
        "pkg/alt_module.py": ALT,  # nothing imports it, and no optional family uses its kernel
        "pkg/ops/__init__.py": "",
        "pkg/ops/norm.py": KERNEL.format(name="norm"),
        "pkg/ops/scan.py": KERNEL.format(name="scan"),
        "pkg/ops/alt.py": KERNEL.format(name="alt"),
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_a_class_map_indexed_by_a_defaulted_config_value_names_the_optional_families() -> None:
    assert optional_classes(ast.parse(MODEL)) == {"Big": "`cfg['layer']` is 'Big'", "Huge": "`cfg['layer']` is 'Huge'"}
    # no default (or a default outside the map): nothing is shown optional
    assert optional_classes(ast.parse(MODEL.replace('cfg.pop("layer", "Small")', 'cfg["layer"]'))) == {}
    assert optional_classes(ast.parse(MODEL.replace('"layer", "Small"', '"layer", "Tiny"'))) == {}


def test_kernels_only_optional_families_use_block_only_when_selected(tmp_path: Path) -> None:
    items = {i.key: (i.severity, i.reason) for i in scan_path(_tree(tmp_path), jobs=1).items}
    assert items["kernel|triton-kernel|pkg/ops/scan.py|*"] == (
        "warning",
        "optional model family: blocks when `cfg['layer']` is 'Big' or `cfg['layer']` is 'Huge'",
    )
    assert items["kernel|triton-kernel|pkg/ops/norm.py|*"][0] == "blocking"  # the default layer's kernel
    # a kernel no optional family uses keeps its severity, though the package does not import it
    assert items["kernel|triton-kernel|pkg/ops/alt.py|*"][0] == "blocking"


def test_a_cuda_event_built_in_a_module_the_default_path_imports_blocks(tmp_path: Path) -> None:
    log = scan_path(_tree(tmp_path), jobs=1)
    events = {(f.file, f.severity) for f in log.findings if f.message.startswith("torch.cuda.Event")}
    # pkg/decode.py is imported by pkg/model.py, which pkg/__init__.py imports; pkg/alt_module.py by nothing
    assert events == {("pkg/decode.py", "blocking"), ("pkg/alt_module.py", "warning")}
    items = {i.key: i for i in log.items}
    reason = items["file|device-placement|pkg/decode.py"].reason or ""
    assert reason.startswith("torch.cuda.Event raises on a torch build without CUDA") and reason.endswith(
        "pkg/decode.py:5"
    )


def test_a_module_imported_only_lazily_is_not_on_the_default_path(tmp_path: Path) -> None:
    """``import pkg`` runs its module-level imports; one inside ``if TYPE_CHECKING:`` or a def (a lazy-module table)
    runs nothing by default, so a ``torch.cuda.Event`` there stays a warning."""
    root = _tree(tmp_path)
    (root / "pkg/__init__.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.model import create\n"
    )
    events = {(f.file, f.severity) for f in scan_path(root, jobs=1).findings if f.message.startswith("torch.cuda.Ev")}
    assert events == {("pkg/decode.py", "warning"), ("pkg/alt_module.py", "warning")}


def test_a_kernel_a_default_module_imports_under_try_stays_on_the_default_path(tmp_path: Path) -> None:
    """The default layer imports its kernel inside ``try:`` (an availability guard): a default-path file uses it, so
    an optional family using it too does not make it optional."""
    root = _tree(tmp_path)
    (root / "pkg/layers/small.py").write_text(
        "try:\n    from pkg.ops.norm import norm\nexcept ImportError:\n    norm = None\nclass Small: pass\n"
    )
    (root / "pkg/layers/big.py").write_text(
        "from pkg.ops.scan import scan\nfrom pkg.ops.norm import norm\nclass Big: pass\n"
    )
    items = {i.key: i.severity for i in scan_path(root, jobs=1).items}
    assert items["kernel|triton-kernel|pkg/ops/norm.py|*"] == "blocking"
