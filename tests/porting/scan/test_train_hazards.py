"""Training-path hazard rules (``scan/train_hazards.py``) on small synthetic sources, each beside a near miss."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path, scan_python


def _rules(src: str, rule: str) -> list[tuple[int, str | None]]:
    return sorted((ln or 0, ctx) for r, ln, _, _, _, ctx in scan_python(src) if r == rule)


GRADFIX = """\
import torch

enabled = True


def op(x, w):
    if _gate(x):
        return _Op.apply(x, w)
    return torch.nn.functional.conv2d(x, w)


def _gate(x):
    if x.device.type != "cuda":
        return False
    return torch.__version__.startswith("1.9")


class _Op(torch.autograd.Function):
    @staticmethod
    def backward(ctx, g):
        op = torch._C._jit_get_operation("aten::cudnn_convolution_backward_weight")
        return op(g)
"""


def test_a_private_op_with_a_device_fallback_is_a_performance_item() -> None:
    assert _rules(GRADFIX, "private-torch-op") == [(21, "fallback:torch.nn.functional.conv2d")]


def test_a_version_gated_private_op_supplying_a_double_backward_blocks() -> None:
    src = GRADFIX.replace('    if x.device.type != "cuda":\n        return False\n', "").replace(
        "        op = torch", "        _Back.apply(g)\n        op = torch"
    )
    assert _rules(src, "private-torch-op") == [(20, "version-gated-double-backward")]
    # near miss: the same calls outside an autograd Function are no custom op
    assert _rules(src.replace("(torch.autograd.Function)", ""), "private-torch-op") == []


def test_double_backward_needs_create_graph() -> None:
    src = "import torch\ng = torch.autograd.grad(y, [x], create_graph=True)\nh = torch.autograd.grad(y, [x])\n"
    assert _rules(src, "double-backward") == [(2, None)]


def test_pinned_memory_explicit_or_a_dataloader_pinning_through_the_accelerator() -> None:
    src = (
        "import torch\nc = torch.from_numpy(a).pin_memory().to(d)\nL = DataLoader(ds, pin_memory=True)\n"
        "M = DataLoader(ds, pin_memory=torch.cuda.is_available())\nN = DataLoader(ds, pin_memory=False)\n"
        "if torch.cuda.is_available():\n    O = DataLoader(ds, pin_memory=True)\n"
    )
    assert _rules(src, "pin-memory-call") == [(2, None), (3, None)]


def test_torchscript_load_and_manual_float16() -> None:
    src = (
        "import torch\nnet = torch.jit.load(f).eval().to(device)\n"
        "dtype = torch.float16 if fp16 else torch.float32\ny = x.half()\nz = x.to(torch.bfloat16)\n"
    )
    assert _rules(src, "torchscript-on-device") == [(2, None)]
    assert _rules(src, "float16-manual") == [(3, None), (4, None)]


SIZES = """\
import torch


def step(ws, margin, images, n):
    cutoff = torch.where(torch.rand([]) < 0.9, torch.randint(1, 8, ()), 8)
    ws[:, cutoff:] = 0
    mx0, my0 = margin.ceil().to(torch.int32)
    images = torch.nn.functional.pad(images, [mx0, mx0, my0, my0])
    h = images.shape[2]
    return images[:, :, : h - n], torch.zeros([n], device=images.device)
"""


def test_sizes_read_back_from_tensors_into_slices_and_padding() -> None:
    """Stays clear: ``images.shape[2]`` (a static size), a plain int ``n``, a device keyword."""
    assert _rules(SIZES, "size-readback") == [(6, None), (8, None)]


def test_a_numpy_array_moved_then_cast_on_the_device() -> None:
    src = "import torch as th\n\n\ndef ex(arr, t):\n    return th.from_numpy(arr).to(device=t.device)[t].float()\n"
    assert _rules(src, "host-array-to-device") == [(5, None)]
    # near miss: cast on the host before the move
    assert _rules(src.replace(".to(device=t.device)[t].float()", ".float().to(t.device)"), "host-array-to-device") == []


def test_a_pretrained_encoder_inside_the_training_loop() -> None:
    src = (
        "vae = AutoencoderKL.from_pretrained('m').to(device)\nz0 = vae.encode(x0)\n"
        "for x in loader:\n    z = vae.encode(x)\n"
    )
    assert _rules(src, "pretrained-encoder-in-loop") == [(4, None)]


COLLATOR = """\
import torch
from torch.nn.utils.rnn import pad_sequence


