"""A default path that trains in fp32 (rule ``fp32-training``, issue 27's held-out labels: DLRM, BLIP,
Time-Series-Library, Demucs and minGPT train in fp32 with no autocast, and each labeller listed moving to bf16 as work).

Trainium's matrix engines run bf16 at several times their fp32 rate, so a port that keeps fp32 keeps a fraction of
the chip; the port decides the precision (``torch.autocast(device_type="neuron", dtype=torch.bfloat16)``, or bf16
weights) and re-validates the metrics the repository reports. Read from the bytes in the scan's workers: a file's
first training step (``.backward(``, or a Lightning ``def training_step(``), and whether any precision word is in
its code outside comments (``autocast``, ``bfloat16``, ``float16``, ``.half()``, ``GradScaler``, ``bf16``/``fp16``,
``mixed_precision``, ``precision=16``, ``torch_dtype``, apex's amp). A
repository with a README command and a training step, and no such word in any of its porting files, gets one item
at the step (an entry point's first); one that names a precision anywhere has its own items (``amp-cuda``, a flag).
"""

from __future__ import annotations

from collections.abc import Mapping

from accelpilot.porting.findings import Finding, context_of_path, promoted_folders
from accelpilot.porting.rules import RULES

RULE = "fp32-training"
_MIXED = (
    b"autocast",
    b"bfloat16",
    b"float16",
    b".half()",
    b"GradScaler",
    b"bf16",
    b"fp16",
    b"mixed_precision",
    b"precision=16",
    b"torch_dtype",
    b"apex.amp",
    b"from apex import",
)
_STEPS = (b".backward(", b"def training_step(")  # a step by hand, or a Lightning module's
PrecisionFacts = tuple[int | None, bool]  # (line of the file's first ``.backward(``, a precision word in the file)


def _in_code(data: bytes, word: bytes) -> bool:
    """``word`` somewhere outside a ``#`` comment (BLIP's ``# fp16 compatibility`` names no precision)."""
    i = data.find(word)
    while i != -1:
        if data.find(b"#", data.rfind(b"\n", 0, i) + 1, i) == -1:
            return True
        i = data.find(word, i + len(word))
    return False


def precision_facts(data: bytes) -> PrecisionFacts | None:
    """What the item needs of one source (None: no training step and no precision word)."""
    at = min((i for w in _STEPS if (i := data.find(w)) >= 0), default=-1)
    mixed = any(w in data and _in_code(data, w) for w in _MIXED)
    if at < 0 and not mixed:
        return None
    return (data.count(b"\n", 0, at) + 1 if at >= 0 else None, mixed)


def fp32_training(entries: Mapping[str, str], facts: Mapping[str, PrecisionFacts]) -> list[Finding]:
    """The ``fp32-training`` finding of a tree: at most one, at the first training step of an entry point (else of
    any porting file), when no porting file names a precision."""
    if not any(": `" in how for how in entries.values()):
        return []  # no command says what runs: a library's precision is its users'
    promoted = promoted_folders(entries)  # an example folder a README command runs is the default path
    porting = {rel: f for rel, f in facts.items() if context_of_path(rel, promoted=promoted) is None}
    if any(mixed for _, mixed in porting.values()):
        return []
    steps = sorted(
        (rel not in entries, "train" not in rel.rpartition("/")[2], rel, line)
        for rel, (line, _) in porting.items()
        if line is not None
    )
    if not steps:
        return []
    _, _, rel, line = steps[0]  # an entry point's step first, a training script's before another's
    return [
        Finding.from_rule(
            RULES[RULE],
            file=rel,
            line=line,
            message="training step in fp32: no autocast, bf16 or fp16 anywhere in the repository's code",
        )
    ]
