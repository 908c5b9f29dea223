"""The one operator set the inventory names operators in, and supported-operator lists must be in: core ATen.

Core ATen is PyTorch's own stable subset of ATen (the operators tagged ``torch.Tag.core``) that every other ATen
operator decomposes to through ``torch._decomp.core_aten_decompositions()``, the table
``ExportedProgram.run_decompositions()`` applies by default. Naming operators there makes the two capture paths
agree (``torch.export`` sees ``aten::linear`` before dispatch, an eager trace sees ``aten::t`` + ``aten::addmm``;
both become ``aten::permute`` + ``aten::addmm``) and makes a list comparable with either.

Imports torch lazily: only the op inventory and the check of a list against it need it.
"""

from __future__ import annotations

from functools import cache
from typing import Any

CORE_ATEN = "core_aten"
# The op sets a list may state. Only core_aten is compared operator by operator with the inventory.
OP_SETS = {
    CORE_ATEN: "core ATen operators (torch.Tag.core), what the inventory reports",
    "aten": "ATen operators as a tool traced them, not decomposed (e.g. torch_neuronx.analyze output)",
}


def is_core_overload(op: Any) -> bool:
    """Whether an ``OpOverload`` is in core ATen (its ``torch.Tag.core`` tag)."""
    import torch

    return torch.Tag.core in getattr(op, "tags", ())


@cache
def decomposition_table() -> dict[Any, Any]:
    """The core ATen decomposition table, as a plain dict (``CustomDecompTable.get`` does not find every entry)."""
    from torch._decomp import core_aten_decompositions

    return dict(core_aten_decompositions().items())


def core_status(name: str, overload: str | None = None) -> str:
    """``"core"``, ``"not core"`` or ``"unknown"`` for a normalised ``ns::name`` (and an overload when given).

    Without an overload the name is core when one of its overloads is (``aten::add`` is, through ``add.Tensor``).
    """
    import torch

    ns, _, base = name.partition("::")
    try:
        packet = getattr(getattr(torch.ops, ns), base)
        overloads = [overload] if overload else list(packet.overloads())
        tagged = [is_core_overload(getattr(packet, o)) for o in overloads]
    except (AttributeError, RuntimeError):
        return "unknown"
    return "core" if any(tagged) else "not core"
