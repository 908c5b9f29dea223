"""Whether a result file is what the pilot wrote: its ``.sha256`` sidecar (written where the pilot ran, by the
pilot or by a launched task's run block) against its bytes. Read by collect and by the MLflow export."""

from __future__ import annotations

from pathlib import Path

from accelpilot.errors import InputFileError

NO_SIDECAR = "no .sha256 beside it: nothing proves it is what the pilot wrote"
MISMATCH = "its content does not match the .sha256 written where the pilot ran (edited after the run)"


def sidecar_status(path: Path, digest: str) -> tuple[str, str]:
    """("verified", "") or ("unverified", why) for the file at ``path`` whose SHA-256 is ``digest``.

    An unreadable sidecar is a bad file (it may be half-copied), said as one line naming it.
    """
    side = path.with_name(path.name + ".sha256")
    if not side.exists():
        return "unverified", NO_SIDECAR
    try:
        recorded = side.read_text(encoding="utf-8").split()[0].lower()
    except (OSError, UnicodeDecodeError, IndexError):
        raise InputFileError("unreadable checksum file", file=str(side), fix="copy it again or delete it") from None
    if recorded != digest:
        return "unverified", MISMATCH
    return "verified", ""
