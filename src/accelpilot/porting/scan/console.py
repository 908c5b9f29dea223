"""Console scripts a README runs by name (``nnUNetv2_train DATASET 3d_fullres 0``, ``esm-fold -i ...``): the
commands that ``setup.py``'s ``console_scripts``, ``setup.cfg`` or ``pyproject.toml``'s ``[project.scripts]`` declare,
and the file of the module each one starts (issue 27: the default path of a package whose README or documentation runs
its CLI)."""

from __future__ import annotations

import re
from pathlib import Path

from accelpilot.porting.scan.launch_flags import join_continued


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


# ``"esm-fold=esm.scripts.fold:main"`` (setup.py's console_scripts) or ``esm-fold = "esm.scripts.fold:main"``
# (pyproject's ``[project.scripts]``): the command a README runs by name, and the module it starts.
_CONSOLE = re.compile(r"""["']?([A-Za-z][\w.-]*)\s*=\s*["']?([A-Za-z_][\w.]*):[\w.]+["']""")
_OPTIONAL = re.compile(r"\s*\[[^\]]*\]")
_PROMPT = re.compile(r"^\s*(?:\$\s+|>\s+|usage:\s+)?")  # a prompt, or a CLI's pasted ``usage:`` line


def console_scripts(root: Path, present: set[str]) -> dict[str, str]:
    """Console script name -> the file of the module it runs (``esm.scripts.fold`` -> ``scripts/fold.py`` where
    the package maps ``esm.scripts`` to ``scripts/``: the longest dotted suffix that names one file)."""
    out: dict[str, str] = {}
    for name in ("setup.py", "pyproject.toml", "setup.cfg"):
        text = _read(root / name) if name in present else None
        if not text or not any(w in text for w in ("console_scripts", "[project.scripts]", "scripts.")):
            continue
        for m in _CONSOLE.finditer(text):
            command = m.group(1).removeprefix("scripts.")  # whisper's ``scripts.whisper = "whisper.transcribe:cli"``
            parts = m.group(2).split(".")
            for k in range(len(parts)):
                cands = [f"{'/'.join(parts[k:])}{ext}" for ext in (".py", "/__main__.py")]
                hit = [c for c in cands if c in present] or [c for c in cands if f"src/{c}" in present]
                if hit:
                    out.setdefault(command, hit[0] if hit[0] in present else f"src/{hit[0]}")
                    break
    return out


def console_commands(text: str, scripts: dict[str, str]) -> dict[str, str]:
    """Script -> the README line that runs it through its console script (``esm-extract esm2_t33_650M_UR50D
    ...``, ``demucs track.mp3``): a line starting with the command's name and an argument."""
    out: dict[str, str] = {}
    if not scripts:
        return out
    for line in join_continued(text).splitlines():
        body = _PROMPT.sub("", line, count=1)
        if line.lstrip().startswith("usage:"):
            body = _OPTIONAL.sub("", body)  # ``[--cpu-offload]`` in a usage line is an option, not passed
        head, _, rest = body.partition(" ")
        if head in scripts and rest.strip() and not rest.lstrip().startswith(("=", ":")):
            out.setdefault(scripts[head], body.strip()[:120])
    return out
