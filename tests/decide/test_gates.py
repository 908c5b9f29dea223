"""One test (at least) per gate of seed 000's "decision in one page", and the verdict rules around them."""

from __future__ import annotations

from typing import Any

import pytest

from accelpilot.decide.gates import GateResult
from accelpilot.decide.verdict import Decision


def gate(decision: Decision, gid: str) -> GateResult:
    return next(g for g in decision.gates if g.id == gid)


def test_all_gates_pass_qualifies_trainium(world: Any) -> None:
    d = world.decide()
    assert d.verdict == "qualify_trainium", [(g.id, g.status, g.reason) for g in d.gates]
    assert all(g.holds for g in d.gates if g.group == "trainium_all")
    assert all(g.holds is False for g in d.gates if g.group == "portable_any")
    com = gate(d, "commercial")
    labels = [f.label for f in com.evidence.figures]
    assert any("cost per accepted run" in lbl for lbl in labels)
    assert any(f.kind == "measured" for f in com.evidence.figures for f in [f, *f.leaves])
    assert d.baseline == "gpu"


@pytest.mark.parametrize("gid", ["aws_production_home", "accepts_aws_tooling", "capacity_available"])
def test_answered_trainium_gate_false_keeps_the_working_deployment(world: Any, gid: str) -> None:
    world.data["gates"][gid] = False
    d = world.decide()
    # a failing Trainium gate is not a reason to go portable: nothing asks for portability (issue 10)
    assert d.verdict == "keep_working_deployment"
    assert d.headline == "Keep the working deployment: the move to Trainium does not qualify"
    assert [r.gate for r in d.reasons] == [gid]
    assert d.reasons[0].evidence.scenario_field == f"gates.{gid}"
    assert gate(d, gid).status == "fail"


@pytest.mark.parametrize("gid", ["aws_production_home", "accepts_aws_tooling", "capacity_available"])
def test_unanswered_trainium_gate_is_not_enough_evidence(world: Any, gid: str) -> None:
    del world.data["gates"][gid]
    d = world.decide()
    assert d.verdict == "not_enough_evidence"
    assert [m.gate for m in d.missing] == [gid]
    assert gid in d.missing[0].fix


@pytest.mark.parametrize(
    "gid",
    ["must_move_between_sites", "research_churn", "must_own_hardware", "second_cloud_or_dr", "ops_centred_on_cuda"],
)
def test_any_portability_gate_prefers_gpu(world: Any, gid: str) -> None:
    world.data["gates"][gid] = True
    d = world.decide()
    assert d.verdict == "prefer_portable_gpu"
    assert [r.gate for r in d.reasons] == [gid]
    assert gate(d, gid).status == "holds"


@pytest.mark.parametrize(
    "gid",
    ["must_move_between_sites", "research_churn", "must_own_hardware", "second_cloud_or_dr", "ops_centred_on_cuda"],
)
def test_unanswered_portability_gate_blocks_qualification(world: Any, gid: str) -> None:
    del world.data["gates"][gid]
    d = world.decide()
    assert d.verdict == "not_enough_evidence"
    assert any(m.gate == gid for m in d.missing)


def test_portability_gate_wins_over_a_failing_trainium_gate(world: Any) -> None:
    world.data["gates"]["research_churn"] = True
    world.data["gates"]["aws_production_home"] = False
    d = world.decide()
    assert d.verdict == "prefer_portable_gpu"
    assert [r.gate for r in d.reasons] == ["research_churn", "aws_production_home"]


def test_portability_gate_wins_over_passing_trainium_gates(world: Any) -> None:
    world.data["gates"]["research_churn"] = True
    world.data["gates"]["aws_production_home"] = None
    d = world.decide()
    assert d.verdict == "prefer_portable_gpu"


def test_second_cloud_cites_exit_test(world: Any, log_of: Any) -> None:
    world.data["gates"]["second_cloud_or_dr"] = True
    d = world.decide(log=log_of("triton-kernel", "cuda-call"))
    g = gate(d, "second_cloud_or_dr")
    assert any("exit from trn" in f.label for f in g.evidence.figures)
    assert g.evidence.finding_ids  # the findings behind the exit estimate


def test_ops_on_cuda_cites_maintenance_and_cuda_findings(world: Any, log_of: Any) -> None:
    world.option("trn")["maintenance_per_month"] = 500
    world.data["gates"]["ops_centred_on_cuda"] = True
    d = world.decide(log=log_of("cuda-call", "torch-cuda-api"))
    g = gate(d, "ops_centred_on_cuda")
    assert g.evidence.figures[0].value == 500
    assert len(g.evidence.finding_ids) == 2


# --- validated on target: portability log + answer + pilot evidence --------------------------------------------


def test_validated_fails_on_blocking_finding_with_ids(world: Any, log_of: Any) -> None:
    d = world.decide(log=log_of("cuda-call", "triton-kernel"))
    g = gate(d, "validated_on_target")
    assert g.holds is False
    blocking_ids = [f for f in g.evidence.finding_ids]
    assert len(blocking_ids) == 1
    assert "triton-kernel" in g.reason
    assert d.verdict == "keep_working_deployment"


