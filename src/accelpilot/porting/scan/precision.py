"""A default path that trains in fp32 (rule ``fp32-training``, issue 27's held-out labels: DLRM, BLIP,
Time-Series-Library, Demucs and minGPT train in fp32 with no autocast, and each labeller listed moving to bf16 as work).

Trainium's matrix engines run bf16 at several times their fp32 rate, so a port that keeps fp32 keeps a fraction of
the chip; the port decides the precision (``torch.autocast(device_type="neuron", dtype=torch.bfloat16)``, or bf16
weights) and re-validates the metrics the repository reports. Read from the bytes in the scan's workers: a file's
first training step (``.backward(``, or a Lightning ``def training_step(``), and whether any precision word is in
its code outside comments (``autocast``, ``bfloat16``, ``float16``, ``.half()``, ``GradScaler``, ``bf16``/``fp16``,
``mixed_precision``, ``precision=16``, ``torch_dtype``, apex's amp; not on a quantizer's line: DLRM's
``quantize_dtype = torch.float16`` is inference quantization, not the training precision). A repository with a
README command or example, a training step, and no such word on its default path gets one item at the step (an
entry point's first). The default path here is every file the entry points import (any depth) and every module no
script imports (a registry may load it); a separate script's own code is not: Time-Series-Library's trainer and
CoTracker's ``train_on_kubric.py`` use autocast, while the commands the README gives first run fp32 (rounds 18-26's
labellers list both, the optional amp as its own item). A default path with no training step (an inference demo)
gets the item at its first ``no_grad``/``eval()`` (an entry's first): the held-out labels list "inference runs in
fp32" as the same work (Point-E, FourCastNet's inference).
"""

from __future__ import annotations

from collections.abc import Mapping, Set

from accelpilot.porting.findings import Finding, context_of_path, promoted_folders
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.entry import says_what_runs

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
    b"HalfTensor",  # LLaMA's ``torch.set_default_tensor_type(torch.cuda.HalfTensor)``: fp16 everywhere
    b"from apex import",
)
_STEPS = (b".backward(", b"def training_step(")  # a step by hand, or a Lightning module's
_INFERENCE = (b"torch.no_grad()", b"torch.inference_mode()", b".eval()")  # a forward that does not train
# (line of the file's first ``.backward(``, a precision word in the file, line of its first inference marker,
# whether it runs as a program: a ``__main__`` block)
PrecisionFacts = tuple[int | None, bool, int | None, bool]


def _in_code(data: bytes, word: bytes) -> bool:
    """``word`` somewhere outside a ``#`` comment (BLIP's ``# fp16 compatibility`` names no precision) and off a
    quantizer's line."""
    i = data.find(word)
    while i != -1:
        start = data.rfind(b"\n", 0, i) + 1
        end = data.find(b"\n", i)
        line = data[start : end if end >= 0 else len(data)]
        if data.find(b"#", start, i) == -1 and b"quantiz" not in line.lower():
            return True
        i = data.find(word, i + len(word))
    return False


def _first_line(data: bytes, words: tuple[bytes, ...]) -> int | None:
    at = min((i for w in words if (i := data.find(w)) >= 0), default=-1)
    return data.count(b"\n", 0, at) + 1 if at >= 0 else None


def precision_facts(data: bytes) -> PrecisionFacts | None:
    """What the item needs of one source (None: nothing of the four)."""
    step, infer = _first_line(data, _STEPS), _first_line(data, _INFERENCE)
    mixed = any(w in data and _in_code(data, w) for w in _MIXED)
    script = b"__main__" in data
    if step is None and infer is None and not mixed and not script:
        return None
    return (step, mixed, infer, script)


def default_files(entries: Set[str], imports: Mapping[str, set[str]], scripts: Set[str]) -> set[str]:
    """The files whose precision is the default path's: the entry points and all they import, and every module no
    script imports (a registry or a user may load it); ``scripts``: files that run as programs."""
    reached, todo = set(), [e for e in entries if e in imports]
    while todo:
        rel = todo.pop()
        if rel not in reached:
            reached.add(rel)
            todo += imports.get(rel, set()) - reached
    by_scripts: set[str] = set()
    todo = [s for s in scripts if s not in reached]
    while todo:
        rel = todo.pop()
        if rel not in by_scripts:
            by_scripts.add(rel)
            todo += imports.get(rel, set()) - by_scripts
    return reached | (set(imports) - by_scripts)


def fp32_training(
    entries: Mapping[str, str],
    facts: Mapping[str, PrecisionFacts],
    imports: Mapping[str, set[str]] | None = None,
) -> list[Finding]:
    """The ``fp32-training`` finding of a tree: at most one, at the first training step of an entry point (else of
    a default-path file; else its first inference, an entry's first), when no default-path file names a precision.
    ``imports``: each Python file's in-tree imports (None: every porting file is on the default path)."""
    if not says_what_runs(entries):
        return []  # no command says what runs: a library's precision is its users'
    promoted = promoted_folders(entries)  # an example folder a README command runs is the default path
    porting = {rel: f for rel, f in facts.items() if context_of_path(rel, promoted=promoted) is None}
    if imports is not None:
        scripts = {rel for rel, f in facts.items() if f[3]}
        default = default_files(set(entries), imports, scripts)
        porting = {rel: f for rel, f in porting.items() if rel in default}
    if any(f[1] for f in porting.values()):
        return []
    steps = sorted(
        (rel not in entries, "train" not in rel.rpartition("/")[2], rel, line)
        for rel, (line, *_) in porting.items()
        if line is not None
    )
    what = "training step in fp32"
    if not steps:  # an inference default path: its entry's forward
        steps = sorted((rel not in entries, False, rel, f[2]) for rel, f in porting.items() if f[2] is not None)
        what = "inference in fp32"
    if not steps:
        return []
    _, _, rel, line = steps[0]  # an entry point's step first, a training script's before another's
    return [
        Finding.from_rule(
            RULES[RULE],
            file=rel,
            line=line,
            message=f"{what}: no autocast, bf16 or fp16 on the default path's code",
        )
    ]
