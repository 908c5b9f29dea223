"""The exit test: engineer-days from the log's effort classes, priced at the scenario's day rate, per option."""

from __future__ import annotations

from typing import Any

from accelpilot.decide.exit_cost import EFFORT_DAYS, REVALIDATION_DAYS


def exits(d: Any) -> dict[str, Any]:
    return {e.option: e for e in d.exit_tests}


def test_one_exit_test_per_option(world: Any) -> None:
    d = world.decide()
    assert set(exits(d)) == {"gpu", "trn"}


def test_clean_log_costs_only_revalidation(world: Any) -> None:
    e = exits(world.decide())
    for name in ("gpu", "trn"):
        assert e[name].engineer_days.value == float(REVALIDATION_DAYS)
        assert e[name].cost.value == float(REVALIDATION_DAYS) * 800
        assert e[name].from_log


def test_effort_model_ranges_size_the_exit_for_leaving_neuron(world: Any, log_of: Any) -> None:
    # issue 27: items carry the log's effort-model ranges; the exit counts their midpoint. cuda-call 0.1-0.5 d
    # (concerns Neuron), triton-kernel 3-10 d (Neuron), nki-kernel 0.5-2 d (concerns GPU): 3.6-12.5 d, midpoint 8.05
    d = world.decide(log=log_of("cuda-call", "triton-kernel", "nki-kernel"))
    trn = exits(d)["trn"]
    want = 2 + (0.1 + 3 + 0.5 + 0.5 + 10 + 2) / 2  # re-validation + the midpoint = 10.05
    assert trn.engineer_days.value == want
    assert trn.by_effort == {"hours": 1, "weeks": 2}
    assert trn.cost.value == 8040.0  # 10.05 engineer-days x 800/day
    assert trn.weeks.value == 2.01  # 10.05 / 5 working days
    # Leaving the GPU option for another GPU site: CUDA code runs there, so none of these count.
    gpu = exits(d)["gpu"]
    assert gpu.engineer_days.value == float(REVALIDATION_DAYS)
    assert gpu.finding_ids == []


def test_an_older_log_without_ranges_maps_effort_classes_to_days(world: Any, log_of: Any) -> None:
    """A log written before the effort model (items without days) keeps the class mapping: hours 0.5, weeks 10."""
    view = log_of("cuda-call", "triton-kernel", "nki-kernel")
    older = view.model_copy(
        update={"findings": [f.model_copy(update={"days_low": None, "days_high": None}) for f in view.findings]}
    )
    trn = exits(world.decide(log=older))["trn"]
    want = float(REVALIDATION_DAYS + EFFORT_DAYS["hours"] + 2 * EFFORT_DAYS["weeks"])
    assert trn.engineer_days.value == want == 2 + 0.5 + 2 * 10


def test_operational_findings_count_for_every_exit(world: Any, log_of: Any) -> None:
    from accelpilot.porting.rules import RULES

    # a data-movement rule every platform shares (a Neuron-only one, such as a CUDA-saved checkpoint, is no GPU work)
    op = next(r.id for r in RULES.values() if r.category == "data_movement" and "gpu" in r.targets)
    d = world.decide(log=log_of(op))
    e = exits(d)
    assert e["gpu"].finding_ids == ["I1"]  # a refreshed log is read item by item
    assert any(op in a for a in e["gpu"].artefacts)


def test_egress_fee_for_stored_data(world: Any) -> None:
    world.data["extras"] = {"object_storage_gb_months": 20480}  # 20 TB: 10 TB at 0.09 + 10 TB at 0.085
    e = exits(world.decide())["trn"]
    assert e.egress_fee is not None
    assert round(e.egress_fee.value, 2) == round(10240 * 0.09 + 10240 * 0.085, 2)
    assert round(e.total.value, 2) == round(e.cost.value + e.egress_fee.value, 2)


def test_no_log_mirrors_porting_days_for_neuron(world: Any) -> None:
    d = world.decide(log=None)
    trn = exits(d)["trn"]
    assert trn.engineer_days.value == float(REVALIDATION_DAYS) + 3
    assert not trn.from_log
    assert any("accelpilot scan" in n for n in trn.notes)


def test_no_day_rate_shows_days_not_cost(world: Any) -> None:
    world.data["engineering"] = {"day_rate": 0}
    e = exits(world.decide())["trn"]
    assert e.cost is None and e.engineer_days.value > 0


def test_exit_days_carry_their_assumptions(world: Any, log_of: Any) -> None:
    d = world.decide(log=log_of("triton-kernel"))
    leaves = exits(d)["trn"].engineer_days.leaves
    kinds = {lf.kind for lf in leaves}
    assert kinds == {"assumption"}  # re-validation and the effort model's midpoint are assumptions, stated
    assert any("effort model" in lf.label for lf in leaves)


def test_the_exit_test_counts_porting_items_not_lines(world: Any) -> None:
    """Issue 12: three imports of one library are one item; a probe and a test-only line are no work at all."""
    from accelpilot.decide.portability import view_log
    from accelpilot.porting.log import Finding, PortabilityLog
    from accelpilot.porting.rules import get_rule

    fa = get_rule("flash-attn")  # effort: days, concerns Neuron
    lines = [
        Finding.from_rule(fa, file=f"src/m{i}.py", line=3, message="import flash_attn", subject="flash_attn")
        for i in range(3)
    ]
    probe = Finding.from_rule(
        get_rule("triton-kernel"), file="src/p.py", line=5, message="string 'triton'", context="probe"
    )
    test_only = Finding.from_rule(
        get_rule("cuda-call"), file="tests/t.py", line=9, message=".cuda()", context="test-only"
    )
    log = PortabilityLog(root="repo", files_scanned=4, findings=[*lines, probe, test_only]).refresh()
    d = world.decide(log=view_log(log, "log.json"))
    trn = exits(d)["trn"]
    # hand count: one flash-attn item (2-5 engineer-days by the effort model, midpoint 3.5) + re-validation (2) =
    # 5.5; the probe's 'weeks' is not counted
    assert trn.engineer_days.value == 5.5
    assert trn.by_effort == {"days": 1} and trn.finding_ids == ["I1"]
