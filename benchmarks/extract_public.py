"""Extract a labelled public repository at its labelled commit for ``benchmarks/scan_public.py`` (issue 27).

``git archive COMMIT`` stops at the first blob a snapshot lacks (the large data files, notebooks and GIFs that
mirrors leave out), so this writes the tree file by file through one ``git cat-file --batch`` and skips the missing
blobs, naming them: the scanner reads what is there, as it did when the labels were judged. The commit comes from
``benchmarks/data/NAME_labels.json``.

    PYTHONPATH=src .venv/bin/python benchmarks/extract_public.py mamba /path/to/mamba.git /tmp/mamba
    PYTHONPATH=src .venv/bin/python benchmarks/scan_public.py mamba --tree /tmp/mamba
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def _blobs(git_dir: Path, commit: str) -> list[tuple[bytes, bytes, str]]:
    """(mode, object id, path) of every blob of the commit's tree."""
    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "-z", commit], capture_output=True, check=True
    ).stdout
    rows = []
    for row in filter(None, out.split(b"\0")):
        meta, path = row.split(b"\t", 1)
        mode, kind, oid = meta.split()
        if kind == b"blob":
            rows.append((mode, oid, path.decode()))
    return rows


def extract(git_dir: Path, commit: str, dest: Path) -> list[str]:
    """Write the commit's tree under ``dest`` (replaced); return the paths whose blobs the repository lacks."""
    blobs = _blobs(git_dir, commit)
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    cat = subprocess.Popen(
        ["git", f"--git-dir={git_dir}", "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    stdin, stdout = cat.stdin, cat.stdout
    assert stdin is not None and stdout is not None

    def feed() -> None:  # written from a thread: the answers fill the pipe meanwhile
        stdin.write(b"".join(oid + b"\n" for _, oid, _ in blobs))
        stdin.close()

    threading.Thread(target=feed).start()
    missing = []
    for mode, _, rel in blobs:
        head = stdout.readline().split()
        if head[-1] == b"missing":
            missing.append(rel)
            continue
        data = stdout.read(int(head[2]))
        stdout.read(1)
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if mode == b"120000":
            os.symlink(data.decode(), path)
            continue
        path.write_bytes(data)
        if mode == b"100755":
            path.chmod(0o755)
    cat.wait()
    return missing


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("name", help="NAME of benchmarks/data/NAME_labels.json")
    ap.add_argument("git_dir", type=Path, help="a clone or mirror of the repository (its .git folder or bare repo)")
    ap.add_argument("dest", type=Path, help="where to write the tree (replaced)")
    args = ap.parse_args(argv)
    labels = DATA / f"{args.name}_labels.json"
    try:
        commit = json.loads(labels.read_text())["commit"]
    except (OSError, ValueError, KeyError) as exc:
        print(f"{labels}: no labelled commit ({exc})", file=sys.stderr)
        return 2
    git_dir = args.git_dir / ".git" if (args.git_dir / ".git").is_dir() else args.git_dir
    try:
        missing = extract(git_dir, commit, args.dest)
    except subprocess.CalledProcessError as exc:
        print(f"{git_dir}: cannot read commit {commit} ({exc.stderr.decode().strip()[:200]})", file=sys.stderr)
        return 2
    print(f"{args.name} @ {commit[:7]} -> {args.dest}; blobs the repository lacks: {len(missing)}")
    for rel in missing:
        print(f"  missing {rel}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
