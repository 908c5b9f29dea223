"""`accelpilot export mlflow`: results round-trip through a local MLflow store (no server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelpilot.cli import main
from accelpilot.figures import measured
from accelpilot.pilot.result import PilotResult, Platform, TrainingSummary, WorkloadInfo, write_result

mlflow = pytest.importorskip("mlflow", reason="MLflow is not installed (pip install 'accelpilot[tracking]'); CI has it")


def _result(tmp_path: Path) -> Path:
    res = PilotResult(
        kind="training",
        platform=Platform(
            device="cuda",
            device_type="cuda",
            device_name="NVIDIA H200",
            accelerator="H200",
            torch="2.13.0",
            tool_output={"nvidia-smi": [{"name": "NVIDIA H200"}]},
            cloud={"cloud": "aws", "region": "us-east-1"},
        ),
        workload=WorkloadInfo(name="gpt-tiny", factory="builtin:gpt", config={"n_layer": 2}),
        config={"batch_size": 8, "seq_len": 32, "shapes": [32, 64]},
        command="accelpilot run train --device cuda",
        figures={
            "tokens_per_s": measured(12345.5, "token/s", "fixture", "throughput"),
            "time_to_target_s": measured(42.25, "s", "fixture", "time to target"),
        },
        training=TrainingSummary(tokens_per_s=12345.5, time_to_target_s=42.25, runs=1, accepted_runs=1),
        accepted=True,
    )
    return write_result(res, tmp_path / "r.json")


@pytest.mark.parametrize("store", ["file", "sqlite"])
def test_round_trip_through_a_local_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, store: str
) -> None:
    from mlflow.tracking import MlflowClient

    monkeypatch.chdir(tmp_path)  # a sqlite store keeps artifacts under ./mlruns of the working folder
    if store == "file":  # MLflow 3 keeps the file store behind this switch
        monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
        uri = (tmp_path / "mlruns").as_uri()
    else:
        uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    path = _result(tmp_path)
    report = tmp_path / "report"
    report.mkdir()
    (report / "report.md").write_text("# report\n")
    code = main(["export", "mlflow", str(path), "--tracking-uri", uri, "--report", str(report), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["runs"][0]["status"] == "logged"
    run = MlflowClient(uri).get_run(out["runs"][0]["run_id"])
    # one GPU, one rank (no topology recorded: read as world size 1): per accelerator = 12345.5 / 1
    assert run.data.metrics == {
        "tokens_per_s": 12345.5,
        "time_to_target_s": 42.25,
        "tokens_per_s_per_accelerator": 12345.5,
    }
    p = run.data.params
    assert p["platform.accelerator"] == "H200" and p["platform.cloud.region"] == "us-east-1"
    assert p["config.shapes"] == "[32, 64]" and p["workload.config.n_layer"] == "2" and p["kind"] == "training"
    assert not any(k.startswith("platform.tool_output") for k in p)  # tool output is a file, not a param
    assert run.data.tags["figure.tokens_per_s"] == "token/s measured: throughput"
    got = Path(
        mlflow.artifacts.download_artifacts(run_id=run.info.run_id, tracking_uri=uri, dst_path=str(tmp_path / "dl"))
    )
    assert (got / "result" / "r.json").read_bytes() == path.read_bytes()
    assert (got / "report" / "report.md").read_text() == "# report\n"
    # exporting the same bytes again logs nothing new
    assert main(["export", "mlflow", str(path), "--tracking-uri", uri, "--json"]) == 0
    again = json.loads(capsys.readouterr().out)["runs"][0]
    assert again == {**out["runs"][0], "status": "already exported"}


def test_a_broken_result_logs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow.tracking import MlflowClient

    monkeypatch.chdir(tmp_path)

    good = _result(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(good.read_text()[:200])
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    code = main(["export", "mlflow", str(good), str(bad), "--tracking-uri", uri])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "bad.json" in err
    exp = MlflowClient(uri).get_experiment_by_name("accelpilot")
    assert exp is None  # checked everything before touching the store


def test_a_distributed_throughput_is_exported_per_world_size_and_per_accelerator() -> None:
    """Eight ranks on two nodes driving Trainium NeuronCores (2 per chip): 4 chips. Hand arithmetic."""
    from accelpilot.pilot.result import Topology
    from accelpilot.tracking.mlflow_export import result_metrics, result_params

    res = PilotResult(
        kind="training",
        platform=Platform(device="neuron", device_type="neuron", accelerator="Trainium"),
        workload=WorkloadInfo(name="gpt-tiny"),
        figures={"tokens_per_s": measured(8000.0, "token/s", "fixture", "throughput, all ranks")},
        training=TrainingSummary(tokens_per_s=8000.0),
        topology=Topology(world_size=8, nnodes=2, nproc_per_node=4, devices_per_accelerator=2, accelerators=4),
    )
    p = result_params(res)
    assert (p["topology.world_size"], p["topology.nnodes"], p["topology.accelerators"]) == ("8", "2", "4.0")
    assert result_metrics(res)["tokens_per_s_per_accelerator"] == 8000.0 / 4  # 2,000 tokens/s per chip


def test_the_checksum_travels_as_collect_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result with a matching .sha256 is tagged verified; one without, or edited after its .sha256 was written,
    is tagged unverified with collect's reason (issue 25: every join reads a result the same way)."""
    import hashlib

    from mlflow.tracking import MlflowClient

    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    tags = {}
    for name in ("verified", "none", "edited"):
        folder = tmp_path / name
        folder.mkdir()
        path = _result(folder)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if name != "none":
            path.with_name(path.name + ".sha256").write_text(f"{digest}  {path.name}\n", encoding="utf-8")
        if name == "edited":  # the throughput bumped by hand after the run
            path.write_text(path.read_text(encoding="utf-8").replace("12345.5", "22345.5"), encoding="utf-8")
        assert main(["export", "mlflow", str(path), "--tracking-uri", uri, "--json"]) == 0
        rid = json.loads(capsys.readouterr().out)["runs"][0]["run_id"]
        tags[name] = MlflowClient(uri).get_run(rid).data.tags["accelpilot.checksum"]
    assert tags["verified"] == "verified"
    assert tags["none"].startswith("unverified: no .sha256")
    assert tags["edited"].startswith("unverified: its content does not match")
