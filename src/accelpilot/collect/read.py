"""Find result files, check each one and drop exact duplicates (same bytes, by SHA-256)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from accelpilot.errors import InputFileError
from accelpilot.pilot.result import PilotResult, read_result


@dataclass(slots=True)
class Collected:
    path: Path
    sha256: str
    result: PilotResult
    checksum: str  # "verified" (a .sha256 sidecar matched) or "none" (no sidecar)
    duplicates: list[Path] = field(default_factory=list)


def _files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out += sorted(q for q in p.rglob("*.json") if q.is_file() and not q.name.startswith("."))
        elif p.exists():
            out.append(p)
        else:
            raise InputFileError("no such file or folder", file=str(p), fix="check the path")
    return out


def _sidecar(path: Path, digest: str) -> str:
    side = path.with_name(path.name + ".sha256")
    if not side.exists():
        return "none"
    try:
        recorded = side.read_text(encoding="utf-8").split()[0].lower()
    except (OSError, UnicodeDecodeError, IndexError):
        raise InputFileError("unreadable checksum file", file=str(side), fix="copy it again or delete it") from None
    if recorded != digest:
        raise InputFileError(
            "content does not match the checksum written where the pilot ran (truncated or edited)",
            file=str(path),
            fix="copy the result again from the machine or bucket",
        )
    return "verified"


def gather_results(paths: list[Path]) -> list[Collected]:
    """Every result under ``paths``, checked; exact duplicates folded into the first copy."""
    by_hash: dict[str, Collected] = {}
    for f in _files(paths):
        try:
            raw = f.read_bytes()
        except OSError as exc:
            raise InputFileError(f"cannot read ({exc.strerror})", file=str(f)) from None
        digest = hashlib.sha256(raw).hexdigest()
        checksum = _sidecar(f, digest)
        if digest in by_hash:
            by_hash[digest].duplicates.append(f)
            continue
        by_hash[digest] = Collected(f, digest, read_result(f), checksum)
    if not by_hash:
        raise InputFileError(
            "no result files (*.json) found", file=", ".join(map(str, paths)), fix="point at the results folder"
        )
    return list(by_hash.values())
