"""Rounds 40-43's fixes (issue 27): APIs a current Pillow, torchvision and torch iterator no longer have
(monodepth2's ``Image.ANTIALIAS``, ``models.resnet.model_urls`` and ``val_iter.next()``), and a DataParallel wrapper
that an entry point builds unconditionally (DeepLabV3Plus', glow's, CUT's labels)."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import write_tree

from accelpilot.porting.items import build_items
from accelpilot.porting.scan import scan_path, scan_python
from accelpilot.porting.scan.stack_upgrade import stack_sites

_DATASET = b"""\
from PIL import Image
import torchvision.models as models


class Loader:
    def __init__(self, loader):
        self.interp = Image.ANTIALIAS
        self.keep = Image.LANCZOS
        self.url = models.resnet.model_urls["resnet18"]
        self.val_iter = iter(loader)
        self.prefetch = Prefetcher()

    def val(self):
        batch = self.val_iter.next()
        other = self.prefetch.next()
        return batch, other
"""


def test_removed_pillow_torchvision_and_iterator_apis_are_stack_upgrade_sites() -> None:
    """Pillow 10 removed ``Image.ANTIALIAS`` (not on the installed Pillow 13.0.0), torchvision 0.29.1's model modules
    bind no ``model_urls``, torch 2.13's DataLoader iterator has no ``next``: each a call-time site of its library.
    Near misses: ``Image.LANCZOS``, and ``.next()`` on a receiver not named as an iterator."""
    found = sorted((ln, msg.split(" (")[0], sub) for _, ln, msg, _, sub, _ in stack_sites(_DATASET))
    assert found == [
        (7, "Image.ANTIALIAS", "call-time"),
        (9, "models.resnet.model_urls", "call-time"),
        (14, "self.val_iter.next()", "call-time"),
    ]


def test_a_file_with_its_own_next_method_keeps_its_next_calls() -> None:
    """A prefetcher that defines ``next`` (a data loader wrapper's own API): its ``iter.next()`` calls are its own."""
    src = _DATASET + b"\n\nclass Prefetcher:\n    def next(self):\n        return None\n"
    assert sorted(ln or 0 for _, ln, *_ in stack_sites(src)) == [7, 9]


_TRAIN = (
    "import torch\nimport torch.nn as nn\n\n"
    "model = nn.Linear(4, 2)\n"
    "model = nn.DataParallel(model)\n"
    "if torch.cuda.device_count() > 1:\n    other = nn.DataParallel(model)\n"
    "if len(gpu_ids) > 1:\n    third = nn.DataParallel(model, device_ids=gpu_ids)\n"
    "if ckpt is not None:\n    resumed = nn.DataParallel(model)\nelse:\n    fresh = nn.DataParallel(model)\n"
    "loss = model(torch.zeros(1, 4)).sum()\n"
)


def test_dataparallel_built_unconditionally_by_an_entry_point_blocks(tmp_path: Path) -> None:
    """On a Neuron host DataParallel takes the PrivateUse1 device type and its forward scatters through
    ``torch._C._scatter``, which a torch built without CUDA lacks (absent here): the wrapper the README's training
    script builds outside any ``if`` blocks, with that reason. Near misses: the wrappers under a device-count or
    GPU-list test, a multi-device choice. A test about anything else (DeepLabV3Plus' resume test, both arms of which
    wrap the model) chooses no devices: those wrappers block too."""
    root = write_tree(tmp_path, {"README.md": "```\npython train.py\n```\n", "train.py": _TRAIN})
    findings = [f for f in scan_path(root, jobs=1).findings if f.rule == "data-parallel"]
    assert [(f.line, f.severity) for f in findings] == [
        (5, "blocking"),
        (7, "warning"),
        (9, "warning"),
        (11, "blocking"),
        (13, "blocking"),
    ]
    assert "torch._C._scatter" in (findings[0].reason or "")
    items = [i for i in build_items(scan_path(root, jobs=1).findings) if i.rule == "data-parallel"]
    assert [i.severity for i in items] == ["blocking"]


def test_a_removed_api_in_the_arm_a_version_test_keeps_for_old_releases_is_no_site() -> None:
    """EasyOCR's VGG backbone reads ``models.vgg.model_urls`` only in the ``else`` of a torchvision ``__version__``
    test: the code already picks what exists, as ``stack_upgrade`` treats its own sites under a feature test."""
    src = (
        b"import torchvision\nimport torchvision.models as models\nfrom packaging import version\n\n"
        b"if version.parse(torchvision.__version__) >= version.parse('0.13'):\n    net = models.vgg16_bn()\n"
        b"else:\n    url = models.vgg.model_urls['vgg16_bn']\n"
    )
    assert stack_sites(src) == []


_DEV = """\
import torch


def dev(rank):
    if torch.cuda.is_available() and rank >= 0:
        return torch.device(f"cuda:{rank}")
    return torch.device("cpu")


def place(x, gpu):
    x = x.to(f"cuda:{gpu}")
    return x.to("cuda:" + str(gpu)), f"cuda:{gpu} holds {x.numel()} values"


def spread(tables, n):
    return [t.to("cuda:" + str(k % n)) for k, t in enumerate(tables)]
"""


def test_a_cuda_device_string_an_index_completes_is_a_device_literal() -> None:
    """MDM's ``dist_util.dev()`` returns ``torch.device(f"cuda:{used_device}")`` (round 42): an f-string, or a sum,
    completing ``"cuda:"`` with an index is a CUDA device string like ``"cuda:{}".format(i)``; under an availability
    test it is a fallback (the ``optional`` context), and so is an index taken modulo a count (DLRM's tables spread
    over the GPUs, a multi-device layout). Near miss: a message that only starts with ``cuda:``."""
    found = [(r, ln, ctx) for r, ln, _, _, _, ctx in scan_python(_DEV) if r == "cuda-device-literal"]
    assert found == [
        ("cuda-device-literal", 6, "optional"),
        ("cuda-device-literal", 11, None),
        ("cuda-device-literal", 12, None),
        ("cuda-device-literal", 16, "optional"),
    ]
    assert scan_python(_DEV) == scan_python(_DEV, prune=False)


_STYLE = {
    "README.md": "# Style\n\n```\npython train.py\npython webcam.py\n```\n",
    "train.py": "import torch\n\nnet = torch.nn.Linear(2, 2).cuda()\nloss = net(torch.zeros(1, 2)).sum()\nloss.backward()\n",
    "webcam.py": "import torch\n\nframe = torch.zeros(1).cuda()\n",
}


def test_a_webcam_demo_beside_a_training_command_is_no_entry_point(tmp_path: Path) -> None:
    """fast-neural-style's README runs ``python webcam.py`` beside ``python train.py`` (round 42): a live-camera demo
    ("blocks when webcam.py is run"), as ``demo.py`` is. The training script's ``.cuda()`` still blocks."""
    found = {f.file: f for f in scan_path(write_tree(tmp_path, _STYLE), jobs=1).findings if f.rule == "cuda-call"}
    assert found["train.py"].severity == "blocking"
    assert found["webcam.py"].severity == "warning"
    assert "blocks when webcam.py is run" in (found["webcam.py"].reason or "")


def test_a_losss_data_index_is_a_torch_site_unless_a_version_test_keeps_it_for_old_releases() -> None:
    """char-rnn's ``return loss.data[0] / args.chunk_len`` (round 43): a loss is 0-dim since torch 0.4, and indexing
    it raises IndexError on torch 2.13 (tried). Near misses: ``x.data[0]`` of a name that is no loss (a first row),
    and Person_reID's ``loss.data[0]`` in the ``else`` of ``if int(version[0]) > 0`` on ``version =
    torch.__version__``: a version test the code already answers."""
    src = (
        b"import torch\nversion = torch.__version__\n\n\ndef train(loss, x):\n    a = loss.data[0] / 2\n"
        b"    b = x.data[0]\n    if int(version[0]) > 0:\n        c = loss.item()\n    else:\n        c = loss.data[0]\n"
        b"    return a, b, c\n"
    )
    assert [(ln, msg.split(" (")[0]) for _, ln, msg, *_ in stack_sites(src)] == [(6, "loss.data[0]")]
    # packaging's ``version.parse`` in a test reads no installed version by itself: that arm is still read
    parsed = src.replace(b"if int(version[0]) > 0:", b"if ver < version.parse('0.4'):")
    assert [ln for _, ln, *_ in stack_sites(parsed)] == [6, 11]
