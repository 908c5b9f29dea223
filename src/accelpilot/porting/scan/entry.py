"""The repository's default entry points, and the CUDA lines on their path that stop a host without CUDA (issue 27).

A porting lead reads the README first: the commands it gives (``python train.py ...``, ``torchrun ... train.py``) are
the default path. A command under a heading about evaluation, benchmarks or profiling is an evaluation run, listed
apart (DiT's ``sample_ddp.py`` computes FID). Without a README command, a script at the root named as an entry
point (``train*.py``, ``sample*.py``, ``main.py``; not ``eval*.py``) that runs as a script (a ``__main__`` block, or
no ``def`` at all) is one.

On an entry point's own lines, CUDA placement that has no fallback stops the run on a Trainium host: a ``"cuda"``
device default, ``torch.cuda.set_device``/``synchronize``, ``assert torch.cuda.is_available()``, an NCCL process
group. Those lines block, with the entry point named. A device chosen as ``"cuda" if torch.cuda.is_available() else
"cpu"`` falls back (to the CPU, slowly): a warning.
"""

from __future__ import annotations

import re
from pathlib import Path

from accelpilot.porting.findings import Finding, context_of_path, entry_script

_README = ("README.md", "README.rst", "README.txt", "README")
_HEADING = re.compile(r"^(?:#{1,6}\s+(.*)|(.+)\n[=~-]{3,}$)", re.M)
_COMMAND = re.compile(
    r"(?:^|[\s`$;&(])(?:python3?(?:\s+-u)?|torchrun|accelerate\s+launch|deepspeed|srun\s+python3?)\s[^\n`]*?"
    r"([\w./-]+\.py)\b"
)
_EVAL_NAME = re.compile(r"(eval|evaluate|bench|test|profil)", re.I)  # evaluation scripts by name
_EVAL_HEADING = re.compile(r"evaluat|benchmark|profil|\btest|\bfid\b|metric", re.I)
# Rules of CUDA placement that stop a run without CUDA when the entry point runs them with no fallback.
BLOCKS_IN_ENTRY = frozenset(
    {"cuda-device-literal", "torch-cuda-api", "cuda-call", "nccl-backend", "bitsandbytes", "hf-trainer", "amp-cuda"}
)
# Why such a line stops the entry point where it is not CUDA placement itself.
_STOPS = {
    "hf-trainer": "its training loop runs in a Trainer that places on CUDA or the CPU, not the neuron device",
    "amp-cuda": "fp16=True asks for CUDA AMP, which the Trainer refuses on a device that is not a GPU",
}
_FALLBACK = re.compile(r"""["']cuda(?::\d+)?["']\s+if\s+.*\bis_available\(\)\s+else\s""")
_REQUIRES_CUDA = re.compile(r"^\s*assert\s+torch\.cuda\.is_available\(\)")


def readme_entry_points(text: str, present: set[str]) -> tuple[dict[str, str], set[str]]:
    """(script -> the command that runs it, evaluation scripts) from a README's commands; scripts not in the tree
    are left out."""
    entries: dict[str, str] = {}
    evaluation: set[str] = set()
    heading = ""
    marks = sorted([(m.start(), "h", (m.group(1) or m.group(2) or "").strip()) for m in _HEADING.finditer(text)])
    marks += [(m.start(1), "c", m.group(1).removeprefix("./")) for m in _COMMAND.finditer(text)]
    for pos, kind, value in sorted(marks):
        if kind == "h":
            heading = value
            continue
        if value not in present:
            continue
        if _EVAL_HEADING.search(heading):
            evaluation.add(value)
        else:
            line_start = text.rfind("\n", 0, pos) + 1
            line_end = text.find("\n", pos)
            entries.setdefault(value, text[line_start : line_end if line_end >= 0 else None].strip()[:120])
    return entries, evaluation - set(entries)


def entry_points(root: Path, present: set[str]) -> dict[str, str]:
    """Script -> how it is known to be an entry point: a README command, else its name at the tree's root."""
    for name in _README:
        path = root / name
        if path.is_file():
            try:
                entries, _ = readme_entry_points(path.read_text(encoding="utf-8", errors="replace"), present)
            except OSError:
                break
            if entries:
                return {s: f"README: `{cmd}`" for s, cmd in entries.items() if context_of_path(s) is None}
            break
    return {
        rel: "a script named as an entry point at the repository's root"
        for rel in sorted(present)
        if "/" not in rel
        and rel.endswith(".py")
        and entry_script(rel)
        and not _EVAL_NAME.match(rel)
        and context_of_path(rel) is None
        and _runs_as_script(root / rel)
    }


def _runs_as_script(path: Path) -> bool:
    """A ``__main__`` block, or a flat script with no ``def`` (a module of functions is a library: ``runner.py``)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "__main__" in text or re.search(r"^\s*def\s", text, re.M) is None


def mark_entry_blocking(findings: list[Finding], entries: dict[str, str]) -> None:
    """CUDA placement on an entry point's own lines with no fallback blocks; ``assert torch.cuda.is_available()``
    there is a requirement of CUDA, not a probe."""
    for f in findings:
        if f.file not in entries or f.rule not in BLOCKS_IN_ENTRY:
            continue
        if f.rule == "amp-cuda" and not f.message.startswith("fp16=True"):
            continue  # ``torch.cuda.amp.GradScaler``: disabled off CUDA, a precision hazard, not a stop
        snippet = f.snippet or ""
        if f.context == "probe" and _REQUIRES_CUDA.match(snippet):
            f.context, f.porting = None, True
        if f.context is not None or not f.porting:
            continue
        if _FALLBACK.search(snippet):
            f.reason = "performance item: off CUDA it falls back to the CPU (the device should be a setting)"
            continue
        f.severity = "blocking"
        f.reason = (
            f"entry point {f.file} ({entries[f.file]}) runs this with no fallback, so a host without CUDA stops: "
            f"{f.message} at {f.file}:{f.line}"
            if f.rule not in _STOPS
            else f"entry point {f.file} ({entries[f.file]}) cannot run on the target as written: {_STOPS[f.rule]}: "
            f"{f.message} at {f.file}:{f.line}"
        )
