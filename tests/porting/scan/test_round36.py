"""Round 36's tuning fixes (issue 27): Person_reID's optional GPU re-ranking folder builds two CUDA extensions with
its own ``setup.py`` files, run by the folder's ``make.sh``, which the README never names."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import write_tree

from accelpilot.porting.items import build_items
from accelpilot.porting.scan import scan_path

_RERANK = {
    "train.py": "import torch\n\nmodel = torch.nn.Linear(2, 2)\n",
    "rerank/evaluate_gpu.py": "from gnn import rerank\n\nif __name__ == '__main__':\n    rerank()\n",
    "rerank/gnn.py": "import adjacency\n\ndef rerank():\n    return adjacency.forward()\n",
    "rerank/extension/adj/setup.py": "from setuptools import setup\n"
    "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
    "setup(name='adjacency', ext_modules=[CUDAExtension('adjacency', ['adj.cpp', 'adj_kernel.cu'])],\n"
    "      cmdclass={'build_ext': BuildExtension})\n",
    "rerank/extension/adj/adj.cpp": "int f() { return 0; }\n",
    "rerank/extension/adj/adj_kernel.cu": "__global__ void k() {}\n",
    "rerank/extension/make.sh": "cd adj\npython setup.py install\n",
}


def _kernel_items(tmp_path: Path, readme: str) -> list[tuple[str, str]]:
    root = write_tree(tmp_path, {"README.md": readme, **_RERANK})
    items = build_items(scan_path(root, jobs=1).findings)
    return [(i.rule, i.severity) for i in items if any((ln.file or "").endswith(".cu") for ln in i.lines)]


def test_a_cuda_source_built_only_by_an_unnamed_folders_setup_is_on_no_path(tmp_path: Path) -> None:
    """The build script, its importer and the script importing that are on no path, and no README line names the
    build's folder: its CUDA source is no porting item (it was a blocking one, "on the default path")."""
    assert _kernel_items(tmp_path, "```\npython train.py\n```\nGPU re-ranking: see [rerank](rerank/).\n") == []


def test_a_build_folder_the_readme_installs_keeps_its_kernel(tmp_path: Path) -> None:
    """Near miss (RAFT's ``cd alt_cuda_corr && python setup.py install``): a README line naming the folder is an
    install step that runs the build, so the CUDA source stays an item."""
    readme = "```\ncd adj && python setup.py install\npython train.py\n```\n"
    assert [rule for rule, _ in _kernel_items(tmp_path, readme)] == ["cuda-source-file"]


def test_a_mask_bound_to_a_numpy_call_indexes_host_data(tmp_path: Path) -> None:
    """Person_reID's ``compute_mAP(index, good_index, junk_index)``: ``mask = np.in1d(index, junk_index)`` then
    ``index[mask]``, ``index`` a parameter: a numpy mask selects host data, no device hazard. Near miss: a mask a
    torch comparison makes (``pos_mask = scores > 0``) is still boolean-mask indexing."""
    src = (
        "import numpy as np\nimport torch\n\n\n"
        "def compute_map(index, junk_index, scores):\n"
        "    mask = np.in1d(index, junk_index, invert=True)\n"
        "    index = index[mask]\n"
        "    pos_mask = scores > 0\n"
        "    return index, scores[pos_mask]\n"
    )
    root = write_tree(tmp_path, {"README.md": "```\npython evaluate.py\n```\n", "evaluate.py": src})
    lines = [f.line for f in scan_path(root, jobs=1).findings if f.rule == "boolean-mask-index"]
    assert lines == [9]


def test_a_setup_name_held_in_a_module_constant_is_the_distribution_the_readme_installs(tmp_path: Path) -> None:
    """facenet-pytorch's ``setup.py``: ``PACKAGE_NAME = 'facenet-pytorch'`` then ``setuptools.setup(name=PACKAGE_NAME,
    install_requires=['torch>=2.2.0,<=2.3.0'])``; the README's ``pip install facenet-pytorch`` installs those pins,
    so the torch pin blocks. Near miss: a README installing another package leaves the pin a warning."""
    setup = (
        "import setuptools\n\nPACKAGE_NAME = 'facenet-pytorch'\n\n"
        "setuptools.setup(\n    name=PACKAGE_NAME,\n    install_requires=['torch>=2.2.0,<=2.3.0'],\n)\n"
    )

    def pin(readme: str, where: Path) -> list[str]:
        root = write_tree(where, {"README.md": readme, "setup.py": setup, "mtcnn.py": "import torch\n"})
        return [f.severity for f in scan_path(root, jobs=1).findings if f.rule == "install-pin"]

    assert pin("```\npip install facenet-pytorch\n```\n", tmp_path / "a") == ["blocking"]
    assert pin("```\npip install other-package\n```\n", tmp_path / "b") == ["warning"]


