"""Against a real OpenAI-compatible server (llama.cpp's llama-server serving SmolLM2-135M on 127.0.0.1, both from
PyPI; see benchmarks/endpoint_llama.py): read from the server's own log, no measured point of a sweep reuses another
point's cached prefix, the warm cache on purpose does, and the pilot's TTFT agrees with the server's prompt time."""

from __future__ import annotations

import json
import statistics
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import httpx
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


class _Established:
    """Client sockets ESTABLISHED to the server's port, sampled from /proc/net/tcp every 2 ms on a thread: an
    account of connections that does not go through the pilot's own counting."""

    def __init__(self, port: int) -> None:
        self.port, self.peak, self.ports, self.stop = f"{port:04X}", 0, set[str](), threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            now = set()
            for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
                local, remote, state = line.split()[1:4]
                if state == "01" and remote.endswith(":" + self.port):  # 01: ESTABLISHED, client side
                    now.add(local)
            self.peak = max(self.peak, len(now))
            self.ports |= now
            time.sleep(0.002)

    def __enter__(self) -> _Established:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()


@pytest.mark.skipif(not Path("/proc/net/tcp").is_file(), reason="counts sockets from Linux's /proc/net/tcp")
def test_at_most_one_connection_per_concurrent_stream_and_what_the_server_kept_alive(srv: Server) -> None:
    """llama-server (cpp-httplib) closes the connection after every streamed answer, kept-alive or not: its chunked
    content provider returns false right after ``sink.done()`` (tools/server/server-http.cpp), which cpp-httplib
    0.59 takes as a cancelled write and closes. The pilot cannot reuse what the server closed; it must never hold
    more connections than streams in flight, and must say how many it opened and who closed them."""
    port = int(srv.url.rsplit(":", 1)[1])
    with _Established(port) as seen:
        res = run_serve(
            ServeConfig(endpoint=srv.url + "/v1/completions", concurrency=2, num_requests=8, max_tokens=MAX_TOKENS)
        )
    assert res.serving is not None and res.serving.errors == 0, res.errors
    client = res.details["client"]
    assert seen.peak <= 2, seen.peak  # never more connections open at once than concurrent streams
    assert client["streams"] == 2 + 8  # the warm-up (one per stream) and the measured requests
    # the pilot's count (httpcore's connect events) against the sockets seen (+1: GET /v1/models, its own client)
    assert client["connections_opened"] <= len(seen.ports) <= client["connections_opened"] + 1
    # this server closed every streamed connection, and the result says so (checked, not assumed) ...
    assert client["connections_opened"] == client["streams"]
    assert "server closed the connection after every stream" in client["keep_alive"]
    # ... and so it does for the field's plain httpx keep-alive loop, while a non-streamed answer keeps its
    # connection: the closing is the server's streaming path, not the client
    assert _plain_httpx_connections(srv.url, stream=True) == 4
    assert _plain_httpx_connections(srv.url, stream=False) == 1


def _plain_httpx_connections(url: str, stream: bool, n: int = 4) -> int:
    """TCP connections a plain httpx keep-alive client (one connection allowed) opens for ``n`` requests."""
    opened = 0

    def trace(event: str, _info: dict[str, object]) -> None:
        nonlocal opened
        opened += event == "connection.connect_tcp.complete"

    with httpx.Client(limits=httpx.Limits(max_connections=1, max_keepalive_connections=1), timeout=30) as c:
        for i in range(n):
            body = {"prompt": f"[plain {i}] Hello", "max_tokens": 4, "stream": stream}
            for attempt in (0, 1):  # the kept-alive connection the server closed fails the next request once
                try:
                    with c.stream("POST", url + "/v1/completions", json=body, extensions={"trace": trace}) as r:
                        r.read()
                    break
                except httpx.RemoteProtocolError:
                    assert attempt == 0
    return opened
