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


def test_an_endpoint_result_prices_one_server_per_instance(tmp_path: Path) -> None:
    """An endpoint measured a whole server: its peak is not multiplied by the instance's chip count."""
    res = PilotResult(
        kind="serving",
        platform=Platform(device="endpoint:http://10.0.0.5:8000", device_type="endpoint", device_name="llama"),
        workload=WorkloadInfo(name="llama", factory="endpoint"),
        serving=ServingSummary(peak_qps_under_slo=1.0, goodput_share=1.0),
    )
    path = write_result(res, tmp_path / "e.json")
    sc = parse_scenario(
        {
            "options": [{"name": "trn1", "instance": "trn1.32xlarge", "pricing": "on_demand", "result": str(path)}],
            "workload": "serving",
            "volumes": {"requests_per_month": 10_000_000},
        }
    )
    o = make_bill(sc, load_catalog()).options[0]
    # by hand: 1 req/s x 730 h x 3600 s = 2,628,000 requests per server-month; 10,000,000 / 2,628,000 -> 4 servers
    assert o.line_items[0].figure.label == "4 always-on instance(s)"
    assert any("one instance = the measured server" in n for n in o.notes)
