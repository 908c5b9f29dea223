"""Scan rate of `accelpilot scan` over the installed transformers package, against plain ast.parse.

Prints files/s for the scanner (default parallelism and one process) and for ast.parse of the same Python files in
one process, and their ratio. Target (issue 5): >= 500 files/s on the 2-core development machine.

    .venv/bin/python benchmarks/scan_rate.py [PATH] [--repeat 3]
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import statistics
import time
from pathlib import Path

from accelpilot.porting.scan import scan_path, walk


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("path", nargs="?", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if args.path is None:
        spec = importlib.util.find_spec("transformers")
        assert spec and spec.origin, "transformers is not installed; give a PATH"
        args.path = str(Path(spec.origin).parent)
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
