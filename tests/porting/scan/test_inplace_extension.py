"""HRNet's shape (issue 27, round 27): ``tools/_init_paths.py`` puts ``lib/`` on ``sys.path``, ``cd lib; make`` runs
``nms/setup_linux.py build_ext --inplace``, whose setuptools ``Extension`` compiles a ``.cu`` kernel, and the datasets
the README's script imports import that built module at module level. The extension is one blocking item holding its
CUDA source and the import, and the modules under ``lib/`` are on the run, not unreached."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.items import build_items
from accelpilot.porting.log import PortabilityLog
from accelpilot.porting.scan import scan_path

FILES = {
    "README.md": "# Pose\n\n```\ncd lib\nmake\ncd ..\npython tools/test.py --cfg w32.yaml\n```\n",
    "lib/Makefile": "all:\n\tcd nms; python setup_linux.py build_ext --inplace; cd ../../\n",
    "lib/nms/__init__.py": "",
    "lib/nms/nms_kernel.cu": "__global__ void nms_kernel(const float* boxes) {}\n",
    "lib/nms/gpu_nms.pyx": "def gpu_nms(dets, thresh):\n    return dets\n",
    "lib/nms/setup_linux.py": (
        "from setuptools import setup\nfrom distutils.extension import Extension\n\n"
        "CUDA = {'lib64': '/usr/local/cuda/lib64'}\n"
        "ext_modules = [\n"
        "    Extension('cpu_nms', ['cpu_nms.pyx']),\n"
        "    Extension('gpu_nms',\n        ['nms_kernel.cu', 'gpu_nms.pyx'],\n"
        "        library_dirs=[CUDA['lib64']],\n    ),\n]\n"
        "setup(name='nms', ext_modules=ext_modules)\n"
    ),
    "lib/nms/nms.py": "import numpy as np\nfrom .gpu_nms import gpu_nms\n\n\ndef nms(dets):\n    return gpu_nms(dets, 0.5)\n",
    "lib/dataset/__init__.py": "from .coco import COCODataset\n",
    "lib/dataset/coco.py": "from nms.nms import nms\n\n\nclass COCODataset:\n    pass\n",
    "lib/core/__init__.py": "",
    "lib/core/function.py": (
        "import torch\n\n\ndef validate(model, loader):\n    for x in loader:\n"
        "        out = model(x.cuda())\n        print(out.sum().item())\n"
    ),
    "tools/_init_paths.py": (
        "import os.path as osp\nimport sys\n\n\ndef add_path(path):\n    if path not in sys.path:\n"
        "        sys.path.insert(0, path)\n\n\nthis_dir = osp.dirname(__file__)\n"
        "lib_path = osp.join(this_dir, '..', 'lib')\nadd_path(lib_path)\n"
    ),
    "tools/test.py": (
        "import torch\nimport _init_paths\nimport dataset\nfrom core.function import validate\n\n\n"
        "def main():\n    validate(torch.nn.Linear(2, 2), [])\n\n\nif __name__ == '__main__':\n    main()\n"
    ),
}


def _scan(tmp_path: Path) -> PortabilityLog:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return scan_path(tmp_path, jobs=1)


def test_an_inplace_setuptools_cuda_extension_is_one_blocking_item_with_its_source(tmp_path: Path) -> None:
    log = _scan(tmp_path)
    ext = [it for it in build_items(log.findings) if it.rule == "cpp-extension-cuda"]
    assert len(ext) == 1 and ext[0].severity == "blocking"
    files = {ln.file for ln in ext[0].lines}
    assert {"lib/nms/nms.py", "lib/nms/nms_kernel.cu"} <= files
    assert "lib/nms/nms.py:2" in (ext[0].reason or "")
    # the host-only Cython extension beside it is no CUDA item
    assert not any("cpu_nms" in (f.message or "") for f in log.findings)


def test_the_folder_a_path_helper_adds_is_on_the_run(tmp_path: Path) -> None:
    log = _scan(tmp_path)
    core = [f for f in log.findings if f.file == "lib/core/function.py"]
    assert core and all(f.context != "unreached-module" for f in core)
