"""Which files a scan reads: the directory walk (symlink loops, exclusions) and file kinds by name."""

from __future__ import annotations

import os
from pathlib import Path

from accelpilot.porting.log import Skipped

EXCLUDED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        "node_modules",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".eggs",
        ".ipynb_checkpoints",
    }
)
CACHE_DIRS = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints"})


def classify(name: str) -> str | None:
    """The kind of file by its name, or None if the scanner does not read it."""
    low = name.lower()
    if low.endswith(".py"):
        return "python"
    if low.endswith((".cu", ".cuh")):
        return "cuda"
    if low in ("dockerfile", "containerfile") or low.startswith("dockerfile.") or low.endswith(".dockerfile"):
        return "dockerfile"
    if low.endswith((".sh", ".bash", ".slurm", ".sbatch", ".zsh")):
        return "shell"
    if low.endswith((".yaml", ".yml")):
        return "yaml"
    if low.endswith(".json"):
        return "json"
    if low.endswith(".txt") and (low.startswith("requirements") or low.startswith("constraints")):
        return "requirements"
    if low in ("pyproject.toml", "setup.cfg", "environment.yml", "pipfile"):
        return "packaging"
    return None


def walk(root: Path) -> tuple[list[tuple[str, str, str]], list[Skipped]]:
    """Files to scan as (path, relative posix path, kind), and what was skipped on the way (loops, exclusions)."""
    files: list[tuple[str, str, str]] = []
    skipped: list[Skipped] = []
    if root.is_file():
        kind = classify(root.name) or "text"
        files.append((str(root), root.name, kind))
        return files, skipped
    visited = {os.path.realpath(root)}
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack:
        d, rel_d = stack.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as exc:
            skipped.append(Skipped(path=rel_d or ".", reason=f"unreadable directory: {exc.strerror or exc}"))
            continue
        for e in entries:
            rel = f"{rel_d}/{e.name}" if rel_d else e.name
            try:
                if e.is_symlink():
                    try:
                        real = os.path.realpath(e.path, strict=True)
                    except OSError as exc:
                        loop = "loop" in str(exc).lower() or getattr(exc, "errno", None) == 40
                        skipped.append(Skipped(path=rel, reason="symlink loop" if loop else "broken symlink"))
                        continue
                    if os.path.isdir(real):
                        if real in visited:
                            skipped.append(
                                Skipped(path=rel, reason="symlink loop: points to a directory already scanned")
                            )
                            continue
                        visited.add(real)
                        stack.append((e.path, rel))
                        continue
                    if not os.path.isfile(real):
                        continue
                    link_kind = classify(e.name)
                    if link_kind:
                        files.append((e.path, rel, link_kind))
                elif e.is_dir(follow_symlinks=False):
                    if e.name in EXCLUDED_DIRS:
                        if e.name not in CACHE_DIRS:  # caches are noise; a vendored .venv is worth saying
                            skipped.append(Skipped(path=rel, reason="excluded directory"))
                        continue
                    visited.add(os.path.realpath(e.path))
                    stack.append((e.path, rel))
                elif e.is_file(follow_symlinks=False):
                    file_kind = classify(e.name)
                    if file_kind:
                        files.append((e.path, rel, file_kind))
            except OSError as exc:
                skipped.append(Skipped(path=rel, reason=f"unreadable: {exc.strerror or exc}"))
    files.sort(key=lambda t: t[1])
    return files, skipped
