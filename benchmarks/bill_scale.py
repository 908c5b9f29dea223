"""Bill 1,000 generated options as JSON: this tree against the commit before the bill rework, same run.

Time is the child's CPU time from loading the catalog to the JSON text (wall time is printed too; on a shared
machine it mostly measures the neighbours). Target (issue 10): at least 5x faster than the base commit and under 150 MB peak (the child process's max
RSS: interpreter, imports, catalog, bill and JSON text together). Both trees are run in child processes on the
same generated catalog and scenario, so neither warms the other's caches. Each tree runs ``--repeat`` children
(default 3), alternating with the other tree's, and the fastest child of each counts: on a shared machine the
slowest runs measure the neighbours, the fastest the code.
Run: PYTHONPATH=src .venv/bin/python benchmarks/bill_scale.py [--options 1000] [--base 2d7676a] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = "2d7676a"  # the commit before issue 10's bill changes

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from accelpilot.bill.compute import make_bill
from accelpilot.bill.model import bill_to_json
from accelpilot.bill.scenario import load_scenario
from accelpilot.catalog import load_catalog
t1 = time.perf_counter()
c1 = time.process_time()
cat = load_catalog([sys.argv[2]])
sc = load_scenario(sys.argv[1])
t2 = time.perf_counter()
text = json.dumps(bill_to_json(make_bill(sc, cat)))
t3 = time.perf_counter()
c3 = time.process_time()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
out = {"import_s": t1 - t0, "load_s": t2 - t1, "bill_s": t3 - t2, "total_s": t3 - t1, "cpu_s": c3 - c1,
       "rss_bytes": rss, "json_chars": len(text), "options": len(json.loads(text)["options"])}
print(json.dumps(out))
"""


def generate(n: int, folder: Path) -> tuple[Path, Path]:
    """A catalog of n on-demand instance rows and a scenario with one option per row (every fifth reserved-free
    cloud, every seventh with its own extras): the shape of 'every instance of an offer file'."""
    cat = folder / "catalog.csv"
    lines = ["instance,accelerator,accelerator_count,pricing,price_per_hour,region,as_of,source"]
    for i in range(n):
        lines.append(f"gen{i}.xlarge,H100,{1 + i % 8},on_demand,{1 + (i % 97) / 10:.2f},us-east-1,2026-11-30,generated")
    cat.write_text("\n".join(lines) + "\n")
    sc = folder / "scenario.toml"
    parts = [
        '[scenario]\nname = "scale"\nworkload = "training"\n',
        "[volumes]\nruns_per_month = 4\nmonths = 36\n",
        "[engineering]\nday_rate = 800\n",
        "[extras]\nstorage_gb_months = 2000\ndata_transfer_out_gb = 500\nsupport_percent = 10\n",
    ]
    for i in range(n):
        parts.append(
            f'[[options]]\nname = "option {i}"\ninstance = "gen{i}.xlarge"\npricing = "on_demand"\n'
            f"hours_per_run = {10 + i % 30}\ninstances = {1 + i % 4}\nporting_days = {i % 5}\n"
        )
    sc.write_text("\n".join(parts))
    return sc, cat


def run_child(src: Path, sc: Path, cat: Path) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(src))
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(sc), str(cat)], env=env, capture_output=True, text=True, check=False
    )
    if p.returncode != 0:
        raise SystemExit(f"child on {src} failed:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--options", type=int, default=1000)
    ap.add_argument("--base", default=BASE)
    ap.add_argument("--repeat", type=int, default=3, help="children per tree, alternating; the fastest counts")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        sc, cat = generate(a.options, t)
        base_dir = t / "base"
        base_dir.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", a.base, "src"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(base_dir)], input=archive.stdout, check=True)
        runs: dict[str, list[dict[str, float]]] = {"now": [], "base": []}
        for _ in range(max(1, a.repeat)):
            runs["now"].append(run_child(ROOT / "src", sc, cat))
            runs["base"].append(run_child(base_dir / "src", sc, cat))
    now, base = (min(runs[k], key=lambda r: r["cpu_s"]) for k in ("now", "base"))
    mb = 1024 * 1024
    for label, k in (("base " + a.base, "base"), ("this tree", "now")):
        cpus = ", ".join(f"{r['cpu_s']:.2f}" for r in runs[k])
        print(
            f"{label:>14}: CPU s of each child: {cpus}; max RSS of any {max(r['rss_bytes'] for r in runs[k]) / mb:.0f} MB"
        )
    for label, r in (("base " + a.base, base), ("this tree", now)):
        print(
            f"{label:>14}: fastest child: {int(r['options'])} options billed as JSON in {r['cpu_s']:.2f} s CPU, {r['total_s']:.2f} s wall "
            f"(load {r['load_s']:.2f} s, bill+json {r['bill_s']:.2f} s), max RSS {r['rss_bytes'] / mb:.0f} MB"
        )
    ratio = base["cpu_s"] / now["cpu_s"]
    median = statistics.median(r["cpu_s"] for r in runs["base"]) / statistics.median(r["cpu_s"] for r in runs["now"])
    peak = max(r["rss_bytes"] for r in runs["now"])
    print(
        f"ratio base / this tree (fastest child's CPU time each, robust to other work on the machine): {ratio:.1f}x faster (target >= 5x: {'met' if ratio >= 5 else 'MISSED'}; "
        f"median children {median:.1f}x); "
        f"peak RSS {peak / mb:.0f} MB, the most of any child (target < 150 MB: "
        f"{'met' if peak < 150 * mb else 'MISSED'})"
    )


if __name__ == "__main__":
    main()
