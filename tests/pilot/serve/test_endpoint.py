"""Endpoint mode against real HTTP servers on loopback: streaming, erroring, stalling, garbage, refused."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Generator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("httpx")

from accelpilot.pilot.serve.base import ServeConfig
from accelpilot.pilot.serve.endpoint import resolve_url
from accelpilot.pilot.serve.runner import run_serve

TOKENS = 6
TOKEN_DELAY = 0.005
# Valid SSE a strict `data:`-only parser rejects: retry/id/event fields, a comment, CRLF, a named non-token event.
GRAMMAR = (
    b"retry: 3000\n\n"
    b": keep-alive comment\n"
    b'id: 1\nevent: message\ndata: {"choices": [{"index": 0, "text": "a "}]}\n\n'
    b'id: 2\ndata: {"choices": [{"index": 0, "text": "b "}]}\n\n'
    b'event: ping\ndata: {"choices": [{"index": 0, "text": "not a token"}]}\n\n'
    b'id: 3\ndata: {"choices": [{"index": 0, "text": "c"}]}\r\n\r\n'
    b'data: {"choices": [], "usage": {"completion_tokens": 3}}\n\n'
    b"data: [DONE]\n\n"
)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    mode = "ok"

    def log_message(self, *args: object) -> None:
        return

    def do_GET(self) -> None:
        body = json.dumps({"data": [{"id": "tiny-model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        mode = self.server.mode  # type: ignore[attr-defined]
        if mode == "error":
            body = b'{"error": "model exploded"}'
            self.send_response(500)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        if mode == "stall":
            self.wfile.flush()
            time.sleep(3)
            return
        if mode == "garbage":
            self.wfile.write(b"<html>this is not an event stream</html>\n")
            return
        if mode == "grammar":
            self.wfile.write(GRAMMAR)
            self.wfile.flush()
            return
        chat = "messages" in req
        n = min(int(req.get("max_tokens", TOKENS)), TOKENS)
        time.sleep(0.01)  # "prefill"
        for i in range(n):
            choice = {"index": 0, "delta": {"content": f"t{i} "}} if chat else {"index": 0, "text": f"t{i} "}
            self.wfile.write(f"data: {json.dumps({'choices': [choice]})}\n\n".encode())
            self.wfile.flush()
            time.sleep(TOKEN_DELAY)
        usage = {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": n}}
        self.wfile.write(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())
        self.wfile.flush()
        self.close_connection = True


def _serve(mode: str) -> Generator[str, None, None]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    srv.mode = mode  # type: ignore[attr-defined]
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def ok_server() -> Iterator[str]:
    yield from _serve("ok")


@pytest.fixture
def error_server() -> Iterator[str]:
    yield from _serve("error")


@pytest.fixture
def stall_server() -> Iterator[str]:
    yield from _serve("stall")


@pytest.fixture
def garbage_server() -> Iterator[str]:
    yield from _serve("garbage")


def test_resolve_url() -> None:
    assert resolve_url("http://h:1") == ("http://h:1/v1/completions", "completions")
    assert resolve_url("http://h:1/v1/") == ("http://h:1/v1/completions", "completions")
    assert resolve_url("http://h:1/v1/chat/completions")[1] == "chat"


@pytest.mark.parametrize("path", ["/v1/completions", "/v1/chat/completions"])
def test_streaming_metrics(ok_server: str, path: str) -> None:
    cfg = ServeConfig(
        endpoint=ok_server + path, num_requests=12, concurrency=3, max_tokens=TOKENS, slo_ttft_ms=5000, slo_tpot_ms=5000
    )
    res = run_serve(cfg)
    s = res.serving
    assert s is not None and s.errors == 0
    assert s.tokens_per_request == TOKENS
    assert s.goodput_share == 1.0
    assert res.config["model"] == "tiny-model"  # read from /v1/models
    ttft = res.samples["endpoint.ttft_s"]
    e2e = res.samples["endpoint.e2e_s"]
    tpot = res.samples["endpoint.tpot_s"]
    assert len(ttft) == len(e2e) == len(tpot) == 12
    assert min(ttft) >= 0.01  # the server's prefill sleep
    for a, b, c in zip(ttft, e2e, tpot, strict=True):
        assert a < b
        assert c == pytest.approx((b - a) / (TOKENS - 1))
    assert len(res.samples["endpoint.itl_s"]) == 12 * (TOKENS - 1)
    itl = sorted(res.samples["endpoint.itl_s"])
    assert itl[len(itl) // 2] > TOKEN_DELAY * 0.5  # median: a loaded host may deliver two events in one read
    assert float(res.figures["endpoint.error_rate"].value) == 0


def test_poisson_load_and_a_tight_slo(ok_server: str) -> None:
    cfg = ServeConfig(
        endpoint=ok_server, num_requests=10, request_rate=50.0, max_tokens=TOKENS, slo_ttft_ms=0.001
    )  # nobody meets a 1 us TTFT
    res = run_serve(cfg)
    assert res.serving is not None
    assert res.serving.errors == 0
    assert res.serving.goodput_share == 0.0
    assert res.serving.scenario == "endpoint-poisson"


def test_erroring_server_is_counted(error_server: str) -> None:
    res = run_serve(ServeConfig(endpoint=error_server, num_requests=5, concurrency=2))
    assert res.serving is not None and res.serving.errors == 5
    assert res.details["http_status"] == {"500": 5}
    assert res.accepted is False
    assert "HTTP 500" in res.details["first_errors"][0]


def test_stalling_server_times_out(stall_server: str) -> None:
    t0 = time.perf_counter()
    res = run_serve(ServeConfig(endpoint=stall_server, num_requests=3, concurrency=3, request_timeout_s=0.5))
    assert time.perf_counter() - t0 < 2.5
    assert res.serving is not None and res.serving.errors == 3
    assert res.details["timeouts"] == 3


def test_garbage_is_counted(garbage_server: str) -> None:
    res = run_serve(ServeConfig(endpoint=garbage_server, num_requests=3, concurrency=1))
    assert res.serving is not None and res.serving.errors == 3
    assert all("bad response" in e for e in res.details["first_errors"])


def test_refused_connection_is_counted() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    res = run_serve(
        ServeConfig(endpoint=f"http://127.0.0.1:{port}", num_requests=3, concurrency=1, request_timeout_s=2)
    )
    assert res.serving is not None and res.serving.errors == 3
    assert res.serving.goodput_share == 0.0


# --- the event-stream grammar, through httpx.MockTransport (no socket) ---

import httpx  # noqa: E402

from accelpilot.pilot.serve.endpoint import run_endpoint  # noqa: E402


def _mock(body: bytes, content_type: str = "text/event-stream") -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json={"data": [{"id": "mock-model"}]})
        return httpx.Response(200, headers={"Content-Type": content_type}, content=body)

    return httpx.MockTransport(handler)


def test_valid_event_id_retry_lines_are_accepted() -> None:
    """`event:`, `id:`, `retry:` and comment lines are valid SSE; the old hand-written parser rejected them."""
    stream = GRAMMAR
    res = run_endpoint(
        ServeConfig(endpoint="http://mock/v1/completions", num_requests=3, concurrency=1).validate(),
        transport=_mock(stream),
    )
    assert res.serving is not None
    assert res.details["first_errors"] == []
    assert res.serving.errors == 0
    assert res.serving.tokens_per_request == 3
    assert len(res.samples["endpoint.itl_s"]) == 3 * 2  # three token events per request, the ping ignored
    assert res.config["model"] == "mock-model"


def test_event_stream_grammar_over_loopback() -> None:
    """The same valid stream from a real socket."""
    gen = _serve("grammar")
    url = next(gen)
    try:
        res = run_serve(ServeConfig(endpoint=url, num_requests=2, concurrency=1))
    finally:
        gen.close()
    assert res.serving is not None
    assert res.details["first_errors"] == []
    assert res.serving.tokens_per_request == 3


def test_not_an_event_stream_is_a_bad_response() -> None:
    res = run_endpoint(
        ServeConfig(endpoint="http://mock/v1/completions", num_requests=2, concurrency=1).validate(),
        transport=_mock(b'{"choices": []}', content_type="application/json"),
    )
    assert res.serving is not None and res.serving.errors == 2
    assert all(e.startswith("bad response") for e in res.details["first_errors"])
