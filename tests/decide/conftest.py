"""Builders for decide/ tests: a scenario dict, pilot results on chosen platforms, portability logs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.decide import decide
from accelpilot.decide.portability import view_log
from accelpilot.pilot.result import PilotResult, Platform, TrainingSummary, WorkloadInfo, write_result
from accelpilot.porting.log import Finding, PortabilityLog
from accelpilot.porting.rules import get_rule
from accelpilot.procedure import priced_results

ALL_GOOD_GATES: dict[str, Any] = {
    "aws_production_home": True,
    "validated_on_target": True,
    "accepts_aws_tooling": True,
    "capacity_available": True,
    "must_move_between_sites": False,
    "research_churn": False,
    "must_own_hardware": False,
    "second_cloud_or_dr": False,
    "ops_centred_on_cuda": False,
    "workload_lifetime_months": 24,
}


def training_result(
    device_type: str = "neuron", accelerator: str | None = "Trainium", hours: float = 26.0, accepted: bool = True
) -> PilotResult:
    runs = 3
    return PilotResult(
        kind="training",
        platform=Platform(
            device=device_type, device_type=device_type, device_name=accelerator or device_type, accelerator=accelerator
        ),
        workload=WorkloadInfo(name="gpt-tiny"),
        training=TrainingSummary(
            time_to_target_s=hours * 3600, runs=runs, accepted_runs=runs if accepted else 0, target_loss=2.0
        ),
        accepted=accepted,
    )


def make_log(*rules: str, targets: list[str] | None = None) -> Any:
    findings = [
        Finding.from_rule(get_rule(r), file=f"src/m{i}.py", line=10 + i, message=f"{r} here", snippet=f"x{i}")
        for i, r in enumerate(rules)
    ]
    log = PortabilityLog(root="repo", files_scanned=3, findings=findings, targets=targets).refresh()
    return view_log(log, "log.json")


class World:
    """A scenario on disk plus the catalog; ``decide()`` runs the whole chain."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.data: dict[str, Any] = {
            "name": "test scenario",
            "workload": "training",
            "baseline": "gpu",
            "volumes": {"runs_per_month": 4, "months": 36},
            "engineering": {"day_rate": 800},
            "options": [
                {"name": "gpu", "instance": "p5.48xlarge", "pricing": "on_demand", "hours_per_run": 20},
                {
                    "name": "trn",
                    "instance": "trn1.32xlarge",
                    "pricing": "on_demand",
                    "result": "trn.json",
                    "porting_days": 3,
                },
            ],
            "gates": copy.deepcopy(ALL_GOOD_GATES),
        }
        self.cat = load_catalog()
        self.set_result(training_result())

    def set_result(self, res: PilotResult, name: str = "trn.json") -> Path:
        return write_result(res, self.tmp / name)

    def option(self, name: str) -> dict[str, Any]:
        return next(o for o in self.data["options"] if o["name"] == name)

    def scenario(self) -> Any:
        return parse_scenario(copy.deepcopy(self.data), str(self.tmp / "scenario.toml"))

    def decide(self, log: Any = "clean", results: list[tuple[str, PilotResult]] | None = None) -> Any:
        """Read what the procedure reads (the results the bill priced), then decide on data."""
        sc = self.scenario()
        bill = make_bill(sc, self.cat)
        lg = make_log() if log == "clean" else log
        given = list(results or [])
        return decide(sc, bill, lg, results=given + priced_results(bill, given), catalog=self.cat)


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


@pytest.fixture
def log_of() -> Any:
    return make_log


@pytest.fixture
def result_of() -> Any:
    return training_result