def test_validated_ignores_blocking_findings_for_another_target(world: Any, log_of: Any) -> None:
    # An NKI kernel blocks moving *to GPUs*; it says nothing against Trainium.
    d = world.decide(log=log_of("nki-kernel"))
    assert gate(d, "validated_on_target").holds is True


def test_validated_needs_the_log(world: Any) -> None:
    d = world.decide(log=None)
    g = gate(d, "validated_on_target")
    assert g.holds is None
    assert d.verdict == "not_enough_evidence"
    assert g.missing is not None and "scan" in g.missing.fix


def test_validated_answer_no_fails(world: Any) -> None:
    world.data["gates"]["validated_on_target"] = False
    assert gate(world.decide(), "validated_on_target").holds is False


def test_validated_unanswered_but_target_pilot_reached_target(world: Any) -> None:
    world.data["gates"]["validated_on_target"] = None
    g = gate(world.decide(), "validated_on_target")
    assert g.holds is True
    assert g.evidence.results


def test_validated_unanswered_and_cpu_pilot_only(world: Any, result_of: Any) -> None:
    world.data["gates"]["validated_on_target"] = None
    world.set_result(result_of("cpu", None))
    d = world.decide()
    g = gate(d, "validated_on_target")
    assert g.holds is None
    assert "static scan is not a validation" in g.reason


def test_validated_fails_when_target_pilot_missed_target(world: Any, result_of: Any) -> None:
    world.data["gates"]["validated_on_target"] = None
    world.set_result(result_of(accepted=False))
    assert gate(world.decide(), "validated_on_target").holds is False


def test_validated_log_filtered_to_other_target(world: Any, log_of: Any) -> None:
    d = world.decide(log=log_of(targets=["gpu"]))
    assert gate(d, "validated_on_target").holds is None


# --- the commercial gate: the bill ----------------------------------------------------------------------------


def test_commercial_fails_when_not_cheaper(world: Any, result_of: Any) -> None:
    world.set_result(result_of(hours=60))  # 60 h x 21.50 > 20 h x 55.04
    d = world.decide()
    g = gate(d, "commercial")
    assert g.holds is False and "not cheaper" in g.reason
    assert d.verdict == "keep_working_deployment"
    assert d.headline.startswith("Keep the working deployment: the move to Trainium does not repay")


def test_commercial_fails_when_port_does_not_repay_within_lifetime(world: Any) -> None:
    world.option("trn")["porting_days"] = 400  # 320,000 USD of porting against ~2,167 USD a month saved
    d = world.decide()
    g = gate(d, "commercial")
    assert g.holds is False and "beyond the 24-month lifetime" in g.reason


def test_commercial_fails_when_maintenance_eats_the_saving(world: Any) -> None:
    world.option("trn")["maintenance_per_month"] = 5000
    g = gate(world.decide(), "commercial")
    assert g.holds is False and "never covers" in g.reason


def test_commercial_lifetime_decides(world: Any) -> None:
    world.option("trn")["porting_days"] = 40  # 32,000 USD; saving 541.80 x 4 = 2,167.20 a month -> 14.8 months
    world.data["gates"]["workload_lifetime_months"] = 12
    assert gate(world.decide(), "commercial").holds is False
    world.data["gates"]["workload_lifetime_months"] = 18
    assert gate(world.decide(), "commercial").holds is True


def test_commercial_assumed_hours_are_not_enough(world: Any) -> None:
    opt = world.option("trn")
    del opt["result"]
    opt["hours_per_run"] = 26
    d = world.decide()
    g = gate(d, "commercial")
    assert g.holds is None
    assert "assumed" in g.reason
    assert d.verdict == "not_enough_evidence"
    assert "pilot result measured on trainium" in d.missing[-1].what


def test_commercial_cpu_measurement_is_not_a_trainium_pilot(world: Any, result_of: Any) -> None:
    world.set_result(result_of("cpu", None))
    g = gate(world.decide(), "commercial")
    assert g.holds is None and "measured on cpu" in g.reason


def test_commercial_without_target_option(world: Any) -> None:
    world.data["options"] = world.data["options"][:1]
    d = world.decide()
    g = gate(d, "commercial")
    assert g.holds is None and "no option on trainium" in g.reason


def test_commercial_caveat_without_extras(world: Any) -> None:
    g = gate(world.decide(), "commercial")
    assert any("no data transfer" in c for c in g.caveats)
    world.data["extras"] = {"object_storage_gb_months": 1000, "support_percent": 10}
    g = gate(world.decide(), "commercial")
    assert not any("no data transfer" in c for c in g.caveats)


def test_commercial_lifetime_falls_back_to_horizon_with_caveat(world: Any) -> None:
    del world.data["gates"]["workload_lifetime_months"]
    d = world.decide()
    assert d.lifetime_months == 36 and not d.lifetime_answered
    assert any("lifetime is not answered" in c for c in gate(d, "commercial").caveats)


def test_trainium_baseline_picks_gpu_option(world: Any) -> None:
    world.data["baseline"] = "trn"
    d = world.decide()
    assert d.baseline == "gpu"
    assert d.verdict == "qualify_trainium"
