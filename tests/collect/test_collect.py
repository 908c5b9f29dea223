"""`accelpilot collect`: check, match by fingerprint, write back with comments kept, refuse what is wrong."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.collect.conftest import SCENARIO, TRN1, cli_run, make_result, put

from accelpilot.collect import ScenarioDoc
from accelpilot.errors import InputFileError


def test_match_by_instance_type_and_accelerator(
    tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res = tmp_path / "results"
    put(make_result(extra=TRN1), res, "trn1.json")  # EC2 DMI says trn1.32xlarge
    put(make_result(accelerator="H100", device_type="cuda", tts=7200), res, "h100.json")  # a box with H100s
    put(make_result(accelerator=None, device_type="cpu"), res, "cpu.json")  # matches nothing
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--json"], capsys)
    assert code == 0, err
    rep = json.loads(out)
    dest = tmp_path / "scenario.collected.toml"
    assert rep["written"] == str(dest) and scenario.read_text() == SCENARIO  # the source is untouched
    status = {r["option"]: (r["status"], r["how"]) for r in rep["options"]}
    assert status == {
        "p5 on-demand": ("assumed", ""),  # an H100 box is not a p5.48xlarge: cloud options need the instance type
        "trn1 on-demand": ("measured", "same instance type"),
        "trn1 reserved": ("measured", "same instance type"),  # same machine, other contract
        "owned 8xH100": ("measured", "same accelerator"),
    }
    assert [x["file"].endswith("cpu.json") for x in rep["left_out"]] == [True]
    new = dest.read_text()
    assert 'result = "results/trn1.json" # measured: collected' in new
    assert 'result = "results/h100.json"' in new
    # every original line is still there, in order: only result lines were added
    kept = [ln for ln in new.splitlines() if not ln.startswith("result = ")]
    assert kept == SCENARIO.splitlines()


def test_launched_labels_win_and_contradictions_are_refused(
    tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res = tmp_path / "results"
    put(
        make_result(accelerator="H100", device_type="cuda", extra={"launch": {"options": ["trn1 on-demand"]}}),
        res,
        "a.json",
    )
    before = scenario.read_bytes()
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--write"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "launched for option 'trn1 on-demand' but measured on H100, the option prices Trainium" in err
    assert "--as 'trn1 on-demand'" in err
    assert scenario.read_bytes() == before and not (tmp_path / "scenario.collected.toml").exists()
    # a result on the right machine with the label: only the labelled option gets it
    shutil.rmtree(res)
    put(make_result(extra={**TRN1, "launch": {"options": ["trn1 on-demand"]}}), res, "b.json")
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--write", "--json"], capsys)
    assert code == 0, err
    st = {r["option"]: r["status"] for r in json.loads(out)["options"]}
    assert st["trn1 on-demand"] == "measured" and st["trn1 reserved"] == "assumed"
    # a labelled instance type that contradicts: measured on trn1.2xlarge, launched for trn1.32xlarge
    shutil.rmtree(res)
    wrong = {"cloud": {"instance_type": "trn1.2xlarge"}, "launch": {"options": ["trn1 reserved"]}}
    put(make_result(extra=wrong), res, "c.json")
    code, _, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--write"], capsys)
    assert code == 2 and "measured on trn1.2xlarge, the option prices trn1.32xlarge" in err


def test_best_of_several_runs_and_duplicates(
    tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res = tmp_path / "results"
    put(make_result(extra=TRN1, runs=3, accepted=1, minute=1), res, "a-one-accepted.json")
    best = put(make_result(extra=TRN1, runs=5, accepted=5, minute=2), res, "b-all-accepted.json")
    put(make_result(extra=TRN1, runs=3, accepted=3, minute=3), res, "c-newer-fewer-runs.json")
    (res / "copy").mkdir()
    shutil.copy(best, res / "copy" / "same-bytes.json")
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--json"], capsys)
    assert code == 0, err
    rep = json.loads(out)
    row = next(r for r in rep["options"] if r["option"] == "trn1 on-demand")
    # three runs are combined (tests/collect/test_combine.py has the figures); the best run leads them
    assert row["result"].endswith("trn1-on-demand.combined.json") and row["runs"] == 3
    assert row["combined"]["runs"][0].endswith("b-all-accepted.json") and row["checksum"] == "verified"
    assert len(rep["duplicates"]) == 1 and rep["duplicates"][0]["duplicates"][0].endswith("same-bytes.json")
    assert "olympic mean of 3 runs" in (tmp_path / "scenario.collected.toml").read_text()


@pytest.mark.parametrize("damage", ["truncated", "newer", "no sidecar but not JSON"])
def test_bad_result_files(tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str], damage: str) -> None:
    res = tmp_path / "results"
    p = put(make_result(extra=TRN1), res, "r.json")
    raw = p.read_text()
    if damage == "truncated":
        p.write_text(raw[: len(raw) // 2])
    elif damage == "newer":
        data = json.loads(raw)
        data["schema_version"] = 99
        p.write_text(json.dumps(data))
        p.with_name("r.json.sha256").unlink()
    else:
        p.with_name("r.json.sha256").unlink()
        p.write_text(raw[:100])
    before = scenario.read_bytes()
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--write"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert str(p) in err
    expect = {
        "truncated": "does not match the checksum",
        "newer": "upgrade accelpilot",
        "no sidecar but not JSON": "JSON",
    }[damage]
    assert expect in err
    assert scenario.read_bytes() == before


def test_read_only_scenario_is_left_alone(tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = tmp_path / "results"
    put(make_result(extra=TRN1), res, "r.json")
    scenario.chmod(0o444)
    try:
        code, _, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--write"], capsys)
        assert code == 2 and "read-only; nothing written" in err and err.count("\n") == 1
        assert scenario.read_text() == SCENARIO
    finally:
        scenario.chmod(0o644)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        code, _, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--out", str(ro / "s.toml")], capsys)
        assert code == 2 and "folder is read-only" in err
    finally:
        ro.chmod(0o755)


def test_scenario_changed_since_read_is_not_overwritten(tmp_path: Path, scenario: Path) -> None:
    doc = ScenarioDoc.read(scenario)
    doc.set_result("trn1 on-demand", "results/r.json", "measured")
    edited = SCENARIO.replace("hours_per_run = 26\n", "hours_per_run = 27\n", 1)
    scenario.write_text(edited)  # someone saved the file meanwhile
    with pytest.raises(InputFileError, match="changed since collect read it"):
        doc.write(scenario)
    assert scenario.read_text() == edited


def test_as_option_assigns_anything_and_checks_names(
    tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res = tmp_path / "results"
    put(make_result(accelerator=None, device_type="cpu"), res, "cpu.json", sidecar=False)
    code, _, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--as", "trn2"], capsys)
    assert code == 2 and "--as 'trn2' names no option" in err
    code, out, err = cli_run(
        ["collect", str(res), "--scenario", str(scenario), "--as", "trn1 reserved", "--json"], capsys
    )
    assert code == 0, err
    row = next(r for r in json.loads(out)["options"] if r["option"] == "trn1 reserved")
    assert row["status"] == "unverified" and row["how"] == "--as" and row["checksum"] == "unverified"
    put(make_result(kind="serving", accelerator=None, device_type="cpu"), res, "serve.json")
    code, _, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--as", "trn1 reserved"], capsys)
    assert code == 2 and "a serving result cannot price option 'trn1 reserved'" in err
