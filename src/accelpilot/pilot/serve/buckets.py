"""Shape buckets: which padded shape a request runs in, and what padding costs.

Compilers for fixed shapes (Neuron, XLA, CUDA graphs, torch.compile without dynamic shapes) build one program
per shape, so requests are padded up to a small set of sequence lengths and batch sizes. A request longer than
the largest bucket is rejected and counted, never truncated: truncation would silently change the answer.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


def bucket_for(length: int, buckets: Sequence[int]) -> int | None:
    """Smallest bucket that holds ``length`` tokens, or None when none does (the request is rejected)."""
    i = bisect.bisect_left(buckets, length)
    return buckets[i] if i < len(buckets) else None


def batch_buckets(max_batch: int) -> tuple[int, ...]:
    """Batch sizes a padded engine prepares: powers of two below ``max_batch``, and ``max_batch`` itself."""
    out = []
    b = 1
    while b < max_batch:
        out.append(b)
        b *= 2
    out.append(max_batch)
    return tuple(out)


@dataclass(slots=True)
class PaddingStats:
    """Real versus padded tokens over a run; ``efficiency`` = real / padded (1.0 means no waste)."""

    real_tokens: int = 0
    padded_tokens: int = 0
    requests: int = 0
    rejected: int = 0
    batches: int = 0
    per_bucket: dict[int, int] = field(default_factory=dict)  # requests served per sequence bucket

    def add(self, real: int, rows: int, seq: int, requests: int) -> None:
        self.real_tokens += real
        self.padded_tokens += rows * seq
        self.requests += requests
        self.batches += 1
        self.per_bucket[seq] = self.per_bucket.get(seq, 0) + requests

    @property
    def efficiency(self) -> float | None:
        return self.real_tokens / self.padded_tokens if self.padded_tokens else None

    def as_dict(self) -> dict[str, object]:
        return {
            "real_tokens": self.real_tokens,
            "padded_tokens": self.padded_tokens,
            "padding_efficiency": self.efficiency,
            "requests": self.requests,
            "rejected": self.rejected,
            "batches": self.batches,
            "mean_batch": self.requests / self.batches if self.batches else None,
            "requests_per_bucket": {str(k): v for k, v in sorted(self.per_bucket.items())},
        }


@dataclass(slots=True)
class PaddedBatch:
    """One batch padded to ``[rows, seq]``; rows beyond ``n`` are filler (mask on the first position only)."""

    ids: np.ndarray  # int64 [rows, seq]
    mask: np.ndarray  # int64 [rows, seq]
    lengths: np.ndarray  # int64 [n]
    n: int
    seq: int

    @property
    def rows(self) -> int:
        return int(self.ids.shape[0])

    @property
    def real_tokens(self) -> int:
        return int(self.lengths.sum())


def pad_batch(tokens: Sequence[np.ndarray], seq: int, rows: int | None = None, pad_id: int = 0) -> PaddedBatch:
    """Pad token arrays to ``[rows, seq]``. Raises ValueError if a request exceeds ``seq`` (callers bucket first)."""
    n = len(tokens)
    rows = n if rows is None else rows
    if rows < n:
        raise ValueError(f"{n} requests do not fit {rows} rows")
    lengths = np.array([len(t) for t in tokens], dtype=np.int64)
    if n and int(lengths.max()) > seq:
        raise ValueError(f"a request of {int(lengths.max())} tokens does not fit bucket {seq}")
    mask = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int64)
    ids = np.full((rows, seq), pad_id, dtype=np.int64)
    if n:  # one vectorised scatter instead of a Python loop over rows
        ids[:n][mask.astype(bool)] = np.concatenate(tokens)
    if rows > n:  # filler rows attend to one token so that attention never sees an all-masked row
        mask = np.concatenate([mask, np.zeros((rows - n, seq), dtype=np.int64)])
        mask[n:, 0] = 1
    return PaddedBatch(ids=ids, mask=mask, lengths=lengths, n=n, seq=seq)


@dataclass(slots=True)
class PackedBatch:
    """The real tokens of a batch, flattened, with the indices that place them in the ``[n, seq]`` bucket."""

    ids: np.ndarray  # [N]
    positions: np.ndarray  # [N]
    flat_index: np.ndarray  # [N] row * seq + position
    row_index: np.ndarray  # [N]
    lengths: np.ndarray  # [n]
    mask: np.ndarray  # [n, seq]
    n: int
    seq: int

    @property
    def real_tokens(self) -> int:
        return int(self.ids.shape[0])


def pack_batch(tokens: Sequence[np.ndarray], seq: int) -> PackedBatch:
    n = len(tokens)
    lengths = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=n)
    if n and int(lengths.max()) > seq:
        raise ValueError(f"a request of {int(lengths.max())} tokens does not fit bucket {seq}")
    ids = np.concatenate(tokens).astype(np.int64, copy=False) if n else np.zeros(0, dtype=np.int64)
    row_index = np.repeat(np.arange(n, dtype=np.int64), lengths)
    offsets = np.cumsum(lengths) - lengths
    positions = np.arange(ids.shape[0], dtype=np.int64) - np.repeat(offsets, lengths)
    flat_index = row_index * seq + positions
    mask = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int64)
    return PackedBatch(ids, positions, flat_index, row_index, lengths, mask, n, seq)
