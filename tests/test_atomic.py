"""The one atomic text write: the old file survives a failed write, no temp file is left, permission bits kept."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from accelpilot import atomic
from accelpilot.atomic import write_text_atomic


def test_replaces_and_keeps_the_given_mode(tmp_path: Path) -> None:
    p = tmp_path / "s.toml"
    p.write_text("old\n")
    write_text_atomic(p, "new\n", 0o600)
    assert p.read_text() == "new\n"
    assert p.stat().st_mode & 0o777 == 0o600
    assert [x.name for x in tmp_path.iterdir()] == ["s.toml"]


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "s.toml"
    p.write_text("old\n")

    def no_space(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", no_space)
    with pytest.raises(OSError, match="No space"):
        write_text_atomic(p, "new\n")
    assert p.read_text() == "old\n"
    assert [x.name for x in tmp_path.iterdir()] == ["s.toml"]
    assert os.path.exists(p)
