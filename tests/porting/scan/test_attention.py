"""The ``manual-attention`` item (``scan/attention.py``): queries multiplied by keys and a softmax in one function,
one item per repository; near misses: a function that also calls ``scaled_dot_product_attention`` (a fallback for
an old torch), a contrastive logit product of non-query tensors, a product with no softmax."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.attention import manual_attention

_EINSUM = """import torch as th


class QKVAttention:
    def forward(self, qkv):
        q, k, v = qkv.chunk(3, dim=1)
        weight = th.einsum(
            "bct,bcs->bts", q * self.scale, k * self.scale
        )
        weight = th.softmax(weight.float(), dim=-1)
        return th.einsum("bts,bcs->bct", weight, v)
"""


def _lines(src: str) -> list[tuple[int | None, str]]:
    return [(ln, msg) for _, ln, msg, *_ in manual_attention(src.encode())]


def test_an_einsum_split_over_lines_then_a_softmax_is_found() -> None:
    assert _lines(_EINSUM) == [(7, "attention scores materialised by hand in forward()")]


def test_a_fallback_beside_sdpa_a_contrastive_product_and_no_softmax_are_not() -> None:
    fallback = _EINSUM.replace(
        "        q, k, v",
        "        if self.flash:\n            return th.nn.functional.scaled_dot_product_attention(q, k, v)\n"
        "        q, k, v",
    )
    assert _lines(fallback) == []
    clip = "import torch\n\n\ndef logits(image, text):\n    return (image @ text.t()).softmax(dim=-1)\n"
    assert _lines(clip) == []
    assert _lines(_EINSUM.replace("th.softmax(", "th.sigmoid(")) == []


def test_every_variant_is_one_item_of_the_repository(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(_EINSUM)
    (tmp_path / "b.py").write_text(
        "import torch\n\n\ndef attn(query, key):\n    s = torch.matmul(query, key.transpose(-1, -2))\n"
        "    return torch.softmax(s, -1)\n"
    )
    items = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "manual-attention"]
    assert [(i.severity, i.days_low, i.days_high, len(i.lines)) for i in items] == [("warning", 0.5, 1.5, 2)]
