"""Helpers for the hostile-input and fault suite (issue 11): valid files to break one field at a time, and the
check that stderr is one accelpilot line without a traceback. Imported by the tests (conftest puts this folder on
sys.path: the repository root)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import accelpilot
from accelpilot.figures import measured
from accelpilot.pilot.result import PilotResult, Platform, ServingSummary, TrainingSummary, WorkloadInfo
from accelpilot.porting.log import Finding, PortabilityLog
from accelpilot.porting.rules import get_rule

SRC = str(Path(accelpilot.__file__).resolve().parents[1])  # children run the code this test process imported

SCENARIO = """
[scenario]
name = "hostile"
workload = "training"
baseline = "gpu"

[volumes]
runs_per_month = 2
months = 36

[engineering]
day_rate = 800

[[options]]
name = "gpu"
instance = "p5.48xlarge"
pricing = "on_demand"
hours_per_run = 20

[[options]]
name = "trn"
instance = "trn1.32xlarge"
pricing = "on_demand"
result = "trn.json"
porting_days = 3
"""


def training_result(**summary: Any) -> PilotResult:
    src = "hostile fixture"
    return PilotResult(
        kind="training",
        platform=Platform(device="neuron", device_type="neuron", device_name="Trainium", accelerator="Trainium"),
        workload=WorkloadInfo(name="gpt-tiny", factory="builtin:gpt"),
        command="accelpilot run train --device neuron",
        figures={"time_to_target_s": measured(26 * 3600.0, "s", src, "time to target")},
        training=TrainingSummary(
            **{"time_to_target_s": 26 * 3600.0, "runs": 3, "accepted_runs": 3, "target_loss": 2.0, **summary}
        ),
        accepted=True,
    )


def serving_result() -> PilotResult:
    return PilotResult(
        kind="serving",
        platform=Platform(device="cpu", device_type="cpu", device_name="Test CPU"),
        workload=WorkloadInfo(name="minilm"),
        serving=ServingSummary(peak_qps_under_slo=40.0, goodput_share=0.98, slo_ms=130.0, tokens_per_request=20),
        accepted=True,
    )


def scan_log() -> PortabilityLog:
    findings = [Finding.from_rule(get_rule("cuda-call"), file="t.py", line=3, message="x.cuda()", snippet="x.cuda()")]
    return PortabilityLog(root="repo", files_scanned=1, findings=findings).refresh()


def dump(model: PilotResult | PortabilityLog) -> dict[str, Any]:
    """The JSON object as the file holds it, to break one field at a time."""
    return json.loads(model.model_dump_json())


def child_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "200", **extra}
    env.pop("PYTEST_CURRENT_TEST", None)
    return env


def one_error_line(err: str) -> str:
    """stderr holds exactly one line, the accelpilot error, and no traceback."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err, err
    assert len(lines) == 1, err
    assert lines[0].startswith("accelpilot: "), err
    return lines[0]