class DataCollatorForSupervisedDataset:
    def __call__(self, instances):
        ids = torch.nn.utils.rnn.pad_sequence([i["ids"] for i in instances], batch_first=True)
        return ids


def collate_fn(batch):
    return pad_sequence(batch, batch_first=True)


def encode_all(seqs):
    return pad_sequence(seqs, batch_first=True)  # once over a whole data set: one shape, not per batch
"""


def test_pad_sequence_in_a_collator_pads_each_batch_to_its_longest() -> None:
    assert _rules(COLLATOR, "dynamic-padding") == [(7, None), (12, None)]


TIMM_STEP = """\
import torch
from timm.data.mixup import Mixup
from timm.utils import ModelEma
from scipy.optimize import linear_sum_assignment
from mylib import Mixup as OwnMixup

mixup_fn = Mixup(mixup_alpha=0.8, cutmix_alpha=1.0)
model_ema = ModelEma(model, decay=0.9999)
indices = linear_sum_assignment(cost.cpu())
other = OwnMixup()
"""


def test_per_step_library_work_timm_mixup_ema_and_a_host_solver() -> None:
    assert _rules(TIMM_STEP, "device-augmentation") == [(7, None)]  # not the repository's own Mixup (line 10)
    assert _rules(TIMM_STEP, "model-ema-per-step") == [(8, None)]
    assert _rules(TIMM_STEP, "host-solver-in-step") == [(9, None)]


LLAMA_ATTENTION = """\
class Attention(nn.Module):
    def forward(self, x, start_pos: int):
        bsz, seqlen, _ = x.shape
        self.cache_k[:bsz, start_pos : start_pos + seqlen] = xk
        keys = self.cache_k[:bsz, : start_pos + seqlen]
        values = self.cache_v[:bsz, :start_pos]
        return keys, values
