"""The accelpilot a task carries: a wheel built from this checkout, installable with no index."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from tests.launch.conftest import ROOT, WORKED, run_cli

from accelpilot.errors import ConfigError, InputFileError
from accelpilot.launch import wheel as wheel_mod


@pytest.mark.slow
def test_the_built_wheel_installs_into_a_fresh_venv_without_an_index(tmp_path: Path) -> None:
    built = wheel_mod.build_wheel(tmp_path / "dist")
    assert built.name == "accelpilot-0.1.0-py3-none-any.whl"
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False, system_site_packages=False)
    py = env_dir / "bin" / "python"
    # --no-deps and --no-index: the wheel alone, nothing fetched from anywhere
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index", str(built)],
        check=True,
        timeout=300,
        capture_output=True,
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # not this checkout's src/
    proc = subprocess.run(
        [str(py), "-c", "import accelpilot, pathlib; print(accelpilot.__version__, accelpilot.__file__)"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    version, where = proc.stdout.split()
    assert version == "0.1.0"
    assert Path(where).is_relative_to(env_dir)  # imported from the venv, not from the checkout
    # the package data the launch reads travels too
    assert list(env_dir.glob("lib/python*/site-packages/accelpilot/launch/data/stacks.toml"))


def test_an_installed_accelpilot_without_sources_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wheel_mod, "project_root", lambda: None)
    with pytest.raises(ConfigError, match="installed without its sources.*--wheel FILE"):
        wheel_mod.build_wheel(tmp_path / "dist")
    assert not list((tmp_path / "dist").iterdir())


def test_a_given_wheel_is_carried_and_a_non_wheel_refused(tmp_path: Path) -> None:
    given = tmp_path / "accelpilot-0.1.0-py3-none-any.whl"
    given.write_bytes(b"PK")
    assert wheel_mod.build_wheel(tmp_path / "dist", given).read_bytes() == b"PK"
    with pytest.raises(InputFileError, match="--wheel"):
        wheel_mod.build_wheel(tmp_path / "dist", tmp_path / "setup.py")


def test_project_root_is_this_checkout() -> None:
    assert wheel_mod.project_root() == ROOT


def test_script_and_task_install_the_carried_wheel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The owned-machine script installs dist/ beside itself; the SkyPilot task the mounted copy."""
    from tests.launch.test_launch_tasks import SCENARIO, _load

    sc = tmp_path / "s.toml"
    sc.write_text(SCENARIO)
    out = tmp_path / "tasks"
    code, _, err = run_cli(["launch", str(sc), "--out", str(out), "--no-check"], capsys)
    assert code == 0, err
    script = (out / "owned-8xh100.sh").read_text()
    assert 'ACCELPILOT_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"' in script
    assert 'python3 -m pip install "$ACCELPILOT_HERE/dist/accelpilot-0.1.0-py3-none-any.whl[pilot]"' in script
    task = _load(out / "trn1-spot-x2.yaml")
    assert '"$HOME/accelpilot-dist/accelpilot-0.1.0-py3-none-any.whl[pilot]"' in task["setup"]
    for text in [script, task["setup"], *(p.read_text() for p in out.glob("*.yaml"))]:
        assert "accelpilot==" not in text and "accelpilot[pilot]==" not in text
    assert (out / "dist" / "accelpilot-0.1.0-py3-none-any.whl").is_file()
    # a second launch into the same folder keeps one wheel: an earlier version's is removed
    (out / "dist" / "accelpilot-0.0.9-py3-none-any.whl").write_bytes(b"PK")
    assert run_cli(["launch", str(WORKED), "--out", str(out), "--no-check"], capsys)[0] == 0
    assert [p.name for p in (out / "dist").iterdir()] == ["accelpilot-0.1.0-py3-none-any.whl"]


def test_a_setup_override_without_the_wheel_is_warned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    own = tmp_path / "setup.sh"
    own.write_text("pip install torch==2.13.0\n")
    out = tmp_path / "tasks"
    code, _, err = run_cli(["launch", str(WORKED), "--out", str(out), "--no-check", "--setup", str(own)], capsys)
    assert code == 0
    assert "--setup replaces the stack's setup block and installs no accelpilot" in " ".join(err.split())
    own.write_text('pip install "$HOME/accelpilot-dist/accelpilot-0.1.0-py3-none-any.whl[pilot]"\n')
    code, _, err = run_cli(["launch", str(WORKED), "--out", str(out), "--no-check", "--setup", str(own)], capsys)
    assert code == 0 and "installs no accelpilot" not in " ".join(err.split())
