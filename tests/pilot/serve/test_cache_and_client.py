"""Issue 30: cache-honest sweeps (no measured point resends what another sent), a kept-alive pool of one connection
per concurrent stream, the client's own CPU recorded, and sample sizes stated on small percentiles."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from accelpilot.cli import main
from accelpilot.pilot.serve.base import ServeConfig
from accelpilot.pilot.serve.runner import run_serve


def _sent(seen: list) -> list[str]:
    """The prompts as the server received them, salt included."""
    return [f"[{s.salt}] {s.payload['prompt']}" for s in seen]


def test_each_measured_point_sends_requests_no_other_point_sent(fake_server: Callable) -> None:
    srv = fake_server()
    res = run_serve(ServeConfig(endpoint=srv.url, concurrency=(1, 2, 4), num_requests=6, max_tokens=4, seed=1))
    by_point: dict[str, list[str]] = {}
    for s in srv.seen:
        by_point.setdefault(s.salt, []).append(f"[{s.salt}] {s.payload['prompt']}")
    assert len(by_point) == 3 and all(len(v) == 6 for v in by_point.values())  # 3 points x 6 requests
    sets = [set(v) for v in by_point.values()]
    assert not (sets[0] & sets[1]) and not (sets[0] & sets[2]) and not (sets[1] & sets[2])
    # the same six prompts underneath, so the points measure the same work
    assert len({tuple(sorted(s.payload["prompt"] for s in srv.seen if s.salt == k)) for k in by_point}) == 1
    # warm-up: unmeasured, one per concurrent stream (1 + 2 + 4), salted apart from every measured request
    assert len(srv.warmups) == 1 + 2 + 4
    assert not set(_sent(srv.warmups)) & set().union(*sets)
    cache = res.details["cache"]
    assert cache["mode"] == "cold" and len(cache["salts"]) == 3 and cache["warmup_requests"] == [1, 2, 4]
    assert [p["salt"] for p in res.details["sweep"]] == cache["salts"]
    assert res.config["cache_salt"] == cache["nonce"]


def test_warm_cache_on_purpose_resends_the_same_requests(fake_server: Callable) -> None:
    srv = fake_server()
    res = run_serve(
        ServeConfig(endpoint=srv.url, concurrency=(1, 2), num_requests=4, max_tokens=4, cache="warm", seed=2)
    )
    salts = {s.salt for s in srv.seen}
    assert len(srv.seen) == 4 + 4 + 4  # the warm-up pass (every request once), then each point
    assert len(salts) == 1
    first = _sent(srv.seen[:4])
    assert sorted(_sent(srv.seen[4:8])) == sorted(first) == sorted(_sent(srv.seen[8:]))
    assert res.details["cache"]["mode"] == "warm" and "on purpose" in res.details["cache"]["method"]


def test_two_runs_salt_apart_unless_a_salt_is_given(fake_server: Callable) -> None:
    srv = fake_server()
    for _ in range(2):
        run_serve(ServeConfig(endpoint=srv.url, num_requests=2, max_tokens=3, warmup_requests=0))
    assert len({s.salt for s in srv.seen}) == 2  # a rerun against the same server is cold too
    srv2 = fake_server()
    for _ in range(2):
        run_serve(ServeConfig(endpoint=srv2.url, num_requests=2, max_tokens=3, warmup_requests=0, cache_salt="s1"))
    assert {s.salt for s in srv2.seen} == {"p0 s1"}


def test_pool_keeps_one_connection_per_concurrent_stream(fake_server: Callable) -> None:
    """Before: the stream was left at [DONE] unread to its end, so httpx dropped every connection (100 requests,
    100 connections); the pool must reuse them."""
    srv = fake_server(keep_alive=True)
    res = run_serve(ServeConfig(endpoint=srv.url, concurrency=2, num_requests=12, max_tokens=4))
    assert res.serving is not None and res.serving.errors == 0
    assert len(srv.seen) == 12
    assert len(srv.ports) <= 2  # warm-up and measured requests share the point's pool
    assert res.details["client"]["connections"] <= 2
    assert res.details["client"]["http_version"] == ["HTTP/1.1"]


def test_client_cpu_and_sample_size_are_stated(fake_server: Callable) -> None:
    srv = fake_server()
    res = run_serve(ServeConfig(endpoint=srv.url, concurrency=2, num_requests=12, max_tokens=4))
    cpu = res.details["client"]["client_cpu_ms_per_request"]
    assert 0 < cpu < 1000
    assert "from 12 requests" in res.details["sample_note"]
    assert "fewer than 100" in res.figures["endpoint.ttft_p99_ms"].label


def test_the_summary_never_says_slo_none(
    fake_server: Callable, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    srv = fake_server()
    code = main(
        ["run", "serve", "--endpoint", srv.url, "--num-requests", "3", "--max-tokens", "3", "--out", str(tmp_path)]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "None ms" not in out and "no SLO given" in out
    code = main(
        [
            "run",
            "serve",
            "--endpoint",
            srv.url,
            "--num-requests",
            "3",
            "--max-tokens",
            "3",
            "--slo-ttft-ms",
            "500",
            "--out",
            str(tmp_path),
        ]
    )
    assert "SLO TTFT 500 ms" in capsys.readouterr().out


def test_out_naming_a_file_is_refused_before_any_request(
    fake_server: Callable, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 28 item 9: before, every request was sent and then the write failed with a traceback."""
    srv = fake_server()
    f = tmp_path / "results.json"
    f.write_text("{}")
    code = main(["run", "serve", "--endpoint", srv.url, "--num-requests", "3", "--out", str(f)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "--out" in err and "is a file" in err
    assert srv.seen == [] and srv.warmups == []
    assert f.read_text() == "{}"


def test_run_serve_help_and_defaults_come_from_serve_config() -> None:
    """Issue 25 item 6: every ServeConfig field declared as an option is one `run serve` option, with its help."""
    from dataclasses import fields

    import typer.main

    from accelpilot.cli.app import app

    cmd = typer.main.get_command(app).commands["run"].commands["serve"]  # type: ignore[attr-defined]
    by_name = {p.name: p for p in cmd.params}
    declared = [f for f in fields(ServeConfig) if "cli" in f.metadata]
    assert len(declared) >= 40
    for f in declared:
        opt = f.metadata["cli"]
        p = by_name[f.name]
        assert p.help == opt.help, f.name
        assert next(iter(opt.flags)).split("/")[0] in p.opts, f.name
    assert set(by_name) == {f.name for f in declared} | {"out", "as_json"}


def test_result_json_states_cache_and_client(
    fake_server: Callable, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    srv = fake_server()
    code = main(
        [
            "run",
            "serve",
            "--endpoint",
            srv.url,
            "--num-requests",
            "2",
            "--max-tokens",
            "3",
            "--warmup-requests",
            "0",
            "--out",
            str(tmp_path),
            "--json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and srv.warmups == []
    assert data["details"]["cache"]["warmup_requests"] == [0]
    assert data["config"]["cache"] == "cold"


def _rows(tmp_path: Path, n: int) -> str:
    f = tmp_path / f"rows{n}.jsonl"
    f.write_text("".join(json.dumps({"prompt": f"question number {i} about the sea"}) + "\n" for i in range(n)))
    return str(f)


def test_a_big_request_file_gives_each_point_rows_no_other_point_sends(fake_server: Callable, tmp_path: Path) -> None:
    srv = fake_server()
    # 3 points x 4 requests = 12 rows needed; the file has 15
    res = run_serve(
        ServeConfig(endpoint=srv.url, requests_file=_rows(tmp_path, 15), concurrency=(1, 2, 4), num_requests=4)
    )
    by_point: dict[str, set[str]] = {}
    for s in srv.seen:
        by_point.setdefault(s.salt, set()).add(s.payload["prompt"])
    assert len(by_point) == 3 and all(len(v) == 4 for v in by_point.values())
    rows = list(by_point.values())
    assert not (rows[0] & rows[1]) and not (rows[0] & rows[2]) and not (rows[1] & rows[2])  # not even underneath
    cache = res.details["cache"]
    assert cache["distinct_samples_per_point"] is True and "distinct samples per point" in cache["method"]
    assert res.details["requests_info"]["distinct_samples_per_point"] is True


def test_a_small_request_file_falls_back_to_salts_and_says_so(fake_server: Callable, tmp_path: Path) -> None:
    srv = fake_server()
    # 11 rows < 3 points x 4 requests: the points share rows, each under its own salt
    res = run_serve(
        ServeConfig(endpoint=srv.url, requests_file=_rows(tmp_path, 11), concurrency=(1, 2, 4), num_requests=4)
    )
    by_point: dict[str, set[str]] = {}
    for s in srv.seen:
        by_point.setdefault(s.salt, set()).add(s.payload["prompt"])
    assert len({frozenset(v) for v in by_point.values()}) == 1  # the same rows underneath every salt
    cache = res.details["cache"]
    assert cache["distinct_samples_per_point"] is False
    assert "fewer distinct rows than 3 points x 4 requests" in cache["method"]


def test_connections_opened_against_streams_are_measured(fake_server: Callable) -> None:
    """Kept alive, 2 connections carry the warm-up (2) and 12 streams; a server that closes after each stream
    costs one connection per stream, and the result says the server did it."""
    srv = fake_server(keep_alive=True)
    res = run_serve(ServeConfig(endpoint=srv.url, concurrency=2, num_requests=12, max_tokens=4))
    client = res.details["client"]
    assert client["streams"] == 2 + 12 and client["connections_opened"] == len(srv.ports) <= 2
    assert client["keep_alive"].startswith("kept alive")
    closing = fake_server(keep_alive=False)
    res = run_serve(ServeConfig(endpoint=closing.url, concurrency=2, num_requests=12, max_tokens=4))
    client = res.details["client"]
    assert client["streams"] == 14 and client["connections_opened"] == len(closing.ports) == 14
    assert "server closed the connection after every stream" in client["keep_alive"]
    # arrivals: a new connection per stream may also mean none was free, so the result does not blame the server
    res = run_serve(ServeConfig(endpoint=closing.url, request_rate=50.0, num_requests=6, max_tokens=4))
    client = res.details["client"]
    assert client["streams"] == client["connections_opened"] == 1 + 6
    assert "or no connection was free" in client["keep_alive"]
