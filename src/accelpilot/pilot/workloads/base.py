"""The workload protocols and the one way to plug in a user's model: ``module:factory``.

A factory is a zero-argument callable (or one taking ``**options``) returning an object that satisfies
TrainingWorkload or ServingWorkload. The scanner's op inventory uses only ``build_model`` and
``example_inputs``, so any workload can be inventoried.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import torch

from accelpilot.errors import ConfigError, InputFileError


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
    """Import ``module:factory`` (or ``path/to/file.py:factory``) and call it. Imports user code: only on request."""
    if ":" not in spec:
        raise ConfigError(
            f"workload {spec!r} is not of the form module:factory",
            field="--workload",
            fix="e.g. mypkg.models:make_workload",
        )
    mod_name, _, attr = spec.rpartition(":")
    try:
        if mod_name.endswith(".py"):
            path = Path(mod_name)
            if not path.is_file():
                raise InputFileError("no such file", file=mod_name, field="--workload")

            mspec = importlib.util.spec_from_file_location(path.stem, path)
            if mspec is None or mspec.loader is None:
                raise InputFileError("cannot import this file", file=mod_name)
            module = importlib.util.module_from_spec(mspec)
            sys.modules[path.stem] = module
            mspec.loader.exec_module(module)
        else:
            module = importlib.import_module(mod_name)
    except (ImportError, SyntaxError) as exc:
        raise ConfigError(
            f"cannot import {mod_name!r}: {exc.__class__.__name__}: {exc}",
            field="--workload",
            fix="check the module path and that it is importable (PYTHONPATH)",
        ) from None
    factory = getattr(module, attr, None)
    if factory is None or not callable(factory):
        raise ConfigError(f"{mod_name!r} has no callable {attr!r}", field="--workload")
    return factory(**options)
