"""Shared helpers for launch tests: run the CLI in process, import SkyPilot without touching ~/.sky."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelpilot.cli import main

ROOT = Path(__file__).resolve().parents[2]
WORKED = ROOT / "examples" / "worked-example.toml"


@pytest.fixture(autouse=True)
def _private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SkyPilot keeps state under ~/.sky; tests give it a throw-away home and no credentials."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "SKYPILOT_CONFIG"):
        monkeypatch.delenv(var, raising=False)


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def sky_or_skip() -> None:
    pytest.importorskip("sky", reason="SkyPilot is not installed (pip install 'accelpilot[launch]'); CI installs it")
