"""CLI: evidence import/collect and prices --fetch; bad input is one line on stderr and exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from accelpilot.cli import main

FIX = Path(__file__).parent / "fixtures"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_import_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["evidence", "import", str(FIX / "offerings-us-east-1.json"), str(FIX / "quotas-us-east-1.json"), "--json"],
        capsys,
    )
    assert code == 0
    data = json.loads(out)
    assert [f["shape"] for f in data["files"]] == ["instance_type_offerings", "service_quotas"]
    assert len(data["offerings"]) == 4 and len(data["quotas"]) == 5


def test_import_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["evidence", "import", str(FIX / "capacity-blocks-us-east-1.json")], capsys)
    assert code == 0
    assert "cbr-0123456789abcdef0" in out and "163.88" in out


@pytest.mark.parametrize(
    ("name", "needle"),
    [("unknown-shape.json", "accepted: InstanceTypeOfferings"), ("quota-bad-unit.json", "unexpected unit")],
)
def test_bad_files_exit_2_with_one_line(capsys: pytest.CaptureFixture[str], name: str, needle: str) -> None:
    code, out, err = run(["evidence", "import", str(FIX / name)], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and needle in err and name in err


def _no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def test_collect_without_credentials_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("boto3", reason="the aws extra (boto3) is not installed")
    _no_credentials(monkeypatch, tmp_path)
    code, _, err = run(
        ["evidence", "collect", "--region", "us-east-1", "--instances", "trn1.32xlarge", "--out", str(tmp_path)],
        capsys,
    )
    assert code == 2
    lines = [ln for ln in err.splitlines() if ln.startswith("accelpilot: error:")]
    assert len(lines) == 1 and "no AWS credentials" in lines[0]


def test_prices_fetch_without_credentials_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("boto3", reason="the aws extra (boto3) is not installed")
    _no_credentials(monkeypatch, tmp_path)
    code, _, err = run(
        [
            "prices",
            "--fetch",
            "aws",
            "--region",
            "us-east-1",
            "--instance",
            "trn1.32xlarge",
            "--out",
            str(tmp_path / "p.json"),
        ],
        capsys,
    )
    assert code == 2
    assert "no AWS credentials found for pricing:GetProducts" in err


def test_prices_fetch_needs_region_and_instance(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["prices", "--fetch", "aws"], capsys)
    assert code == 2 and "--region and --instance" in err
    code, _, err = run(["prices", "--fetch", "gcp", "--region", "x", "--instance", "y"], capsys)
    assert code == 2 and "use --fetch aws" in err


def test_prices_fetch_shows_the_fetched_rows(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    boto3 = pytest.importorskip("boto3", reason="the aws extra (boto3) is not installed")
    from botocore.stub import Stubber

    import accelpilot.evidence.pricing as pricing

    here = Path(__file__).parent
    spec: dict[str, Any] = {}
    exec((here / "test_pricing.py").read_text().split("def test_fetch")[0], spec)  # reuse the documented product
    client = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t")
    stub = Stubber(client)
    stub.add_response(
        "get_products", {"FormatVersion": "aws_v1", "PriceList": [spec["_product"]("SKU1", "21.5", "13.28")]}
    )
    monkeypatch.setattr(pricing, "make_pricing_client", lambda profile=None: client)
    out_file = tmp_path / "prices.json"
    with stub:
        code, out, _ = run(
            [
                "prices",
                "--fetch",
                "aws",
                "--region",
                "us-east-1",
                "--instance",
                "trn1.32xlarge",
                "--out",
                str(out_file),
                "--json",
            ],
            capsys,
        )
    assert code == 0
    rows = json.loads(out)
    assert {(r["instance"], r["pricing"], r["price_per_hour"]) for r in rows} == {
        ("trn1.32xlarge", "on_demand", 21.5),
        ("trn1.32xlarge", "reserved_1y", 13.28),
    }
    assert all(r["region"] == "us-east-1" for r in rows) and out_file.exists()
