"""The reference training workload: a GPT-style decoder LM (SDPA attention, tied embeddings).

Named sizes: ``tiny`` (learns visibly on 2 CPU cores in seconds) and ``gpt2-124m`` (the GPU/Trainium
reference, the same architecture as nanoGPT and ../bench/gpu_reference.py). Data needs no download: a seeded
"phrase book" stream (random phrases drawn Zipf-style and concatenated, so a model must use context to
predict the rest of a phrase), or a user's token file (``.npy`` or raw ``uint16`` like nanoGPT's ``.bin``).

Plug-in point: ``accelpilot.pilot.workloads.gpt:factory`` with options ``size``, ``tokens``, ``seed``.
A user's workload plugs in the same way (``--workload mypkg.mod:factory``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from accelpilot.errors import ConfigError, InputFileError, did_you_mean


@dataclass(frozen=True, slots=True)
class GPTConfig:
    n_layer: int
    n_head: int
    n_embd: int
    vocab_size: int
    block_size: int  # context length (position embeddings)
    # training defaults the pilot reads when the user gives none
    batch_size: int = 16
    seq_len: int = 128
    learning_rate: float = 1e-3
    target_loss: float = 3.0
    max_steps: int = 300
    eval_every: int = 10
    eval_batches: int = 2


SIZES: dict[str, GPTConfig] = {
    # ~0.2M parameters: trains from 5.5 to below 3.5 nats in ~100 steps on 2 CPU cores.
    "tiny": GPTConfig(
        n_layer=2,
        n_head=4,
        n_embd=64,
        vocab_size=256,
        block_size=256,
        batch_size=16,
        seq_len=64,
        learning_rate=3e-3,
        target_loss=3.3,
        max_steps=400,
        eval_every=10,
        eval_batches=2,
    ),
    "small": GPTConfig(
        n_layer=6,
        n_head=6,
        n_embd=384,
        vocab_size=8192,
        block_size=512,
        batch_size=32,
        seq_len=256,
        learning_rate=1e-3,
        target_loss=5.0,
        max_steps=500,
        eval_every=25,
        eval_batches=4,
    ),
    "gpt2-124m": GPTConfig(
        n_layer=12,
        n_head=12,
        n_embd=768,
        vocab_size=50304,
        block_size=1024,
        batch_size=16,
        seq_len=1024,
        learning_rate=6e-4,
        target_loss=6.0,
        max_steps=300,
        eval_every=10,
        eval_batches=2,
    ),
}


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        d = cfg.n_embd
        self.n_head = cfg.n_head
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.n_head, c // self.n_head).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    """Decoder-only LM. ``forward(idx)`` gives logits; ``forward(idx, targets)`` the mean cross-entropy.

    Computing the loss inside forward lets torch.compile fuse the float32 cast and cross-entropy over the
    vocabulary, as the reference loop does.
    """

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.lnf = nn.LayerNorm(cfg.n_embd)
        self.head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.head.weight = self.wte.weight  # tied
        self.apply(self._init)
        for name, p in self.named_parameters():
            if name.endswith("out.weight") or name.endswith("proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None) -> torch.Tensor:
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(t, device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.lnf(x))
        if targets is None:
            return logits
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.reshape(-1))

    def non_embedding_params(self) -> int:
        """N in 6N + 12·L·H·Q·T: all parameters except position embeddings (the tied head counts once)."""
        return sum(p.numel() for p in self.parameters()) - self.wpe.weight.numel()


# --- data ----------------------------------------------------------------------------------------


def phrase_stream(vocab: int, n_tokens: int, seed: int, n_phrases: int = 512) -> np.ndarray:
    """A learnable token stream: Zipf-chosen phrases (lengths 4..12) from a seeded phrase book.

    The phrase book depends only on ``vocab`` (so train and eval share it); ``seed`` picks the phrase order.
    The first token of a phrase is hard to predict, the rest are determined by context: loss falls well
    below log(vocab) once a model uses attention. Vectorised: a million tokens take milliseconds.
    """
    book_rng = np.random.default_rng(1234 + vocab)
    lengths = book_rng.integers(4, 13, size=n_phrases)
    book = book_rng.integers(0, vocab, size=(n_phrases, 12), dtype=np.int64)
    weights = 1.0 / np.arange(1, n_phrases + 1) ** 0.8
    weights /= weights.sum()
    rng = np.random.default_rng(seed)
    n_draw = int(n_tokens / lengths.mean() * 1.2) + 16
    ids = rng.choice(n_phrases, size=n_draw, p=weights)
    lens = lengths[ids]
    mask = np.arange(12)[None, :] < lens[:, None]
    flat = book[ids][mask]
    while flat.size < n_tokens:  # rare: draw more
        flat = np.concatenate([flat, flat])
    return flat[:n_tokens].astype(np.int64 if vocab > 65535 else np.uint16)


def load_token_file(path: str | Path) -> np.ndarray:
    """A 1-D token array from ``.npy`` or a raw little-endian uint16 file (nanoGPT's train.bin)."""
    p = Path(path)
    if not p.is_file():
        raise InputFileError("no such token file", file=str(p), field="--tokens", fix="give a .npy or uint16 .bin")
    try:
        arr = np.load(p, mmap_mode="r") if p.suffix == ".npy" else np.memmap(p, dtype=np.uint16, mode="r")
    except (OSError, ValueError) as exc:
        raise InputFileError(f"cannot read tokens ({exc})", file=str(p), field="--tokens") from None
    arr = np.asarray(arr).reshape(-1)
    if arr.dtype.kind not in "iu":
        raise InputFileError(f"tokens must be integers, got {arr.dtype}", file=str(p), field="--tokens")
    if arr.size < 1024:
        raise InputFileError(f"only {arr.size} tokens; need at least 1024", file=str(p), field="--tokens")
    if int(arr.min()) < 0:
        raise InputFileError("negative token ids", file=str(p), field="--tokens")
    return arr


class GPTWorkload:
    """TrainingWorkload for the GPT decoder on a generated stream or a user's token file."""

    def __init__(self, size: str = "tiny", tokens: str | None = None, seed: int = 0, **overrides: Any) -> None:
        if size not in SIZES:
            raise ConfigError(f"unknown size {size!r}; {did_you_mean(size, tuple(SIZES))}", field="--size")
        cfg = SIZES[size]
        known = set(asdict(cfg))
        bad = [k for k in overrides if k not in known]
        if bad:
            raise ConfigError(f"unknown GPT option(s) {bad}; known: {sorted(known)}", field="--workload options")
        cfg = replace(cfg, **{k: type(getattr(cfg, k))(v) for k, v in overrides.items()})
        self.size = size
        self.seed = seed
        self.tokens_path = str(tokens) if tokens else None
        if tokens:
            stream = load_token_file(tokens)
            top = int(stream.max()) + 1
            if top > cfg.vocab_size:
                cfg = replace(cfg, vocab_size=int(math.ceil(top / 64) * 64))
            n_eval = max(cfg.block_size + 2, stream.size // 10)
            self._train, self._eval = stream[:-n_eval], stream[-n_eval:]
            self.data = f"tokens:{Path(tokens).name}"
        else:
            n = max(200_000, 64 * cfg.block_size * cfg.batch_size)
            self._train = phrase_stream(cfg.vocab_size, n, seed=seed)
            self._eval = phrase_stream(cfg.vocab_size, max(50_000, 8 * cfg.block_size * cfg.batch_size), seed=seed + 1)
            self.data = "generated:phrase-book"
        self.cfg = cfg
        self.name = f"gpt-{size}"
        self.learning_rate = cfg.learning_rate

    # --- TrainingWorkload ------------------------------------------------------------------------

    def build_model(self) -> GPT:
        return GPT(self.cfg)

    def example_inputs(self) -> tuple[Any, ...]:
        g = torch.Generator().manual_seed(7)
        t = min(32, self.cfg.block_size)
        return (torch.randint(0, self.cfg.vocab_size, (2, t), generator=g),)

    def batches(self, split: str, batch_size: int, seq_len: int, seed: int) -> Iterator[tuple[torch.Tensor, ...]]:
        if seq_len > self.cfg.block_size:
            raise ConfigError(
                f"sequence length {seq_len} exceeds the model context {self.cfg.block_size}",
                field="--seq-len/--shapes",
                fix=f"use at most {self.cfg.block_size}",
            )
        stream = self._train if split == "train" else self._eval
        if stream.size <= seq_len + 1:
            raise ConfigError(f"the {split} token stream is shorter than one sequence", field="--tokens")
        rng = np.random.default_rng([seed, 0 if split == "train" else 1])
        span = np.arange(seq_len + 1)
        while True:
            starts = rng.integers(0, stream.size - seq_len - 1, size=batch_size)
            chunk = torch.from_numpy(np.asarray(stream[starts[:, None] + span], dtype=np.int64))
            yield chunk[:, :-1].contiguous(), chunk[:, 1:].contiguous()

    def loss(self, model: nn.Module, batch: Sequence[torch.Tensor]) -> torch.Tensor:
        x, y = batch[0], batch[1]
        out: torch.Tensor = model(x, y)
        return out

    def tokens_in(self, batch: Sequence[torch.Tensor]) -> int:
        return int(batch[0].numel())

    # --- optional extras the pilot uses when present ---------------------------------------------

    def flops_per_token(self, model: nn.Module, seq_len: int) -> float:
        """PaLM appendix B estimate, as gpu_reference.py: 6N + 12·L·H·Q·T (H·Q = n_embd)."""
        n = model.non_embedding_params() if isinstance(model, GPT) else sum(p.numel() for p in model.parameters())
        return float(6 * n + 12 * self.cfg.n_layer * self.cfg.n_embd * seq_len)

    def training_defaults(self) -> dict[str, Any]:
        """Batch, sequence length, learning rate and quality target the pilot uses unless told otherwise."""
        c = self.cfg
        return {
            "batch_size": c.batch_size,
            "seq_len": c.seq_len,
            "learning_rate": c.learning_rate,
            "target_loss": c.target_loss,
            "max_steps": c.max_steps,
            "eval_every": c.eval_every,
            "eval_batches": c.eval_batches,
        }

    def describe(self) -> dict[str, Any]:
        return {"size": self.size, "data": self.data, "seed": self.seed, **asdict(self.cfg)}


def factory(size: str = "tiny", tokens: str | None = None, seed: int = 0, **overrides: Any) -> GPTWorkload:
    """``accelpilot.pilot.workloads.gpt:factory``: the built-in reference workload."""
    return GPTWorkload(size=size, tokens=tokens, seed=seed, **overrides)
