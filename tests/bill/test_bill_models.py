"""Pricing models beyond the worked example: extras, reserved commitment, rental, owned, serving, results."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from accelpilot.bill.compute import dto_monthly, make_bill
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.errors import ConfigError, InputFileError, UnitMismatchError, UnknownNameError, VendorClaimError
from accelpilot.figures import Kind, assumption
from accelpilot.pilot.result import PilotResult, Platform, ServingSummary, TrainingSummary, WorkloadInfo, write_result

CAT = load_catalog()


def bill_of(options: list[dict[str, Any]], **extra: Any) -> Any:
    return make_bill(parse_scenario({"options": options, **extra}), CAT)


def test_dto_tiers() -> None:
    f = dto_monthly(assumption(20480, "GB/month"), CAT)
    assert f.value == Decimal(10240) * Decimal("0.09") + Decimal(10240) * Decimal("0.085")
    assert f.unit == "USD/month"
    assert dto_monthly(assumption(200000, "GB/month"), CAT).value == (
        Decimal(10240) * Decimal("0.09")
        + Decimal(40960) * Decimal("0.085")
        + Decimal(102400) * Decimal("0.07")
        + (Decimal(200000) - 153600) * Decimal("0.05")
    )


def test_extras_idle_and_support() -> None:
    b = bill_of(
        [{"name": "trn1", "instance": "trn1.32xlarge", "pricing": "on_demand", "hours_per_run": 10}],
        volumes={"runs_per_month": 2},
        extras={"idle_fraction": 0.2, "support_percent": 10, "storage_gb_months": 1000, "data_transfer_out_gb": 600},
    )
    o = b.options[0]
    compute = Decimal("21.50") * 10 / Decimal("0.8")
    # AWS's free 100 GB a month comes off the egress before the tiers (issue 10)
    expected = compute + compute / 10 + (1000 * Decimal("0.08")) / 2 + ((600 - 100) * Decimal("0.09")) / 2
    assert o.cost_per_run.value == expected
    names = [li.name for li in o.line_items]
    assert any("idle 20% billed" in n for n in names)
    assert any("support" in n for n in names) and any("data transfer" in n for n in names)


def test_rental_and_accepted_share() -> None:
    b = bill_of(
        [
            {
                "name": "rent",
                "instance": "H100@Hyperstack",
                "pricing": "rental",
                "instances": 8,
                "hours_per_run": 20,
                "accepted_share": 0.8,
            }
        ]
    )
    o = b.options[0]
    assert o.cost_per_run.value == Decimal("2.50") * 8 * 20
    assert o.cost_per_accepted_run.value == Decimal("400") / Decimal("0.8")


def test_reserved_commitment_billed_when_larger_than_use() -> None:
    b = bill_of(
        [
            {
                "name": "ri",
                "instance": "trn1.32xlarge",
                "pricing": "reserved_3y",
                "hours_per_run": 26,
                "commitment_instances": 1,
            }
        ]
    )
    o = b.options[0]
    assert o.monthly_cost.value == Decimal("8.20") * 730
    assert any("commitment" in n for n in o.notes)


def test_owned_and_buy_and_host() -> None:
    owned = {"purchase": 360000, "life_months": 36, "utilisation": 0.5, "staff_per_month": 1000}
    b = bill_of(
        [
            {"name": "owned", "instance": "p5.48xlarge", "pricing": "owned", "hours_per_run": 20, "owned": owned},
            {
                "name": "hosted",
                "pricing": "buy_and_host",
                "hours_per_run": 20,
                "owned": {"purchase": 360000, "hosting_per_month": 2000},
            },
        ]
    )
    o = b.option("owned")
    monthly_fixed = Decimal(10000) + Decimal("10.2") * Decimal("184.06") + 1000
    energy = Decimal("10.2") * Decimal("1.58") * Decimal("0.10") * 20
    assert o.cost_per_run.value == pytest.approx(monthly_fixed * 20 / (730 * Decimal("0.5")) + energy)
    kinds = {leaf.kind for li in o.line_items for leaf in li.figure.leaves()}
    assert Kind.ASSUMPTION in kinds and Kind.LIST_PRICE in kinds
    assert any("hosting" in li.name for li in b.option("hosted").line_items)


def test_no_hours_and_no_result_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="names no result and no assumed hours"):
        bill_of([{"name": "x", "instance": "p5.48xlarge", "pricing": "on_demand"}])


def test_unknown_instance_and_missing_pricing() -> None:
    with pytest.raises(UnknownNameError, match="did you mean"):
        bill_of([{"name": "x", "instance": "p5.48xlarg", "pricing": "on_demand", "hours_per_run": 1}])
    with pytest.raises(UnknownNameError, match="no on_demand price for trn2.48xlarge"):
        bill_of([{"name": "x", "instance": "trn2.48xlarge", "pricing": "on_demand", "hours_per_run": 1}])


@pytest.mark.parametrize(
    "field,value,match",
    [
        ("hours_per_run", -1, "must not be negative"),
        ("hours_per_run", float("nan"), "finite"),
        ("pricing", "ondemand", "did you mean"),
        ("instances", 0, "greater than 0"),
        ("colour", "red", "unknown field"),
    ],
)
def test_bad_option_values(field: str, value: Any, match: str) -> None:
    opt = {"name": "x", "instance": "p5.48xlarge", "pricing": "on_demand", "hours_per_run": 1, field: value}
    with pytest.raises(ConfigError, match=match) as exc:
        bill_of([opt])
    assert f"options[1 'x'].{field}" in str(exc.value)


def test_currency_mismatch_in_a_user_catalog(tmp_path: Path) -> None:
    f = tmp_path / "eur.toml"
    f.write_text(
        '[[price]]\ninstance = "p5.48xlarge"\naccelerator = "H100"\naccelerator_count = 8\n'
        'pricing = "on_demand"\nprice_per_hour = 50\ncurrency = "EUR"\nregion = "us-east-1"\n'
        'as_of = 2026-11-01\nsource = "quote"\n'
    )
    cat = load_catalog([f])
    sc = parse_scenario(
        {
            "options": [{"name": "x", "instance": "p5.48xlarge", "pricing": "on_demand", "hours_per_run": 1}],
            "extras": {"storage_gb_months": 10},
        }
    )
    # refused at the row, naming its file and field (issue 10), before any sum could mix currencies
    with pytest.raises(UnitMismatchError, match=r"eur.toml: price p5.48xlarge on_demand.currency: .* is in EUR"):
        make_bill(sc, cat)


def test_vendor_claim_as_price_is_refused() -> None:
    claim = CAT.claim("trn1-cost-to-train")
    assert claim is not None
    with pytest.raises(VendorClaimError):
        _ = claim.figure() * assumption(10, "h")


def _platform() -> Platform:
    return Platform(device="cpu", device_type="cpu", device_name="test cpu")


def test_hours_from_a_training_result(tmp_path: Path) -> None:
    res = PilotResult(
        kind="training",
        platform=_platform(),
        workload=WorkloadInfo(name="gpt-tiny"),
        training=TrainingSummary(tokens_per_s=1000.0, time_to_target_s=7200.0, runs=4, accepted_runs=3),
    )
    path = write_result(res, tmp_path / "r.json")
    b = bill_of([{"name": "m", "instance": "trn1.2xlarge", "pricing": "on_demand", "result": str(path)}])
    o = b.options[0]
    assert o.measured and o.hours_per_run.value == 2
    assert o.hours_per_run.kind is Kind.DERIVED and o.hours_per_run.leaves()[0].kind is Kind.MEASURED
    assert o.accepted_share.value == Decimal("0.75")
    assert o.cost_per_accepted_run.value == Decimal("1.34") * 2 / Decimal("0.75")
    assert any("measured on cpu" in n for n in o.notes)
    b2 = bill_of(
        [
            {
                "name": "m",
                "instance": "trn1.2xlarge",
                "pricing": "on_demand",
                "result": str(path),
                "tokens_per_run": 3_600_000,
            }
        ]
    )
    assert b2.options[0].hours_per_run.value == 1


def test_serving_result_priced_per_output(tmp_path: Path) -> None:
    res = PilotResult(
        kind="serving",
        platform=_platform(),
        workload=WorkloadInfo(name="minilm"),
        serving=ServingSummary(peak_qps_under_slo=100.0, goodput_share=0.5, tokens_per_request=20.0),
    )
    path = write_result(res, tmp_path / "s.json")
    b = bill_of(
        [{"name": "inf2", "instance": "inf2.xlarge", "pricing": "on_demand", "result": str(path)}],
        workload="serving",
        volumes={"requests_per_month": 1_000_000},
    )
    o = b.options[0]
    monthly = Decimal("0.76") * 730
    assert o.monthly_cost.value == monthly
    assert o.cost_per_1k_accepted_requests.value == monthly / Decimal(500_000) * 1000
    assert o.cost_per_million_accepted_tokens.value == monthly / Decimal(10_000_000) * 1_000_000
    with pytest.raises(InputFileError, match="prices a training workload but this is a serving result"):
        bill_of([{"name": "x", "instance": "inf2.xlarge", "pricing": "on_demand", "result": str(path)}])


def test_newer_schema_result_refused(tmp_path: Path) -> None:
    res = PilotResult(
        kind="training",
        platform=_platform(),
        workload=WorkloadInfo(name="w"),
        created=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
    )
    path = write_result(res, tmp_path / "r.json")
    path.write_text(path.read_text().replace('"schema_version": 1', '"schema_version": 99'))
    with pytest.raises(InputFileError, match="newer accelpilot"):
        bill_of([{"name": "m", "instance": "trn1.2xlarge", "pricing": "on_demand", "result": str(path)}])
