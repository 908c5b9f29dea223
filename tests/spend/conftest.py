"""A small CUR 2.0 export whose totals are computed by hand in the tests, in Parquet and CSV (gzip or not)."""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

COLUMNS = [
    "line_item_usage_account_id",
    "line_item_usage_start_date",
    "line_item_usage_end_date",
    "line_item_product_code",
    "line_item_line_item_type",
    "line_item_usage_type",
    "line_item_operation",
    "line_item_resource_id",
    "line_item_usage_amount",
    "line_item_unblended_cost",
    "line_item_net_unblended_cost",
    "line_item_currency_code",
    "product_instance_type",
    "pricing_term",
    "reservation_effective_cost",
    "savings_plan_net_savings_plan_effective_cost",
    "resource_tags",
]
ML = {"user_team": "ml"}


def _row(
    start: str,
    lt: str,
    usage_type: str,
    rid: str,
    amount: float,
    unblended: float,
    net: float | None,
    itype: str = "",
    ri: float = 0.0,
    sp: float = 0.0,
    tags: dict[str, str] | None = None,
    account: str = "111111111111",
    currency: str = "USD",
    term: str = "OnDemand",
    product: str = "AmazonEC2",
) -> dict[str, Any]:
    return {
        "line_item_usage_account_id": account,
        "line_item_usage_start_date": dt.datetime.fromisoformat(start),
        # an instance-hour line spans its hours (as a daily or monthly export writes it), any other one hour
        "line_item_usage_end_date": dt.datetime.fromisoformat(start)
        + dt.timedelta(hours=amount if itype and amount else 1),
        "line_item_product_code": product,
        "line_item_line_item_type": lt,
        "line_item_usage_type": usage_type,
        "line_item_operation": "RunInstances" if "Usage" in usage_type else "",
        "line_item_resource_id": rid,
        "line_item_usage_amount": amount,
        "line_item_unblended_cost": unblended,
        "line_item_net_unblended_cost": net,
        "line_item_currency_code": currency,
        "product_instance_type": itype,
        "pricing_term": term,
        "reservation_effective_cost": ri,
        "savings_plan_net_savings_plan_effective_cost": sp,
        "resource_tags": dict(tags if tags is not None else ML),
    }


def rows() -> list[dict[str, Any]]:
    """September (720 h) and October (744 h) 2026; see the tests for what each line should contribute."""
    p5, inf2, trn1 = "p5.48xlarge", "inf2.48xlarge", "trn1.32xlarge"
    return [
        # p5 on demand, the whole of September, 5% negotiated discount in net_unblended
        _row("2026-09-01T00:00:00", "Usage", "USE1-BoxUsage:p5.48xlarge", "i-a", 720, 70790.40, 67250.88, p5),
        # p5 under a reservation for half of September
        _row(
            "2026-09-10T00:00:00",
            "DiscountedUsage",
            "USE1-BoxUsage:p5.48xlarge",
            "i-b",
            360,
            0,
            0,
            p5,
            ri=22000.00,
            term="Reserved",
        ),
        # inf2 under a Savings Plan, and the negation line that cancels its on-demand cost
        _row(
            "2026-09-01T00:00:00",
            "SavingsPlanCoveredUsage",
            "USE1-BoxUsage:inf2.48xlarge",
            "i-c",
            720,
            9394.56,
            9394.56,
            inf2,
            sp=6000.00,
        ),
        _row(
            "2026-09-01T00:00:00",
            "SavingsPlanNegation",
            "USE1-BoxUsage:inf2.48xlarge",
            "i-c",
            0,
            -9394.56,
            -9394.56,
            inf2,
        ),
        # a credit against p5, a credit on nothing in particular, data transfer and tax
        _row("2026-09-30T00:00:00", "Credit", "USE1-BoxUsage:p5.48xlarge", "", 0, -1000.00, -1000.00, p5),
        _row("2026-09-30T00:00:00", "Credit", "", "", 0, -50.00, -50.00),
        _row("2026-09-05T00:00:00", "Usage", "USE1-DataTransfer-Out-Bytes", "i-a", 100, 12.34, None),
        _row("2026-09-30T00:00:00", "Tax", "", "", 0, 100.00, 100.00),
        # a research team's trn1, another account, no net cost column value (unblended stands in)
        _row(
            "2026-09-20T00:00:00",
            "Usage",
            "USE1-BoxUsage:trn1.32xlarge",
            "i-t",
            100,
            2150.00,
            None,
            trn1,
            tags={"user_team": "research"},
            account="222222222222",
        ),
        # p5 on demand, the whole of October
        _row("2026-10-01T00:00:00", "Usage", "USE1-BoxUsage:p5.48xlarge", "i-a", 744, 73150.08, 69492.58, p5),
    ]


def write_parquet(path: Path, data: list[dict[str, Any]]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [
            (c, pa.map_(pa.string(), pa.string()))
            if c == "resource_tags"
            else (c, pa.timestamp("us"))
            if c in ("line_item_usage_start_date", "line_item_usage_end_date")
            else (c, pa.float64())
            if c.endswith(("_cost", "_amount", "_fee", "_billing_period", "_commitment", "_to_date"))
            else (c, pa.string())
            for c in data[0]
        ]
    )
    tbl = pa.Table.from_pylist(
        [{**r, "resource_tags": list(r["resource_tags"].items())} if "resource_tags" in r else r for r in data],
        schema=schema,
    )
    pq.write_table(tbl, path)
    return path


def write_csv(path: Path, data: list[dict[str, Any]], gz: bool = False) -> Path:
    opener: Any = gzip.open if gz else open
    with opener(path, "wt", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(data[0]))
        w.writeheader()
        for r in data:
            out = dict(r)
            if "resource_tags" in out:
                out["resource_tags"] = json.dumps(out["resource_tags"])
            for c in ("line_item_usage_start_date", "line_item_usage_end_date"):
                if isinstance(out.get(c), dt.datetime):
                    out[c] = out[c].strftime("%Y-%m-%dT%H:%M:%SZ")
            out = {k: "" if v is None else v for k, v in out.items()}
            w.writerow(out)
    return path


class CurGen:
    """The generator as a fixture (tests import nothing from conftest under --import-mode=importlib)."""

    rows = staticmethod(rows)
    row = staticmethod(_row)
    parquet = staticmethod(write_parquet)
    csv = staticmethod(write_csv)


@pytest.fixture
def cur() -> type[CurGen]:
    return CurGen
