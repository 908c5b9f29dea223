"""`accelpilot report` and `accelpilot pilot` on bad input: one line naming the file and the fix, exit 2,
nothing written into the report directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from accelpilot.cli import main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(err: str, *needles: str) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("accelpilot: error:")
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], (n, lines[0])


def test_report_ok(files: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rep"
    code, stdout, _ = run(
        [
            "report",
            "--scenario",
            str(files["scenario"]),
            "--results",
            str(files["cpu"]),
            "--scan-log",
            str(files["log"]),
            "--out",
            str(out),
        ],
        capsys,
    )
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "report.json", "report.md"]
    assert "Qualify" in stdout


def test_report_json_flag(files: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, _ = run(
        ["report", "--scenario", str(files["scenario"]), "--out", str(tmp_path / "r"), "--json"], capsys
    )
    assert code == 0
    assert json.loads(stdout)["schema_id"] == "accelpilot-report/1"


def _untouched(out: Path) -> None:
    assert not out.exists() or list(out.iterdir()) == []


def test_newer_schema_result(files: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(files["cpu"].read_text())
    data["schema_version"] = 99
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(data))
    out = tmp_path / "rep"
    code, _, err = run(
        ["report", "--scenario", str(files["scenario"]), "--results", str(newer), "--out", str(out)], capsys
    )
    assert code == 2
    assert_one_line_error(err, str(newer), "newer", "fix: upgrade accelpilot")
    _untouched(out)


def test_serving_result_for_training_scenario(
    files: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rep"
    code, _, err = run(
        ["report", "--scenario", str(files["scenario"]), "--results", str(files["serve"]), "--out", str(out)], capsys
    )
    assert code == 2
    assert_one_line_error(err, str(files["serve"]), "serving result", "training", "fix:")
    _untouched(out)


def test_scenario_names_wrong_kind_result(
    files: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sc = files["scenario"]
    sc.write_text(sc.read_text().replace('result = "trn.json"', 'result = "cpu-serve.json"'))
    out = tmp_path / "rep"
    code, _, err = run(["report", "--scenario", str(sc), "--out", str(out)], capsys)
    assert code == 2
    assert_one_line_error(err, "cpu-serve.json", "serving result", "fix:")
    _untouched(out)


def test_option_without_result_or_hours(
    files: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sc = files["scenario"]
    sc.write_text(sc.read_text().replace("hours_per_run = 20\n", ""))
    out = tmp_path / "rep"
    out.mkdir()
    (out / "report.html").write_text("old")
    code, _, err = run(["report", "--scenario", str(sc), "--out", str(out)], capsys)
    assert code == 2
    assert_one_line_error(err, str(sc), "no result and no assumed hours", "hours_per_run")
    assert [p.name for p in out.iterdir()] == ["report.html"]
    assert (out / "report.html").read_text() == "old"


def test_bad_scan_log(files: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "log.json"
    bad.write_text("{not json")
    out = tmp_path / "rep"
    code, _, err = run(
        ["report", "--scenario", str(files["scenario"]), "--scan-log", str(bad), "--out", str(out)], capsys
    )
    assert code == 2
    assert_one_line_error(err, str(bad))
    _untouched(out)


def test_pilot_checks_results_before_running(
    files: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rep"
    code, _, err = run(
        ["pilot", "--scenario", str(files["scenario"]), "--results", str(files["serve"]), "--out", str(out)], capsys
    )
    assert code == 2
    assert_one_line_error(err, str(files["serve"]), "serving result")
    _untouched(out)


def test_pilot_missing_repo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rep"
    code, _, err = run(["pilot", "--repo", str(tmp_path / "nope"), "--out", str(out)], capsys)
    assert code == 2
    assert_one_line_error(err, "nope", "--repo")
    _untouched(out)


def test_pilot_without_running_pilots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Scan the reference workloads, price the bundled worked example, write the report (no pilots: fast)."""
    out = tmp_path / "rep"
    code, stdout, _ = run(["pilot", "--skip-train", "--skip-serve", "--out", str(out)], capsys)
    assert code == 0
    data = json.loads((out / "report.json").read_text())
    assert data["portability"] is not None
    assert data["scenario"]["name"].startswith("Seed 004 worked example")
    assert (out / "inputs" / "portability-log.json").exists()
    assert "Rebuild without running" in stdout


def test_python_dash_m(tmp_path: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "accelpilot", "--help"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "pilot" in proc.stdout and "report" in proc.stdout


def test_pilot_failure_is_one_line_and_writes_no_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rep"
    code, _, err = run(
        ["pilot", "--skip-serve", "--skip-scan", "--workload", "no_such_module_xyz:factory", "--out", str(out)], capsys
    )
    assert code == 2
    assert_one_line_error(err, "train.log", "the train pilot failed", "--skip-train")
    assert not (out / "report.html").exists() and not (out / "report.json").exists()
