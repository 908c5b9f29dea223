"""Write report.html, report.md and report.json as one set: a new directory renamed into place.

All three are rendered in memory, written and fsynced into a new directory beside the report directory, and
only then swapped with the old one in a single rename (Linux ``renameat2(RENAME_EXCHANGE)``; elsewhere the old
directory is renamed aside first, so for an instant there is no report rather than a mixed one). A reader, or a
kill at any moment, therefore sees the old set or the new set, never a new report.html beside an old
report.json. Anything else the old directory held (the ``inputs/`` the ``pilot`` command keeps) is hard-linked
into the new one before the swap, so nothing is lost either.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import tempfile
from pathlib import Path

from accelpilot.errors import InputFileError
from accelpilot.report.model import Report
from accelpilot.report.render_html import render_html
from accelpilot.report.render_json import render_json
from accelpilot.report.render_md import render_md

FILES = ("report.html", "report.md", "report.json")
# What a report directory may hold besides the three files: the pilot command's inputs. A folder with anything
# else is not a report directory, and swapping it would move a user's files.
KEPT = ("inputs",)


class ReportDirError(InputFileError):
    """--out cannot hold a report: it is a file, holds other files, or its folder is not writable."""


def render_all(report: Report) -> dict[str, str]:
    return {"report.html": render_html(report), "report.md": render_md(report), "report.json": render_json(report)}


def check_report_dir(out: Path | str) -> Path:
    """Fail before any work when ``out`` cannot become a report directory. Returns the path.

    Called by ``report`` and ``pilot`` before they run anything, and again by ``write_report``.
    """
    out = Path(out)
    if out.exists() or out.is_symlink():
        if not out.is_dir() or out.is_symlink():
            raise ReportDirError(
                "exists and is not a directory", file=str(out), field="--out", fix="name a new or empty folder"
            )
        others = sorted(p.name for p in out.iterdir() if p.name not in FILES and p.name not in KEPT)
        if others:
            shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
            raise ReportDirError(
                f"holds files that are not part of a report ({shown}); a new report replaces the whole folder",
                file=str(out),
                field="--out",
                fix="name a new or empty folder, or an earlier report directory",
            )
    parent = _parent(out)
    if not parent.is_dir():
        raise ReportDirError(
            f"the folder {parent} does not exist", file=str(out), field="--out", fix="create it or name another"
        )
    try:
        # An unnamed temporary file (O_TMPFILE on Linux): proves the folder takes writes, even for root on a
        # read-only mount, and leaves no name behind when the process is killed mid-check.
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as exc:
        raise ReportDirError(
            f"cannot write in {parent} ({exc.strerror or exc.__class__.__name__})",
            file=str(out),
            field="--out",
            fix="name a writable folder",
        ) from None
    return out


def write_report(report: Report, out_dir: Path | str) -> dict[str, Path]:
    """Render everything, then put the three files in place as one directory. Returns their paths."""
    out = check_report_dir(out_dir)
    texts = render_all(report)  # any rendering error happens before a byte is written
    parent = _parent(out)
    new = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".new", dir=parent))
    try:
        for name, text in texts.items():
            with open(new / name, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
        _swap_in(new, out)
    except OSError as exc:
        shutil.rmtree(new, ignore_errors=True)
        raise ReportDirError(
            f"cannot write the report ({exc.strerror or exc.__class__.__name__}); the previous report, if any, is "
            "unchanged",
            file=str(out),
            field="--out",
            fix="free space or name a writable folder",
        ) from None
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise
    _fsync_dir(parent)
    return {name: out / name for name in FILES}


def _parent(out: Path) -> Path:
    return out.parent if str(out.parent) else Path(".")


def _swap_in(new: Path, out: Path) -> None:
    """Make ``new`` the directory ``out`` in one rename; the old directory, if any, is removed afterwards."""
    for _ in range(3):  # another run may create or swap ``out`` between our look and our rename
        if not out.exists():
            try:
                os.rename(new, out)  # fails (ENOTEMPTY/EEXIST) rather than mix if another run got there first
                return
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
                continue
        for name in KEPT:  # keep the pilot's inputs: hard links, so nothing is copied and the old set is intact
            if (out / name).exists() and not (new / name).exists():
                shutil.copytree(out / name, new / name, copy_function=_link_or_copy, symlinks=True)
        if _exchange(new, out):
            shutil.rmtree(new, ignore_errors=True)  # ``new`` now names the old directory
            return
        old = out.with_name(new.name.removesuffix(".new") + ".old")
        try:
            os.rename(out, old)
        except FileNotFoundError:
            continue
        os.rename(new, out)
        shutil.rmtree(old, ignore_errors=True)
        return
    raise OSError(errno.EBUSY, "another run kept replacing the report directory")


def _link_or_copy(src: str, dst: str) -> str:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
    return dst


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories (Linux renameat2). False where the system or filesystem cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    rc = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
