"""Cases issue 11 found already holding, kept as tests so they keep holding: import-safe scanning, symlink loops,
a hostile SSE server on loopback, secrets in the environment. (HTML in a real browser: test_injection.py; atomic
results under SIGKILL: test_signals.py.)"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from tests.hostile.hostile_kit import one_error_line

Cli = Callable[..., tuple[int, str, str]]


def test_scanning_never_imports_or_runs_the_code(cli: Cli, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    repo = tmp_path / "repo"
    repo.mkdir()
    payload = f"open({str(marker)!r}, 'w').write('x')\nimport os\nos._exit(3)\n"
    (repo / "evil.py").write_text(payload + "import torch\nx = torch.ones(1).cuda()\n", encoding="utf-8")
    (repo / "setup.py").write_text(payload, encoding="utf-8")
    (repo / "conftest.py").write_text(payload, encoding="utf-8")
    (repo / "__init__.py").write_text(payload, encoding="utf-8")
    code, out, err = cli("scan", repo, "--format", "json")
    assert code in (0, 1), err  # 1: blocking findings, by design
    assert not marker.exists()
    log = json.loads(out)
    assert log["files_scanned"] >= 4
    assert any(f["rule"] == "cuda-call" for f in log["findings"])


def test_symlink_loops_end(cli: Cli, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "a").mkdir(parents=True)
    (repo / "a" / "loop").symlink_to(repo, target_is_directory=True)
    (repo / "a" / "self").symlink_to(repo / "a", target_is_directory=True)
    (repo / "a" / "x.py").write_text("import torch\n", encoding="utf-8")
    code, out, err = cli("scan", repo, "--format", "json")
    assert code in (0, 1), err
    assert "Traceback" not in err
    log = json.loads(out)
    assert log["files_scanned"] == 1


class _Hostile(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        return

    def do_GET(self) -> None:
        body = json.dumps({"data": [{"id": "m"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        n = self.server.count = getattr(self.server, "count", 0) + 1  # type: ignore[attr-defined]
        bad = [
            b"data: {not json\n\n",
            b"data: " + b"x" * 200_000 + b"\n\n",  # (a 100,000-deep event is the serve engineer's case)
            b"\x00\xff\xfe garbage \x1b[2J\n\n",
            b'data: {"choices": [{"text": "\\u0000\\ud800"}]}\n\n',
            b"event: error\ndata: {}\n\n",
        ][n % 5]
        self.wfile.write(bad)
        self.wfile.flush()
        self.close_connection = True


@pytest.fixture
def hostile_server() -> Iterator[str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    srv.daemon_threads = True
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/v1/completions"
    finally:
        srv.shutdown()
        srv.server_close()


def test_hostile_sse_server_is_counted_not_a_crash(cli: Cli, hostile_server: str, tmp_path: Path) -> None:
    pytest.importorskip("httpx")
    code, out, err = cli(
        "run", "serve", "--endpoint", hostile_server, "--num-requests", "10", "--request-timeout-s", "5",
        "--out", tmp_path, "--json",
    )  # fmt: skip
    assert "Traceback" not in err
    assert code == 0, err
    res = json.loads(out)
    assert res["serving"]["errors"] + res["serving"].get("rejected", 0) >= 1
    assert res["accepted"] is not True
    assert "\x1b" not in out  # hostile bytes never reach the terminal raw


SECRETS = {
    "AWS_SECRET_ACCESS_KEY": "hostile-aws-secret-0123456789",
    "OPENAI_API_KEY": "sk-hostile-openai-0123456789",
    "HF_TOKEN": "hf_hostile_token_0123456789",
}


def test_secrets_in_the_environment_reach_no_artefact(
    cli: Cli, good: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)
    out = tmp_path / "rep"
    code, stdout, err = cli(
        "report", "--scenario", good["scenario"], "--scan-log", good["log"], "--beside", good["serve"], "--out", out
    )
    assert code == 0, err
    texts = [stdout, err] + [p.read_text(encoding="utf-8") for p in out.rglob("*") if p.is_file()]
    for secret in SECRETS.values():
        assert not any(secret in t for t in texts)


def test_secret_in_a_bad_file_is_not_echoed_whole(cli: Cli, tmp_path: Path) -> None:
    """A wrong file's error names file and field, never dumps the file (which may hold a key)."""
    f = tmp_path / "r.json"
    f.write_text(json.dumps({"kind": "training", "api_key": SECRETS["OPENAI_API_KEY"]}), encoding="utf-8")
    sc = tmp_path / "s.toml"
    sc.write_text(
        '[scenario]\nname = "s"\nworkload = "training"\n[[options]]\nname = "o"\ninstance = "trn1.32xlarge"\n'
        'pricing = "on_demand"\nresult = "r.json"\n',
        encoding="utf-8",
    )
    code, _, err = cli("bill", sc)
    assert code == 2
    assert SECRETS["OPENAI_API_KEY"] not in one_error_line(err)
    assert os.path.basename(f) in err
