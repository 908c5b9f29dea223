"""An unverified result (its .sha256 missing or not matching) through collect, the scenario and the bill.

collect shows it as "unverified" and writes it into the scenario only with --accept-unverified, with
``result_unverified`` beside ``result``; the bill then prices it with its figures marked "unverified" (never
"measured") and says so in the option's notes. Money by hand: trn1.32xlarge on demand is 21.50 USD/h (bundled
catalog, seed 002).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.collect.conftest import TRN1, cli_run, make_result, put

TRN1_ON_DEMAND = 21.50


def _tamper(p: Path, old: str, new: str) -> None:
    """Edit a result after the run: still valid JSON and a valid result; only its .sha256 tells."""
    raw = p.read_text()
    assert old in raw
    p.write_text(raw.replace(old, new))


def _row(out: str, option: str = "trn1 on-demand") -> dict:
    return next(r for r in json.loads(out)["options"] if r["option"] == option)


def _bill(scenario: Path, capsys: pytest.CaptureFixture[str], option: str = "trn1 on-demand") -> dict:
    code, out, err = cli_run(["bill", str(scenario), "--json"], capsys)
    assert code == 0, err
    return next(o for o in json.loads(out)["options"] if o["name"] == option)


def _leaf_kinds(opt: dict, figure: str = "hours_per_run") -> set[str]:
    return {leaf["kind"] for leaf in opt["figures"][figure]["leaves"]} | {opt["figures"][figure]["kind"]}


def test_an_edited_result_is_not_written_without_the_flag(
    tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res = tmp_path / "results"
    p = put(make_result(extra=TRN1, tts=3600.0), res, "r.json")
    _tamper(p, '"time_to_target_s": 3600.0', '"time_to_target_s": 1800.0')  # twice as fast, on paper
    before = scenario.read_bytes()
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--write", "--json"], capsys)
    assert code == 0, err
    rep = json.loads(out)
    row = _row(out)
    assert row["status"] == "unverified" and row["checksum"] == "unverified" and row["written"] is False
    assert "does not match the .sha256" in row["why"]
    assert rep["bad"] == [] and rep["written"] is None  # collected and shown, not a bad file; nothing written
    assert scenario.read_bytes() == before
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--write"], capsys)
    assert code == 0 and "unverified, not written" in out and "--accept-unverified writes it" in err
    assert scenario.read_bytes() == before


def test_accepted_unverified_is_priced_as_unverified_then_a_verified_run_replaces_it(
    tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res = tmp_path / "results"
    p = put(make_result(extra=TRN1, tts=3600.0), res, "edited.json")
    _tamper(p, '"time_to_target_s": 3600.0', '"time_to_target_s": 1800.0')
    args = ["collect", str(res), "--scenario", str(scenario), "--write", "--json"]
    code, out, err = cli_run([*args, "--accept-unverified"], capsys)
    assert code == 0, err
    assert _row(out)["written"] is True and _row(out)["status"] == "unverified"
    text = scenario.read_text()
    assert 'result_unverified = "its content does not match the .sha256' in text and "UNVERIFIED" in text

    # 1800 s = 0.5 h per run; 21.50 USD/h x 0.5 h = 10.75 USD per run: priced, but never called measured
    trn1 = _bill(scenario, capsys)
    assert trn1["measured"] is False and "does not match" in trn1["result_unverified"]
    assert trn1["hours_per_run"] == pytest.approx(0.5, abs=5e-5)
    assert trn1["cost_per_run"] == pytest.approx(10.75, abs=0.005)
    assert "unverified" in _leaf_kinds(trn1) and "measured" not in _leaf_kinds(trn1)
    assert any(n.startswith("UNVERIFIED: priced from") for n in trn1["notes"])
    code, out, err = cli_run(["bill", str(scenario)], capsys)
    assert code == 0, err
    assert "UNVERIFIED" in out + err
    # the report: the figures tagged U, the note, and the commercial gate not passed on an unverified saving
    code, out, err = cli_run(["report", "--scenario", str(scenario), "--out", str(tmp_path / "rep")], capsys)
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "UNVERIFIED: priced from" in md and "come from an unverified result" in md
    assert "k-unverified" in (tmp_path / "rep" / "report.html").read_text()
    assert "time to target: measured" not in md and "time to target: unverified" in md  # the pilot's own figures
    gates = json.loads((tmp_path / "rep" / "report.json").read_text())["decision"]["gates"]
    commercial = next(g for g in gates if g["id"] == "commercial")
    assert commercial["holds"] is None and "unverified result" in commercial["reason"]

    # the verified run arrives: it wins, and the scenario loses its result_unverified line
    put(make_result(extra=TRN1, tts=2700.0, minute=5), res, "verified.json")
    code, out, err = cli_run(args, capsys)
    assert code == 0, err
    assert _row(out)["result"].endswith("verified.json") and _row(out)["status"] == "measured"
    assert "result_unverified" not in scenario.read_text()
    # 2700 s = 0.75 h; 21.50 x 0.75 = 16.125 USD per run, measured
    trn1 = _bill(scenario, capsys)
    assert trn1["measured"] is True and trn1["result_unverified"] is None
    assert trn1["cost_per_run"] == pytest.approx(16.125, abs=0.005)
    assert "measured" in _leaf_kinds(trn1) and "unverified" not in _leaf_kinds(trn1)


def test_the_bill_refuses_a_result_edited_after_collect(
    tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res = tmp_path / "results"
    p = put(make_result(extra=TRN1, tts=3600.0), res, "r.json")
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--write"], capsys)
    assert code == 0, err
    # 3600 s = 1 h; 21.50 x 1 = 21.50 USD per run
    assert _bill(scenario, capsys)["cost_per_run"] == pytest.approx(21.50, abs=0.005)
    _tamper(p, '"time_to_target_s": 3600.0', '"time_to_target_s": 360.0')  # edited after collect wrote it
    code, out, err = cli_run(["bill", str(scenario), "--json"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert str(p) in err and "does not match its .sha256" in err and "--accept-unverified" in err


def test_unverified_runs_combine_without_a_checksum_of_their_own(
    tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res = tmp_path / "results"
    for i, tts in enumerate((3000.0, 3600.0, 4500.0), start=1):
        put(make_result(extra=TRN1, tts=tts, minute=i), res, f"u{i}.json", sidecar=False)
    args = ["collect", str(res), "--scenario", str(scenario), "--write", "--json", "--accept-unverified"]
    code, out, err = cli_run(args, capsys)
    assert code == 0, err
    row = _row(out)
    assert row["combined"]["method"] == "olympic mean" and row["status"] == "unverified"
    combined = Path(row["result"])
    assert combined.name.endswith(".combined.json")
    assert not combined.with_name(combined.name + ".sha256").exists()  # a checksum would launder the runs
    assert 'result_unverified = "no .sha256 beside it' in scenario.read_text()
    # olympic mean of 3000, 3600, 4500: 3600 s = 1 h; 21.50 USD per run, unverified
    trn1 = _bill(scenario, capsys)
    assert trn1["measured"] is False and trn1["cost_per_run"] == pytest.approx(21.50, abs=0.005)
    assert "measured" not in _leaf_kinds(trn1)


def test_a_serving_option_priced_from_an_unverified_result(tmp_path: Path) -> None:
    from accelpilot.bill.compute import make_bill
    from accelpilot.bill.model import bill_to_json
    from accelpilot.bill.scenario import parse_scenario
    from accelpilot.catalog import load_catalog
    from accelpilot.pilot.result import PilotResult, Platform, ServingSummary, WorkloadInfo, write_result
    from accelpilot.result_files import read_option_results

    summary = ServingSummary(peak_qps_under_slo=100.0, goodput_share=0.8)
    res = PilotResult(kind="serving", platform=Platform(device="cpu"), workload=WorkloadInfo(name="m"), serving=summary)
    path = write_result(res, tmp_path / "s.json")
    opt = {"name": "inf2", "instance": "inf2.xlarge", "pricing": "on_demand", "result": str(path)}
    why = "no .sha256 beside it: nothing proves it is what the pilot wrote"
    sc = parse_scenario(
        {
            "options": [{**opt, "result_unverified": why}],
            "workload": "serving",
            "volumes": {"requests_per_month": 1_000_000},
        }
    )
    o = bill_to_json(make_bill(sc, load_catalog(), results=read_option_results(sc)))["options"][0]
    # inf2.xlarge on demand 0.76 USD/h x 730 h = 554.80 USD a month, always on; 1,000,000 x 0.8 goodput = 800,000
    # accepted requests: 554.80 / 800 = 0.6935 USD per 1,000 accepted requests
    assert o["cost_per_1k_accepted_requests"] == pytest.approx(0.6935, abs=5e-5)
    assert o["measured"] is False and o["result_unverified"] == why
    kinds = {leaf["kind"] for leaf in o["figures"]["cost_per_1k_accepted_requests"]["leaves"]}
    assert "unverified" in kinds and "measured" not in kinds
    assert any(n.startswith("UNVERIFIED") for n in o["notes"])
