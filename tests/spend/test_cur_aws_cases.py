"""CUR 2.0 read as AWS defines each line item type (issue 29), and money readers that refuse what is not money
(issue 28). Each export is built here; each expected figure is a hand sum, and the baseline is checked against a
DuckDB query written in this file (it imports nothing from accelpilot.spend) in UTC and in Los Angeles time."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

duckdb = pytest.importorskip("duckdb", reason="the spend extra (DuckDB) is not installed")
pytest.importorskip("pyarrow", reason="pyarrow writes the Parquet test exports")

from accelpilot.errors import InputFileError  # noqa: E402
from accelpilot.spend.baseline import baseline_option  # noqa: E402
from accelpilot.spend.cur import summarise  # noqa: E402

P5, INF2 = "p5.48xlarge", "inf2.48xlarge"


@pytest.fixture(params=["UTC", "America/Los_Angeles"])
def tz(request: pytest.FixtureRequest) -> Iterator[str]:
    old = os.environ.get("TZ")
    os.environ["TZ"] = request.param
    time.tzset()
    yield request.param
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


def export(cur: Any) -> list[dict[str, Any]]:
    """August (744 h) and September (720 h) whole, November's first 10 days (240 of 720 h)."""
    r = cur.row

    def sp(start: str, rid: str, hours: float, od: float, sp_cost: float, net: float | None) -> dict[str, Any]:
        row = r(start, "SavingsPlanCoveredUsage", "USE1-BoxUsage:p5.48xlarge", rid, hours, od, od, P5)
        row["savings_plan_savings_plan_effective_cost"] = sp_cost
        row["savings_plan_net_savings_plan_effective_cost"] = net
        return row

    rows = [
        # August: p5 under a Savings Plan, no negotiated discount (net column empty): 744 h x 55.04 = 40949.76
        sp("2026-08-01T00:00:00", "i-a", 744, 73150.08, 40949.76, None),
        # a second p5, net column filled (negotiated discount): 744 h x 52.00 = 38688.00 preferred over 40949.76
        sp("2026-08-01T00:00:00", "i-b", 744, 73150.08, 40949.76, 38688.00),
        # inf2 on demand, August, 744 h x 12.98 = 9657.12
        r("2026-08-01T00:00:00", "Usage", "USE1-BoxUsage:inf2.48xlarge", "i-c", 744, 9657.12, 9657.12, INF2),
        # September: p5 on a reservation, 720 h, RI effective 30000.00; a refund at 02:00 UTC on 1 September
        # (still 31 August in Los Angeles)
        {
            **r("2026-09-01T00:00:00", "DiscountedUsage", "USE1-BoxUsage:p5.48xlarge", "i-d", 720, 0, 0, P5),
            "reservation_effective_cost": 30000.00,
        },
        r("2026-09-01T02:00:00", "Refund", "USE1-BoxUsage:p5.48xlarge", "", 0, -500.00, -500.00, P5),
        # the reservation's fee with its unused part, and a Savings Plan fee with unused commitment
        {
            **r("2026-09-01T00:00:00", "RIFee", "HeavyUsage:p5.48xlarge", "", 720, 30000.00, 30000.00),
            "reservation_unused_amortized_upfront_fee_for_billing_period": 1000.00,
            "reservation_unused_recurring_fee": 250.00,
        },
        {
            **r("2026-09-01T00:00:00", "SavingsPlanRecurringFee", "ComputeSP:1yrNoUpfront", "", 720, 36000.0, 36000.0),
            "savings_plan_total_commitment_to_date": 36000.00,
            "savings_plan_used_commitment": 34000.00,
        },
        r("2026-09-30T00:00:00", "Tax", "", "", 0, 4200.00, 4200.00),
        # RDS (another service): left out unless asked for
        r(
            "2026-09-01T00:00:00",
            "Usage",
            "USE1-InstanceUsage:db.r5.large",
            "db-1",
            720,
            180.00,
            180.00,
            "db.r5.large",
            product="AmazonRDS",
        ),
        # November: 10 days of p5 on demand, 240 h x 98.32 = 23596.80
        r("2026-11-01T00:00:00", "Usage", "USE1-BoxUsage:p5.48xlarge", "i-e", 240, 23596.80, 23596.80, P5),
    ]
    return complete(rows)


EXTRA = (
    "savings_plan_savings_plan_effective_cost",
    "reservation_unused_amortized_upfront_fee_for_billing_period",
    "reservation_unused_recurring_fee",
    "savings_plan_total_commitment_to_date",
    "savings_plan_used_commitment",
)


