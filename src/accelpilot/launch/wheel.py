"""The accelpilot a task carries: a wheel of the running package, built at launch into the task folder.

A launched machine installs this wheel (``pip install WHEEL[pilot]``), never ``accelpilot`` from a package
index: no such release needs to exist, and a name claimed by someone else would otherwise run on machines
that hold cloud credentials. Only the ``pilot`` extra's dependencies come from the user's index.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from accelpilot.errors import ConfigError, InputFileError

DIST = "dist"  # the wheel's folder inside the task folder
REMOTE_DIST = "~/accelpilot-dist"  # where SkyPilot's file_mounts put that folder on every node


def project_root() -> Path | None:
    """The checkout the running accelpilot comes from (src layout), or None for an installed package."""
    import accelpilot

    root = Path(accelpilot.__file__).resolve().parents[2]
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return None
    import tomli

    try:
        name = tomli.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("name")
    except (OSError, tomli.TOMLDecodeError):
        return None
    return root if name == "accelpilot" else None


def build_wheel(dest: Path, given: Path | None = None) -> Path:
    """Put a wheel of this accelpilot into ``dest``: the user's ``--wheel`` file, or one built from the checkout."""
    dest.mkdir(parents=True, exist_ok=True)
    if given is not None:
        if not (given.is_file() and given.name.startswith("accelpilot-") and given.suffix == ".whl"):
            raise InputFileError(
                "--wheel is not an accelpilot wheel file",
                file=str(given),
                field="--wheel",
                fix="build one with `python -m pip wheel --no-deps -w dist/ <accelpilot checkout>`",
            )
        for old in dest.glob("accelpilot-*.whl"):
            old.unlink()
        return Path(shutil.copy2(given, dest / given.name))
    root = project_root()
    if root is None:
        raise ConfigError(
            "cannot build the accelpilot wheel a task carries: this accelpilot is installed without its sources",
            field="--wheel",
            fix="launch from an accelpilot checkout (pip install -e .) or pass --wheel FILE (a wheel of this version)",
        )
    for old in dest.glob("accelpilot-*.whl"):
        old.unlink()  # one wheel per task folder: setup installs the one named in the task
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dest), str(root)]
    ok = False
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
        ok = proc.returncode == 0
        why = (proc.stderr.strip().splitlines() or ["pip wheel failed"])[-1]
    except (OSError, subprocess.TimeoutExpired) as exc:
        why = str(exc)
    wheels = sorted(dest.glob("accelpilot-*.whl"))
    if not ok or len(wheels) != 1:
        raise ConfigError(
            f"cannot build the accelpilot wheel a task carries from {root} ({why})",
            field="--wheel",
            fix="pip install 'accelpilot[launch]' (it brings the hatchling build backend), or pass --wheel FILE",
        )
    return wheels[0]
