"""Issue 28 item 4 and 9: a hostile OpenAI-compatible server and hostile endpoint options. Every network read has a
deadline and a size bound; markup and escapes from a server never reach the terminal raw; credentials, typed,
percent-encoded or echoed, never reach the result; outputs are checked before a request is sent."""

from __future__ import annotations

import base64
import gzip
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

GIVE_UP_S = 20.0  # the server stops on its own, so a client without a bound ends (late) instead of hanging
MARKUP_ID = "[link=https://evil.example/x]click[/link] \x1b]8;;https://evil.example\x1b\\here\x1b]8;;\x1b\\ [/bold]"
BOMB_MB = 100


def _event(obj: object) -> bytes:
    return f"data: {json.dumps(obj)}\n\n".encode()


def _bomb() -> bytes:
    """A gzip body of ~100 KB that decompresses to BOMB_MB MiB of one endless SSE comment line."""
    return gzip.compress(b":" + b"x" * (BOMB_MB * 1024 * 1024), compresslevel=9)


class _Server(ThreadingHTTPServer):
    mode: str
    seen: list[dict[str, object]]
    bomb: bytes = b""


class _H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args: object) -> None:
        return

    def _echo(self) -> str:
        """What careless servers echo back: the Authorization header, decoded when it is Basic."""
        auth = self.headers.get("Authorization") or ""
        if auth.startswith("Basic "):
            return auth + " " + base64.b64decode(auth[6:]).decode()
        return auth

    def do_GET(self) -> None:
        mode = self.server.mode
        t0 = time.monotonic()
        try:
            if mode in ("models-endless", "models-loris"):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()  # no length: the body ends when the connection does
                while time.monotonic() - t0 < GIVE_UP_S:
                    self.wfile.write(b"[" * (65536 if mode == "models-endless" else 1))
                    self.wfile.flush()
                    if mode == "models-loris":
                        time.sleep(1.0)
                return
            mid = {"markup-id": MARKUP_ID, "echo": "model " + self._echo()}.get(mode, "m")
            body = json.dumps({"data": [{"id": mid, "owned_by": self._echo()}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Served-By", self._echo() or "x")
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            return

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.seen.append({"path": self.path})
        mode = self.server.mode
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        if mode == "bomb":
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(self.server.bomb)))
            self.end_headers()
            try:
                self.wfile.write(self.server.bomb)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        self.send_header("X-Served-By", self._echo() or "x")
        self.end_headers()
        text = f"echo {self._echo()} " if mode == "echo" else "fine "
        self.wfile.write(
            _event({"choices": [{"index": 0, "text": text}]})
            + _event({"choices": [{"index": 0, "text": "[/red] \x1b[2J"}]})
            + b"data: [DONE]\n\n"
        )
        self.close_connection = True


@pytest.fixture
def hostile() -> Iterator[Callable[[str], tuple[str, _Server]]]:
    started: list[_Server] = []

    def start(mode: str) -> tuple[str, _Server]:
        srv = _Server(("127.0.0.1", 0), _H)
        srv.daemon_threads = True
        srv.mode, srv.seen = mode, []
        if mode == "bomb":
            srv.bomb = _bomb()
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        started.append(srv)
        return f"127.0.0.1:{srv.server_address[1]}", srv

    yield start
    for s in started:
        s.shutdown()
        s.server_close()


def _result(out: Path) -> str:
    files = list(out.glob("*.json"))
    assert len(files) == 1
    return files[0].read_text()


@pytest.mark.parametrize("mode", ["models-endless", "models-loris"])
def test_models_listing_has_a_deadline_and_a_size_bound(
    mode: str, hostile: Callable, cli: Callable, tmp_path: Path
) -> None:
    """Before: GET /v1/models had neither, and ran past --request-timeout-s (an endless body: until memory ran out)."""
    host, srv = hostile(mode)
    t0 = time.perf_counter()
    code, _, err = cli(
        "run", "serve", "--endpoint", f"http://{host}/v1/completions", "--model-name", "m", "--num-requests", "1",
        "--request-timeout-s", "2", "--out", tmp_path, "--json",
    )  # fmt: skip
    assert code == 0 and "Traceback" not in err
    assert time.perf_counter() - t0 < 10.0
    facts = json.loads(_result(tmp_path))["platform"]["tool_output"]["server"]
    assert ("timeout" in facts["v1_models_error"]) == (mode == "models-loris")
    assert ("KiB" in facts["v1_models_error"]) == (mode == "models-endless")
    assert len(srv.seen) == 2  # the warm-up and the measured request were still sent


def test_a_model_id_with_markup_and_escapes_prints_as_text(
    hostile: Callable, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: rich markup in the id crashed the run ([/bold] closing nothing) or wrote a hyperlink."""
    from accelpilot.cli import main

    host, _ = hostile("markup-id")
    code = main(["run", "serve", "--endpoint", f"http://{host}", "--num-requests", "1", "--out", str(tmp_path)])
    cap = capsys.readouterr()
    assert code == 0 and "Traceback" not in cap.err
    for stream in (cap.out, cap.err):
        assert "\x1b" not in stream  # no raw escape, so no OSC 8 hyperlink and no cleared screen
    assert "[link=https://evil.example/x]" in cap.out  # shown as the text it is
    assert "\\x1b" in cap.out


def test_an_api_key_the_server_echoes_is_never_stored(hostile: Callable, cli: Callable, tmp_path: Path) -> None:
    """Before: the key came back in the model id, a header and the answers: 4 copies in the result."""
    host, _ = hostile("echo")
    key = "sk-echoed-Zq81x7"
    code, out, err = cli(
        "run", "serve", "--endpoint", f"http://{host}", "--api-key", key, "--num-requests", "2",
        "--out", tmp_path,
    )  # fmt: skip
    assert code == 0
    text = _result(tmp_path)
    assert key not in text and key not in out and key not in err
    assert "***" in text  # visibly redacted where the server put it


def test_a_percent_encoded_password_is_stored_in_no_form(hostile: Callable, cli: Callable, tmp_path: Path) -> None:
    host, _ = hostile("echo")
    code, out, err = cli(
        "run", "serve", "--endpoint", f"http://bob:p%40ss%2Fw0rd-9x@{host}", "--num-requests", "1",
        "--out", tmp_path,
    )  # fmt: skip
    assert code == 0
    text = _result(tmp_path)
    for form in ("p@ss/w0rd-9x", "p%40ss%2Fw0rd-9x", base64.b64encode(b"bob:p@ss/w0rd-9x").decode()):
        assert form not in text and form not in out and form not in err, form


@pytest.mark.parametrize(
    "url",
    [
        "http://user:hunter2-secret@127.0.0.1:99999999/v1",
        "http://user:hunter2-secret@[::1/v1",
        "ftp://user:hunter2-secret@host/v1",
    ],
)
def test_a_malformed_url_never_prints_its_password(url: str, cli: Callable, tmp_path: Path) -> None:
    code, out, err = cli("run", "serve", "--endpoint", url, "--out", tmp_path)
    assert code == 2 and "Traceback" not in err
    assert "--endpoint" in err
    assert "hunter2-secret" not in err + out


def test_a_gzip_bomb_is_bounded(hostile: Callable, cli: Callable, tmp_path: Path) -> None:
    """Before: a gzip-bombed stream decompressed into memory until MemoryError (2.8 GB)."""
    import resource

    host, _ = hostile("bomb")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code, _, err = cli("run", "serve", "--endpoint", f"http://{host}", "--num-requests", "1", "--out", tmp_path)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert code == 0 and "Traceback" not in err
    res = json.loads(_result(tmp_path))
    assert res["details"]["errors_by_kind"] == {"bad response": 1}
    assert "after decompression" in res["details"]["first_errors"][0]
    assert grown_mb < BOMB_MB  # bounded well under the bomb (32 MiB read, then refused)


def test_out_on_a_read_only_folder_is_refused_before_any_request(
    hostile: Callable, cli: Callable, tmpfs: Callable
) -> None:
    host, srv = hostile("plain")
    ro = tmpfs("ro", readonly=True)
    code, _, err = cli("run", "serve", "--endpoint", f"http://{host}", "--num-requests", "2", "--out", ro / "r")
    assert code == 2 and "Traceback" not in err
    assert "--out" in err and "cannot write" in err
    assert srv.seen == []
