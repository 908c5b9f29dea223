"""Result files for collect tests, built in code (never shipped as samples), and a commented scenario."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Any

import pytest

from accelpilot.cli import main
from accelpilot.figures import measured
from accelpilot.pilot.result import PilotResult, Platform, TrainingSummary, WorkloadInfo, write_result

SCENARIO = """\
# A scenario a person annotated: every comment must survive collect.
[scenario]
name = "collect test"
workload = "training"   # training pilot results

[[options]]
name = "p5 on-demand"   # the baseline
instance = "p5.48xlarge"
pricing = "on_demand"
hours_per_run = 20      # assumed until measured

[[options]]
name = "trn1 on-demand"
instance = "trn1.32xlarge"
pricing = "on_demand"
hours_per_run = 26

[[options]]
name = "trn1 reserved"
instance = "trn1.32xlarge"
pricing = "reserved_3y"
hours_per_run = 26

[[options]]
name = "owned 8xH100"
instance = "8xH100"
pricing = "owned"
hours_per_run = 20
[options.owned]
purchase = 300000       # list price, 2026
"""


def make_result(
    *,
    accelerator: str | None = "Trainium",
    device_type: str = "neuron",
    tts: float = 3600.0,
    runs: int = 3,
    accepted: int = 3,
    extra: dict[str, Any] | None = None,
    kind: str = "training",
    minute: int = 0,
    tokens_per_s: float = 1000.0,
) -> PilotResult:
    src = "collect fixture"
    return PilotResult(
        kind=kind,
        created=dt.datetime(2026, 11, 30, 8, minute, tzinfo=dt.timezone.utc),
        platform=Platform(
            device=device_type,
            device_type=device_type,
            device_name=accelerator or "CPU",
            accelerator=accelerator,
            **(extra or {}),
        ),
        workload=WorkloadInfo(name="gpt-tiny", factory="builtin:gpt"),
        command=f"accelpilot run train --device {device_type}",
        figures={"time_to_target_s": measured(tts, "s", src, "time to target")},
        training=TrainingSummary(tokens_per_s=tokens_per_s, time_to_target_s=tts, runs=runs, accepted_runs=accepted),
        accepted=accepted > 0,
    )


def put(res: PilotResult, folder: Path, name: str, sidecar: bool = True) -> Path:
    path = write_result(res, folder / name)
    if sidecar:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        path.with_name(path.name + ".sha256").write_text(f"{digest}  {path.name}\n")
    return path


TRN1 = {"cloud": {"cloud": "aws", "instance_type": "trn1.32xlarge", "region": "us-east-1", "sources": ["dmi"]}}


def cli_run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """The CLI in process: exit code, stdout, stderr."""
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    p = tmp_path / "scenario.toml"
    p.write_text(SCENARIO, encoding="utf-8")
    return p
