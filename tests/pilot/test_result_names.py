"""Result file names: unique per run even within one second, bounded in length, never replacing a file."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from accelpilot.pilot.result import MAX_NAME, PilotResult, Platform, WorkloadInfo, read_result, write_new_result

SAME_SECOND = dt.datetime(2026, 11, 30, 7, 0, 0, tzinfo=dt.timezone.utc)


def _result(command: str, workload: str = "gpt-tiny") -> PilotResult:
    return PilotResult(
        kind="training",
        created=SAME_SECOND,
        command=command,
        platform=Platform(device="cpu", device_type="cpu"),
        workload=WorkloadInfo(name=workload),
    )


def test_two_runs_in_the_same_second_keep_both_results(tmp_path: Path) -> None:
    a = write_new_result(_result("run a"), tmp_path)
    b = write_new_result(_result("run b"), tmp_path)
    assert a != b and a.parent == b.parent == tmp_path
    assert read_result(a).command == "run a" and read_result(b).command == "run b"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([a.name, b.name])  # no temp file left


def test_an_existing_file_is_never_replaced(tmp_path: Path) -> None:
    taken = tmp_path / _result("x").default_filename()
    taken.write_text("another run's file", encoding="utf-8")
    written = write_new_result(_result("mine"), tmp_path)
    assert written != taken and taken.read_text(encoding="utf-8") == "another run's file"


def test_names_are_bounded_and_keep_the_stamp(tmp_path: Path) -> None:
    long = _result("long", workload="org/" + "m" * 300)
    name = long.default_filename()
    assert len(name) <= MAX_NAME and name.endswith("-20261130T070000Z.json") and name.startswith("cpu-org-mmm")
    first = write_new_result(long, tmp_path)
    second = write_new_result(long, tmp_path)
    assert len(second.name) <= MAX_NAME and first != second
