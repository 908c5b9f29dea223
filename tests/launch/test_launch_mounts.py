"""Spot as a managed job with recovery, and a data file the pilot reads mounted on the node."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from tests.launch.conftest import run_cli, sky_or_skip
from tests.launch.test_launch_tasks import SCENARIO, _load


def test_spot_with_a_bucket_is_a_managed_job_with_recovery(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sky_or_skip()
    from sky.utils import registry

    from accelpilot.launch.skypilot import check_task

    sc = tmp_path / "s.toml"
    sc.write_text(SCENARIO)
    out = tmp_path / "tasks"
    code, _, err = run_cli(["launch", str(sc), "--out", str(out), "--bucket", "my-results"], capsys)
    assert code == 0, err
    spot = _load(out / "trn1-spot-x2.yaml")
    assert spot["resources"]["use_spot"] is True
    assert spot["resources"]["job_recovery"] == {"strategy": "FAILOVER", "max_restarts_on_errors": 0}
    check_task(spot, "trn1-spot-x2.yaml")  # SkyPilot 0.14.1's resources schema takes job_recovery
    registry.JOBS_RECOVERY_STRATEGY_REGISTRY.from_str("FAILOVER")  # a strategy SkyPilot knows
    readme = (out / "README.md").read_text()
    assert "`sky jobs launch -n accelpilot-trn1-spot-x2 trn1-spot-x2.yaml` (managed" in readme
    runpod = _load(out / "b200-at-runpod.yaml")  # on demand: a plain cluster, no recovery
    assert "job_recovery" not in runpod["resources"]
    assert "sky launch -c accelpilot-b200-at-runpod b200-at-runpod.yaml" in readme

    # without a bucket a managed job's result would vanish with its cluster: a plain cluster, and said so
    out2 = tmp_path / "tasks2"
    assert run_cli(["launch", str(sc), "--out", str(out2), "--no-check"], capsys)[0] == 0
    assert "job_recovery" not in _load(out2 / "trn1-spot-x2.yaml")["resources"]
    assert "spot without --bucket runs as a plain cluster" in (out2 / "README.md").read_text()


def test_a_data_file_the_pilot_reads_is_mounted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sky_or_skip()
    from accelpilot.launch.skypilot import check_task

    data = tmp_path / "my data.bin"
    data.write_bytes(b"\0\1" * 2048)
    sc = tmp_path / "s.toml"
    sc.write_text(SCENARIO)
    out = tmp_path / "tasks"
    args = ["launch", str(sc), "--out", str(out), "--pilot-args", f"--steps 3 --tokens {shlex.quote(str(data))}"]
    code, stdout, err = run_cli([*args, "--json"], capsys)
    assert code == 0, err
    assert json.loads(stdout)["checked"].startswith("checked with SkyPilot")  # its parser found the file
    task = _load(out / "trn1-spot-x2.yaml")
    assert task["file_mounts"]["/accelpilot-data/0-my data.bin"] == str(data.resolve())
    assert shlex.split(task["envs"]["ACCELPILOT_PILOT_ARGS"]) == [
        *("--steps", "3", "--tokens", "/accelpilot-data/0-my data.bin")
    ]
    check_task(task, "trn1-spot-x2.yaml")
    # a path that is not here (relative to --workdir, or on the image) is left as given
    missing = ["launch", str(sc), "--out", str(out), "--no-check", "--pilot-args", "--tokens=remote/t.bin"]
    assert run_cli(missing, capsys)[0] == 0
    task = _load(out / "trn1-spot-x2.yaml")
    assert task["envs"]["ACCELPILOT_PILOT_ARGS"] == "--tokens=remote/t.bin"
    assert not any(k.startswith("/accelpilot-data") for k in task["file_mounts"])


def test_a_script_says_to_copy_the_data_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sc = tmp_path / "s.toml"
    sc.write_text(SCENARIO)
    out = tmp_path / "tasks"
    args = ["launch", str(sc), "--out", str(out), "--no-check", "--pilot-args", "--tokens /data/t.bin"]
    assert run_cli(args, capsys)[0] == 0
    readme = (out / "README.md").read_text()
    assert "owned-8xh100: copy the --tokens file to the machine" in readme
    assert "trn1-spot-x2: copy the --tokens file" not in readme  # SkyPilot tasks mount it instead
