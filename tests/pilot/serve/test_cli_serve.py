"""`accelpilot run serve`: bad input is one line and exit 2; a run writes a result; --json is clean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelpilot.cli import main


@pytest.mark.parametrize(
    "args",
    [
        ["--slo-ms", "0"],
        ["--slo-ms", "-3"],
        ["--target-qps", "0"],
        ["--buckets", "32,zero"],
        ["--scenario", "serverr"],
        ["--max-batch", "0"],
        ["--device", "tpu"],
        ["--endpoint", "localhost:8000"],
        ["--endpoint", "http://127.0.0.1:1", "--request-rate", "-1"],
        ["--endpoint", "http://127.0.0.1:1", "--find-peak"],
        ["--workload", "no_such_module_xyz:make"],
    ],
)
def test_bad_input_exits_2_with_one_line(args: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["run", "serve", "--out", str(tmp_path), *args])
    err = capsys.readouterr().err
    assert code == 2
    lines = [ln for ln in err.splitlines() if "error" in ln]
    assert len(lines) == 1 and lines[0].startswith("accelpilot: error:")
    assert "Traceback" not in err
    assert not list(tmp_path.iterdir())


def test_json_run_writes_result(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("mlperf_loadgen")
    code = main(
        [
            "run",
            "serve",
            "--workload",
            "null",
            "--scenario",
            "server",
            "--target-qps",
            "100",
            "--duration-s",
            "0.5",
            "--num-samples",
            "32",
            "--out",
            str(tmp_path),
            "--json",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    data = json.loads(out)  # stdout holds the JSON and nothing else
    assert data["kind"] == "serving"
    assert data["serving"]["peak_qps_under_slo"] > 0
    files = list(tmp_path.glob("*.json"))
    assert len(files) == 1
    assert json.loads(files[0].read_text())["serving"] == data["serving"]


def test_refused_endpoint_writes_result_counting_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    code = main(
        [
            "run",
            "serve",
            "--endpoint",
            f"http://127.0.0.1:{port}/v1/completions",
            "--num-requests",
            "2",
            "--out",
            str(tmp_path),
            "--json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["serving"]["errors"] == 2


def test_option_defaults_come_from_the_config() -> None:
    """Every `run serve` option that names a ServeConfig field shows that field's default (one source)."""
    from dataclasses import fields

    import typer.main

    from accelpilot.cli.app import app
    from accelpilot.pilot.serve.base import ServeConfig

    defaults = {f.name: f.default for f in fields(ServeConfig)}
    cmd = typer.main.get_command(app).commands["run"].commands["serve"]  # type: ignore[attr-defined]
    checked = 0
    for p in cmd.params:
        name = {"scenario": "scenarios"}.get(p.name, p.name)
        if name not in defaults:
            continue
        want = defaults[name]
        got = p.default
        if name == "scenarios":
            got = tuple(got[0].split(","))
        elif name == "buckets":
            got = tuple(int(x) for x in got.split(","))
        assert got == want, name
        checked += 1
    assert checked >= 20


def test_two_runs_with_the_same_result_name_keep_both(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two serving runs ending in the same second (forced here: one name for both) never replace each other."""
    import socket

    from accelpilot.pilot.result import PilotResult

    real = PilotResult.default_filename
    monkeypatch.setattr(PilotResult, "default_filename", lambda self, unique="": real(self, unique or "same"))
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    args = ["run", "serve", "--endpoint", f"http://127.0.0.1:{port}/v1/completions", "--num-requests", "1"]
    for _ in range(2):
        assert main([*args, "--out", str(tmp_path), "--json"]) == 0
    capsys.readouterr()
    assert len(list(tmp_path.glob("*.json"))) == 2
