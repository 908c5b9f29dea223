"""An OpenAI-compatible server on loopback whose latency, lengths and content the test controls."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


def default_answer(prompt: str) -> list[str]:
    """What the server 'generates': words derived from the prompt, so two honest servers agree exactly."""
    return ["the", "answer", "to", *prompt.split()] + ["and", "so", "on"] * 50


@dataclass
class Behaviour:
    prefill_s: float = 0.0
    token_delay_s: float = 0.0
    capacity: int | None = None  # more requests in flight than this: each waits overload_s before its first token
    overload_s: float = 0.4
    ignore_max_tokens: bool = False  # answers fixed_len words whatever max_tokens says
    fixed_len: int = 12
    usage: bool = True
    answer: Callable[[str], list[str]] = default_answer
    altered: set[str] = field(default_factory=set)  # prompts answered with unrelated words
    headers: dict[str, str] = field(default_factory=dict)
    model_id: str = "loop-model"
    keep_alive: bool = False  # chunked answers on a kept-alive connection, as real servers do


SALT = re.compile(r"^\[([^\]]*)\] ")  # the line the pilot puts before every prompt of a point (endpoint_load.py)


@dataclass
class Seen:
    t: float
    payload: dict[str, Any]  # as sent, less the salt line (so tests read the prompts as written)
    salt: str = ""
    client_port: int = 0


def unsalt(req: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The request without its salt line, and the salt ("" when none)."""
    req = json.loads(json.dumps(req))
    if req.get("messages"):
        text = str(req["messages"][0].get("content", ""))
        m = SALT.match(text)
        if m:
            req["messages"][0]["content"] = text[m.end() :]
    else:
        text = str(req.get("prompt", ""))
        m = SALT.match(text)
        if m:
            req["prompt"] = text[m.end() :]
    return req, (m.group(1) if m else "")


class FakeServer:
    def __init__(self, behaviour: Behaviour) -> None:
        self.b = behaviour
        self.seen: list[Seen] = []  # measured requests only
        self.warmups: list[Seen] = []  # the pilot's unmeasured warm-up requests
        self.ports: set[int] = set()  # client ports: one per TCP connection
        self.in_flight = 0
        self.lock = threading.Lock()
        self.url = ""


def _handler(srv: FakeServer) -> type[BaseHTTPRequestHandler]:
    b = srv.b

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            return

        def _headers(self) -> None:
            for k, v in b.headers.items():
                self.send_header(k, v)

        def do_GET(self) -> None:
            body = json.dumps(
                {"object": "list", "data": [{"id": b.model_id, "owned_by": "test", "max_model_len": 4096}]}
            )
            data = body.encode()
            self.send_response(200)
            self._headers()
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            sent = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            req, salt = unsalt(sent)
            with srv.lock:
                seen = Seen(time.perf_counter(), req, salt, self.client_address[1])
                (srv.warmups if salt.startswith("w") and not salt.startswith("warm ") else srv.seen).append(seen)
                srv.ports.add(self.client_address[1])
                srv.in_flight += 1
                over = b.capacity is not None and srv.in_flight > b.capacity
            released = False

            def out(data: bytes) -> None:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if b.keep_alive else data)

            try:
                chat = "messages" in req
                prompt = req["messages"][-1]["content"] if chat else req["prompt"]
                words = (
                    ["zebra", "volcano", "piano", "orbit", "quantum", "harbor"] * 20
                    if prompt in b.altered
                    else b.answer(prompt)
                )
                n = b.fixed_len if b.ignore_max_tokens else int(req["max_tokens"])
                words = words[:n]
                self.send_response(200)
                self._headers()
                self.send_header("Content-Type", "text/event-stream")
                if b.keep_alive:
                    self.send_header("Transfer-Encoding", "chunked")
                else:
                    self.send_header("Connection", "close")
                self.end_headers()
                time.sleep(b.prefill_s + (b.overload_s if over else 0.0))
                for i, w in enumerate(words):
                    text = w if i == len(words) - 1 else w + " "
                    choice = {"index": 0, "delta": {"content": text}} if chat else {"index": 0, "text": text}
                    out(f"data: {json.dumps({'choices': [choice]})}\n\n".encode())
                    self.wfile.flush()
                    if b.token_delay_s:
                        time.sleep(b.token_delay_s)
                if b.usage:
                    usage = {"prompt_tokens": len(prompt.split()), "completion_tokens": len(words)}
                    out(f"data: {json.dumps({'choices': [], 'usage': usage})}\n\n".encode())
                # Out of flight before [DONE]: a client sends its next request on [DONE], and a loaded host may run it
                # before this thread's ``finally``, counting one request too many (a false overload).
                with srv.lock:
                    srv.in_flight -= 1
                    released = True
                out(b"data: [DONE]\n\n")
                if b.keep_alive:
                    self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            finally:
                if not released:
                    with srv.lock:
                        srv.in_flight -= 1
            self.close_connection = not b.keep_alive

    return H


@pytest.fixture
def fake_server() -> Iterator[Callable[..., FakeServer]]:
    """``fake_server(**Behaviour fields)`` starts a server; all stop at the end of the test."""
    started: list[ThreadingHTTPServer] = []

    def start(**kw: Any) -> FakeServer:
        srv = FakeServer(Behaviour(**kw))
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(srv))
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        started.append(httpd)
        srv.url = f"http://127.0.0.1:{httpd.server_address[1]}"
        return srv

    yield start
    for h in started:
        h.shutdown()
        h.server_close()
