"""collect at its joins (issues 25, 28): unverified copies, re-serialised runs, bad files, links, hostile names."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.collect.conftest import TRN1, cli_run, make_result, put


def _row(out: str, option: str = "trn1 on-demand") -> dict:
    return next(r for r in json.loads(out)["options"] if r["option"] == option)


def test_an_edited_copy_without_sidecar_is_unverified_and_never_preferred(
    tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res = tmp_path / "results"
    put(make_result(extra=TRN1, tts=3600.0, minute=1), res, "original.json")
    # newer, more runs, a better figure: everything _rank liked, but nothing proves it is what ran
    put(make_result(extra=TRN1, tts=360.0, runs=9, accepted=9, minute=9), res, "edited.json", sidecar=False)
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--json"], capsys)
    assert code == 0, err
    row = _row(out)
    assert row["result"].endswith("original.json") and row["checksum"] == "verified" and row["status"] == "measured"
    (res / "original.json").unlink()
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--json"], capsys)
    assert code == 0, err
    assert _row(out)["status"] == "unverified" and _row(out)["checksum"] == "unverified"
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario)], capsys)
    assert code == 0 and "unverified" in out


def test_a_reindented_copy_is_the_same_run(tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = tmp_path / "results"
    p = put(make_result(extra=TRN1), res, "r.json")
    (res / "copy").mkdir()
    (res / "copy" / "r.json").write_text(json.dumps(json.loads(p.read_text()), indent=7), encoding="utf-8")
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--json"], capsys)
    assert code == 0, err
    rep = json.loads(out)
    assert _row(out)["runs"] == 1 and _row(out)["checksum"] == "verified"
    assert rep["duplicates"][0]["duplicates"][0].endswith(os.path.join("copy", "r.json"))


def test_one_bad_file_is_reported_and_the_others_collected(
    tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res = tmp_path / "results"
    put(make_result(extra=TRN1), res, "good.json")
    bad = put(make_result(extra=TRN1, minute=5), res, "bad.json")
    bad.write_text(bad.read_text()[:200])  # truncated in the copy: not a result, and not what the pilot wrote
    edited = put(make_result(extra=TRN1, minute=9), res, "edited.json")
    edited.write_text(edited.read_text().replace('"time_to_target_s": 3600.0', '"time_to_target_s": 360.0'))
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--json"], capsys)
    assert code == 0, err
    rep = json.loads(out)
    assert _row(out)["result"].endswith("good.json") and _row(out)["runs"] == 2  # the edited one: a run, never best
    assert [b["file"] for b in rep["bad"]] == [str(bad)] and "does not match the checksum" in rep["bad"][0]["why"]
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario)], capsys)
    assert code == 0 and "not collected" in err and "Traceback" not in err


def test_a_4gb_sparse_file_is_one_line(tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = tmp_path / "results"
    res.mkdir()
    with open(res / "huge.json", "wb") as f:
        f.truncate(4 * 1024**3)  # sparse: no disk used, 4 GiB to read
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario)], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and "too large" in err


def test_write_through_a_symlink_writes_the_scenario(
    tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res = tmp_path / "results"
    put(make_result(extra=TRN1), res, "r.json")
    link = tmp_path / "link.toml"
    link.symlink_to(scenario)
    code, _out, err = cli_run(["collect", str(res), "--scenario", str(link), "--write"], capsys)
    assert code == 0, err
    assert link.is_symlink() and "result = " in scenario.read_text(encoding="utf-8")


def test_hostile_file_names_reach_the_terminal_escaped(
    tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res = tmp_path / "results"
    put(make_result(extra=TRN1), res, "[/red][bold]x\x1b[2J.json")
    put(make_result(kind="serving", accelerator=None, device_type="cpu"), res, "[link=x]y\x07.json")
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario)], capsys)
    assert code == 0, err
    assert "\x1b[2J" not in out + err and "\x07" not in out + err
    flat = (out + err).replace("\n", "")
    assert "\\x1b[2J" in flat and "[link=x]y\\x07" in flat  # shown as text, not applied
