"""CUR 2.0 summary: accelpilot's DuckDB path against pandas (read_parquet, then groupby), same run, same file.

Generates a 5-million-row CUR 2.0 Parquet export with DuckDB (line types Usage, DiscountedUsage,
SavingsPlanCoveredUsage, SavingsPlanNegation, Credit, Tax; ~7,000 resources over three months), then
summarises it by instance type and month (instance-hours, effective cost, credits) twice, each in its own
interpreter so that each peak RSS is its own: accelpilot (`accelpilot.spend.cur.summarise`) and pandas
(`read_parquet` of the same columns, then the same effective-cost rules with `groupby`). Checks both give
the same totals, prints the time ratio and both peak RSS. Target (issue 15): >= 3x faster, <= 1/3 memory.

    .venv/bin/python benchmarks/cur_scan.py [--rows 5000000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GEN = """
COPY (
  SELECT
    CAST(111111111111 + (r % 3) AS VARCHAR) AS line_item_usage_account_id,
    TIMESTAMP '2026-07-01' + to_hours(CAST(i % 2208 AS BIGINT)) AS line_item_usage_start_date,
    lt AS line_item_line_item_type,
    CASE WHEN lt IN ('Tax', 'Credit') THEN '' ELSE 'USE1-BoxUsage:' || it END AS line_item_usage_type,
    CASE WHEN lt = 'Tax' THEN '' ELSE 'RunInstances' END AS line_item_operation,
    'i-0' || CAST(r AS VARCHAR) || 'abcdef' AS line_item_resource_id,
    CAST(CASE WHEN lt IN ('Tax', 'Credit', 'SavingsPlanNegation') THEN 0 ELSE 1 END AS DOUBLE) AS line_item_usage_amount,
    CAST(CASE lt WHEN 'Credit' THEN -0.5 WHEN 'SavingsPlanNegation' THEN -price WHEN 'DiscountedUsage' THEN 0.0
            ELSE price END AS DOUBLE) AS line_item_unblended_cost,
    CAST(CASE lt WHEN 'Credit' THEN -0.5 WHEN 'SavingsPlanNegation' THEN -price WHEN 'DiscountedUsage' THEN 0.0
            ELSE price * 0.95 END AS DOUBLE) AS line_item_net_unblended_cost,
    'USD' AS line_item_currency_code,
    CASE WHEN lt = 'Tax' THEN '' ELSE it END AS product_instance_type,
    CASE lt WHEN 'DiscountedUsage' THEN 'Reserved' ELSE 'OnDemand' END AS pricing_term,
    CAST(CASE lt WHEN 'DiscountedUsage' THEN price * 0.6 ELSE 0 END AS DOUBLE) AS reservation_effective_cost,
    CAST(CASE lt WHEN 'SavingsPlanCoveredUsage' THEN price * 0.7 ELSE 0 END AS DOUBLE)
      AS savings_plan_net_savings_plan_effective_cost,
    MAP {{'user_team': 'ml'}} AS resource_tags
  FROM (
    SELECT range AS i, range // 720 AS r,
      ['p5.48xlarge', 'trn1.32xlarge', 'inf2.48xlarge', 'g6e.12xlarge'][1 + (range // 720) % 4] AS it,
      CAST([98.32, 21.50, 12.98, 10.49][1 + (range // 720) % 4] AS DOUBLE) AS price,
      CASE WHEN range % 100 = 0 THEN 'Credit' WHEN range % 100 = 1 THEN 'Tax'
           WHEN range % 100 = 2 THEN 'SavingsPlanNegation' WHEN range % 10 = 3 THEN 'DiscountedUsage'
           WHEN range % 10 = 4 THEN 'SavingsPlanCoveredUsage' ELSE 'Usage' END AS lt
    FROM range({rows})
  )
) TO '{path}' (FORMAT parquet)
"""

ACCELPILOT = """
import json, resource, sys, time
t0 = time.perf_counter()
from accelpilot.spend.cur import summarise
s, _ = summarise([sys.argv[1]])
out = {r.instance_type + " " + r.month: [float(r.instance_hours), round(float(r.effective_cost), 2)] for r in s.rows}
print(json.dumps({"s": time.perf_counter() - t0, "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "rows": out}))
"""

PANDAS = """
import json, resource, sys, time
t0 = time.perf_counter()
import numpy as np, pandas as pd
cols = ["line_item_usage_start_date", "line_item_line_item_type", "line_item_usage_type", "line_item_resource_id",
        "line_item_usage_amount", "line_item_unblended_cost", "line_item_net_unblended_cost", "product_instance_type",
        "reservation_effective_cost", "savings_plan_net_savings_plan_effective_cost"]
df = pd.read_parquet(sys.argv[1], columns=cols)
lt = df["line_item_line_item_type"]
net = df["line_item_net_unblended_cost"].fillna(df["line_item_unblended_cost"]).fillna(0)
usage_lines = lt.isin(["Usage", "DiscountedUsage", "SavingsPlanCoveredUsage"])
box = df["line_item_usage_type"].str.contains("BoxUsage|SpotUsage|DedicatedUsage|HostUsage", regex=True)
df["hours"] = np.where(usage_lines & box, df["line_item_usage_amount"], 0.0)
df["cost"] = np.select(
    [lt == "Usage", lt == "DiscountedUsage", lt == "SavingsPlanCoveredUsage", lt.isin(["Credit", "Refund"])],
    [net, df["reservation_effective_cost"], df["savings_plan_net_savings_plan_effective_cost"], net],
    0.0,
)
df["month"] = df["line_item_usage_start_date"].dt.strftime("%Y-%m")
keep = (df["product_instance_type"] != "") & (lt != "SavingsPlanNegation")
g = df[keep].groupby(["product_instance_type", "month"]).agg(hours=("hours", "sum"), cost=("cost", "sum"))
out = {f"{i} {m}": [float(r.hours), round(float(r.cost), 2)] for (i, m), r in g.iterrows()}
print(json.dumps({"s": time.perf_counter() - t0, "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "rows": out}))
"""


def child(code: str, path: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    res = json.loads(out.stdout)
    res["wall_s"] = time.perf_counter() - t0  # including interpreter start and imports, for both
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--keep", type=Path, default=None, help="write the generated export here and keep it")
    args = ap.parse_args()
    import duckdb

    with tempfile.TemporaryDirectory() as tmp:
        path = (args.keep or Path(tmp)) / "cur-2.0-generated.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        con = duckdb.connect()
        con.execute("SET enable_progress_bar = false")
        con.execute(GEN.format(rows=args.rows, path=str(path)))
        con.close()
        print(
            f"generated {args.rows:,} rows, {path.stat().st_size / 2**20:.1f} MiB Parquet in "
            f"{time.perf_counter() - t0:.1f} s; cpu_count={os.cpu_count()}, load average {os.getloadavg()[0]:.2f}"
        )
        child(ACCELPILOT, path)  # warm the page cache once, for both
        a = child(ACCELPILOT, path)
        p = child(PANDAS, path)
    same = a["rows"].keys() == p["rows"].keys() and all(
        abs(a["rows"][k][0] - p["rows"][k][0]) < 1e-6 and abs(a["rows"][k][1] - p["rows"][k][1]) <= 0.05
        for k in a["rows"]
    )
    print(f"groups: {len(a['rows'])}; same hours and effective cost (to the cent, float sums): {same}")
    print(
        f"accelpilot (DuckDB): {a['s']:.2f} s in the child ({a['wall_s']:.2f} s with start-up), peak RSS "
        f"{a['rss_kib'] / 1024:.0f} MiB"
    )
    print(
        f"pandas read_parquet+groupby: {p['s']:.2f} s in the child ({p['wall_s']:.2f} s with start-up), peak RSS "
        f"{p['rss_kib'] / 1024:.0f} MiB"
    )
    print(f"time ratio pandas/accelpilot: {p['s'] / a['s']:.1f}x (target >= 3x)")
    print(f"memory ratio accelpilot/pandas: {a['rss_kib'] / p['rss_kib']:.2f} (target <= 0.33)")
    if not same:
        raise SystemExit("the two summaries differ")


if __name__ == "__main__":
    main()
