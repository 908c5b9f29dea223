"""Time of loading a large price CSV with --catalog: the linear merge against the old per-row list scan.

Writes a CSV of N distinct price rows (default 10,000), loads it with ``load_catalog`` (the real path: CSV read,
row validation, merge), then merges the same rows with the old quadratic loop kept here as the reference, and
prints both times and their ratio. Issue 11 measured 32 s for 10,000 rows before the fix.

    .venv/bin/python benchmarks/catalog_merge.py [--rows 3000]  (issue 11 measured with --rows 10000)
"""

from __future__ import annotations

import argparse
import csv
import tempfile
import time
from pathlib import Path
from typing import Any

from accelpilot.catalog.loader import _PLURAL, Catalog, _key, load_bundled, load_catalog, load_file


def quadratic_merge(cat: Catalog, table: str, rows: Any) -> None:
    """The merge as it was before issue 11: one scan of the whole list per incoming row."""
    target: list[Any] = getattr(cat, _PLURAL[table])
    for row in rows:
        key = _key(table, row)
        for i, old in enumerate(target):
            if _key(table, old) == key:
                target[i] = row.model_copy(update={"overrides": old.origin})
                break
        else:
            target.append(row)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=3_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "big.csv"
        with path.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(
                [
                    "instance",
                    "accelerator",
                    "accelerator_count",
                    "pricing",
                    "price_per_hour",
                    "region",
                    "as_of",
                    "source",
                ]
            )
            for i in range(args.rows):
                w.writerow([f"x{i}.large", "H100", 8, "on_demand", "12.5", "us-east-1", "2026-01-01", "bench"])
        t = time.perf_counter()
        cat = load_catalog([path])
        linear = time.perf_counter() - t
        assert len(cat.prices) >= args.rows
        rows = load_file(path)["price"]
        ref = load_bundled()
        t = time.perf_counter()
        quadratic_merge(ref, "price", rows)
        quad = time.perf_counter() - t
        assert len(ref.prices) == len(cat.prices)
    print(f"rows: {args.rows}")
    print(f"load_catalog (CSV read + validation + linear merge): {linear:.2f} s")
    print(f"reference: the old quadratic merge alone:            {quad:.2f} s")
    print(f"ratio old/new: {quad / linear:.1f}x")


if __name__ == "__main__":
    main()
