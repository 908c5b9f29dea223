"""A setup.py that builds its CUDA extension through a name bound to ``CUDAExtension`` and globs its sources
(``scan/setup_ext.py``; GroundingDINO's and Deformable-DETR's detectron2-style builds): one extension item joining the
build, its CUDA sources under the globbed folder and its importers; a warning where the name is a CUDA builder only
under a CUDA test whose other arm builds without it, the build line blocking where that arm raises."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import write_tree

from accelpilot.porting.scan import scan_path

SETUP = """\
import glob
import os

import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension


def get_extensions():
    this_dir = os.path.dirname(os.path.abspath(__file__))
    extensions_dir = os.path.join(this_dir, "pkg", "csrc")
    sources = glob.glob(os.path.join(extensions_dir, "*.cpp"))
    source_cuda = glob.glob(os.path.join(extensions_dir, "**", "*.cu"))
    extension = CppExtension
    if CUDA_HOME is not None and torch.cuda.is_available():
        extension = CUDAExtension
        sources += source_cuda
    else:
        return None
    return [extension("pkg._C", sources)]


setup(name="pkg", ext_modules=get_extensions())
"""
OPS = """\
import torch
try:
    from pkg import _C
except ImportError:
    _C = None


def attn(x):
    if torch.cuda.is_available() and x.is_cuda:
        return _C.forward(x)
    return x * 2
"""


def _tree(root: Path, setup: str) -> Path:
    files = {
        "setup.py": setup,
        "README.md": "Install with `pip install -e .`, then run `python demo.py`.\n",
        "demo.py": "import torch\nfrom pkg.ops import attn\n\nprint(attn(torch.ones(2)))\n",
        "pkg/__init__.py": "",
        "pkg/ops.py": OPS,
        "pkg/csrc/vision.cpp": "// host\n",
        "pkg/csrc/attn/attn_cuda.cu": "__global__ void k() {}\n",
        "pkg/csrc/attn/attn_cuda.cuh": "// header\n",
    }
    return write_tree(root, files)


def _kernel_items(root: Path) -> list[tuple[str, str]]:
    items = scan_path(root, jobs=1).items
    return sorted((i.title, i.severity) for i in items if i.rule in ("cpp-extension-cuda", "cuda-source-file"))


def test_a_cuda_build_only_where_cuda_is_present_is_one_warning_item(tmp_path: Path) -> None:
    root = _tree(tmp_path, SETUP)
    titles = _kernel_items(root)
    assert ("CUDA C++ extension: kernel pkg._C (setup.py)", "warning") in titles
    assert not any(t.startswith("CUDA source file") for t, _ in titles)  # the sources joined the extension
    lines = {(f.file, f.rule): f for f in scan_path(root, jobs=1).findings if f.subject == "pkg._C"}
    assert (lines[("setup.py", "cpp-extension-cuda")].reason or "").startswith(
        "setup.py builds pkg._C with CUDA only when"
    )
    assert lines[("pkg/csrc/attn/attn_cuda.cu", "cuda-source-file")].severity == "warning"


def test_a_build_whose_other_arm_raises_blocks(tmp_path: Path) -> None:
    root = _tree(tmp_path, SETUP.replace("        return None\n", "        raise NotImplementedError('Cuda')\n"))
    build = next(f for f in scan_path(root, jobs=1).findings if f.file == "setup.py" and f.subject == "pkg._C")
    assert build.severity == "blocking"


def test_an_extension_only_a_nested_setup_script_builds_and_nothing_imports_blocks_when_run(tmp_path: Path) -> None:
    """llm-awq's ``awq/kernels/csrc/attention/setup.py`` builds ``ft_attention``, which no file imports. Near
    misses: the same build in the root ``setup.py`` (installing the package runs it), and an import of it."""
    nested = (
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n\n"
        "setup(name='ft', ext_modules=[CUDAExtension('ft_attention', ['ft.cu'])])\n"
    )
    files = {
        "pyproject.toml": "[project]\nname = 'thing'\n",  # a package, as llm-awq is
        "README.md": "Run `python demo.py`.\n",
        "demo.py": "import torch\nprint(torch.ones(1))\n",
        "kernels/attention/setup.py": nested,
        "kernels/attention/ft.cu": "__global__ void k() {}\n",
    }
    write_tree(tmp_path, files)

    def ft() -> tuple[str, str]:
        item = next(i for i in scan_path(tmp_path, jobs=1).items if "ft_attention" in i.title)
        return item.severity, item.reason or ""

    severity, reason = ft()
    assert severity == "warning" and reason.startswith("blocks when kernels/attention/setup.py is run")
    (tmp_path / "demo.py").write_text("import torch\nimport ft_attention\nprint(torch.ones(1))\n")
    assert ft()[0] == "blocking"  # imported at the top of the README's script
