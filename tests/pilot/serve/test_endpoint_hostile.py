"""Hostile servers on loopback (issue 11): endless or dripping streams, malformed token counts, absurd model ids,
and credentials that must never reach a result file."""

from __future__ import annotations

import base64
import json
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from accelpilot.cli import main
from accelpilot.pilot.serve.base import ServeConfig
from accelpilot.pilot.serve.runner import run_serve

GIVE_UP_S = 20.0  # the servers stop on their own, so a client without a deadline ends (late) instead of hanging
LONG_ID = "m" * 300


def _event(obj: object) -> bytes:
    return f"data: {json.dumps(obj)}\n\n".encode()


TOKEN = _event({"choices": [{"index": 0, "text": "t "}]})


class _Hostile(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        return

    def do_GET(self) -> None:
        mid = LONG_ID if self.server.mode == "long-id" else "tiny"  # type: ignore[attr-defined]
        body = json.dumps({"data": [{"id": mid}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        mode = self.server.mode  # type: ignore[attr-defined]
        self.server.seen.append({"path": self.path, "authorization": self.headers.get("Authorization")})  # type: ignore[attr-defined]
        if mode == "leaky":  # echoes what it was sent into the error body, as careless servers do
            body = f"bad key {self.headers.get('Authorization')} for {self.path}".encode()
            self.send_response(401)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        t0 = time.monotonic()
        try:
            if mode == "endless":  # valid tokens forever, never [DONE]
                while time.monotonic() - t0 < GIVE_UP_S:
                    self.wfile.write(TOKEN)
                    self.wfile.flush()
                    time.sleep(0.01)
                return
            if mode == "drip":  # one byte a second: every read is quick, the request never ends
                for b in TOKEN * 100:
                    if time.monotonic() - t0 > GIVE_UP_S:
                        return
                    self.wfile.write(bytes([b]))
                    self.wfile.flush()
                    time.sleep(1.0)
                return
            body = {
                "usage-list": _event({"choices": [], "usage": {"completion_tokens": [5]}}),
                "usage-inf": b'data: {"choices": [], "usage": {"completion_tokens": 1e999}}\n\n',
                "usage-negative": _event({"choices": [], "usage": {"completion_tokens": -3}}),
                "usage-bool": _event({"choices": [], "usage": {"completion_tokens": True}}),
                "deep": b'data: {"choices": [{"index": 0, "text": "t", "x": '
                + b"[" * 100_000
                + b"]" * 100_000
                + b"}]}\n\n",
                "long-id": b"",
            }[mode]
            self.wfile.write(TOKEN + TOKEN + body + b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return  # the client gave up, as it should


def _serve(mode: str) -> Iterator[tuple[str, list[dict[str, object]]]]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    srv.daemon_threads = True
    srv.mode = mode  # type: ignore[attr-defined]
    srv.seen = []  # type: ignore[attr-defined]
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}", srv.seen  # type: ignore[attr-defined]
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def hostile(request: pytest.FixtureRequest) -> Iterator[tuple[str, list[dict[str, object]]]]:
    yield from _serve(request.param)


@pytest.mark.parametrize("hostile", ["endless", "drip"], indirect=True)
def test_request_deadline_ends_endless_and_dripping_streams(hostile: tuple[str, list[dict[str, object]]]) -> None:
    """--request-timeout-s bounds the whole request, not each read (before: the run lasted GIVE_UP_S or forever)."""
    url, _ = hostile
    t0 = time.perf_counter()
    res = run_serve(ServeConfig(endpoint=url, num_requests=2, concurrency=2, request_timeout_s=1.0))
    elapsed = time.perf_counter() - t0
    assert elapsed < 6.0, elapsed
    assert res.serving is not None and res.serving.errors == 2
    assert res.details["timeouts"] == 2
    assert all(e == "timeout (deadline 1 s)" for e in res.details["first_errors"])


@pytest.mark.parametrize("hostile", ["usage-list", "usage-inf", "usage-negative", "usage-bool", "deep"], indirect=True)
def test_malformed_token_counts_are_errors_not_crashes(hostile: tuple[str, list[dict[str, object]]]) -> None:
    url, _ = hostile
    res = run_serve(ServeConfig(endpoint=url, num_requests=2, concurrency=1))
    assert res.serving is not None and res.serving.errors == 2
    assert res.details["errors_by_kind"] == {"bad response": 2}
    assert res.accepted is False


@pytest.mark.parametrize("hostile", ["long-id"], indirect=True)
def test_a_300_character_model_id_still_writes_the_result(
    hostile: tuple[str, list[dict[str, object]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ = hostile
    code = main(["run", "serve", "--endpoint", url, "--num-requests", "2", "--out", str(tmp_path), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "Traceback" not in captured.err
    files = list(tmp_path.glob("*.json"))
    assert len(files) == 1 and len(files[0].name) < 255
    assert json.loads(files[0].read_text())["workload"]["name"] == LONG_ID  # the id itself is kept whole


@pytest.mark.parametrize("hostile", ["leaky"], indirect=True)
def test_credentials_never_reach_the_result(
    hostile: tuple[str, list[dict[str, object]]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, seen = hostile
    secrets = ("hunter2pw", "QUERYKEY77", "BEARERKEY88", "TOKENVAL99", base64.b64encode(b"alice:hunter2pw").decode())
    endpoint = url.replace("http://", "http://alice:hunter2pw@") + "/v1/completions?api_key=QUERYKEY77&token=TOKENVAL99"
    argv = ["run", "serve", "--endpoint", endpoint, "--api-key", "BEARERKEY88", "--num-requests", "2"]
    monkeypatch.setattr(sys, "argv", ["accelpilot", *argv])  # the command line is recorded from argv
    code = main([*argv, "--out", str(tmp_path), "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    # the credentials were really sent (httpx turns URL userinfo into Basic auth), and echoed back by the server
    assert seen and seen[0]["authorization"] == "Basic " + base64.b64encode(b"alice:hunter2pw").decode()
    assert "api_key=QUERYKEY77" in str(seen[0]["path"])
    text = next(tmp_path.glob("*.json")).read_text()
    for artefact in (text, out.out, out.err):
        for s in secrets:
            assert s not in artefact
    data = json.loads(text)
    assert "***@127.0.0.1" in data["config"]["endpoint"] and "api_key=***" in data["config"]["endpoint"]
    assert "--api-key ***" in data["command"] and "***@127.0.0.1" in data["command"]
    assert "HTTP 401" in data["details"]["first_errors"][0]  # the echoed key was scrubbed, the error kept


def test_api_key_is_sent_as_a_bearer_token() -> None:
    import httpx

    from accelpilot.pilot.serve.endpoint import run_endpoint

    auth: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        auth.append(request.headers.get("Authorization"))
        if request.method == "GET":
            return httpx.Response(200, json={"data": [{"id": "m"}]})
        return httpx.Response(
            200, headers={"Content-Type": "text/event-stream"}, content=TOKEN + TOKEN + b"data: [DONE]\n\n"
        )

    cfg = ServeConfig(endpoint="http://mock/v1/completions", num_requests=1, api_key="BEARERKEY88").validate()
    res = run_endpoint(cfg, transport=httpx.MockTransport(handler))
    assert res.serving is not None and res.serving.errors == 0
    assert auth == ["Bearer BEARERKEY88"] * 3  # /v1/models, the unmeasured warm-up and the request
    assert "BEARERKEY88" not in res.model_dump_json()
