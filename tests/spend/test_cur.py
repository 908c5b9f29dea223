"""CUR 2.0 import: per instance type and month, effective cost with RI/SP/credits, share of month, filters."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("duckdb", reason="the spend extra (DuckDB) is not installed")
pytest.importorskip("pyarrow", reason="pyarrow writes the Parquet test exports")

from accelpilot.errors import ConfigError, InputFileError
from accelpilot.spend.cur import summarise


def _by(s: Any) -> dict[tuple[str, str], Any]:
    return {(r.instance_type, r.month): r for r in s.rows}


def check_hand_totals(s: Any) -> None:
    got = _by(s)
    p5_sep = got[("p5.48xlarge", "2026-09")]
    # hours 720 + 360; cost 67250.88 (net of discount) + 22000.00 (RI effective); credit -1000.00
    assert p5_sep.instance_hours == Decimal("1080")
    assert p5_sep.usage_cost == Decimal("89250.88")
    assert p5_sep.credits == Decimal("-1000.00")
    assert p5_sep.effective_cost == Decimal("88250.88")
    assert p5_sep.resources == 2
    assert p5_sep.mean_share_of_month == Decimal("0.75")  # 1080 / (2 x 720)
    inf2 = got[("inf2.48xlarge", "2026-09")]
    # Savings Plan effective cost, the negation line dropped
    assert (inf2.instance_hours, inf2.effective_cost, inf2.mean_share_of_month) == (720, Decimal("6000.00"), 1)
    trn1 = got[("trn1.32xlarge", "2026-09")]
    assert trn1.effective_cost == Decimal("2150.00")  # no net value: unblended stands in
    assert got[("p5.48xlarge", "2026-10")].effective_cost == Decimal("69492.58")
    assert got[("p5.48xlarge", "2026-10")].hours_in_month == 744
    assert s.months == ["2026-09", "2026-10"] and s.currency == "USD"
    # nothing silently lost: lines without an instance type are reported apart
    assert s.unattributed == {"Credit": Decimal("-50.00"), "Tax": Decimal("100.00"), "Usage": Decimal("12.34")}


def test_parquet(cur: Any, tmp_path: Path) -> None:
    s, _ = summarise([cur.parquet(tmp_path / "cur.parquet", cur.rows())])
    assert s.file_format == "parquet"
    check_hand_totals(s)


@pytest.mark.parametrize("gz", [False, True])
def test_csv_gzip_or_not(cur: Any, tmp_path: Path, gz: bool) -> None:
    s, _ = summarise([cur.csv(tmp_path / ("cur.csv.gz" if gz else "cur.csv"), cur.rows(), gz=gz)])
    assert s.file_format == "csv"
    check_hand_totals(s)


def test_many_files_in_a_folder(cur: Any, tmp_path: Path) -> None:
    data = cur.rows()
    d = tmp_path / "data"
    (d / "BILLING_PERIOD=2026-09").mkdir(parents=True)
    (d / "BILLING_PERIOD=2026-10").mkdir(parents=True)
    cur.parquet(d / "BILLING_PERIOD=2026-09" / "part-0.parquet", data[:5])
    cur.parquet(d / "BILLING_PERIOD=2026-09" / "part-1.parquet", data[5:9])
    cur.parquet(d / "BILLING_PERIOD=2026-10" / "part-0.parquet", data[9:])
    s, _ = summarise([d])
    assert len(s.files) == 3
    check_hand_totals(s)


def test_filters_by_tag_account_period_and_type(cur: Any, tmp_path: Path) -> None:
    f = cur.parquet(tmp_path / "cur.parquet", cur.rows())
    s, _ = summarise([f], tags=["user_team=research"])
    assert [(r.instance_type, r.effective_cost) for r in s.rows] == [("trn1.32xlarge", Decimal("2150.00"))]
    s, _ = summarise([f], accounts=["111111111111"], period="2026-10")
    assert [(r.instance_type, r.month, r.effective_cost) for r in s.rows] == [
        ("p5.48xlarge", "2026-10", Decimal("69492.58"))
    ]
    s, _ = summarise([f], instance_types=["inf2.48xlarge"])
    assert [r.instance_type for r in s.rows] == ["inf2.48xlarge"]
    c, _ = summarise([cur.csv(tmp_path / "cur.csv", cur.rows())], tags=["user_team=research"])
    assert [r.instance_type for r in c.rows] == ["trn1.32xlarge"]  # JSON tags in CSV


def test_share_of_month_per_resource(cur: Any, tmp_path: Path) -> None:
    _, res = summarise([cur.parquet(tmp_path / "cur.parquet", cur.rows())], resources=True)
    got = {(r.resource_id, r.month): r.share_of_month for r in res}
    assert got[("i-b", "2026-09")] == Decimal("0.5")  # 360 of 720 h
    assert got[("i-a", "2026-10")] == 1
    assert got[("i-t", "2026-09")] == Decimal(100) / 720


def test_monthly_figure_is_measured(cur: Any, tmp_path: Path) -> None:
    s, _ = summarise([cur.parquet(tmp_path / "cur.parquet", cur.rows())])
    f = s.monthly_figure(["p5.48xlarge"])
    # (88250.88 + 69492.58) / 2 months, by hand
    assert f.value == Decimal("78871.73") and f.unit == "USD/month" and f.kind.value == "measured"
    assert "cur.parquet" in f.source and "2026-09..2026-10" in f.source


# --- bad input ---------------------------------------------------------------------------------


def test_missing_columns_are_named(cur: Any, tmp_path: Path) -> None:
    data = [{k: v for k, v in r.items() if k not in ("pricing_term", "resource_tags")} for r in cur.rows()]
    with pytest.raises(InputFileError) as exc:
        summarise([cur.parquet(tmp_path / "cur.parquet", data)])
    assert "pricing_term" in str(exc.value) and "resource_tags" in str(exc.value) and "cur.parquet" in str(exc.value)


def test_empty_period(cur: Any, tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="no EC2 instance usage"):
        summarise([cur.parquet(tmp_path / "cur.parquet", cur.rows())], period="2025-01")


def test_mixed_currencies(cur: Any, tmp_path: Path) -> None:
    data = cur.rows()
    data[0]["line_item_currency_code"] = "EUR"
    with pytest.raises(InputFileError, match="mixed currencies EUR, USD"):
        summarise([cur.parquet(tmp_path / "cur.parquet", data)])


@pytest.mark.parametrize("period", ["2026-13", "Sept", "2026-10..2026-09"])
def test_bad_period(cur: Any, tmp_path: Path, period: str) -> None:
    with pytest.raises(ConfigError):
        summarise([cur.parquet(tmp_path / "cur.parquet", cur.rows())], period=period)


def test_not_an_export(cur: Any, tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(InputFileError, match="expected .parquet"):
        summarise([tmp_path / "x.txt"])
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(InputFileError, match="cannot read as parquet"):
        summarise([tmp_path / "bad.parquet"])
