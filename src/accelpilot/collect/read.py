"""Find result files, check each one and drop duplicates (the same run, however it was re-serialised).

A result is "verified" when the ``.sha256`` written beside it where the pilot ran matches its bytes, and
"unverified" when there is none or it does not match (edited after the run): an unverified result is collected
and shown as such, never preferred over a verified one, and written into a scenario only when asked
(``collect --accept-unverified``). A file that cannot be read as a result (truncated, not JSON, a newer schema)
is set aside with one line why, and the others are collected.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from accelpilot.checksum import MISMATCH, sidecar_status
from accelpilot.errors import InputFileError, UserError
from accelpilot.pilot.result import PilotResult, read_result


@dataclass(slots=True)
class Collected:
    path: Path
    sha256: str
    result: PilotResult
    checksum: str  # "verified" (its .sha256 sidecar matched) or "unverified" (none, or one that does not match)
    duplicates: list[Path] = field(default_factory=list)
    why: str = ""  # unverified: why (no sidecar, or a sidecar that does not match the content)


MAX_RESULT_BYTES = 64 * 1024 * 1024  # a pilot result is kilobytes; a bigger file is refused before it is read


@dataclass(slots=True)
class Gathered:
    """What collect found: the results it can use and the files it could not, each with one line why."""

    results: list[Collected]
    bad: list[tuple[Path, str]] = field(default_factory=list)


def _files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            # a combination collect wrote (collect/combine.py) is not a run: never read back as one
            out += sorted(
                q
                for q in p.rglob("*.json")
                if q.is_file() and not q.name.startswith(".") and not q.name.endswith(".combined.json")
            )
        elif p.exists():
            out.append(p)
        else:
            raise InputFileError("no such file or folder", file=str(p), fix="check the path")
    return out


def _canonical(raw: bytes) -> str:
    """SHA-256 of the parsed content: a re-indented or key-reordered copy of a run is the same run."""
    try:
        data = json.loads(raw)
    except ValueError:
        return hashlib.sha256(raw).hexdigest()
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _read_one(f: Path) -> tuple[bytes, str, tuple[str, str]]:
    try:
        size = f.stat().st_size
        if size > MAX_RESULT_BYTES:
            raise InputFileError(
                f"{size / 2**20:.0f} MiB is too large for a pilot result (limit {MAX_RESULT_BYTES // 2**20} MiB)",
                file=str(f),
                fix="point at the pilot's result files",
            )
        raw = f.read_bytes()
    except OSError as exc:
        raise InputFileError(f"cannot read ({exc.strerror})", file=str(f)) from None
    digest = hashlib.sha256(raw).hexdigest()
    return raw, digest, sidecar_status(f, digest)


def gather_results(paths: list[Path]) -> Gathered:
    """Every result under ``paths``, checked; a bad file is set aside with why; the same run folded into one.

    Raises when no file is usable (the first bad file's line, or "no result files").
    """
    by_run: dict[str, Collected] = {}
    bad: list[tuple[Path, str]] = []
    first_error: UserError | None = None
    for f in _files(paths):
        try:
            raw, digest, (checksum, why) = _read_one(f)
            key = _canonical(raw)
            if key in by_run:
                kept = by_run[key]
                if checksum == "verified" and kept.checksum != "verified":  # keep the proven copy
                    kept.duplicates.append(kept.path)
                    kept.path, kept.sha256, kept.checksum, kept.why = f, digest, checksum, why
                else:
                    kept.duplicates.append(f)
                continue
            try:
                res = read_result(f)
            except InputFileError as exc:
                if why != MISMATCH:
                    raise
                raise InputFileError(
                    f"{exc.detail}; it does not match the checksum written where the pilot ran (truncated or damaged)",
                    file=str(f),
                    fix="copy the result again from the machine or bucket",
                ) from None
            by_run[key] = Collected(f, digest, res, checksum, why=why)
        except UserError as exc:
            first_error = first_error or exc
            bad.append((f, str(exc)))
    if not by_run:
        if first_error is not None:
            raise first_error
        raise InputFileError(
            "no result files (*.json) found", file=", ".join(map(str, paths)), fix="point at the results folder"
        )
    return Gathered(list(by_run.values()), bad)
