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


_SPEC_SUFFIXES = (".yaml", ".yml", ".yaml-template", ".yml-template", ".template", ".j2", ".jinja", ".tf", ".tfvars")


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
    if low.endswith(
        (".yaml", ".yml", ".yaml-template", ".yml-template", ".template", ".j2", ".jinja", ".tf", ".tfvars")
    ):
        return "yaml"  # job specs and their templates (Helm, Jinja, Terraform) are read line by line alike
    if low.endswith(".ipynb"):
        return "notebook"
    if low.endswith(".json"):
        return "json"
    if low.endswith(".txt") and (low.startswith("requirement") or low.startswith("constraints")):
        return "requirements"
    if low in ("pyproject.toml", "setup.cfg", "environment.yml", "pipfile"):
        return "packaging"
    return None


def display_name(name: str) -> str:
    """A path as text that is safe to store and show: undecodable bytes of a non-UTF-8 file name (kept by
    ``os.fsdecode`` as surrogates) become ``\\xNN``, so JSON, hashing and terminals never see a lone surrogate."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", errors="backslashreplace")


def _inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def walk(root: Path, *, follow_symlinks: bool = False) -> tuple[list[tuple[str, str, str]], list[Skipped]]:
    """Files to scan as (path, relative posix path, kind), and what was skipped on the way (links, exclusions).

    The walk never leaves the root: a symbolic link whose target lies outside it is skipped with the reason, so a
    link to a home directory cannot copy outside secrets into the log. Links that stay inside are skipped too
    unless ``follow_symlinks`` (they usually repeat files the walk reaches anyway); followed directory links are
    remembered so a loop is reported, not walked forever.
    """
    files: list[tuple[str, str, str]] = []
    skipped: list[Skipped] = []
    if root.is_file():
        kind = classify(root.name) or "text"
        files.append((str(root), display_name(root.name), kind))
        return files, skipped
    root_real = os.path.realpath(root)
    visited = {root_real}
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack:
        d, rel_d = stack.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as exc:
            skipped.append(Skipped(path=rel_d or ".", reason=f"unreadable directory: {exc.strerror or exc}"))
            continue
        for e in entries:
            rel = f"{rel_d}/{display_name(e.name)}" if rel_d else display_name(e.name)
            try:
                if e.is_symlink():
                    try:
                        real = os.path.realpath(e.path, strict=True)
                    except OSError as exc:
                        loop = "loop" in str(exc).lower() or getattr(exc, "errno", None) == 40
                        skipped.append(Skipped(path=rel, reason="symlink loop" if loop else "broken symlink"))
                        continue
                    if not _inside(real, root_real):
                        skipped.append(Skipped(path=rel, reason="symlink to outside the scanned root: not followed"))
                        continue
                    is_dir = os.path.isdir(real)
                    if not is_dir and not classify(e.name):
                        continue  # a link to a file the scan would not read anyway
                    if not follow_symlinks:
                        skipped.append(
                            Skipped(path=rel, reason="symlink inside the root: not followed (--follow-symlinks)")
                        )
                        continue
                    if is_dir:
                        if real in visited:
                            skipped.append(
                                Skipped(path=rel, reason="symlink loop: points to a directory already scanned")
                            )
                            continue
                        visited.add(real)
                        stack.append((e.path, rel))
                        continue
                    if os.path.isfile(real):
                        files.append((e.path, rel, classify(e.name) or "text"))
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