def test_tensorboard_logger_imported_by_an_entry_point_blocks_on_a_current_protobuf(tmp_path: Path) -> None:
    """RepDistiller's ``import tensorboard_logger as tb_logger`` at the top of its README's training script: the
    package's last release fails to import on protobuf >= 4 (tried with 7.36.2), so the run stops at start. Near
    miss: ``tensorboardX``, a maintained logger, is no finding."""
    root = write_tree(
        tmp_path,
        {
            "README.md": "```\npython train_student.py --distill kd\n```\n",
            "train_student.py": "import tensorboard_logger as tb_logger\nimport tensorboardX\nimport torch\n",
        },
    )
    items = build_items(scan_path(root, jobs=1).findings)
    upgrades = [(i.title, i.severity, [ln.line for ln in i.lines]) for i in items if i.rule == "stack-upgrade"]
    assert upgrades == [("stack upgrade: APIs removed since the code was written: protobuf", "blocking", [1])]


def test_a_cifar_subclass_reading_the_pre_0_2_2_attribute_names_is_a_torchvision_site(tmp_path: Path) -> None:
    """RepDistiller's ``CIFAR100InstanceSample(datasets.CIFAR100)`` reads ``self.train_data``/``self.train_labels``,
    names torchvision 0.2.2 replaced with ``data``/``targets`` (0.29.1's ``cifar.py`` has only those): a torchvision
    stack-upgrade line per read. Near miss: an MNIST subclass (MNIST keeps them as deprecated properties) and a
    CIFAR subclass reading ``self.data`` are none."""
    src = (
        "import torch\nfrom torchvision import datasets\n\n\n"
        "class Sample(datasets.CIFAR100):\n"
        "    def __init__(self, root):\n"
        "        super().__init__(root=root)\n"
        "        n = len(self.train_data)\n"
        "        self.labels = self.train_labels if self.train else self.data\n\n\n"
        "class Digits(datasets.MNIST):\n"
        "    def size(self):\n"
        "        return len(self.train_data)\n"
    )
    root = write_tree(tmp_path, {"README.md": "```\npython train.py\n```\n", "train.py": "import torch\n", "d.py": src})
    lines = [(f.line, f.message.split(" (")[0]) for f in scan_path(root, jobs=1).findings if f.rule == "stack-upgrade"]
    assert lines == [
        (8, "self.train_data in Sample, a torchvision CIFAR dataset"),
        (9, "self.train_labels in Sample, a torchvision CIFAR dataset"),
    ]


def test_torchvision_cpp_ops_on_the_device_are_one_repository_item(tmp_path: Path) -> None:
    """facenet-pytorch's ``from torchvision.ops.boxes import batched_nms`` and a ``torchvision.ops.roi_align`` call:
    torchvision's own C++ operators (CPU and CUDA kernels only), one repository item. Near miss:
    ``torchvision.ops.box_iou``, written in plain tensor ops, is none."""
    src = (
        "import torch\nimport torchvision\nfrom torchvision.ops.boxes import batched_nms\n\n\n"
        "def detect(boxes, scores, idx, feats, rois):\n"
        "    keep = batched_nms(boxes, scores, idx, 0.7)\n"
        "    iou = torchvision.ops.box_iou(boxes, boxes)\n"
        "    return keep, iou, torchvision.ops.roi_align(feats, rois, (7, 7))\n"
    )
    root = write_tree(tmp_path, {"README.md": "```\npython detect.py\n```\n", "detect.py": src})
    items = build_items(scan_path(root, jobs=1).findings)
    ops = [(i.severity, [(ln.line, ln.message) for ln in i.lines]) for i in items if i.rule == "torchvision-op"]
    assert ops == [
        ("warning", [(7, "torchvision.ops batched_nms(...)"), (9, "torchvision.ops roi_align(...)")]),
    ]
