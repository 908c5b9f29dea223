"""The whole loop on this CPU: launch -> the written run block, run locally -> collect -> bill.

The run block is executed verbatim by bash with the task's own environment, overriding only what
``sky launch --env`` would (device cpu, the fastest pilot settings) and faking the variables SkyPilot sets.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.launch.conftest import ROOT, WORKED, run_cli

from accelpilot.pilot.result import read_result

yaml = pytest.importorskip("yaml", reason="PyYAML (installed with SkyPilot) reads the written YAML back")

FAST = (
    "--size tiny --batch-size 8 --seq-len 32 --steps 3 --warmup 1 --shapes 32 --runs 1 "
    "--target-loss 5.3 --max-steps 30 --eval-every 2 --interrupt-at 0"
)


@pytest.mark.slow
def test_run_block_on_cpu_then_collect_then_bill(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "worked-example.toml"
    scenario.write_bytes(WORKED.read_bytes())
    tasks = tmp_path / "tasks"
    assert run_cli(["launch", str(scenario), "--out", str(tasks), "--no-check"], capsys)[0] == 0
    task = yaml.safe_load((tasks / "trn1-32xlarge-on-demand.yaml").read_text())
    # the distributed pilot: one process per NeuronCore, 16 Trainium chips x 2 NeuronCores
    assert task["envs"]["ACCELPILOT_NPROC_PER_NODE"] == str(16 * 2)

    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "accelpilot").write_text(f'#!/bin/sh\nexec {sys.executable} -m accelpilot "$@"\n')
    (shim / "accelpilot").chmod(0o755)
    results = tmp_path / "results" / "trn1"
    env = {
        **os.environ,
        **task["envs"],
        "ACCELPILOT_DEVICE": "cpu",
        "ACCELPILOT_PILOT_ARGS": FAST,
        "ACCELPILOT_NPROC_PER_NODE": "1",  # one process on this CPU; the task says 32 (trn1.32xlarge's NeuronCores)
        "ACCELPILOT_RESULTS": str(results),
        "SKYPILOT_NODE_RANK": "0",
        "SKYPILOT_NUM_NODES": "1",
        "SKYPILOT_NODE_IPS": "10.0.0.1",
        "SKYPILOT_CLUSTER_INFO": json.dumps({"cloud": "AWS", "region": "us-east-1", "zone": "us-east-1a"}),
        "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    proc = subprocess.run(
        ["bash", "-c", task["run"]], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    files = list(results.glob("*.json"))
    assert len(files) == 1
    side = files[0].with_name(files[0].name + ".sha256").read_text().split()[0]
    assert side == hashlib.sha256(files[0].read_bytes()).hexdigest()
    res = read_result(files[0])
    extra = res.platform.model_extra or {}
    assert extra["launch"]["options"] == ["trn1.32xlarge on-demand", "trn1.32xlarge reserved 3 years"]
    assert extra["cloud"]["region"] == "us-east-1" and extra["cloud"]["zone"] == "us-east-1a"
    assert extra["cloud"]["node_ips_count"] == 1 and "10.0.0.1" not in files[0].read_text()

    # Launched for trn1 but measured on the CPU: collect refuses, and leaves the scenario alone.
    before = scenario.read_bytes()
    code, _, err = run_cli(["collect", str(tmp_path / "results"), "--scenario", str(scenario), "--write"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "launched for option 'trn1.32xlarge on-demand' but measured on cpu" in err and "--as" in err
    assert scenario.read_bytes() == before

    # The user says so: --as puts it into the option, in place, keeping every comment.
    args = ["collect", str(tmp_path / "results"), "--scenario", str(scenario), "--write"]
    code, out, err = run_cli([*args, "--as", "trn1.32xlarge on-demand", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["written"] == str(scenario)
    text = scenario.read_text()
    old = before.decode()
    assert [ln for ln in old.splitlines() if ln.startswith("#")] == [
        ln for ln in text.splitlines() if ln.startswith("#")
    ]
    added = [ln for ln in text.splitlines() if ln not in old.splitlines()]
    assert len(added) == 1 and added[0].startswith('result = "results/trn1/cpu-gpt-tiny-')

    # ... and the bill prices that option from the measurement: hours = time to target / 3600.
    code, out, err = run_cli(["bill", str(scenario), "--json"], capsys)
    assert code == 0, err
    bill = json.loads(out)
    opts = {o["name"]: o for o in bill["options"]}
    trn1 = opts["trn1.32xlarge on-demand"]
    assert trn1["measured"] is True and opts["trn1.32xlarge reserved 3 years"]["measured"] is False
    assert res.training is not None and res.training.time_to_target_s is not None
    hours = res.training.time_to_target_s / 3600
    assert trn1["hours_per_run"] == pytest.approx(hours, abs=5e-5)  # the JSON rounds to 4 places
    assert trn1["cost_per_run"] == pytest.approx(21.50 * hours, abs=0.005)  # trn1.32xlarge on demand: 21.50/h
