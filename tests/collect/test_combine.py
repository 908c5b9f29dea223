"""Several runs of one option are combined (olympic mean, mean of two), and the bill prices the combination."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.collect.conftest import SCENARIO, TRN1, cli_run, make_result, put

TRN1_ON_DEMAND = 21.50  # trn1.32xlarge on demand, USD per hour (bundled catalog, seed 002)


def _row(out: str, option: str = "trn1 on-demand") -> dict:
    return next(r for r in json.loads(out)["options"] if r["option"] == option)


def _bill(scenario: Path, capsys: pytest.CaptureFixture[str], option: str = "trn1 on-demand") -> dict:
    code, out, err = cli_run(["bill", str(scenario), "--json"], capsys)
    assert code == 0, err
    return next(o for o in json.loads(out)["options"] if o["name"] == option)


def test_four_runs_olympic_mean_priced(tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = tmp_path / "results"
    runs = [(3000.0, 1500.0), (3240.0, 900.0), (4140.0, 1000.0), (9000.0, 1100.0)]  # (time to target s, tokens/s)
    for i, (tts, tps) in enumerate(runs, start=1):
        put(make_result(extra=TRN1, tts=tts, tokens_per_s=tps, minute=i), res, f"r{i}.json")
    args = ["collect", str(res), "--scenario", str(scenario), "--write"]
    code, out, err = cli_run([*args, "--json"], capsys)
    assert code == 0, err
    row = _row(out)
    assert row["runs"] == 4 and row["combined"]["method"] == "olympic mean" and len(row["combined"]["runs"]) == 4
    names = {k: sorted(Path(p).name for p in v) for k, v in row["combined"]["dropped"].items()}
    assert names["time_to_target_s"] == ["r1.json", "r4.json"]  # 3000 lowest, 9000 highest
    assert names["tokens_per_s"] == ["r1.json", "r2.json"]  # 1500 highest, 900 lowest
    combined = json.loads(Path(row["result"]).read_text())
    assert combined["training"]["time_to_target_s"] == pytest.approx((3240 + 4140) / 2)  # 3690 s
    assert combined["training"]["tokens_per_s"] == pytest.approx((1000 + 1100) / 2)  # 1050 token/s
    assert combined["training"]["runs"] == 4 * 3 and len(combined["details"]["combined"]["runs"]) == 4

    # the bill prices the combination: 3690 s / 3600 = 1.025 h; 21.50 x 1.025 = 22.0375 USD per run
    trn1 = _bill(scenario, capsys)
    assert trn1["measured"] is True
    assert trn1["hours_per_run"] == pytest.approx(1.025, abs=5e-5)
    assert trn1["cost_per_run"] == pytest.approx(22.0375, abs=0.005)

    # the table says so; the combined file is never read back as a fifth run
    scenario.write_text(SCENARIO)
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario)], capsys)
    assert code == 0, err
    assert "olympic mean of 4" in out and "r1.json" in out and "r4.json" in out
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--json"], capsys)
    assert _row(out)["runs"] == 4


def test_two_runs_plain_mean_and_unverified_kept_apart(
    tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res = tmp_path / "results"
    put(make_result(extra=TRN1, tts=3000.0, minute=1), res, "a.json")
    put(make_result(extra=TRN1, tts=3600.0, minute=2), res, "b.json")
    put(make_result(extra=TRN1, tts=100.0, minute=3), res, "c-edited.json", sidecar=False)  # nothing proves it
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--write", "--json"], capsys)
    assert code == 0, err
    row = _row(out)
    assert row["combined"]["method"] == "mean" and row["combined"]["dropped"]["time_to_target_s"] == []
    assert sorted(Path(p).name for p in row["combined"]["runs"]) == ["a.json", "b.json"]
    assert [Path(x["file"]).name for x in row["combined"]["not_combined"]] == ["c-edited.json"]
    # (3000 + 3600) / 2 = 3300 s = 0.91667 h; 21.50 x 3300 / 3600 = 19.7083 USD
    trn1 = _bill(scenario, capsys)
    assert trn1["hours_per_run"] == pytest.approx(3300 / 3600, abs=5e-5)
    assert trn1["cost_per_run"] == pytest.approx(19.7083, abs=0.005)


def test_one_run_is_written_as_itself(tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = tmp_path / "results"
    put(make_result(extra=TRN1, tts=3000.0), res, "only.json")
    code, out, err = cli_run(["collect", str(res), "--scenario", str(scenario), "--json"], capsys)
    assert code == 0, err
    assert _row(out)["result"].endswith("only.json") and "combined" not in _row(out)
    assert not list(res.glob("*.combined.json"))


def test_serving_runs_combine_their_peak_rate(tmp_path: Path) -> None:
    from accelpilot.collect.combine import combine_runs
    from accelpilot.collect.read import Collected
    from accelpilot.pilot.result import ServingSummary

    runs = []
    for i, peak in enumerate([10.0, 12.0, 30.0]):
        base = make_result(kind="serving")
        res = base.model_copy(update={"training": None, "serving": ServingSummary(peak_qps_under_slo=peak)})
        runs.append(Collected(tmp_path / f"s{i}.json", f"{i}", res, "verified"))
    combo = combine_runs(runs)
    assert combo is not None and combo.method == "olympic mean"
    assert combo.result.serving is not None
    assert combo.result.serving.peak_qps_under_slo == pytest.approx(12.0)  # 10 and 30 dropped: mean of 12
    assert sorted(p.name for p in combo.dropped["peak_qps_under_slo"]) == ["s0.json", "s2.json"]
