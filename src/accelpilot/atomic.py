"""Atomic writes that never need hard links (issue 28): a reader sees the old file or the new one, never half of
either; a new-file write never replaces a file another run wrote. Object-store and bucket mounts refuse ``link``
(and some refuse ``rename``): each step falls back to the next that the folder allows, down to a plain write with a
``.sha256`` checksum beside it, and a failed write says where the data is."""

from __future__ import annotations

import errno
import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

# errno values a filesystem answers when it cannot do an operation at all (as opposed to "the name exists").
_REFUSED = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.ENOSYS, errno.EMLINK, errno.EACCES}


class WriteFailedError(OSError):
    """A write failed; ``kept`` is where the data is (a temp file left on purpose), or None if nowhere."""

    def __init__(self, cause: OSError, kept: Path | None) -> None:
        super().__init__(cause.errno, cause.strerror or str(cause))
        self.kept = kept

    def where(self) -> str:
        return f"the data is kept in {self.kept}" if self.kept else "nothing was written"


def _refused(exc: OSError) -> bool:
    return exc.errno in _REFUSED and not isinstance(exc, FileExistsError)


def _fsync_dir(folder: Path) -> None:
    try:
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:  # some mounts cannot open a folder for reading: the data is on disk already
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def _write_checksum(path: Path, data: bytes) -> None:
    digest = hashlib.sha256(data).hexdigest()
    side = path.with_name(path.name + ".sha256")
    with open(side, "w", encoding="utf-8") as fh:  # `sha256sum -c name.sha256` checks it
        fh.write(f"{digest}  {path.name}\n")
        fh.flush()
        os.fsync(fh.fileno())


def _temp(folder: Path, name: str, data: bytes) -> Path:
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def write_text_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """Replace ``path`` with ``text``; ``mode`` keeps a file's permission bits across the rename.

    Where the folder refuses ``rename`` the text is written in place with a ``.sha256`` beside it; a failure after
    the temp file exists keeps it and raises WriteFailedError naming it.
    """
    parent = path.parent if str(path.parent) else Path(".")
    data = text.encode("utf-8")
    tmp = _temp(parent, path.name, data)
    try:
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
        return
    except OSError as exc:
        if not _refused(exc):
            tmp.unlink(missing_ok=True)
            raise
    try:
        _plain_write(path, data, exclusive=False)
    except OSError as exc:
        raise WriteFailedError(exc, tmp) from exc
    tmp.unlink(missing_ok=True)


def _plain_write(path: Path, data: bytes, *, exclusive: bool) -> None:
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    _write_checksum(path, data)


def write_new_file(folder: Path, name_for: Callable[[int], str], text: str, tries: int = 100) -> Path:
    """Write ``text`` under the first free name ``name_for(0), name_for(1), ...`` in ``folder``; never replaces a
    file. Returns the path written.

    1. ``link`` the temp file to the name (fails when the name exists, unlike ``rename``);
    2. where ``link`` is refused: claim the name with an exclusive create, then ``rename`` the temp file over that
       empty claim (ours: no other writer can have created it). A reader may see the empty claim for an instant,
       never half a file;
    3. where ``rename`` is refused too: write into the claimed file and put a ``.sha256`` checksum beside it.
    Any failure after the temp file exists keeps it and raises WriteFailedError naming it.
    """
    data = text.encode("utf-8")
    tmp = _temp(folder, name_for(0), data)
    link_ok = True
    try:
        for attempt in range(tries):
            path = folder / name_for(attempt)
            if link_ok:
                try:
                    os.link(tmp, path)
                    break
                except FileExistsError:
                    continue
                except OSError as exc:
                    if not _refused(exc):
                        raise
                    link_ok = False
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))  # claim the name
            except FileExistsError:
                continue
            try:
                os.replace(tmp, path)
            except OSError as exc:
                if not _refused(exc):
                    raise
                _plain_write(path, data, exclusive=False)  # into our own claim
            break
        else:  # pragma: no cover - 100 collisions of random names
            raise FileExistsError(errno.EEXIST, f"no free name in {folder}")
        _fsync_dir(folder)
    except OSError as exc:
        raise WriteFailedError(exc, tmp if tmp.exists() else None) from exc
    tmp.unlink(missing_ok=True)
    return path
