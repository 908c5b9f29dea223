"""Shared fixtures for report and procedure tests: a scenario with hostile names, pilot results, a log."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from accelpilot.figures import measured
from accelpilot.pilot.result import PilotResult, Platform, ServingSummary, TrainingSummary, WorkloadInfo, write_result
from accelpilot.porting.log import Finding, PortabilityLog
from accelpilot.porting.rules import get_rule

# Property tests check behaviour, not speed: on a loaded 2-core machine generation can be slow, which is no failure.
settings.register_profile("accelpilot", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("accelpilot")

EVIL = "<script>alert(1)</script>"


def _training(accel: str | None, device_type: str, name: str, hours: float, workload: str = "gpt-tiny") -> PilotResult:
    rnd = random.Random(1)
    steps = [0.05 + rnd.random() * 0.01 for _ in range(40)]
    src = "pilot fixture"
    return PilotResult(
        kind="training",
        platform=Platform(device=device_type, device_type=device_type, device_name=name, accelerator=accel),
        workload=WorkloadInfo(name=workload, factory="builtin:gpt"),
        command="accelpilot run train --device " + device_type,
        figures={
            "tokens_per_s": measured(12345.6, "token/s", src, "training throughput"),
            "compile_time_s": measured(3.2, "s", src, "compile time"),
            "recompile_time_s": measured(1.1, "s", src, "recompile time over shapes"),
            "time_to_target_s": measured(hours * 3600, "s", src, "time to target"),
            "restart_s": measured(0.8, "s", src, "restart after an interrupted worker"),
        },
        samples={"step_time_s": steps, "throughput_losses": [3.0, 2.5, 2.2, 2.0, 1.9]},
        training=TrainingSummary(time_to_target_s=hours * 3600, runs=3, accepted_runs=3, target_loss=2.0),
        accepted=True,
    )


def _serving() -> PilotResult:
    rnd = random.Random(2)
    lat = [0.01 + rnd.random() * 0.02 for _ in range(500)]
    src = "pilot fixture"
    return PilotResult(
        kind="serving",
        platform=Platform(device="cpu", device_type="cpu", device_name="Test CPU"),
        workload=WorkloadInfo(name="minilm"),
        figures={
            "peak_qps_under_slo": measured(40.0, "req/s", src, "peak rate under SLO"),
            "goodput_share": measured(0.98, "", src, "goodput share"),
        },
        samples={"server.latency_s": lat},
        serving=ServingSummary(peak_qps_under_slo=40.0, goodput_share=0.98, slo_ms=130.0),
        accepted=True,
    )


SCENARIO = f'''
[scenario]
name = "{EVIL} scenario"
description = "desc {EVIL}"
workload = "training"
baseline = "{EVIL} gpu"

[volumes]
runs_per_month = 2
months = 36

[engineering]
day_rate = 800

[gates]
aws_production_home = true
validated_on_target = true
accepts_aws_tooling = true
capacity_available = true
must_move_between_sites = false
research_churn = false
must_own_hardware = false
second_cloud_or_dr = false
ops_centred_on_cuda = false
workload_lifetime_months = 24

[[options]]
name = "{EVIL} gpu"
instance = "p5.48xlarge"
pricing = "on_demand"
hours_per_run = 20

[[options]]
name = "trn $x$ _hidden"
instance = "trn1.32xlarge"
pricing = "on_demand"
result = "trn.json"
porting_days = 3
'''


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Any]:
    """A scenario priced with a measured Trainium result, a CPU training result, a serving result and a log."""
    write_result(_training("Trainium", "neuron", f"Trainium {EVIL}", 26, workload=EVIL), tmp_path / "trn.json")
    cpu = write_result(_training(None, "cpu", "Test CPU", 90), tmp_path / "cpu-train.json")
    serve = write_result(_serving(), tmp_path / "cpu-serve.json")
    sc = tmp_path / "scenario.toml"
    sc.write_text(SCENARIO, encoding="utf-8")
    findings = [
        Finding.from_rule(get_rule("cuda-call"), file=f"{EVIL}.py", line=3, message=f"call {EVIL}", snippet="x.cuda()"),
        Finding.from_rule(get_rule("nccl-backend"), file="train.py", line=9, message="nccl", snippet="nccl"),
    ]
    log = PortabilityLog(root="repo", files_scanned=2, findings=findings).refresh()
    lp = tmp_path / "log.json"
    lp.write_text(log.to_json(), encoding="utf-8")
    return {"dir": tmp_path, "scenario": sc, "cpu": cpu, "serve": serve, "trn": tmp_path / "trn.json", "log": lp}


@pytest.fixture
def evil() -> str:
    return EVIL
