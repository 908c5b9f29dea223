"""Ctrl-C during `accelpilot pilot` (SIGINT to the whole process group, as a terminal sends it) and SIGKILL of a
result writer: exit 130 with one line saying what was interrupted and what was kept; no child left running; a
result file is whole or absent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from tests.hostile.hostile_kit import child_env, one_error_line

from accelpilot.pilot.result import read_result


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "accelpilot", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=child_env(),
        start_new_session=True,  # its own process group: SIGINT reaches it and every child, like a terminal's Ctrl-C
    )


def _group_gone(pgid: int, wait_s: float = 10) -> bool:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.slow
def test_ctrl_c_while_scanning(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for i in range(3000):  # enough files that the scan is still running when Ctrl-C comes
        (repo / f"m{i}.py").write_text("import torch\nx = torch.ones(3).cuda()\n" * 20, encoding="utf-8")
    out = tmp_path / "rep"
    p = _start(["pilot", "--repo", str(repo), "--skip-train", "--skip-serve", "--out", str(out)], tmp_path)
    deadline = time.monotonic() + 60
    while not (out / "inputs").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    line = one_error_line(err)
    assert line.startswith(f"accelpilot: interrupted while scanning {repo}; ")
    assert line.endswith(f"no new report was written: the report in {out}, if any, is the previous one")
    assert not [f for f in out.rglob("*") if f.is_file()]  # no partial log, no report files
    assert _group_gone(p.pid)


@pytest.mark.slow
def test_ctrl_c_during_the_training_pilot_stops_its_child(tmp_path: Path) -> None:
    out = tmp_path / "rep"
    p = _start(["pilot", "--skip-serve", "--out", str(out)], tmp_path)
    log = out / "inputs" / "train.log"
    deadline = time.monotonic() + 120
    while not log.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert log.exists(), "the training pilot never started"
    time.sleep(3)  # the child is importing torch or training
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=90)
    assert p.returncode == 130, err
    line = one_error_line(err)
    # Kept: the scan log, and the training child's partial result when it got far enough to write one.
    assert line.startswith("accelpilot: interrupted while training pilot on cpu; kept ")
    assert "portability-log.json" in line
    assert not (out / "report.html").exists()
    kept = sorted((out / "inputs").rglob("*.json"))
    assert f"kept {len(kept)} complete input file(s)" in line
    for f in kept:  # what was kept is whole
        json.loads(f.read_text(encoding="utf-8"))
    assert _group_gone(p.pid), "a pilot child outlived Ctrl-C"


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[2])
    from tests.hostile.hostile_kit import training_result
    from accelpilot.pilot.result import write_result
    r = training_result()
    r = r.model_copy(update={"details": {"pad": "x" * 2_000_000}})  # big enough that a kill lands mid-write
    print("ready", flush=True)
    i = 0
    while True:
        write_result(r, Path(sys.argv[1]) / "result.json")
        i += 1
    """
)


@pytest.mark.slow
def test_sigkill_while_writing_a_result_leaves_it_whole(tmp_path: Path) -> None:
    """Already held before issue 11 (temp file, fsync, rename): kept as a guarantee."""
    for delay in (0.0, 0.05, 0.2, 0.5):
        p = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), str(Path(__file__).resolve().parents[2])],
            stdout=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        time.sleep(delay)
        p.kill()
        p.wait()
        if (tmp_path / "result.json").exists():
            assert read_result(tmp_path / "result.json").kind == "training"
    visible = [n for n in os.listdir(tmp_path) if not n.startswith(".")]
    assert visible in ([], ["result.json"])
