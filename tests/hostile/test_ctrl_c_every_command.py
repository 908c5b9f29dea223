"""Ctrl-C (SIGINT to the process group, as a terminal sends it) while a command is working exits 130 with one
line saying what was kept (issue 28 item 1): the entry point used to drop the 130 typer returns and exit 0."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from tests.hostile.hostile_kit import child_env, one_error_line


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "accelpilot", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=child_env(),
        start_new_session=True,
    )


@pytest.mark.slow
def test_ctrl_c_during_scan_exits_130_with_one_line(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for i in range(4000):  # enough that the scan is still working when Ctrl-C comes
        (repo / f"m{i}.py").write_text("import torch\nx = torch.ones(3).cuda()\n" * 40, encoding="utf-8")
    out = tmp_path / "log.json"
    p = _start(["scan", str(repo), "--jobs", "1", "--out", str(out)], tmp_path)
    time.sleep(2.5)  # imports done, files being read
    assert p.poll() is None, "the scan ended before Ctrl-C: make the repository bigger"
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    line = one_error_line(err)
    assert "interrupted" in line and "kept" in line
    assert not out.exists()  # no partial log


def test_typer_returned_130_is_not_dropped(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The in-process form: a command whose work raises KeyboardInterrupt (typer turns it into a returned 130)."""
    from accelpilot.cli import main
    from accelpilot.porting import scan as scan_pkg

    def boom(*a: object, **k: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(scan_pkg, "scan_path", boom)
    assert main(["scan", "."]) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("accelpilot: interrupted")


@pytest.mark.slow
@pytest.mark.parametrize("delay_s", [0.3, 1.0])
def test_ctrl_c_in_the_first_second_of_run_train(tmp_path: Path, delay_s: float) -> None:
    """While the CLI and torch import: no traceback, no exit 0."""
    p = _start(["run", "train", "--out", str(tmp_path / "out")], tmp_path)
    time.sleep(delay_s)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=90)
    assert p.returncode == 130, err
    assert "interrupted" in one_error_line(err)


@pytest.mark.slow
def test_ctrl_c_during_export_mlflow(tmp_path: Path) -> None:
    pytest.importorskip("mlflow")
    from tests.export.test_mlflow_export import _result

    paths = []
    for i in range(300):  # many runs: still logging when Ctrl-C comes, on a quiet machine too
        d = tmp_path / f"r{i}"
        d.mkdir()
        paths.append(str(_result(d)))
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    p = _start(["export", "mlflow", *paths, "--tracking-uri", uri], tmp_path)
    deadline = time.monotonic() + 60
    while not (tmp_path / "mlflow.db").exists() and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # the store is created: MLflow is imported and logging has begun
    time.sleep(1.0)
    assert p.poll() is None, "the export ended before Ctrl-C"
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "interrupted" in one_error_line(err)


def test_ctrl_c_inside_a_duckdb_reader_is_130_not_a_wrong_fix(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """spend import: duckdb turns Ctrl-C into its InterruptException, which the reader wrapped into "cannot read
    ... (fix: pass a CUR 2.0 export)", exit 2. A real duckdb interrupt, raised where the reader runs its query."""
    duckdb = pytest.importorskip("duckdb")
    from accelpilot.cli import main
    from accelpilot.spend import cur

    def interrupted_connect() -> object:
        con = duckdb.connect()

        class Con:
            def execute(self, *a: object, **k: object) -> object:
                threading.Timer(0.3, con.interrupt).start()  # what duckdb's own SIGINT handling does, mid-query
                return con.execute("SELECT count(*) FROM range(1000000000) a, range(1000) b")

        return Con()

    monkeypatch.setattr(cur, "_connect", interrupted_connect)
    f = tmp_path / "cur.csv"
    f.write_text("a,b\n1,2\n", encoding="utf-8")
    code = main(["spend", "import", str(f)])
    err = capsys.readouterr().err
    assert code == 130, err
    assert err.startswith("accelpilot: interrupted") and "fix:" not in err


@pytest.mark.slow
def test_ctrl_c_during_run_serve_exits_130_with_one_line(tmp_path: Path) -> None:
    """The serving pilot, interrupted while it builds its buckets or measures: 130, one line, no result file."""
    out = tmp_path / "out"
    p = _start(["run", "serve", "--out", str(out)], tmp_path)
    time.sleep(5.0)  # imports done, buckets being built or LoadGen measuring
    assert p.poll() is None, "run serve ended before Ctrl-C"
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=90)
    assert p.returncode == 130, err[-2000:]
    lines = [ln for ln in err.splitlines() if ln.startswith("accelpilot: ")]  # progress lines come before it
    assert len(lines) == 1 and "interrupted" in lines[0] and "Traceback" not in err, err[-2000:]
    assert not (out.exists() and list(out.glob("*.json")))


def test_ctrl_c_during_launch_is_130_and_writes_no_task_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """launch is over in a second or two, too quick for a timed SIGINT: Ctrl-C lands while it builds the wheel the
    tasks carry (the slowest step), in process. 130, one line, and no half-written task folder."""
    from accelpilot.cli import main
    from accelpilot.launch import wheel

    def interrupted(*a: object, **k: object) -> Path:
        raise KeyboardInterrupt

    monkeypatch.setattr(wheel, "build_wheel", interrupted)
    out = tmp_path / "tasks"
    scenario = Path(__file__).resolve().parents[2] / "examples" / "worked-example.toml"
    assert main(["launch", str(scenario), "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("accelpilot: interrupted"), err
    assert not out.exists() or not any(out.iterdir())


def test_a_caught_ctrl_c_inside_exec_does_not_turn_130_into_death_by_sigint(tmp_path: Path) -> None:
    """CPython's "unhandled KeyboardInterrupt" flag, left set by a Ctrl-C caught inside an exec() of a string (as while
    torch imports), made the interpreter kill itself with SIGINT at exit: CI saw -2 where 130 was returned. Run as
    ``python -m`` like the CLI, the path on which the interpreter reads that flag."""
    (tmp_path / "entry_after_flag.py").write_text(
        "import ctypes, accelpilot.cli as c\n"
        "ctypes.c_int.in_dll(ctypes.pythonapi, '_Py_UnhandledKeyboardInterrupt').value = 1\n"
        "c.main = lambda argv=None: 130\n"
        "c.entry()\n",
        encoding="utf-8",
    )
    env = child_env()
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tmp_path), env.get("PYTHONPATH", "")) if p)
    p = subprocess.run([sys.executable, "-m", "entry_after_flag"], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 130, p.stderr
