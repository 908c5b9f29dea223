"""The verdict: qualify Trainium, prefer portable GPU, keep the working deployment, or not enough evidence.

Rules, in order:
1. Any portability gate holds -> ``prefer_portable_gpu`` (seed 000: "prefer portable GPU infrastructure when one
   or more of these conditions applies").
2. Else any Trainium gate fails -> ``keep_working_deployment`` (seed 002: "If the result exceeds the workload's
   expected lifetime, keep the working GPU deployment"; seed 004: "if the answer is close, it is a no"). This is
   not a vote for portable GPU infrastructure: nothing asks the workload to be portable; the move to the target
   simply does not qualify (too close, beyond the lifetime, blocked, or not AWS's to host).
3. Every Trainium gate passes and every portability gate is answered "no" -> ``qualify_trainium``. The commercial
   gate only passes on a pilot measured on the target that beats the GPU baseline by enough to repay the port
   and its maintenance within the lifetime.
4. Otherwise ``not_enough_evidence``, listing each missing pilot result or scenario answer with its fix.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from accelpilot.bill.model import Bill
from accelpilot.bill.scenario import Scenario
from accelpilot.catalog.loader import Catalog
from accelpilot.decide.capacity import capacity_checks
from accelpilot.decide.evidence import Evidence
from accelpilot.decide.exit_cost import ExitTest, exit_costs
from accelpilot.decide.gates import Context, GateResult, Missing, ResultInfo, evaluate
from accelpilot.decide.portability import LogView, family_of, target_key
from accelpilot.evidence.capacity import CapacityCheck
from accelpilot.evidence.model import EvidenceSet
from accelpilot.pilot.result import PilotResult

VerdictName = Literal["qualify_trainium", "prefer_portable_gpu", "keep_working_deployment", "not_enough_evidence"]

HEADLINES: dict[str, str] = {
    "qualify_trainium": "Qualify {target}: every gate passes and the measured pilot repays the port in its lifetime",
    "prefer_portable_gpu": "Prefer portable GPU infrastructure",
    "keep_working_deployment": "Keep the working deployment: the move to {target} does not qualify",
    "not_enough_evidence": "Not enough evidence to decide yet",
}


class Reason(BaseModel):
    model_config = ConfigDict(frozen=True)

    gate: str
    status: str
    text: str
    evidence: Evidence = Evidence()


class Decision(BaseModel):
    """Everything decide/ concluded, as plain data for the report."""

    model_config = ConfigDict(frozen=True)

    verdict: VerdictName
    headline: str
    target: str
    baseline: str | None
    gates: list[GateResult]
    reasons: list[Reason]
    missing: list[Missing] = Field(default_factory=list)
    exit_tests: list[ExitTest] = Field(default_factory=list)
    lifetime_months: int
    lifetime_answered: bool
    capacity: list[CapacityCheck] = Field(default_factory=list)  # per cloud option, from [evidence] files


def result_info(result: PilotResult, path: str) -> ResultInfo:
    p = result.platform
    return ResultInfo(
        path=path,
        kind=result.kind,
        family=family_of(p.accelerator, None, p.device_type or p.device),
        device=p.device_name or p.device,
        accepted=result.accepted,
    )


def _reason(g: GateResult) -> Reason:
    return Reason(gate=g.id, status=g.status, text=g.reason, evidence=g.evidence)


def _headline(verdict: VerdictName, target: str, failing: list[GateResult]) -> str:
    """The verdict in words; keeping the deployment says why when the bill alone is the reason."""
    text = HEADLINES[verdict].format(target=target.capitalize())
    if verdict == "keep_working_deployment" and [g.id for g in failing] == ["commercial"]:
        return (
            f"Keep the working deployment: the move to {target.capitalize()} does not repay "
            "(not cheaper, too close to call, or not repaid within the lifetime)"
        )
    return text


def decide(
    scenario: Scenario,
    bill: Bill,
    log: LogView | None = None,
    results: list[tuple[str, PilotResult]] | None = None,
    catalog: Catalog | None = None,
    evidence: EvidenceSet | None = None,
) -> Decision:
    """Apply the gates to data already read. ``results``: (path, PilotResult) pairs, including those the
    scenario's options name (``procedure.make_report`` gathers them); decide/ reads no file."""
    infos = [result_info(r, p) for p, r in (results or [])]
    exits = exit_costs(bill, scenario, log, catalog)
    capacity = capacity_checks(scenario, bill, catalog, evidence)
    ctx = Context(scenario=scenario, bill=bill, log=log, results=infos, exits=exits, capacity=capacity)
    gates = evaluate(ctx)
    tr = [g for g in gates if g.group == "trainium_all"]
    pg = [g for g in gates if g.group == "portable_any"]
    missing = [g.missing for g in gates if g.holds is None and g.missing is not None]
    holding = [g for g in pg if g.holds]
    failing = [g for g in tr if g.holds is False]
    verdict: VerdictName
    if holding:
        verdict = "prefer_portable_gpu"
        reasons = [_reason(g) for g in holding + failing]
    elif failing:
        verdict = "keep_working_deployment"
        reasons = [_reason(g) for g in failing]
    elif all(g.holds for g in tr) and all(g.holds is False for g in pg):
        verdict = "qualify_trainium"
        reasons = [_reason(g) for g in tr + pg]
    else:
        verdict = "not_enough_evidence"
        reasons = [_reason(g) for g in gates if g.holds is None]
    base = ctx.gpu_baseline()
    lifetime, answered = ctx.lifetime_months
    target = target_key(scenario.gates.target_platform)
    return Decision(
        verdict=verdict,
        headline=_headline(verdict, target, failing),
        target=target,
        baseline=base.name if base else None,
        gates=gates,
        reasons=reasons,
        missing=missing,
        exit_tests=exits,
        lifetime_months=lifetime,
        lifetime_answered=answered,
        capacity=capacity,
    )
