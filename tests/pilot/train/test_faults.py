"""Faults during `run train`: Ctrl-C, the pilot killed mid-run, a bad output location. Real processes, real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from accelpilot.cli import main
from accelpilot.pilot.result import read_result

SRC = str(Path(__file__).resolve().parents[3] / "src")
TINY = ["--batch-size", "4", "--seq-len", "16", "--steps", "2", "--warmup", "1", "--shapes", "16"]


def _start(args: list[str], **env: str) -> subprocess.Popen[str]:
    full_env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), **env}
    return subprocess.Popen(
        [sys.executable, "-m", "accelpilot", "run", "train", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
    )


class _Tail:
    """Collects a pipe in a thread so the test can wait for a line without blocking."""

    def __init__(self, pipe: object) -> None:
        self.text = ""
        self._t = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._t.start()

    def _read(self, pipe: object) -> None:
        for chunk in iter(lambda: pipe.read(1), ""):  # type: ignore[attr-defined]
            self.text += chunk

    def wait_for(self, needle: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in self.text:
                return True
            time.sleep(0.1)
        return False


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its exit status waits to be collected


@pytest.mark.slow
def test_ctrl_c_exits_130_with_one_line_and_keeps_the_partial_result(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = [*TINY, "--runs", "1", "--target-loss", "0.0001", "--max-steps", "1000000", "--eval-every", "100000"]
    proc = _start([*args, "--interrupt-at", "0", "--out", str(out)], FORCE_COLOR="1")  # progress on stderr
    err = _Tail(proc.stderr)
    try:
        assert err.wait_for("time to target", 240), err.text[-2000:]
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    time.sleep(0.2)
    lines = [ln for ln in err.text.splitlines() if "accelpilot: " in ln]
    assert len(lines) == 1 and "Traceback" not in err.text, err.text[-2000:]
    line = lines[0]
    assert "interrupted (Ctrl-C) during the time to target phase" in line
    assert "3 completed phase(s) (first correct run, throughput, profiler)" in line
    (kept,) = out.glob("*.json")
    assert str(kept) in line
    res = read_result(kept)
    assert "tokens_per_s" in res.figures and "time_to_target_s" not in res.figures
    assert any(e.startswith("time to target: KeyboardInterrupt") for e in res.errors)
    assert [p.name for p in out.iterdir()] == [kept.name]  # no checkpoint folder, no temp file


@pytest.mark.slow
def test_killing_the_pilot_kills_its_paused_worker(tmp_path: Path) -> None:
    out = tmp_path / "out"
    # the worker trains to step 6, then pauses for the pilot's SIGKILL; the pilot dies first, while it trains
    proc = _start([*TINY, "--runs", "1", "--max-steps", "2", "--interrupt-at", "6", "--out", str(out)])
    worker = None
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if list(out.glob(".checkpoints-*/interrupt-*/killed.log")):  # the worker has started
                break
            time.sleep(0.05)
        workers = [c for c in _children(proc.pid) if b"train.worker" in Path(f"/proc/{c}/cmdline").read_bytes()]
        assert len(workers) == 1, "no worker running"
        worker = workers[0]
        proc.kill()  # SIGKILL: the pilot gets no chance to clean up
        proc.wait(timeout=30)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and _alive(worker):
            time.sleep(0.1)
        assert not _alive(worker), "the worker outlived the pilot"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if worker is not None and _alive(worker):
            os.kill(worker, signal.SIGKILL)


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err, err
    return err


def test_out_naming_an_existing_file_fails_before_training(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    blocker = tmp_path / "results.json"
    blocker.write_text("keep me", encoding="utf-8")
    t0 = time.perf_counter()
    assert main(["run", "train", *TINY, "--out", str(blocker)]) == 2
    line = _one_line(capsys)
    assert "--out" in line and str(blocker) in line and "writable folder" in line
    assert blocker.read_text(encoding="utf-8") == "keep me"
    assert time.perf_counter() - t0 < 60  # nothing was trained


def test_out_in_an_unwritable_place_fails_before_training(capsys: pytest.CaptureFixture[str]) -> None:
    # /proc refuses new folders even to root (chmod-based read-only folders do not stop root, who runs CI here)
    assert main(["run", "train", *TINY, "--out", "/proc/self/accelpilot-results"]) == 2
    assert "--out" in _one_line(capsys)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders; /proc case above covers root")
def test_out_read_only_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        assert main(["run", "train", *TINY, "--out", str(ro)]) == 2
        assert "--out" in _one_line(capsys)
    finally:
        ro.chmod(0o700)