"""


def test_a_kv_cache_read_up_to_a_growing_position_is_a_growing_sequence() -> None:
    """Llama's decode: the keys attended to are the cache sliced up to ``start_pos + seqlen``, a longer shape every
    step. Near misses: the write of the step's slice keeps the cache's shape; a slice up to a bare name is no sum."""
    assert _rules(LLAMA_ATTENTION, "growing-sequence") == [(5, None)]


def test_an_embedding_with_sparse_gradients_is_a_sparse_tensor_line() -> None:
    """DLRM's ``nn.EmbeddingBag(n, m, mode="sum", sparse=True)`` makes sparse COO gradients in backward, which the
    optimizer applies as a sparse update: the same sparse kernels a ``to_sparse()`` needs. Near misses: a dense
    embedding (``sparse=False``, or no keyword) and ``sparse=True`` on a call that is no embedding."""
    src = (
        "import torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        self.bag = nn.EmbeddingBag(10, 4, mode='sum', sparse=True)\n"
        "        self.emb = nn.Embedding(10, 4, sparse=False)\n        self.emb2 = nn.Embedding(10, 4)\n"
        "        self.other = make(sparse=True)\n\n    def forward(self, x, w):\n"
        "        return F.embedding_bag(x, w, sparse=True)\n"
    )
    found = [(ln, msg) for r, ln, msg, *_ in scan_python(src) if r == "sparse-tensor"]
    assert found == [
        (7, "EmbeddingBag(sparse=True): sparse COO gradients in backward"),
        (13, "embedding_bag(sparse=True): sparse COO gradients in backward"),
    ]


def test_a_batch_padded_to_its_longest_by_hand_or_by_the_tokenizer_is_dynamic_padding() -> None:
    """VITS's collator allocates ``torch.LongTensor(len(batch), max_text_len)`` with ``max_text_len =
    max([len(x[0]) for x in batch])``; lit-llama pads with a nested ``pad_right`` that reads ``max_len``; BLIP's
    forward tokenises with ``padding='longest'``. Near misses: a fixed ``max_length`` pad, a max over no lengths,
    a tokenizer with ``padding='max_length'``."""
    src = (
        "import torch\n\n\ndef collate(batch):\n    max_text_len = max([len(x[0]) for x in batch])\n"
        "    text = torch.LongTensor(len(batch), max_text_len)\n    return text\n\n\n"
        "def get_batch(ids):\n    max_len = max(len(s) for s in ids)\n\n    def pad_right(x, pad_id):\n"
        "        n = max_len - len(x)\n        return torch.cat((x, torch.full((n,), pad_id)))\n\n"
        "    return torch.stack([pad_right(x, pad_id=0) for x in ids])\n\n\n"
        "def fixed(ids, max_length):\n    top = max(s.sum() for s in ids)\n"
        "    return torch.zeros(len(ids), max_length), top\n\n\n"
        "def forward(self, caption):\n    a = self.tokenizer(caption, padding='longest', return_tensors='pt')\n"
        "    b = self.tokenizer(caption, padding='max_length', max_length=35, return_tensors='pt')\n    return a, b\n"
    )
    found = [(ln, msg.split(":")[0]) for r, ln, msg, *_ in scan_python(src) if r == "dynamic-padding"]
    assert found == [
        (6, "LongTensor(...) to max_text_len = max(len(...))"),
        (17, "pad_right(...) to max_len = max(len(...))"),
        (26, "tokenizer padding='longest'"),
    ]


def test_a_collator_in_a_data_module_still_pads_the_models_batches(tmp_path: Path) -> None:
    """A collator in ``data/collate.py`` runs on the host, but the lengths it makes reach the device: its
    ``dynamic-padding`` line stays porting work (other compile hazards there are host-side)."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "collate.py").write_text(
        "from torch.nn.utils.rnn import pad_sequence\n\n\ndef collate_fn(batch):\n    return pad_sequence(batch)\n"
    )
    found = [(f.file, f.context) for f in scan_path(tmp_path, jobs=1).findings if f.rule == "dynamic-padding"]
    assert found == [("data/collate.py", None)]


def test_the_legacy_sparse_constructor_and_a_sparse_dense_matmul_are_sparse_tensor_lines() -> None:
    """pygcn builds its adjacency with ``torch.sparse.FloatTensor(indices, values, shape)`` and multiplies with
    ``torch.spmm``: both need sparse kernels on the device. Near misses: a dense ``torch.FloatTensor`` and ``torch.mm``."""
    src = (
        "import torch\n\n\ndef adj(indices, values, shape):\n    return torch.sparse.FloatTensor(indices, values, shape)\n\n\n"
        "def forward(adj, x, w):\n    return torch.spmm(adj, torch.mm(x, w)) + torch.FloatTensor(2)\n"
    )
    found = [(ln, msg) for r, ln, msg, *_ in scan_python(src) if r == "sparse-tensor"]
    assert found == [
        (5, "torch.sparse.FloatTensor(...): a sparse tensor"),
        (9, "torch.spmm(...): a sparse-dense matmul"),
    ]


def test_a_function_scripted_with_torch_jit_script_is_a_torchscript_line() -> None:
    """VITS's ``@torch.jit.script def fused_add_tanh_sigmoid_multiply`` runs in every WaveNet layer through the
    TorchScript interpreter, outside torch.compile's graph. Near miss: another decorator (``@torch.no_grad()``)."""
    src = (
        "import torch\n\n\n@torch.jit.script\ndef gate(a, b):\n    return torch.tanh(a) * torch.sigmoid(b)\n\n\n"
        "@torch.no_grad()\ndef other(x):\n    return x\n"
    )
    assert [(ln, msg) for r, ln, msg, *_ in scan_python(src) if r == "torchscript-on-device"] == [
        (4, "@torch.jit.script def gate")
    ]
