"""MLflow export against real mlflow-skinny stores (issue 28 item 6): a failure after the run is created ends it
FAILED so the next export retries it (it used to stay RUNNING and every later export said "already exported");
broken tracking stores give one line and exit 2, never a traceback, and never print a password in the URI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.export.test_mlflow_export import _result

from accelpilot.cli import main

mlflow = pytest.importorskip("mlflow", reason="MLflow is not installed (pip install 'accelpilot[tracking]'); CI has it")


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err and len(lines) == 1, err
    return lines[0]


def test_failure_after_create_ends_failed_and_a_retry_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    path = _result(tmp_path)

    def refuse(self: object, *a: object, **k: object) -> None:
        raise MlflowException("artifact store unreachable")

    with monkeypatch.context() as m:
        m.setattr(MlflowClient, "log_artifact", refuse)
        assert main(["export", "mlflow", str(path), "--tracking-uri", uri]) == 2
    assert "artifact store unreachable" in _one_line(capsys.readouterr().err)
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name("accelpilot")
    assert exp is not None
    [failed] = client.search_runs([exp.experiment_id])
    assert failed.info.status == "FAILED"

    assert main(["export", "mlflow", str(path), "--tracking-uri", uri, "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)["runs"]
    assert row["status"] == "logged" and row["run_id"] != failed.info.run_id
    assert client.get_run(row["run_id"]).info.status == "FINISHED"


@pytest.mark.parametrize("case", ["file_in_place_of_folder", "sqlite_under_a_file", "bad_scheme_with_password"])
def test_broken_store_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    path = _result(tmp_path)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    uri = {
        "file_in_place_of_folder": blocker.as_uri(),
        "sqlite_under_a_file": f"sqlite:///{blocker / 'mlflow.db'}",
        "bad_scheme_with_password": "nosuchstore://alice:s3cret@tracker.example/x",
    }[case]
    assert main(["export", "mlflow", str(path), "--tracking-uri", uri]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("accelpilot: error: ") and "--tracking-uri" in line
    assert "s3cret" not in line
