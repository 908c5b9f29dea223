"""Hostile pilot result files and scan logs: each is refused with one line naming the file and the field (exit 2),
never a traceback and never priced; a result recording errors is never priced as accepted."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.hostile.hostile_kit import dump, one_error_line, scan_log, serving_result, training_result

Cli = Callable[..., tuple[int, str, str]]


def _report(cli: Cli, good: dict[str, Path], *extra: str | Path) -> tuple[int, str, str]:
    return cli("report", "--scenario", good["scenario"], "--out", good["dir"].parent / "rep", *extra)


def _broken(good: dict[str, Path], path: list[str], value: Any) -> None:
    data = dump(training_result())
    node = data
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    good["trn"].write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (["training", "time_to_target_s"], -3600.0, "training.time_to_target_s"),
        (["training", "tokens_per_s"], -5.0, "training.tokens_per_s"),
        (["training", "accepted_runs"], 4, "training"),  # 4 accepted of 3 runs
        (["training", "runs"], -1, "training.runs"),
    ],
)
def test_impossible_measured_values_are_refused(
    cli: Cli, good: dict[str, Path], path: list[str], value: Any, field: str
) -> None:
    _broken(good, path, value)
    code, _, err = _report(cli, good)
    line = one_error_line(err)
    assert code == 2
    assert f"{good['trn']}: {field}" in line
    assert not (good["dir"].parent / "rep").exists()  # nothing written


def test_negative_completion_tokens_in_a_serving_result(cli: Cli, good: dict[str, Path]) -> None:
    data = dump(serving_result())
    data["serving"]["tokens_per_request"] = -7
    good["serve"].write_text(json.dumps(data), encoding="utf-8")
    code, _, err = _report(cli, good, "--beside", good["serve"])
    assert code == 2
    assert f"{good['serve']}: serving.tokens_per_request" in one_error_line(err)


@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity"])
def test_nan_names_file_and_field(cli: Cli, good: dict[str, Path], raw: str) -> None:
    text = json.dumps(dump(training_result())).replace('"tokens_per_s": null', f'"tokens_per_s": {raw}')
    assert raw in text
    good["trn"].write_text(text, encoding="utf-8")
    code, _, err = _report(cli, good)
    assert code == 2
    assert f"{good['trn']}: training.tokens_per_s: {float(raw)} is not a number" in one_error_line(err)


@pytest.mark.parametrize("version", [2.0, "2", "1", 1.0, True, 2, 99])
def test_schema_version_cannot_slip_past_the_newer_version_check(cli: Cli, good: dict[str, Path], version: Any) -> None:
    _broken(good, ["schema_version"], version)
    code, _, err = _report(cli, good)
    line = one_error_line(err)
    assert code == 2
    assert f"{good['trn']}: schema_version: " in line
    if type(version) is int:
        assert "newer accelpilot" in line
    else:
        assert "must be a whole number" in line


def test_deep_json_result_is_one_line(cli: Cli, good: dict[str, Path]) -> None:
    good["trn"].write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    code, _, err = _report(cli, good)
    assert code == 2
    assert f"{good['trn']}: nested too deeply to be a result file" in one_error_line(err)


def test_moderately_deep_json_inside_a_field_is_refused_by_field(cli: Cli, good: dict[str, Path]) -> None:
    deep: Any = 1
    for _ in range(500):  # below the parser's recursion limit, above anything accelpilot writes
        deep = {"d": deep}
    _broken(good, ["details"], deep)
    code, _, err = _report(cli, good)
    assert code == 2
    assert f"{good['trn']}: details.d.d.…: nested more than 64 levels deep" in one_error_line(err)


def test_deep_json_scan_log_is_one_line(cli: Cli, good: dict[str, Path]) -> None:
    good["log"].write_text('{"findings": ' + "[" * 200_000 + "]" * 200_000 + "}", encoding="utf-8")
    code, _, err = _report(cli, good, "--scan-log", good["log"])
    assert code == 2
    assert f"{good['log']}: nested too deeply to be a portability log" in one_error_line(err)


@pytest.mark.parametrize(
    ("content", "found"),
    [
        ({}, "no kind"),
        ({"schema_version": 1}, "no kind"),
        ("training", "a 'training' file"),  # a pilot result passed as the log
        ({"kind": "portability_log", "schema_version": "2"}, None),
    ],
)
def test_only_a_scan_log_passes_as_a_scan_log(cli: Cli, good: dict[str, Path], content: Any, found: str | None) -> None:
    data = dump(training_result()) if content == "training" else content
    good["log"].write_text(json.dumps(data), encoding="utf-8")
    code, _, err = _report(cli, good, "--scan-log", good["log"])
    line = one_error_line(err)
    assert code == 2
    if found:
        assert f"{good['log']}: kind: not a portability log: it has {found}" in line
    else:
        assert f"{good['log']}: schema_version: schema_version must be a whole number" in line


def test_a_log_written_before_kind_existed_still_reads(cli: Cli, good: dict[str, Path]) -> None:
    data = json.loads(scan_log().to_json())
    del data["kind"]
    good["log"].write_text(json.dumps(data), encoding="utf-8")
    code, _, err = _report(cli, good, "--scan-log", good["log"])
    assert code == 0, err


def test_a_result_with_errors_is_not_priced_as_accepted(cli: Cli, good: dict[str, Path]) -> None:
    data = dump(training_result())
    data["errors"] = ["checkpoint phase: [Errno 28] No space left on device"]
    good["trn"].write_text(json.dumps(data), encoding="utf-8")
    code, out, err = cli("bill", good["scenario"], "--json")
    assert code == 0, err
    trn = next(o for o in json.loads(out)["options"] if o["name"] == "trn")
    assert trn["cost_per_accepted_run"] is None
    assert float(trn["accepted_share"]) == 0
    assert any("recorded 1 error(s)" in n for n in trn["notes"])

    code, _, err = _report(cli, good)
    assert code == 0, err
    md = (good["dir"].parent / "rep" / "report.md").read_text(encoding="utf-8")
    assert "This pilot recorded 1 error(s); no run of it is priced as accepted" in md
    assert "No space left on device" in md


def test_a_serving_result_with_errors_is_refused_for_pricing(cli: Cli, tmp_path: Path) -> None:
    data = dump(serving_result())
    data["errors"] = ["server scenario: interrupted"]
    (tmp_path / "s.json").write_text(json.dumps(data), encoding="utf-8")
    sc = tmp_path / "s.toml"
    sc.write_text(
        '[scenario]\nname = "s"\nworkload = "serving"\n[volumes]\nrequests_per_month = 1000000\nmonths = 36\n'
        '[[options]]\nname = "g"\ninstance = "g5.xlarge"\npricing = "on_demand"\nresult = "s.json"\n',
        encoding="utf-8",
    )
    code, _, err = cli("bill", sc)
    assert code == 2
    assert f"{tmp_path / 's.json'}: errors: the serving pilot recorded 1 error(s)" in one_error_line(err)
