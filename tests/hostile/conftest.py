"""Fixtures for the hostile-input and fault suite (issue 11).

``cli`` runs the real command line in process and returns (exit code, stdout, stderr); ``cli_proc`` runs it as a
child process (for signals, kills and "no traceback" on stderr); ``good`` writes a valid training result, a
serving result, a scan log and a scenario pricing the training result, so each test breaks exactly one thing;
``tmpfs`` mounts a small filesystem for disk-full and read-only cases.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: tests.hostile.hostile_kit

from tests.hostile.hostile_kit import SCENARIO, child_env, dump, scan_log, serving_result, training_result

from accelpilot.cli import main


@pytest.fixture
def good(tmp_path: Path) -> dict[str, Path]:
    d = tmp_path / "in"
    d.mkdir()
    (d / "trn.json").write_text(json.dumps(dump(training_result())), encoding="utf-8")
    (d / "serve.json").write_text(json.dumps(dump(serving_result())), encoding="utf-8")
    (d / "log.json").write_text(scan_log().to_json(), encoding="utf-8")
    (d / "scenario.toml").write_text(SCENARIO, encoding="utf-8")
    return {
        "dir": d,
        "trn": d / "trn.json",
        "serve": d / "serve.json",
        "log": d / "log.json",
        "scenario": d / "scenario.toml",
    }


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    def run(*args: str) -> tuple[int, str, str]:
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


@pytest.fixture
def cli_proc() -> Callable[..., subprocess.CompletedProcess[str]]:
    def run(*args: str, cwd: Path | None = None, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "accelpilot", *map(str, args)],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=child_env(**env),
            timeout=timeout,
            check=False,
        )

    return run


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """Mount a small tmpfs (disk-full and read-only tests); skipped where mounting is not allowed."""
    mounted: list[Path] = []

    def mount(name: str = "mnt", size: str = "64k", readonly: bool = False) -> Path:
        d = tmp_path / name
        d.mkdir()
        opts = f"size={size}" + (",ro" if readonly else "")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(d)], capture_output=True, check=False)
        if r.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({r.stderr.decode().strip() or 'not root'}): needs root")
        mounted.append(d)
        return d

    yield mount
    for d in reversed(mounted):
        subprocess.run(["umount", "-l", str(d)], capture_output=True, check=False)
