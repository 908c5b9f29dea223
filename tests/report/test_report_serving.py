"""The serving part of a report (issue 16): the sweep table and charts, the operating point, output parity, and
both platforms' goodput on one chart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from accelpilot.cli import main
from accelpilot.figures import measured
from accelpilot.pilot.result import PilotResult, Platform, ServingSummary, WorkloadInfo, write_result


def _point(c: int, goodput: float, share: float, ttft: float) -> dict[str, Any]:
    return {
        "load": f"concurrency {c}",
        "concurrency": c,
        "request_rate": None,
        "requests": 8,
        "succeeded": 8,
        "errors": 0,
        "good": round(share * 8),
        "goodput_share": share,
        "goodput_qps": goodput,
        "request_throughput": goodput / max(share, 0.01),
        "output_token_throughput": 100.0,
        "wall_s": 1.0,
        "ttft_ms": {"p50": ttft / 2, "p99": ttft},
        "tpot_ms": {"p99": 5.0},
        "itl_ms": {"p99": 5.0},
        "e2e_ms": {"p99": ttft + 50},
    }


def _endpoint(name: str, sweep: list[dict[str, Any]], parity: dict[str, Any] | None) -> PilotResult:
    op = max((p for p in sweep if p["goodput_share"] >= 0.99), key=lambda p: p["concurrency"], default=None)
    details: dict[str, Any] = {
        "sweep": sweep,
        "operating_point": None if op is None else {**op, "min_goodput_share": 0.99},
    }
    if parity:
        details["parity"] = parity
    return PilotResult(
        kind="serving",
        platform=Platform(device="endpoint:http://127.0.0.1:8000", device_type="endpoint", device_name=name),
        workload=WorkloadInfo(name="llama-ft", factory="endpoint"),
        figures={"endpoint.goodput_qps": measured(op["goodput_qps"] if op else 0.0, "req/s", "fixture", "goodput")},
        serving=ServingSummary(
            scenario="endpoint-concurrency-sweep", peak_qps_under_slo=op["goodput_qps"] if op else None
        ),
        accepted=True,
        details=details,
    )


def test_report_shows_sweeps_operating_points_and_parity(
    files: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gpu = _endpoint(
        "gpu <b>vllm</b>", [_point(1, 10.0, 1.0, 40.0), _point(2, 19.0, 1.0, 60.0), _point(4, 12.0, 0.5, 900.0)], None
    )
    parity = {
        "compared_to": "gpu.json",
        "other_platform": "gpu vllm",
        "pairs": 8,
        "exact_match_rate": 0.75,
        "first_n": 16,
        "first_n_match_rate": 0.875,
        "first_n_token_agreement": 0.9,
        "cosine": {"p5": 0.31, "p50": 1.0, "min": 0.2},
        "similarity_model": "all-MiniLM-L6-v2",
        "threshold": 0.9,
        "accepted_share": 0.75,
    }
    neuron = _endpoint(
        "inf2 vllm-neuron",
        [_point(1, 9.0, 1.0, 50.0), _point(2, 17.0, 0.9, 300.0), _point(4, 8.0, 0.2, 2000.0)],
        parity,
    )
    write_result(gpu, tmp_path / "gpu.json")
    write_result(neuron, tmp_path / "neuron.json")
    out = tmp_path / "rep"
    code = main(
        [
            "report",
            "--scenario",
            str(files["scenario"]),
            "--beside",
            str(tmp_path / "gpu.json"),
            "--beside",
            str(tmp_path / "neuron.json"),
            "--out",
            str(out),
        ]
    )
    capsys.readouterr()
    assert code == 0
    md = (out / "report.md").read_text()
    # 8 requests per point: each p99 carries its sample size
    assert r"| concurrency 2 | 19.00 | 19.00 | 100.0% | 60.00 \(n=8\) | 110.00 \(n=8\) | 0 | 8 |" in md
    assert (
        r"operating point: concurrency 2: 19.00 req/s meeting every SLO, goodput share 100.0% \(at least 99% required\)"
        in md
    )
    assert "operating point: concurrency 1: 9.00 req/s" in md  # the Neuron endpoint falls below 99% at 2
    assert "| exact match | 75.0% |" in md and r"| accepted \(exact or cosine ≥ 0.9\) | 75.0% |" in md
    rep = json.loads((out / "report.json").read_text())
    views = {p["path"]: p for p in rep["pilots"]}
    g = views[str(tmp_path / "gpu.json")]
    assert [c["id"] for c in g["charts"]][:2] == ["serve-goodput", "serve-latency"]
    goodput = g["charts"][0]
    assert goodput["series"][0]["x"] == [1.0, 2.0, 4.0] and goodput["series"][0]["y"] == [10.0, 19.0, 12.0]
    assert goodput["markers"] == [[2.0, "operating point"]]
    compared = [c for c in rep["charts"] if c["id"] == "serve-goodput-compared"]
    assert len(compared) == 1 and len(compared[0]["series"]) == 2
    html = (out / "report.html").read_text()
    assert "gpu <b>vllm</b>" not in html and "gpu &lt;b&gt;vllm&lt;/b&gt;" in html
    assert 'id="chart-pilot1-serve-goodput"' in html or 'id="chart-pilot2-serve-goodput"' in html
    assert "Output parity" in html


def test_two_platforms_of_one_model_with_different_loads(
    files: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30: the compared goodput table keys each row by its load (before: a value measured at concurrency 4
    printed in row 2 when the sweeps differed), and sections and legends name the --platform, not the model."""
    gpu = _endpoint(
        "llama-ft", [_point(1, 10.0, 1.0, 40.0), _point(2, 19.0, 1.0, 60.0), _point(4, 30.0, 1.0, 90.0)], None
    )
    neuron = _endpoint(
        "llama-ft", [_point(1, 9.0, 1.0, 50.0), _point(4, 27.0, 1.0, 80.0), _point(8, 33.0, 1.0, 99.0)], None
    )
    for res, note in ((gpu, "p5.48xlarge, vLLM 0.9"), (neuron, "inf2.48xlarge, vLLM-neuron")):
        res.platform.device_name = note  # what run serve --platform records
        res.platform.tool_output = {"client": {"declared_platform": note}}
    write_result(gpu, tmp_path / "gpu.json")
    write_result(neuron, tmp_path / "neuron.json")
    out = tmp_path / "rep"
    code = main(
        [
            "report",
            "--scenario",
            str(files["scenario"]),
            "--beside",
            str(tmp_path / "gpu.json"),
            "--beside",
            str(tmp_path / "neuron.json"),
            "--out",
            str(out),
        ]
    )
    capsys.readouterr()
    assert code == 0
    md = (out / "report.md").read_text()
    assert "pilot on p5.48xlarge, vLLM 0.9: workload llama-ft" in md
    assert "pilot on inf2.48xlarge, vLLM-neuron: workload llama-ft" in md
    # the compared chart's table: one row per load of either sweep, each value in its own load's row
    head = "| concurrent clients | p5.48xlarge, vLLM 0.9 · llama-ft \\(gpu.json\\) | inf2.48xlarge, vLLM-neuron · llama-ft \\(neuron.json\\) |"
    assert head in md, md[md.find("every platform") - 200 : md.find("every platform") + 800]
    assert "| 2 | 19.00 | — |" in md  # measured on the GPU only
    assert "| 4 | 30.00 | 27.00 |" in md  # concurrency 4 on both, side by side
    assert "| 8 | — | 33.00 |" in md  # measured on Neuron only
    assert "SLO None" not in md
