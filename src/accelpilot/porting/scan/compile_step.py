"""The default step under ``torch.compile(backend="neuron")``: one ``compile-step`` item per repository whose default
path builds models and compiles none of them (issue 27: held-out labellers list "nothing is compiled; under
torch.compile(backend='neuron') the step meets ..." as its own unit of work in 32 of 105 repositories).

TorchNeuron native runs a model in eager as it is, one operator at a time; its speed on Trainium comes from
``torch.compile`` (seed 002). Making the default step compile is work apart from the bring-up (``bringup.py``: do the
operators lower, do the outputs match): the step's graph breaks are removed or accepted, the shapes that change per
batch are bucketed or marked dynamic, and the first compile is timed against the step. The item lists what the scan
found on the default path that a compiled graph meets: graph breaks (a Python branch on a tensor, ``.item()`` in a
forward, a data-dependent op) and shapes that change per batch (padding to the longest, a growing sequence, packed
variable lengths, a smaller last batch). A repository that already calls ``torch.compile`` on its default path gets
none: ``compile-backend`` names its backend instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from accelpilot.porting.findings import Finding
from accelpilot.porting.rules import RULES

COMPILE_STEP = "compile-step"
# What breaks a compiled graph, or re-specialises it each time a value changes.
_BREAKS = ("tensor-control-flow", "item-in-forward", "data-dependent-op", "boolean-mask-index", "size-readback")
# Shapes that change from one batch to the next: one more graph (or a dynamic one) per new shape.
_SHAPES = ("dynamic-padding", "growing-sequence", "varlen-packing", "partial-last-batch")
# A call of torch.compile outside a comment: the repository compiles already.
_COMPILES = re.compile(rb"^[^#\n]*\btorch\.compile\b", re.M)
_MAX_SITES = 3  # sites named per message


def _sites(found: list[Finding]) -> str:
    named = ", ".join(f"{f.rule} {f.file}:{f.line}" for f in found[:_MAX_SITES])
    return named + (f" and {len(found) - _MAX_SITES} more" if len(found) > _MAX_SITES else "")


def compile_step(bringup: list[Finding], findings: Iterable[Finding], sources: Mapping[str, bytes]) -> list[Finding]:
    """The ``compile-step`` finding of a repository: ``bringup`` are its ``model-bringup`` lines (none: no default
    path builds a model), ``sources`` the files its default path reaches."""
    if not bringup or any(_COMPILES.search(data) for data in sources.values()):
        return []
    on_path = [f for f in findings if f.file in sources and f.porting and f.context is None]
    breaks = sorted((f for f in on_path if f.rule in _BREAKS), key=lambda f: (f.file or "", f.line or 0))
    shapes = sorted((f for f in on_path if f.rule in _SHAPES), key=lambda f: (f.file or "", f.line or 0))
    parts = []
    if breaks:
        parts.append(f"{len(breaks)} graph-break site{'s' if len(breaks) != 1 else ''} ({_sites(breaks)})")
    if shapes:
        one = len(shapes) == 1
        what = "shape that changes" if one else "shapes that change"
        parts.append(f"{len(shapes)} {what} per batch ({_sites(shapes)})")
    meets = (
        " and ".join(parts)
        if parts
        else "no graph break the scan can see (the compile log says how many graphs it makes)"
    )
    msg = f'nothing on the default path is compiled; under torch.compile(backend="neuron") its step meets {meets}'
    at = (breaks or shapes or bringup)[0]
    return [Finding.from_rule(RULES[COMPILE_STEP], file=at.file, line=at.line, message=msg, subject=COMPILE_STEP)]
