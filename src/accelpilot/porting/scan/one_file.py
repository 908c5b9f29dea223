"""One file read once: its findings, or a skip reason for every failure, and for a Python source what the
cross-file passes read from it (its imports, checkpoint loads and saves, precision, per-step calls), read in the
worker so that the parent does not read every source again."""

from __future__ import annotations

import json
import os
from pathlib import Path

from accelpilot.porting.scan.checkpoints import Facts, checkpoint_facts
from accelpilot.porting.scan.default_path import may_choose_class
from accelpilot.porting.scan.families import Prepared, raw_imports
from accelpilot.porting.scan.old_syntax import MARK, repair, repaired_lines, repaired_source
from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.precision import PrecisionFacts, precision_facts
from accelpilot.porting.scan.python import scan_python
from accelpilot.porting.scan.step_syncs import StepCalls, step_calls
from accelpilot.porting.scan.suppress import apply_suppressions
from accelpilot.porting.scan.text import scan_text

_NONE3 = (None, None, None)  # no cell, subject or context: a CUDA source is one line of its extension's item
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
# JSON that is data, not a job spec: tokenizers, vocabularies, weight indexes, and any JSON over DATA_JSON_BYTES (job
# specs are a few KB). Read line by line with every text rule, a 2 MB tokenizer took most of a 224-file scan (issue
# 27); such a file is skipped with the reason, before it is read.
DATA_JSON_NAMES = frozenset(
    {"tokenizer.json", "vocab.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"}
)
DATA_JSON_BYTES = 512 * 1024


def data_json(rel: str, size: int) -> str | None:
    """The skip reason of a JSON file that is data, or None for one read as a job spec."""
    name = rel.rpartition("/")[2].lower()
    if name in DATA_JSON_NAMES or name.endswith(".index.json"):
        return f"data file ({name}): a tokenizer, vocabulary or weight index, not a job spec"
    if size > DATA_JSON_BYTES:
        return f"data file: JSON of {size / 1e6:.1f} MB (job specs are a few KB), read as data, not a job spec"
    return None


# (rule id, line, message, snippet, notebook cell or None, subject, context); cells number an .ipynb's cells from 1.
FileFinding = tuple[str, int | None, str, str, int | None, str | None, str | None]
FileOutcome = tuple[str, list[FileFinding], str | None, int]  # rel path, findings, skip reason, suppressed


def _source_findings(text: str, kind: str, prune: bool) -> tuple[list[RawFinding], int]:
    """Findings of one source text (a file, or a notebook cell) after suppression, with Python snippets filled."""
    found = scan_python(text.encode("utf-8"), prune=prune) if kind == "python" else scan_text(text, kind)
    if not found:
        return [], 0
    found, suppressed = apply_suppressions(found, text)
    if found and kind == "python":
        lines = text.splitlines()
        found = [
            (r, ln, msg, lines[ln - 1] if ln and ln <= len(lines) else "", sub, ctx)
            for r, ln, msg, _, sub, ctx in found
        ]
    return found, suppressed


def _repaired_findings(text: str, kind: str, prune: bool) -> tuple[list[RawFinding], int]:
    """``_source_findings``; for Python that fails only for an older Python's syntax, those of the repaired text
    and the repaired lines (``old_syntax``); other syntax errors raise as they are."""
    try:
        return _source_findings(text, kind, prune)
    except SyntaxError:
        fixed = repair(text) if kind == "python" else None
        if fixed is None:
            raise
        raw, suppressed = _source_findings(fixed[0], kind, prune)
        return raw + repaired_lines(fixed[1]), suppressed


class NotebookError(ValueError):
    """A .ipynb file that is not a notebook: recorded as a skip reason."""


def _notebook_cells(text: str) -> list[tuple[int, str]]:
    """(cell number, source) of each code cell; cell numbers count every cell from 1, as a notebook UI shows them."""
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not a readable notebook: {exc.msg} at line {exc.lineno}") from None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise NotebookError("not a readable notebook: no list of cells")
    out: list[tuple[int, str]] = []
    for i, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        if isinstance(src, list):
            src = "".join(x for x in src if isinstance(x, str))
        if isinstance(src, str):
            out.append((i, src))
    return out


