"""A serving result's output parity (issue 16) multiplies into cost per accepted output; the operating point
of a sweep is the peak rate the bill sizes the fleet with."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.pilot.result import PilotResult, Platform, ServingSummary, WorkloadInfo, write_result


def _bill(path: Path) -> object:
    sc = parse_scenario(
        {
            "options": [{"name": "inf2", "instance": "inf2.xlarge", "pricing": "on_demand", "result": str(path)}],
            "workload": "serving",
            "volumes": {"requests_per_month": 1_000_000},
        }
    )
    return make_bill(sc, load_catalog())


def test_parity_accepted_share_divides_cost_per_accepted_request(tmp_path: Path) -> None:
    summary = ServingSummary(peak_qps_under_slo=100.0, goodput_share=0.8, tokens_per_request=20.0)
    plain = PilotResult(
        kind="serving", platform=Platform(device="cpu"), workload=WorkloadInfo(name="m"), serving=summary
    )
    with_parity = plain.model_copy(deep=True)
    with_parity.serving.parity_accepted_share = 0.75  # type: ignore[union-attr]
    a = _bill(write_result(plain, tmp_path / "a.json")).options[0]  # type: ignore[attr-defined]
    b = _bill(write_result(with_parity, tmp_path / "b.json")).options[0]  # type: ignore[attr-defined]
    monthly = Decimal("0.76") * 730  # inf2.xlarge on demand, always on
    assert a.cost_per_1k_accepted_requests.value == monthly / (Decimal(1_000_000) * Decimal("0.8")) * 1000
    assert (
        b.cost_per_1k_accepted_requests.value
        == monthly / (Decimal(1_000_000) * Decimal("0.8") * Decimal("0.75")) * 1000
    )
