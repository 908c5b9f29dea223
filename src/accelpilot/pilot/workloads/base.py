"""The workload protocols and the one way to plug in a user's model: ``module:factory``.

A factory is a zero-argument callable (or one taking ``**options``) returning an object that satisfies
TrainingWorkload or ServingWorkload. The scanner's op inventory uses only ``build_model`` and
``example_inputs``, so any workload can be inventoried.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

import torch

from accelpilot.factory import import_factory


@runtime_checkable
class TrainingWorkload(Protocol):
    """What the training pilot needs: a model, a batch source, the loss and an evaluation."""

    name: str

    def build_model(self) -> torch.nn.Module:
        """A fresh model on the CPU in float32, deterministic under torch.manual_seed."""
        ...

    def example_inputs(self) -> tuple[Any, ...]:
        """Inputs for one forward call (for export, op inventory and parity checks)."""
        ...

    def batches(self, split: str, batch_size: int, seq_len: int, seed: int) -> Iterator[tuple[torch.Tensor, ...]]:
        """An endless, seeded stream of CPU batches; ``split`` is ``train`` or ``eval``."""
        ...

    def loss(self, model: torch.nn.Module, batch: Sequence[torch.Tensor]) -> torch.Tensor:
        """Scalar loss for one batch already on the model's device."""
        ...

    def tokens_in(self, batch: Sequence[torch.Tensor]) -> int:
        """Tokens (or samples for non-sequence models) a batch contributes to throughput."""
        ...


@runtime_checkable
class ServingWorkload(Protocol):
    """What the serving pilot needs: a model, a tokenizer and a forward over padded batches."""

    name: str

    def build_model(self) -> torch.nn.Module: ...

    def example_inputs(self) -> tuple[Any, ...]: ...

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids per request, unpadded (the pilot pads to shape buckets)."""
        ...

    def forward(self, model: torch.nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Outputs for one padded batch (embeddings, logits...)."""
        ...

    def sample_requests(self, n: int, seed: int) -> list[str]:
        """Representative request texts, generated offline."""
        ...


def load_factory(spec: str, **options: Any) -> Any:
    """Import ``module:factory`` and call it with ``options``. Imports user code: only on request."""
    return import_factory(spec, "--workload")(**options)