def complete(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every line holds every column (as an export does); the ones a line type does not use are empty."""
    return [{**{c: None for c in EXTRA}, **r} for r in rows]


def hand_query(path: Path) -> dict[tuple[str, str], Decimal]:
    """Effective cost per (instance type, month) by AWS's definitions, written from the CUR 2.0 dictionary."""
    con = duckdb.connect()
    got = con.execute(
        f"""
        SELECT product_instance_type,
               strftime(timezone('UTC', CAST(line_item_usage_start_date AS TIMESTAMPTZ)), '%Y-%m') AS m,
               sum(CASE line_item_line_item_type
                   WHEN 'Usage' THEN coalesce(line_item_net_unblended_cost, line_item_unblended_cost)
                   WHEN 'DiscountedUsage' THEN reservation_effective_cost
                   WHEN 'SavingsPlanCoveredUsage' THEN coalesce(savings_plan_net_savings_plan_effective_cost,
                                                                savings_plan_savings_plan_effective_cost)
                   WHEN 'Refund' THEN line_item_unblended_cost WHEN 'Credit' THEN line_item_unblended_cost
                   ELSE 0 END)
        FROM read_csv('{path}', header = true)
        WHERE line_item_product_code = 'AmazonEC2' AND product_instance_type IS NOT NULL
        GROUP BY ALL"""
    ).fetchall()
    return {(t, m): Decimal(str(round(v, 2))) for t, m, v in got}


def test_each_line_item_type_and_utc_months(cur: Any, tmp_path: Path, tz: str) -> None:
    f = cur.csv(tmp_path / "cur.csv", export(cur))
    s, _ = summarise([f])
    got = {(r.instance_type, r.month): r.effective_cost for r in s.rows}
    # p5 August: 40949.76 (non-net fallback) + 38688.00 (net preferred) = 79637.76
    assert got[(P5, "2026-08")] == Decimal("79637.76")
    # p5 September: 30000.00 RI effective - 500.00 refund (in September in UTC, whatever TZ says)
    assert got[(P5, "2026-09")] == Decimal("29500.00")
    assert got[(INF2, "2026-08")] == Decimal("9657.12")
    assert got[(P5, "2026-11")] == Decimal("23596.80")
    assert s.months == ["2026-08", "2026-09", "2026-11"]  # no July, whatever the machine's zone
    assert {k: round(v, 2) for k, v in got.items()} == hand_query(f)
    assert "db.r5.large" not in {r.instance_type for r in s.rows}
    # RI fee and SP fee shown apart, with their unused parts: 1000.00 + 250.00; 36000.00 - 34000.00
    assert s.unattributed["RIFee"] == Decimal("30000.00") and s.unattributed["Tax"] == Decimal("4200.00")
    assert s.unused_commitment == {"RIFee": Decimal("1250.00"), "SavingsPlanRecurringFee": Decimal("2000.00")}


def test_partial_month_is_not_averaged_as_whole(cur: Any, tmp_path: Path, tz: str) -> None:
    f = cur.parquet(tmp_path / "cur.parquet", export(cur))
    s, _ = summarise([f])
    third = Decimal(240) / Decimal(720)  # 10 of November's 30 days
    assert s.partial_months == {"2026-11": third}
    opt = baseline_option(s)
    # (79637.76 + 9657.12 + 29500.00 + 23596.80) / (1 + 1 + 1/3) months = 142391.68 / (7/3) = 61025.00571...
    assert opt["spend"]["monthly_cost"] == "61025.01"
    assert "2026-11 partial" in opt["spend"]["source"]
    hand = sum(hand_query(cur.csv(tmp_path / "cur.csv", export(cur))).values(), Decimal(0))
    assert hand == Decimal("142391.68")
    assert Decimal(opt["spend"]["monthly_cost"]) == round(hand / (2 + third), 2)


def test_other_services_are_opt_in(cur: Any, tmp_path: Path) -> None:
    f = cur.parquet(tmp_path / "cur.parquet", export(cur))
    s, _ = summarise([f], services=[])
    assert {(r.instance_type, r.effective_cost) for r in s.rows if r.month == "2026-09"} >= {
        ("db.r5.large", Decimal("180.00"))
    }


def test_export_without_net_columns(cur: Any, tmp_path: Path) -> None:
    net = ("line_item_net_unblended_cost", "savings_plan_net_savings_plan_effective_cost")
    data = [{k: v for k, v in r.items() if k not in net} for r in export(cur)]
    s, _ = summarise([cur.parquet(tmp_path / "cur.parquet", data)])
    # both August p5 lines now at the Savings Plan effective cost: 2 x 40949.76
    assert {(r.instance_type, r.month): r.effective_cost for r in s.rows}[(P5, "2026-08")] == Decimal("81899.52")


def test_spot_fleet_replaced_daily_is_eight(cur: Any, tmp_path: Path) -> None:
    """8 spot instances, each replaced every day of September (30 x 8 = 240 ids), 24 h a line, 9.00 a line."""
    data = [
        cur.row(f"2026-09-{d:02d}T00:00:00", "Usage", "USE1-SpotUsage:p5.48xlarge", f"i-{d}-{k}", 24, 9.0, 9.0, P5)
        for d in range(1, 31)
        for k in range(8)
    ]
    s, _ = summarise([cur.parquet(tmp_path / "cur.parquet", data)])
    (row,) = s.rows
    assert (row.resources, row.concurrent, row.instance_hours) == (240, 8, 5760)  # 8 x 720 h
    assert baseline_option(s)["instances"] == 8


# --- issue 28: money readers refuse what is not money ---------------------------------------------------------


def test_a_file_named_star_csv_is_read_once(cur: Any, tmp_path: Path) -> None:
    data = export(cur)
    cur.csv(tmp_path / "a.csv", data)
    cur.csv(tmp_path / "b.csv", data)
    star = cur.csv(tmp_path / "*.csv", data)
    s, _ = summarise([star])
    assert {(r.instance_type, r.month): r.effective_cost for r in s.rows}[(INF2, "2026-08")] == Decimal("9657.12")


def test_mixed_currencies_across_files(cur: Any, tmp_path: Path) -> None:
    eur = [{**r, "line_item_currency_code": "EUR"} for r in export(cur)]
    with pytest.raises(InputFileError, match="mixed currencies EUR, USD"):
        summarise([cur.csv(tmp_path / "eur.csv", eur), cur.csv(tmp_path / "usd.csv", export(cur))])
    none = [{k: v for k, v in r.items() if k != "line_item_currency_code"} for r in export(cur)]
    with pytest.raises(InputFileError, match="none given"):
        summarise([cur.parquet(tmp_path / "eur.parquet", eur), cur.parquet(tmp_path / "none.parquet", none)])


def test_negative_usage_is_refused(cur: Any, tmp_path: Path) -> None:
    bad = cur.row("2026-09-02T00:00:00", "Usage", "USE1-BoxUsage:inf2.48xlarge", "i-x", 1, -5.0, -5.0, INF2)
    data = [*export(cur), *complete([bad])]
    with pytest.raises(InputFileError, match="a Usage line costs -5.00"):
        summarise([cur.parquet(tmp_path / "cur.parquet", data)])


def test_lines_without_a_date_are_named(cur: Any, tmp_path: Path) -> None:
    f = cur.csv(tmp_path / "cur.csv", export(cur))
    text = f.read_text().splitlines()
    text[2] = text[2].replace("2026-08-01T00:00:00Z", "", 1)
    f.write_text("\n".join(text) + "\n")
    with pytest.raises(InputFileError, match="1 line\\(s\\) have no usable line_item_usage_start_date"):
        summarise([f])


def test_tag_filter_on_an_export_without_rows(cur: Any, tmp_path: Path) -> None:
    f = cur.csv(tmp_path / "cur.csv", export(cur))
    f.write_text(f.read_text().splitlines()[0] + "\n")
    with pytest.raises(InputFileError, match="no EC2 instance usage"):
        summarise([f], tags=["user_team=ml"])


def test_no_negative_baseline(cur: Any, tmp_path: Path) -> None:
    data = [
        cur.row("2026-09-01T00:00:00", "Usage", "USE1-BoxUsage:inf2.48xlarge", "i-c", 720, 9345.60, 9345.60, INF2),
        cur.row("2026-09-30T00:00:00", "Credit", "USE1-BoxUsage:inf2.48xlarge", "", 0, -10000.0, -10000.0, INF2),
    ]
    s, _ = summarise([cur.parquet(tmp_path / "cur.parquet", data)])
    with pytest.raises(InputFileError, match="negative"):  # 9345.60 - 10000.00 = -654.40
        baseline_option(s)
