"""Issue 10 section 4: serving fleets sized from the peak rate and a traffic profile. Money by hand."""

from __future__ import annotations

from decimal import Decimal as D
from typing import Any

import pytest

from accelpilot.bill.compute import make_bill
from accelpilot.bill.fleet import cost_per_1k_curve
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.errors import ConfigError

CAT = load_catalog()
VOLUME = 262_800_000  # a mean of exactly 100 requests/s over 730 h x 3,600 s
DAY = [1] * 12 + [3] * 12  # 12 quiet hours at half the mean rate, 12 busy ones at 1.5x


def bill_of(traffic: dict[str, Any], operation: str = "always_on", **extra: Any) -> Any:
    opt = {"name": "inf2", "instance": "inf2.xlarge", "pricing": "on_demand", "peak_qps": 50, "operation": operation}
    data = {"workload": "serving", "volumes": {"requests_per_month": VOLUME}, "traffic": traffic, "options": [opt]}
    return make_bill(parse_scenario({**data, **extra}), CAT).options[0]


def test_always_on_fleet_from_peak_to_mean() -> None:
    """Peak 100 x 3 x 1.2 headroom = 360 req/s at 50 each: 8 instances x 730 h = 5,840 instance-hours."""
    o = bill_of({"peak_to_mean": 3, "headroom": 0.2})
    m = o.fleet[0]
    assert (m.mode, m.instances, m.instance_hours.value) == ("always_on", 8, 5840)
    assert m.idle_share.value == 1 - D(1460) / D(5840)  # busy: 262.8M / 50 / 3,600 = 1,460 h -> 75% idle
    assert o.monthly_cost.value == 8 * 730 * D("0.76") == D("4438.40")
    assert o.cost_per_1k_accepted_requests.value == D("4438.40") / 262_800
    assert o.paid_capacity_share.value == D("0.25")


def test_scheduled_fleet_follows_the_hourly_weights() -> None:
    """Hours at 50 and 150 req/s (x 1.2 = 60, 180) need 2 and 4 instances: 72 instance-hours a day."""
    o = bill_of({"hourly_weights": DAY, "headroom": 0.2}, operation="scheduled")
    on, sched = o.fleet
    assert (on.instances, on.instance_hours.value) == (4, 4 * 730)
    assert sched.instance_hours.value == (12 * 2 + 12 * 4) * D(730) / 24  # 2,190 h
    assert sched.idle_share.value == 1 - D(1460) / D(2190)
    assert o.monthly_cost.value == D(2190) * D("0.76") == D("1664.40")
    assert on.monthly_cost.value == 4 * 730 * D("0.76")  # 2,219.20


def test_curve_is_the_same_rule_in_floats() -> None:
    o = bill_of({"peak_to_mean": 3, "headroom": 0.2})
    low, high = cost_per_1k_curve(o.fleet_curve, [1_000_000.0, float(VOLUME)])
    assert high == pytest.approx(4438.40 / 262_800)
    assert low == pytest.approx(1 * 730 * 0.76 / 1000)  # one instance is the floor


def test_traffic_profile_errors_name_the_fix() -> None:
    with pytest.raises(ConfigError, match="idle_fraction is derived from the traffic profile"):
        bill_of({"peak_to_mean": 3}, extras={"idle_fraction": 0.3})
    with pytest.raises(ConfigError, match="hourly_weights"):
        bill_of({"peak_to_mean": 3}, operation="scheduled")
    with pytest.raises(ConfigError, match="24 numbers"):
        bill_of({"hourly_weights": [1] * 23})
