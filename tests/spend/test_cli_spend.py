"""CLI: spend import (table, JSON, --as-baseline) and its bad input: one line, exit 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("duckdb", reason="the spend extra (DuckDB) is not installed")
pytest.importorskip("pyarrow", reason="pyarrow writes the Parquet test exports")

from accelpilot.cli import main

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_table_and_json(cur: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = cur.parquet(tmp_path / "cur.parquet", cur.rows())
    code, out, _ = run(["spend", "import", str(f)], capsys)
    assert code == 0 and "p5.48xlarge" in out and "88,250.88" in out and "Tax 100.00" in out
    code, out, _ = run(["spend", "import", str(f), "--json", "--resources"], capsys)
    data = json.loads(out)
    assert code == 0 and data["months"] == ["2026-09", "2026-10"]
    assert {r["resource_id"] for r in data["resources"]} == {"i-a", "i-b", "i-c", "i-t"}


def test_as_baseline_adds_the_option_to_a_scenario(
    cur: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = cur.parquet(tmp_path / "cur.parquet", cur.rows())
    sc = tmp_path / "scenario.toml"
    sc.write_text(
        'name = "s"\n# keep me\n\n[[options]]\nname = "inf2"\npricing = "on_demand"\ninstance = "inf2.48xlarge"\n'
    )
    code, out, _ = run(["spend", "import", str(f), "--instance-type", "p5.48xlarge", "--as-baseline", str(sc)], capsys)
    assert code == 0 and "78871.73" in out
    text = sc.read_text()
    assert "# keep me" in text
    data = tomllib.loads(text)
    opt = data["options"][1]
    # (88250.88 + 69492.58) / 2, by hand
    assert (opt["name"], opt["pricing"], opt["instance"], opt["spend"]["monthly_cost"]) == (
        "current deployment",
        "measured_spend",
        "p5.48xlarge",
        "78871.73",
    )
    assert opt["instances"] == 2 and opt["spend"]["period"] == "2026-09..2026-10"
    # a second import replaces, never duplicates
    code, _, _ = run(["spend", "import", str(f), "--instance-type", "p5.48xlarge", "--as-baseline", str(sc)], capsys)
    assert [o["name"] for o in tomllib.loads(sc.read_text())["options"]] == ["inf2", "current deployment"]


def _bad(cur: Any, tmp_path: Path, kind: str) -> list[str]:
    data = cur.rows()
    if kind == "missing":
        data = [{k: v for k, v in r.items() if k != "line_item_usage_type"} for r in data]
    if kind == "currency":
        data[3]["line_item_currency_code"] = "EUR"
    f = cur.parquet(tmp_path / "cur.parquet", data)
    return [str(f)] + (["--period", "2024-01"] if kind == "period" else [])


@pytest.mark.parametrize(
    ("kind", "needle"),
    [
        ("missing", "missing column(s) line_item_usage_type"),
        ("period", "no EC2 instance usage"),
        ("currency", "mixed currencies EUR, USD"),
    ],
)
def test_bad_input_is_one_line(
    cur: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, needle: str
) -> None:
    code, out, err = run(["spend", "import", *_bad(cur, tmp_path, kind)], capsys)
    assert code == 2 and out == ""
    lines = [ln for ln in err.splitlines() if ln.startswith("accelpilot: error:")]
    assert len(lines) == 1 and needle in lines[0] and "cur.parquet" in lines[0]


def test_partial_month_fleet_and_services_on_the_command_line(
    cur: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """10 days of November: 8 spot p5 replaced daily (24 h a line, 9.00 a line) and one RDS line."""
    data = [
        cur.row(
            f"2026-11-{d:02d}T00:00:00",
            "Usage",
            "USE1-SpotUsage:p5.48xlarge",
            f"i-{d}-{k}",
            24,
            9.0,
            9.0,
            "p5.48xlarge",
        )
        for d in range(1, 11)
        for k in range(8)
    ]
    rds = cur.row(
        "2026-11-01T00:00:00", "Usage", "USE1-InstanceUsage:db.r5.large", "db-1", 240, 60.0, 60.0, "db.r5.large",
        product="AmazonRDS",
    )  # fmt: skip
    f = cur.parquet(tmp_path / "cur.parquet", [*data, rds])
    code, out, _ = run(["spend", "import", str(f)], capsys)
    # 10 x 8 x 9.00 = 720.00 over 240 of November's 720 h: a third of the month
    assert code == 0 and "720.00" in out and "2026-11 is partial: the export covers 33%" in out
    assert "db.r5.large" not in out
    code, out, _ = run(["spend", "import", str(f), "--json", "--service", "all"], capsys)
    got = json.loads(out)
    assert {r["instance_type"]: r["concurrent"] for r in got["rows"]} == {"p5.48xlarge": 8, "db.r5.large": 1}
    sc = tmp_path / "s.toml"
    code, out, _ = run(["spend", "import", str(f), "--as-baseline", str(sc)], capsys)
    opt = tomllib.loads(sc.read_text())["options"][0]
    # 720.00 / (240 / 720) = 2160.00 a month; 8 instances, not 80
    assert code == 0 and opt["spend"]["monthly_cost"] == "2160.00" and opt["instances"] == 8
