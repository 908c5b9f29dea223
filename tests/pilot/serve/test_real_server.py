"""Against a real OpenAI-compatible server (llama.cpp's llama-server serving SmolLM2-135M on 127.0.0.1, both from
PyPI; see benchmarks/endpoint_llama.py): read from the server's own log, no measured point of a sweep reuses another
point's cached prefix, the warm cache on purpose does, and the pilot's TTFT agrees with the server's prompt time."""

from __future__ import annotations

import json
import statistics
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

from endpoint_llama import MISSING, Server, find, llama_server  # type: ignore[import-not-found]

from accelpilot.pilot.serve.base import ServeConfig
from accelpilot.pilot.serve.runner import run_serve

pytestmark = pytest.mark.skipif(find() is None, reason=MISSING)
MAX_TOKENS = 8
N = 4


def _tokens(srv: Server, text: str) -> int:
    req = urllib.request.Request(
        srv.url + "/tokenize", data=json.dumps({"content": text}).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        return len(json.loads(r.read())["tokens"])


def _reused(task: dict[str, float]) -> int:
    """Prompt tokens the server took from its cache: the prompt (slot tokens at release less the generated ones,
    the last of which never enters the cache) less those it evaluated."""
    prompt = int(task["n_tokens"]) - (MAX_TOKENS - 1)
    return prompt - int(task["evaluated"])


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with llama_server(parallel=2, log_dir=tmp_path_factory.mktemp("llama")) as s:
        yield s


def test_no_measured_point_reuses_another_points_cache(srv: Server) -> None:
    before = len(srv.timings())
    res = run_serve(
        ServeConfig(endpoint=srv.url + "/v1/completions", concurrency=(1, 2), num_requests=N, max_tokens=MAX_TOKENS)
    )
    assert res.serving is not None and res.serving.errors == 0, res.errors
    tasks = srv.wait_timings(before + 1 + N + 2 + N)[before:]
    # the server saw, in order: point 1's warm-up (1), its 4 requests, point 2's warm-up (2), its 4 requests
    assert len(tasks) == 1 + N + 2 + N
    p0, p1 = tasks[1 : 1 + N], tasks[1 + N + 2 :]
    nonce = res.details["cache"]["nonce"]
    salt = _tokens(srv, f"[p1 {nonce}] ")
    # a point's first request finds nothing of its own in the cache: at most the bracket is shared with others
    assert _reused(p0[0]) <= 2 and _reused(p1[0]) <= 2, (p0[0], p1[0])
    # later requests of a point may reuse that point's own salt line (and a first word), never another point's prompt
    assert all(_reused(t) <= salt + 3 for t in p0 + p1), [(_reused(t), t) for t in p0 + p1]
    # TTFT agrees with the server's own prompt time (concurrency 1: no queueing): the client adds only HTTP and a
    # first sampled token
    ttft = res.details["sweep"][0]["ttft_ms"]["p50"]
    server = statistics.median(t["prompt_ms"] for t in p0)
    assert -5.0 <= ttft - server <= max(80.0, 0.3 * server), (ttft, server)


def test_the_warm_cache_on_purpose_is_seen_in_the_servers_log(srv: Server) -> None:
    """The same check catches reuse: with --cache warm every measured request comes from the cache."""
    before = len(srv.timings())
    res = run_serve(
        ServeConfig(
            endpoint=srv.url + "/v1/completions", concurrency=1, num_requests=N, max_tokens=MAX_TOKENS, cache="warm"
        )
    )
    assert res.serving is not None and res.serving.errors == 0, res.errors
    tasks = srv.wait_timings(before + 2 * N)[before:]
    assert len(tasks) == 2 * N  # the warm-up pass, then the measured point
    measured = tasks[N:]
    assert sum(1 for t in measured if _reused(t) >= int(t["n_tokens"]) - MAX_TOKENS - 1) >= N - 1, measured
