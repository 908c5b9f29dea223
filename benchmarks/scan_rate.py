"""Scan rate of `accelpilot scan` over the installed transformers package, against plain ast.parse.

Prints files/s for the scanner (default parallelism and one process) and for ast.parse of the same Python files in
one process, and their ratio. Target (issue 5): >= 500 files/s on the 2-core development machine.

    .venv/bin/python benchmarks/scan_rate.py [PATH] [--repeat 3] [--tokenizer-repo]

``--tokenizer-repo`` measures a repository shaped like the one issue 27 met (224 files, one a 2.4 MB tokenizer
JSON that took 70-80% of the scan): 223 Python files of PATH (a seeded sample) copied into a temporary tree beside a
generated 50,000-entry BPE tokenizer.json (seeded, some tokens naming deepspeed/apex/triton/cuda).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import itertools
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from accelpilot.porting.scan import scan_path, walk


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("path", nargs="?", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tokenizer-repo", action="store_true", help="223 Python files of PATH + a 2.4 MB tokenizer.json")
    args = ap.parse_args()
    if args.path is None:
        spec = importlib.util.find_spec("transformers")
        assert spec and spec.origin, "transformers is not installed; give a PATH"
        args.path = str(Path(spec.origin).parent)
    if args.tokenizer_repo:
        with tempfile.TemporaryDirectory() as tmp:
            args.path = _tokenizer_repo(Path(args.path), Path(tmp))
            _measure(args)
    else:
        _measure(args)


def _tokenizer_repo(src: Path, out: Path) -> str:
    """223 Python files of ``src`` (a seeded sample, flattened names) and a generated 2.4 MB tokenizer.json."""
    files, _ = walk(src)
    rng = random.Random(0)
    for p, rel, _ in rng.sample([f for f in files if f[2] == "python"], 223):
        shutil.copyfile(p, out / rel.replace("/", "__"))
    vocab: dict[str, int] = {}
    while len(vocab) < 50_000:
        w = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
        if rng.random() < 0.01:
            w = rng.choice(["cuda", "apex", "triton", "deepspeed", "nccl"]) + w
        vocab[w] = len(vocab)
    words = list(vocab)
    merges = [f"{a} {b}" for a, b in itertools.pairwise(words[:49_001])]
    doc = {"version": "1.0", "model": {"type": "BPE", "vocab": vocab, "merges": merges}}
    (out / "tokenizer.json").write_text(json.dumps(doc, indent=2))
    return str(out)


def _measure(args: argparse.Namespace) -> None:
    files, _ = walk(Path(args.path))
    py = [p for p, _, kind in files if kind == "python"]
    for p, _, _ in files:  # warm the page cache so every timing reads from memory
        Path(p).read_bytes()
    print(f"path: {args.path}")
    print(
        f"files the scanner reads: {len(files)} ({len(py)} Python), cpu_count={os.cpu_count()}, "
        f"load average {os.getloadavg()[0]:.2f}"
    )

    parse_s = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        for p in py:
            ast.parse(Path(p).read_bytes())
        parse_s.append(time.perf_counter() - t)
    parse_rate = len(py) / min(parse_s)

    def run(jobs: int | None) -> tuple[float, int, int]:
        times = []
        n = findings = 0
        for _ in range(args.repeat):
            t = time.perf_counter()
            log = scan_path(args.path, jobs=jobs)
            times.append(time.perf_counter() - t)
            n, findings = log.files_scanned, log.summary.total
        return min(times), n, findings

    cpu0 = time.process_time()
    scan_path(args.path, jobs=1)
    cpu_rate = len(files) / (time.process_time() - cpu0)
    par_s, n, findings = run(None)
    one_s, _, _ = run(1)
    print(
        f"ast.parse only, 1 process:      {parse_rate:8.0f} files/s (best of {args.repeat}, "
        f"median {len(py) / statistics.median(parse_s):.0f})"
    )
    print(f"accelpilot scan, 1 process:     {n / one_s:8.0f} files/s  ({one_s:.2f} s)")
    print(f"accelpilot scan, default jobs:  {n / par_s:8.0f} files/s  ({par_s:.2f} s, {findings} findings)")
    print(
        f"ratio scan (default jobs) / ast.parse: {(n / par_s) / parse_rate:.2f}x; "
        f"scan (1 process) / ast.parse: {(n / one_s) / parse_rate:.2f}x"
    )
    print(f"1 process, CPU time: {cpu_rate:.0f} files per CPU-second (less sensitive to other load on the machine)")
    print(f"target >= 500 files/s: {'met' if n / par_s >= 500 else 'NOT met'} (wall clock, default jobs)")


if __name__ == "__main__":
    main()
