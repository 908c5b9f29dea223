"""A kernel launched, or a CUDA extension built, only when the tensor is on CUDA with a fallback in a caller in
another file is a performance item naming the fallback (issue 27); a chain with an unguarded call stays blocking."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path

LOADER = """\
import torch.utils.cpp_extension


def get_plugin(module_name, sources, **kwargs):
    return torch.utils.cpp_extension.load(name=module_name, sources=sources, **kwargs)
"""

WRAPPER = """\
import os
from .. import custom_ops

_plugin = None


def _init():
    global _plugin
    sources = ['fused.cpp', 'fused.cu']
    sources = [os.path.join(os.path.dirname(__file__), s) for s in sources]
    _plugin = custom_ops.get_plugin('fused_plugin', sources=sources)
    return _plugin is not None


def fused(x, impl='cuda'):
    if impl == 'cuda' and x.device.type == 'cuda' and _init():
        return _plugin.fused(x)
    return _fused_ref(x)


def _fused_ref(x):
    return x * 2
"""

UNGUARDED_WRAPPER = WRAPPER.replace("impl == 'cuda' and x.device.type == 'cuda' and _init()", "_init()")


def _plugin_tree(root: Path, wrapper: str) -> None:
    (root / "lib/ops").mkdir(parents=True)
    (root / "lib/__init__.py").write_text("")
    (root / "lib/ops/__init__.py").write_text("")
    (root / "lib/custom_ops.py").write_text(LOADER)
    (root / "lib/ops/fused.py").write_text(wrapper)
    (root / "lib/ops/fused.cu").write_text("__global__ void k() {}\n")


def test_a_plugin_built_only_on_a_cuda_tensor_is_a_performance_item_naming_the_fallback(tmp_path: Path) -> None:
    """The loader (``load()`` in lib/custom_ops.py), the call naming the plugin and its ``.cu`` are one item, a
    warning whose reason names ``_fused_ref``: ``_init()`` runs only after ``x.device.type == 'cuda'``."""
    _plugin_tree(tmp_path, WRAPPER)
    items = [i for i in scan_path(tmp_path, jobs=1).items if i.key.startswith("kernel|")]
    assert [(i.key, i.severity, i.reason) for i in items] == [
        (
            "kernel|cpp-extension-cuda|lib/ops/fused.py|fused_plugin",
            "warning",
            "performance item: off CUDA the fallback runs (`return _fused_ref(...)`)",
        )
    ]
    lines = {(ln.file, ln.line) for ln in items[0].lines}
    assert lines == {("lib/custom_ops.py", 5), ("lib/ops/fused.py", 11), ("lib/ops/fused.cu", None)}


def test_a_plugin_built_without_a_device_test_stays_blocking(tmp_path: Path) -> None:
    _plugin_tree(tmp_path, UNGUARDED_WRAPPER)
    blocking = [i.key for i in scan_path(tmp_path, jobs=1).items if i.severity == "blocking"]
    assert blocking == ["kernel|cpp-extension-cuda|lib/ops/fused.py|fused_plugin"]


KERNELS = """\
import triton
import triton.language as tl


@triton.jit
def dtw_kernel(x_ptr, n):
    pass
"""

TIMING = """\
import warnings


def dtw_cuda(x):
    from .kernels import dtw_kernel

    dtw_kernel[(1,)](x, 4)
    return x


def dtw(x):
    if x.is_cuda:
        try:
            return dtw_cuda(x)
        except RuntimeError:
            warnings.warn("falling back")
    return dtw_cpu(x.cpu().numpy())


def dtw_cpu(x):
    return x
