"""The capacity gate answered from evidence files; the user's explicit answer still wins and both are shown."""

from __future__ import annotations

from pathlib import Path

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import load_scenario
from accelpilot.catalog import load_catalog
from accelpilot.decide import decide
from accelpilot.decide.gates import GateResult
from accelpilot.decide.verdict import Decision
from accelpilot.evidence import read_files

FIX = Path(__file__).parents[1] / "evidence" / "fixtures"
EAST = [FIX / "offerings-us-east-1.json", FIX / "quotas-us-east-1.json", FIX / "capacity-blocks-us-east-1.json"]

SCENARIO = """
name = "capacity"
[volumes]
runs_per_month = 2
[[options]]
name = "p5"
pricing = "on_demand"
instance = "p5.48xlarge"
region = "us-east-1"
hours_per_run = 100
[[options]]
name = "trn1"
pricing = "on_demand"
instance = "trn1.32xlarge"
region = "us-east-1"
instances = {n}
hours_per_run = 200
[gates]
{answer}
{evidence}
"""


def _gate(
    tmp_path: Path, n: int = 2, region: str = "", answer: str = "", files: list[Path] | None = None
) -> tuple[GateResult, Decision]:
    p = tmp_path / "s.toml"
    evidence = f'[evidence]\nregions = ["{region}"]' if region else ""
    p.write_text(SCENARIO.format(n=n, answer=answer, evidence=evidence))
    sc = load_scenario(p)
    cat = load_catalog([])
    bill = make_bill(sc, cat)
    ev = read_files(EAST if files is None else files) if (files is None or files) else None
    d = decide(sc, bill, catalog=cat, evidence=ev)
    return next(g for g in d.gates if g.id == "capacity_available"), d


def test_pass_from_evidence(tmp_path: Path) -> None:
    g, d = _gate(tmp_path, n=2)  # 2 x 128 vCPUs = 256 = the Trn quota
    assert g.holds is True, g.reason
    assert "headroom" in g.reason
    assert any("quotas-us-east-1.json" in ln for ln in g.evidence.lines)
    assert str(FIX / "quotas-us-east-1.json") in g.evidence.files
    assert {c.option: c.status for c in d.capacity} == {"p5": "pass", "trn1": "pass"}


def test_fail_names_the_shortfall(tmp_path: Path) -> None:
    # 3 x 128 = 384 vCPUs against 256; the trn1 capacity block covers 4 instances for 168 h, but a run is 200 h
    g, _ = _gate(tmp_path, n=3)
    assert g.holds is False
    assert "short by 128 vCPUs" in g.reason


def test_unknown_without_evidence_or_for_an_uncovered_region(tmp_path: Path) -> None:
    g, _ = _gate(tmp_path, files=[])
    assert g.holds is None and g.missing is not None and "[evidence] files" in g.missing.fix
    g, _ = _gate(tmp_path, region="eu-west-1")
    assert g.holds is None and "no instance-type offerings file for eu-west-1" in g.reason


def test_the_users_answer_wins_and_both_are_shown(tmp_path: Path) -> None:
    g, _ = _gate(tmp_path, n=3, answer="capacity_available = true")
    assert g.holds is True
    assert "the scenario answers yes" in g.reason and "the account evidence says fail" in g.reason
    assert g.evidence.scenario_answer is True and g.evidence.lines
