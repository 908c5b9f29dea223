"""Shipped fakes for tests and benchmarks: a do-nothing model and one with a known service time.

``NullWorkload`` measures the load path itself (queueing, batching, padding, completion); ``SleepWorkload``
has a known service time per batch, so a peak search over it has an answer one can compute.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from accelpilot.pilot.serve.base import sample_sentences


class _NullModel(nn.Module):
    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return attention_mask[:, :1]


class _SleepModel(nn.Module):
    def __init__(self, per_batch_s: float, per_item_s: float) -> None:
        super().__init__()
        self.per_batch_s = per_batch_s
        self.per_item_s = per_item_s

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        time.sleep(self.per_batch_s + self.per_item_s * int(input_ids.shape[0]))
        return attention_mask[:, :1]


class NullWorkload:
    """Tokens are word counts of ones; the model returns at once."""

    name = "null"
    factory = "builtin:null"
    output_kind = "none"

    def build_model(self) -> nn.Module:
        return _NullModel()

    def example_inputs(self) -> tuple[Any, ...]:
        ids = torch.ones(1, 8, dtype=torch.long)
        return ids, torch.ones_like(ids)

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        return [[1] * (len(t.split()) + 2) for t in texts]

    def forward(self, model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return model(input_ids, attention_mask)  # type: ignore[no-any-return,unused-ignore]

    def sample_requests(self, n: int, seed: int) -> list[str]:
        return sample_sentences(n, seed)

    def config(self) -> dict[str, Any]:
        return {}


class SleepWorkload(NullWorkload):
    """Service time = ``per_batch_s + per_item_s * batch``: capacity at full batches is known in advance."""

    name = "sleep"
    factory = "builtin:sleep"

    def __init__(self, per_batch_s: float = 0.01, per_item_s: float = 0.0) -> None:
        self.per_batch_s = per_batch_s
        self.per_item_s = per_item_s

    def build_model(self) -> nn.Module:
        return _SleepModel(self.per_batch_s, self.per_item_s)

    def config(self) -> dict[str, Any]:
        return {"per_batch_s": self.per_batch_s, "per_item_s": self.per_item_s}


def make_null() -> NullWorkload:
    return NullWorkload()


def make_sleep(**options: Any) -> SleepWorkload:
    return SleepWorkload(**options)