def _scan_notebook(text: str, prune: bool) -> tuple[list[FileFinding], int, str | None]:
    """Code cells as Python; IPython magics (``%``/``!`` lines) are blanked for the parser, and ``!`` shell lines
    go through the shell rules, so ``!nvidia-smi`` is still found. Lines are numbered within their cell. A cell
    that does not parse is named in the skip reason; the other cells are still scanned."""
    found: list[FileFinding] = []
    suppressed = 0
    broken: list[str] = []
    for cell, src in _notebook_cells(text):
        lines = src.splitlines()
        shell = "\n".join(ln.lstrip()[1:] if ln.lstrip().startswith("!") else "" for ln in lines)
        code = "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in lines)
        try:
            py, s1 = _source_findings(code, "python", prune)
        except SyntaxError as exc:
            broken.append(f"cell {cell} line {exc.lineno}: {exc.msg}")
            py, s1 = [], 0
        sh, s2 = _source_findings(shell, "shell", prune) if "!" in src else ([], 0)
        suppressed += s1 + s2
        for r, ln, msg, _, sub, ctx in sh:
            py.append((r, ln, msg, lines[ln - 1] if ln and ln <= len(lines) else "", sub, ctx))
        found.extend((r, ln, msg, snip, cell, sub, ctx) for r, ln, msg, snip, sub, ctx in py)
    reason = ("Python syntax error in " + "; ".join(broken) + " (other cells scanned)") if broken else None
    return found, suppressed, reason


def scan_file(path: str, rel: str, kind: str, max_bytes: int = DEFAULT_MAX_BYTES, prune: bool = True) -> FileOutcome:
    """Scan one file; every failure becomes a skip reason, never an exception."""
    try:
        st = os.stat(path)
        if st.st_size > max_bytes:
            return rel, [], f"file is {st.st_size / 1e6:.1f} MB, over the {max_bytes / 1e6:.1f} MB limit", 0
        if kind == "json" and (data_reason := data_json(rel, st.st_size)) is not None:
            return rel, [], data_reason, 0
        if kind == "cuda":
            return (
                rel,
                [("cuda-source-file", None, f"CUDA source file {Path(rel).name}, {st.st_size} bytes", "", *_NONE3)],
                None,
                0,
            )
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
        if len(data) > max_bytes:
            return rel, [], f"file grew over the {max_bytes / 1e6:.1f} MB limit while reading", 0
    except OSError as exc:
        return rel, [], f"unreadable: {exc.strerror or exc}", 0
    if b"\x00" in data:
        return rel, [], "binary file (contains NUL bytes)", 0
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return rel, [], f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})", 0
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        if kind == "notebook":
            found, suppressed, partial = _scan_notebook(text, prune)
            return rel, found, partial, suppressed
        else:
            raw, suppressed = _repaired_findings(text, kind, prune)
            if kind == "python" and rel.rpartition("/")[2] == "setup.py":  # install_requires names packages too
                seen = {(r[0], r[1]) for r in raw}
                deps, _ = _source_findings(text, "requirements", prune)
                raw += [r for r in deps if r[2].startswith("package ") and (r[0], r[1]) not in seen]
            found = [(r, ln, msg, snip, None, sub, ctx) for r, ln, msg, snip, sub, ctx in raw]
    except NotebookError as exc:
        return rel, [], str(exc), 0
    except SyntaxError as exc:
        return rel, [], f"Python syntax error at line {exc.lineno}: {exc.msg}", 0
    except RecursionError:
        return rel, [], "nesting too deep to parse (RecursionError)", 0
    except MemoryError:
        return rel, [], "nesting too deep to parse (parser ran out of memory)", 0
    except Exception as exc:  # a scanner bug must not end the scan; it is recorded where the user sees it
        return rel, [], f"internal scanner error: {type(exc).__name__}: {exc}", 0
    return rel, found, None, suppressed


Worked = tuple[FileOutcome, Prepared | None, Facts | None, PrecisionFacts | None, StepCalls]


def scan_chunk(items: list[tuple[str, str, str]], max_bytes: int) -> list[Worked]:
    """Each file scanned, and for a Python source what the cross-file passes read from it (its imports, its
    checkpoint loads and saves, its precision, the functions of other modules its training steps call), read here
    in the worker so that the parent does not read every source again."""
    out: list[Worked] = []
    for p, rel, kind in items:
        outcome = scan_file(p, rel, kind, max_bytes)
        prepared: Prepared | None = None
        facts: Facts | None = None
        precision: PrecisionFacts | None = None
        steps: StepCalls = []
        if kind == "python" and outcome[2] is None:
            try:
                data = Path(p).read_bytes()
            except OSError:
                data = None
            if data is not None and any(f[2].endswith(MARK) for f in outcome[1]):
                data = repaired_source(data)
            if data is not None:
                prepared = (raw_imports(data), may_choose_class(data))
                facts = checkpoint_facts(rel, data)
                precision = precision_facts(data)
                steps = step_calls(data)
        out.append((outcome, prepared, facts, precision, steps))
    return out
