"""Writes never need hard links (issue 28 item 2): object-store and bucket mounts refuse ``link`` (EPERM/ENOTSUP)
and some refuse ``rename``; results and atomic files still land whole, never replace an existing file, and a
failed write says where the data is. The mounts are simulated by making ``os.link``/``os.replace`` refuse."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path

import pytest
from tests.hostile.hostile_kit import training_result

from accelpilot import atomic
from accelpilot.atomic import WriteFailedError, write_new_file, write_text_atomic
from accelpilot.pilot.result import read_result, write_new_result


def _refuse(code: int):  # type: ignore[no-untyped-def]
    def refuse(*a: object, **k: object) -> None:
        raise OSError(code, os.strerror(code))

    return refuse


@pytest.mark.parametrize("code", [errno.EPERM, errno.ENOTSUP])
def test_result_lands_where_link_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    monkeypatch.setattr(os, "link", _refuse(code))
    res = training_result()
    first = write_new_result(res, tmp_path)
    second = write_new_result(res, tmp_path)  # same second, same name: must not replace the first
    assert first != second
    assert read_result(first).model_dump() == read_result(second).model_dump() == res.model_dump()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first.name, second.name])  # no temp left


def test_link_refused_never_replaces_an_existing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "link", _refuse(errno.EPERM))
    (tmp_path / "a.json").write_text("theirs", encoding="utf-8")
    p = write_new_file(tmp_path, lambda i: "a.json" if i == 0 else f"a-{i}.json", "ours")
    assert p.name == "a-1.json"
    assert (tmp_path / "a.json").read_text(encoding="utf-8") == "theirs"
    assert p.read_text(encoding="utf-8") == "ours"


def test_link_and_rename_refused_plain_write_with_checksum(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "link", _refuse(errno.EPERM))
    monkeypatch.setattr(os, "replace", _refuse(errno.ENOTSUP))
    p = write_new_file(tmp_path, lambda i: f"r{i}.json", '{"x": 1}\n')
    assert json.loads(p.read_text(encoding="utf-8")) == {"x": 1}
    side = (tmp_path / "r0.json.sha256").read_text(encoding="utf-8")
    assert side == hashlib.sha256(b'{"x": 1}\n').hexdigest() + "  r0.json\n"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["r0.json", "r0.json.sha256"]
    # the same for a replacing write
    write_text_atomic(tmp_path / "s.md", "hello")
    assert (tmp_path / "s.md").read_text(encoding="utf-8") == "hello"
    assert (tmp_path / "s.md.sha256").read_text(encoding="utf-8").split()[0] == hashlib.sha256(b"hello").hexdigest()


def test_failed_write_says_where_the_data_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "link", _refuse(errno.EPERM))
    monkeypatch.setattr(os, "replace", _refuse(errno.ENOTSUP))
    monkeypatch.setattr(atomic, "_plain_write", _refuse(errno.ENOSPC))
    res = training_result()
    with pytest.raises(WriteFailedError) as ei:
        write_new_result(res, tmp_path)
    kept = ei.value.kept
    assert kept is not None and kept.exists()
    assert str(kept) in ei.value.where()
    assert json.loads(kept.read_text(encoding="utf-8"))["kind"] == "training"


def test_folder_refusing_everything_keeps_a_rescue_copy(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("running as root: a read-only folder is writable")
        with pytest.raises(WriteFailedError) as ei:
            write_new_result(training_result(), ro)
        kept = ei.value.kept
        assert kept is not None and kept.exists() and not str(kept).startswith(str(ro))
        assert json.loads(kept.read_text(encoding="utf-8"))["kind"] == "training"
        kept.unlink()
    finally:
        ro.chmod(0o700)
