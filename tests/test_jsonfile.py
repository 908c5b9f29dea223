"""jsonfile: every way a JSON file can be wrong is one InputFileError line naming the file, the field and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from accelpilot.errors import InputFileError
from accelpilot.jsonfile import read_model


class Thing(BaseModel):
    name: str
    size: int


def _err(path: Path, **kw: object) -> str:
    with pytest.raises(InputFileError) as info:
        read_model(path, Thing, "thing file", fix="write a good one", **kw)  # type: ignore[arg-type]
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(str(path))
    return msg


def test_reads_a_good_file(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_text('{"name": "a", "size": 3}', encoding="utf-8")
    assert read_model(p, Thing, "thing file", fix="-") == Thing(name="a", size=3)


def test_missing_file(tmp_path: Path) -> None:
    assert "no such thing file" in _err(tmp_path / "nope.json")


def test_bad_json_names_the_line(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_text('{\n"name": "a",\n"size": }', encoding="utf-8")
    msg = _err(p)
    assert "not valid JSON (line 3" in msg and "fix: write a good one" in msg


def test_not_an_object(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_text("[1, 2]", encoding="utf-8")
    assert "not a thing file (expected a JSON object)" in _err(p)


def test_wrong_field_is_named(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_text('{"name": "a", "size": "big"}', encoding="utf-8")
    assert f"{p}: size: not a thing file" in _err(p)


def test_check_runs_before_validation(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_text('{"version": 9}', encoding="utf-8")

    def newer(data: dict[str, object]) -> None:
        raise InputFileError("written by a newer tool", file=str(p), field="version")

    assert "version: written by a newer tool" in _err(p, check=newer)


def test_undecodable_bytes(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_bytes(b"\xff\xfe\x00{")
    assert "cannot read thing file" in _err(p)
