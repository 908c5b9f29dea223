"""One item per extension built two ways (``scan/ext_join.py``): Pointnet2_PyTorch's ``setup.py`` extension, its
just-in-time ``load()`` fallback in the ImportError handler of the import, and its CUDA sources named by a glob."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path

UTILS = """\
import warnings
try:
    import ops._ext as _ext
except ImportError:
    from torch.utils.cpp_extension import load
    import glob
    warnings.warn("JIT compiling")
    _ext = load("_ext", sources=glob.glob("_ext-src/src/*.cu"), with_cuda=True)


def furthest_point_sample(xyz, n):
    return _ext.furthest_point_sampling(xyz, n)
"""
SETUP = """\
import glob
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

srcs = glob.glob("ops/_ext-src/src/*.cu")
setup(name="ops", ext_modules=[CUDAExtension(name="ops._ext", sources=srcs)], cmdclass={"build_ext": BuildExtension})
"""


def _items(root: Path, files: dict[str, str]) -> list[tuple[str, str]]:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    log = scan_path(root, jobs=1)
    return sorted((i.rule, i.title) for i in log.items if i.rule in ("cpp-extension-cuda", "cuda-source-file"))


def test_a_jit_fallback_of_the_built_extension_and_its_globbed_sources_are_one_item(tmp_path: Path) -> None:
    """The ``load("_ext")`` in the handler of ``import ops._ext`` builds the same extension, and the ``.cu`` files
    below ``lib/`` (the setup.py's folder, which builds nothing else) are its sources: one item. Near miss: a
    ``load()`` of another name stays its own extension."""
    files = {
        "lib/setup.py": SETUP,
        "lib/ops/__init__.py": "",
        "lib/ops/utils.py": UTILS,
        "lib/ops/_ext-src/src/sampling_gpu.cu": "__global__ void fps() {}\n",
        "train.py": "from ops.utils import furthest_point_sample\n",
    }
    assert _items(tmp_path / "a", files) == [
        ("cpp-extension-cuda", "CUDA C++ extension: kernel ops._ext (lib/setup.py)")
    ]
    files["lib/ops/utils.py"] = UTILS.replace('load("_ext"', 'load("_other"').replace("_ext.furthest", "_other.f")
    titles = [t for _, t in _items(tmp_path / "b", files)]
    assert len(titles) == 2 and "CUDA C++ extension: kernel _other (lib/ops/utils.py)" in titles
