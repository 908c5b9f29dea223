"""One file, a chunk of files, a whole tree: reads each file once and turns every failure into a skip reason."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from accelpilot.errors import InputFileError
from accelpilot.porting.log import Finding, PortabilityLog, Skipped
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.python import scan_python
from accelpilot.porting.scan.suppress import apply_suppressions
from accelpilot.porting.scan.text import scan_text
from accelpilot.porting.scan.walk import walk

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
PARALLEL_MIN_FILES = 200
CHUNK = 48


FileOutcome = tuple[str, list[RawFinding], str | None, int]  # rel path, findings, skip reason, suppressed


def scan_file(path: str, rel: str, kind: str, max_bytes: int = DEFAULT_MAX_BYTES, prune: bool = True) -> FileOutcome:
    """Scan one file; every failure becomes a skip reason, never an exception."""
    try:
        st = os.stat(path)
        if st.st_size > max_bytes:
            return rel, [], f"file is {st.st_size / 1e6:.1f} MB, over the {max_bytes / 1e6:.1f} MB limit", 0
        if kind == "cuda":
            return rel, [("cuda-source-file", None, f"CUDA source file {Path(rel).name}", "")], None, 0
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
        found = scan_python(data, prune=prune) if kind == "python" else scan_text(text, kind)
    except SyntaxError as exc:
        return rel, [], f"Python syntax error at line {exc.lineno}: {exc.msg}", 0
    except RecursionError:
        return rel, [], "nesting too deep to parse (RecursionError)", 0
    except MemoryError:
        return rel, [], "nesting too deep to parse (parser ran out of memory)", 0
    except Exception as exc:  # a scanner bug must not end the scan; it is recorded where the user sees it
        return rel, [], f"internal scanner error: {type(exc).__name__}: {exc}", 0
    if not found:
        return rel, [], None, 0
    found, suppressed = apply_suppressions(found, text)
    if found and kind == "python":
        lines = text.splitlines()
        found = [(r, ln, msg, lines[ln - 1] if ln and ln <= len(lines) else "") for r, ln, msg, _ in found]
    return rel, found, None, suppressed


def _scan_chunk(items: list[tuple[str, str, str]], max_bytes: int) -> list[FileOutcome]:
    return [scan_file(p, rel, kind, max_bytes) for p, rel, kind in items]


def _chunks(items: list[tuple[str, str, str]], n: int) -> Iterable[list[tuple[str, str, str]]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def scan_path(
    path: str | Path,
    *,
    targets: frozenset[str] | None = None,
    jobs: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> PortabilityLog:
    """Scan a file or directory tree into a PortabilityLog. Never imports or executes what it reads."""
    t0 = time.perf_counter()
    root = Path(path)
    if not root.exists():
        raise InputFileError("no such file or directory", file=str(path), fix="give the path of a repository to scan")
    files, skipped = walk(root)
    n_jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    outcomes: list[FileOutcome] = []
    if n_jobs > 1 and len(files) >= PARALLEL_MIN_FILES:
        # Workers ignore Ctrl-C (each would print a traceback); the parent cancels the queued chunks and stops.
        ignore_sigint = (signal.SIGINT, signal.SIG_IGN)
        with ProcessPoolExecutor(max_workers=n_jobs, initializer=signal.signal, initargs=ignore_sigint) as pool:
            try:
                for chunk_out in pool.map(_scan_chunk, _chunks(files, CHUNK), [max_bytes] * len(files)):
                    outcomes.extend(chunk_out)
            except KeyboardInterrupt:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    else:
        outcomes = _scan_chunk(files, max_bytes)
    findings: list[Finding] = []
    suppressed = 0
    for rel, found, reason, sup in outcomes:
        suppressed += sup
        if reason is not None:
            skipped.append(Skipped(path=rel, reason=reason))
        for rule_id, line, message, snippet in found:
            findings.append(Finding.from_rule(RULES[rule_id], file=rel, line=line, message=message, snippet=snippet))
    log = PortabilityLog(
        root=str(root),
        files_scanned=len(files),
        findings=findings,
        skipped=sorted(skipped, key=lambda s: s.path),
        suppressed=suppressed,
    )
    log.only_targets(targets)
    log.elapsed_s = round(time.perf_counter() - t0, 3)
    return log
