"""timm's Mixup on a timm that allocates its targets on CUDA (the ``device-augmentation`` line made blocking).

timm up to 0.4.12 builds Mixup's one-hot soft targets with ``mixup_target(target, num_classes, lam, smoothing)``,
whose ``device`` defaults to ``'cuda'`` (``torch.full(..., device='cuda')``): read in the 0.3.2 and 0.4.12 wheels'
``timm/data/mixup.py``; from 0.5.4 ``Mixup.__call__`` passes ``x.device``. On a torch build without CUDA (a Neuron
host's) the call raises, every training step, however the repository's own code places the batch. A repository that
pins such a timm (a requirements file, a pip line of a root document, or an ``assert timm.__version__ == "0.3.2"``)
and calls Mixup on its default path therefore stops there (DeiT's and Swin's labels; MAE's and ConvNeXt's labellers
held the same line a shape hazard only).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from accelpilot.porting.findings import Finding

_PIN = re.compile(r"(?<![\w.-])timm\s*==\s*(\d+\.\d+[\w.]*)")
_ASSERT = re.compile(r"""assert\s+timm\.__version__\s*==\s*['"](\d+\.\d+[\w.]*)['"]""")
_FIXED = (0, 5)  # the first minor release whose Mixup passes the batch's device (0.5.4 read)


def _before_fix(version: str) -> bool:
    parts = [int(p) for p in re.findall(r"\d+", version)[:2]]
    return len(parts) == 2 and (parts[0], parts[1]) < _FIXED


def timm_pin(root: Path, rels: Iterable[str], read: Callable[[str], str | None]) -> tuple[str, str] | None:
    """(version, where) of a timm pin before 0.5: a requirements file, a root Markdown document's pip line
    (ConvNeXt's INSTALL.md, read from ``root``), or a Python file's version assert (the first found, files sorted)."""
    docs = sorted(p.name for p in root.glob("*.md") if p.is_file()) if root.is_dir() else []

    def text_of(rel: str) -> str | None:
        if rel in docs:
            try:
                return (root / rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                return None
        return read(rel)

    for rel in sorted({*rels, *docs}):
        name = rel.rpartition("/")[2]
        requirements = name.startswith("requirement") and name.endswith(".txt")
        document = "/" not in rel and rel.lower().endswith(".md")
        if not (requirements or document or rel.endswith(".py")):
            continue
        text = text_of(rel) or ""
        if "timm" not in text:
            continue
        for n, line in enumerate(text.splitlines(), start=1):
            m = _ASSERT.search(line) if rel.endswith(".py") else _PIN.search(line)
            if m is None or (document and "pip" not in line) or line.lstrip().startswith("#"):
                continue
            if _before_fix(m.group(1)):
                return m.group(1), f"{rel}:{n}"
    return None


def mark_timm_mixup(findings: list[Finding], pin_of: Callable[[], tuple[str, str] | None]) -> None:
    """The default path's timm Mixup lines block when the repository pins a timm before 0.5, with the reason.
    ``pin_of`` (``timm_pin``, which reads the tree's files again) is asked only when such a line exists."""
    mixups = [
        f
        for f in findings
        if f.rule == "device-augmentation" and f.porting and f.context is None and "Mixup" in f.message
    ]
    pin = pin_of() if mixups else None
    if pin is None:
        return
    version, where = pin
    for f in mixups:
        f.severity = "blocking"
        f.reason = (
            f"timm {version} (pinned at {where}) builds Mixup's soft targets with mixup_target's default "
            "device='cuda' (timm/data/mixup.py up to 0.4.12; 0.5.4 passes the batch's device): "
            f"torch.full(..., device='cuda') raises every step on a torch build without CUDA ({f.file}:{f.line})"
        )