"""


def _triton_tree(root: Path, timing: str) -> list[tuple[str, str, str | None]]:
    (root / "pkg").mkdir()
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/kernels.py").write_text(KERNELS)
    (root / "pkg/timing.py").write_text(timing)
    return [(i.key, i.severity, i.reason) for i in scan_path(root, jobs=1).items if i.key.startswith("kernel|")]


def test_a_launch_whose_caller_tests_is_cuda_and_falls_back_is_a_performance_item(tmp_path: Path) -> None:
    """The launch sits unguarded in ``dtw_cuda``; its only caller runs it under ``x.is_cuda`` inside a ``try`` that
    returns, and the code after returns ``dtw_cpu(...)``."""
    assert _triton_tree(tmp_path, TIMING) == [
        (
            "kernel|triton-kernel|pkg/kernels.py|*",
            "warning",
            "performance item: off CUDA the fallback runs (`return dtw_cpu(...)`)",
        )
    ]


def test_a_launch_whose_caller_has_no_fallback_stays_blocking(tmp_path: Path) -> None:
    """``if x.is_cuda: dtw_cuda(x)`` with nothing that stands in for it is no fallback; nor is an uncalled wrapper."""
    no_fallback = TIMING.replace("            return dtw_cuda(x)", "            y = dtw_cuda(x)")
    no_fallback = no_fallback.replace("    return dtw_cpu(x.cpu().numpy())", "    return x")
    [(_, severity, _)] = _triton_tree(tmp_path, no_fallback)
    assert severity == "blocking"


def test_a_launch_nobody_calls_stays_blocking(tmp_path: Path) -> None:
    [(_, severity, _)] = _triton_tree(tmp_path, TIMING.replace("return dtw_cuda(x)", "return None"))
    assert severity == "blocking"


SWIN = {
    "kernels/window_process/setup.py": "from setuptools import setup\n"
    "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
    "setup(name='swin_window_process', ext_modules=[CUDAExtension('swin_window_process', "
    "['swin_window_process.cpp', 'swin_window_process_kernel.cu'])], cmdclass={'build_ext': BuildExtension})\n",
    "kernels/window_process/swin_window_process_kernel.cu": "__global__ void roll_and_window_partition() {}\n",
    "kernels/window_process/window_process.py": "import torch\nimport swin_window_process\n\n"
    "class WindowProcess(torch.autograd.Function):\n    pass\n",
    "models/swin.py": "try:\n    from kernels.window_process.window_process import WindowProcess\n"
    "except:\n    WindowProcess = None\n",
}


def _extension_items(root: Path) -> list[tuple[str, str | None]]:
    log = scan_path(root, jobs=1)
    return [(i.severity, i.reason) for i in log.items if i.rule in ("cuda-source-file", "cpp-extension-cuda")]


def test_an_extension_whose_wrapper_is_imported_only_under_a_fallback_is_optional(tmp_path: Path) -> None:
    """Swin's window_process: the wrapper imports the built extension at module level, but the model imports the
    wrapper only in ``try:``/``except:`` (``WindowProcess = None``): an optional path (0.5-2 d), with the import that
    guards it. Near miss: one unguarded import of the wrapper keeps the extension blocking."""
    for rel, text in SWIN.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    [(severity, reason)] = _extension_items(tmp_path)
    assert severity == "warning"
    assert reason == (
        "optional path behind an availability check or an ImportError fallback: every import of "
        "kernels/window_process/window_process.py is guarded (models/swin.py:2)"
    )
    (tmp_path / "main.py").write_text("from kernels.window_process.window_process import WindowProcess\n")
    [(severity, _)] = _extension_items(tmp_path)
    assert severity == "blocking"


SAM2 = {
    "setup.py": "from setuptools import setup\n\ndef get_extensions():\n    try:\n"
    "        from torch.utils.cpp_extension import CUDAExtension\n"
    "        srcs = ['pkg/csrc/cc.cu']\n        return [CUDAExtension('pkg._C', srcs)]\n"
    "    except Exception:\n        return []\n\nsetup(name='pkg', ext_modules=get_extensions())\n",
    "pkg/csrc/cc.cu": "__global__ void label_components() {}\n",
    "pkg/misc.py": "import warnings\n\n\ndef components(mask):\n    from pkg import _C\n\n"
    "    return _C.components(mask)\n\n\ndef fill_holes(mask):\n    try:\n        labels = components(mask)\n"
    "    except Exception as e:\n        warnings.warn(str(e))\n        labels = None\n    return labels\n",
    "demo.py": "from pkg.misc import fill_holes\n\nprint(fill_holes(None))\n",
    "README.md": "Run `python demo.py`.\n",
}


def test_an_extension_imported_in_a_function_whose_callers_catch_its_failure_is_a_performance_item(
    tmp_path: Path,
) -> None:
    """SAM 2's ``get_connected_components``: ``from sam2 import _C`` inside the function, every call of it in a
    ``try`` whose ``except Exception`` warns and skips the step. One item (the build, its source named through
    ``srcs``), a performance item naming the handler. Near miss: a caller outside any ``try`` keeps it blocking."""
    for rel, text in SAM2.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    log = scan_path(tmp_path, jobs=1)
    [item] = [i for i in log.items if i.rule in ("cuda-source-file", "cpp-extension-cuda")]
    assert item.severity == "warning"
    assert item.reason == "performance item: off CUDA the fallback runs (`except Exception: warnings.warn(...)`)"
    assert "pkg/csrc/cc.cu" in {ln.file for ln in item.lines}
    (tmp_path / "demo.py").write_text("from pkg.misc import components, fill_holes\n\nprint(components(None))\n")
    [item] = [i for i in scan_path(tmp_path, jobs=1).items if i.rule in ("cuda-source-file", "cpp-extension-cuda")]
    assert item.severity == "blocking"
