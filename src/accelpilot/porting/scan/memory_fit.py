"""Memory fit: a README that sizes its runs for a GPU with more memory than a NeuronCore has (issue 27's held-out
labels list it in most training and LLM repositories: "batch 8 x 2048 sized for a 40 GB A100", "a 65B model on a
single 48GB GPU", "when GPU VRAM <= 24GB").

A trn1 NeuronCore addresses 16 GiB (a Trainium chip has 32 GiB of HBM over 2 cores; a Trainium2 chip 96 GiB over 8,
DOMAIN.md). A README (or a root document it links) that states the GPU memory its commands need, above 16 GB, says
the per-device batch, accumulation, activation checkpointing or sharding were chosen for that memory: re-fitting them
to the target's is work (watch the compiler's NCC_EOOM001/002). One ``memory-fit`` item per repository, at the
largest figure, only where the README says what runs. A figure that fits (yolov5's "V100-16GB", a 12 GB minimum) or
one that is not memory (Swin's "4.5G" FLOPs: no GPU word on its line) gives none.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from accelpilot.porting.findings import Finding
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.documents import linked_documents, readme_path

MEMORY_FIT = "memory-fit"
NEURONCORE_GIB = 16  # trn1: 32 GiB of HBM per chip, 2 NeuronCores (DOMAIN.md)
# ``40GB``, ``112 GB``, ``A100-80G``, ``V100-16GB``, ``24GiB``: a memory figure.
_FIGURE = re.compile(r"(?<![\w.])(\d{1,3}(?:\.\d+)?)\s?(?:GB|GiB|G)\b")
# A word that makes a line's figure GPU memory (not disk, FLOPs or a dataset's size).
_GPU_WORD = re.compile(r"\b(?:A100|A10G?|V100|H100|H200|A6000|A40|L40S?|RTX|GPUs?|VRAM|GPU RAM|memory)\b", re.I)


# A line about the compute a model's authors spent (a model card's "3.3M GPU hours ... A100-80GB") or a speed they
# measured (RWKV-LM's "Training speed: ... 114K tokens/s on 8x8 A100 80G"), not this code's runs.
_SPENT = re.compile(r"GPU[ -]hours|carbon|emission|tokens/s|sec/token|speed:", re.I)


def _figures(text: str) -> list[tuple[float, int, str]]:
    """(GB, line, the line) of each memory figure on a line that names a GPU or its memory."""
    out: list[tuple[float, int, str]] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if _GPU_WORD.search(line) is None or _SPENT.search(line) is not None:
            continue
        out += [(float(m.group(1)), n, line.strip()) for m in _FIGURE.finditer(line)]
    return out


def memory_fit(root: Path, entries: Mapping[str, str]) -> list[Finding]:
    """The repository's ``memory-fit`` finding from its README and the root documents it links, or none."""
    if not any(": `" in how or how.startswith("README example") for how in entries.values()):
        return []
    best: tuple[float, int, str, str] | None = None
    readme = readme_path(root)
    if readme is None:
        return []
    text = readme.read_text(encoding="utf-8", errors="replace")
    for doc in [readme, *linked_documents(text, root)]:
        try:
            text = doc.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for gb, line, snippet in _figures(text):
            if best is None or gb > best[0]:
                best = (gb, line, snippet, doc.relative_to(root).as_posix())
    if best is None or best[0] <= NEURONCORE_GIB:
        return []
    gb, line, snippet, rel = best
    msg = f"runs sized for {gb:g} GB of GPU memory; a trn1 NeuronCore has {NEURONCORE_GIB} GiB"
    return [Finding.from_rule(RULES[MEMORY_FIT], file=rel, line=line, message=msg, snippet=snippet[:200])]
