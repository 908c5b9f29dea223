"""Issue 26: the judgement calls are the scenario's to make (serverless duty, spot re-work, tax on staff pay), each
with a stated default, and a bad value refused with a fix. Money by hand in each test."""

from __future__ import annotations

from decimal import Decimal as D
from pathlib import Path
from typing import Any

import pytest

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import parse_scenario
from accelpilot.catalog import load_catalog
from accelpilot.errors import UserError

CAT = load_catalog()

ROWS = """
[[price]]
instance = "L4@Example-serverless"
accelerator = "L4"
accelerator_count = 1
pricing = "serverless"
price_per_second = "0.0002"
billing_increment_s = "1"
provider = "Example"
as_of = 2026-11-01
source = "example provider's serverless price page (test row)"

[[price]]
instance = "L4@Example"
accelerator = "L4"
accelerator_count = 1
pricing = "on_demand"
price_per_hour = "0.80"
provider = "Example"
as_of = 2026-11-01
source = "example provider's price page (test row)"
"""


def _serving(tmp_path: Path, duty: Any = None) -> Any:
    """Serverless against one always-on L4 (0.80 an hour), 3,600,000 requests a month at a peak of 10/s."""
    f = tmp_path / "rows.toml"
    f.write_text(ROWS)
    sv: dict[str, Any] = {"scale_ups_per_month": 100, "idle_timeout_s": 60, "cold_start_s": 20}
    if duty is not None:
        sv["duty"] = duty
    prov = {"name": "prov", "instance": "L4@Example", "pricing": "on_demand", "peak_qps": 10}
    sl = {"name": "sl", "instance": "L4@Example-serverless", "pricing": "serverless", "peak_qps": 10, "serverless": sv}
    sc = {"workload": "serving", "volumes": {"requests_per_month": 3_600_000}, "options": [prov, sl]}
    return make_bill(parse_scenario(sc), load_catalog([f]))


def test_serverless_at_high_duty_is_clearly_cheaper_than_provisioned(tmp_path: Path) -> None:
    b = _serving(tmp_path)  # duty left out: live workers fully busy (1)
    prov, sl = b.options
    # provisioned: 3,600,000 < 10/s x 730 h x 3,600 s = 26,280,000 a month: 1 instance, 0.80 x 730 = 584.00
    assert prov.monthly_cost.value == D("584.00")
    # serverless: 3,600,000 / 10/s = 360,000 busy s over 100 scale-ups = 3,600 s each; a life of
    # 20 cold + 3,600 + 60 idle = 3,680 s; 100 x 3,680 = 368,000 s x 0.0002 = 73.60 a month
    assert sl.monthly_cost.value == D("73.60")
    assert sl.cost_per_1k_accepted_requests.value == D("73.60") / 3600  # 0.0204 per 1,000
    c = b.comparisons[0]
    assert abs(c.saving_percent - (1 - D("73.60") / D("584.00")) * 100) < D("1e-20")  # 87.4% less: clear
    assert any("assumed fully busy at the peak rate (duty 1)" in n for n in sl.notes)


def test_serverless_at_low_duty_is_dearer_than_provisioned(tmp_path: Path) -> None:
    b = _serving(tmp_path, duty="0.1")
    sl = b.options[1]
    # a live worker serves 10 x 0.1 = 1 request/s on average: 3,600,000 live s, 36,000 per scale-up;
    # life 20 + 36,000 + 60 = 36,080 s; 100 x 36,080 = 3,608,000 s x 0.0002 = 721.60 a month
    assert sl.monthly_cost.value == D("721.60")
    c = b.comparisons[0]
    assert c.saving_percent is not None and c.saving_percent < 0  # 721.60 against 584.00: 23.6% dearer
    assert abs(c.saving_percent - (1 - D("721.60") / D("584.00")) * 100) < D("1e-20")
    assert not any("duty 1)" in n for n in sl.notes)


def test_serverless_duty_halves_an_always_on_workers_reach(tmp_path: Path) -> None:
    f = tmp_path / "rows.toml"
    f.write_text(ROWS)
    sv = {"scale_ups_per_month": 100, "idle_timeout_s": 60, "cold_start_s": 20, "min_workers": 1, "duty": "0.5"}
    sl = {"name": "sl", "instance": "L4@Example-serverless", "pricing": "serverless", "peak_qps": 10, "serverless": sv}
    sc = {"workload": "serving", "volumes": {"requests_per_month": 15_000_000}, "options": [sl]}
    o = make_bill(parse_scenario(sc), load_catalog([f])).options[0]
    # one always-on worker at 10 x 0.5 = 5/s serves 5 x 2,628,000 = 13,140,000; 1,860,000 left / 5/s = 372,000 s
    # over 100 scale-ups = 3,720 s; life 20 + 3,720 + 60 = 3,800 s; 2,628,000 s + 100 x 3,800 s = 3,008,000 s
    assert o.monthly_cost.value == D("3008000") * D("0.0002")  # 601.60


@pytest.mark.parametrize("duty", [0, "1.5", -1])
def test_a_duty_outside_0_to_1_is_refused_with_a_fix(tmp_path: Path, duty: Any) -> None:
    with pytest.raises(UserError) as e:
        _serving(tmp_path, duty=duty)
    assert e.value.field is not None and e.value.field.endswith("serverless.duty")
    assert e.value.fix is not None and "above 0 and at most 1" in e.value.fix


def _spot(rework: str | None = None, rate: str = "2", restart_s: int = 450) -> Any:
    sp: dict[str, Any] = {"interruptions_per_hour": rate, "restart_s": restart_s}
    if rework is not None:
        sp["rework"] = rework
    opt = {"name": "sp", "instance": "p5.48xlarge", "pricing": "spot", "price_per_hour": 20, "hours_per_run": 20}
    return make_bill(parse_scenario({"options": [{**opt, "spot": sp}]}), CAT).options[0]


def test_spot_rework_is_geometric_by_default() -> None:
    # q = 2 an hour x 450 s / 3,600 = 0.25 h lost per hour run. The 20 h lose 5 h, which lose 1.25 h, ...:
    # 20 x 0.25 / (1 - 0.25) = 6.6667 h of re-work; 20 x 20 + 20 x 20 / 3 = 400.00 + 133.33 = 533.33
    o = _spot()
    assert abs(o.cost_per_run.value - (D(400) + D(400) / 3)) < D("1e-20")
    assert any("6.67 h expected re-work (geometric)" in li.name for li in o.line_items)


def test_spot_rework_linear_is_the_scenarios_choice() -> None:
    o = _spot("linear")
    assert o.cost_per_run.value == D(400) + D(20) * 20 * D("0.25")  # 20 h x 0.25 = 5 h: 500.00
    assert o.cost_per_run.value < _spot().cost_per_run.value  # the first term alone understates it


def test_an_unknown_rework_form_is_refused_with_a_fix() -> None:
    with pytest.raises(UserError) as e:
        _spot("exponential")
    assert e.value.field is not None and e.value.field.endswith("spot.rework")
    assert e.value.fix is not None and '"geometric"' in e.value.fix


def _owned(workload: str = "training", **extras: Any) -> Any:
    box = {
        "lease_per_month": 10_000,
        "staff_per_month": 5_000,
        "power_kw": 10,
        "pue": "1.5",
        "electricity_per_kwh": "0.1",
        "colocation_per_kw_month": 200,
        "dedicated": True,
    }
    opt: dict[str, Any] = {"name": "box", "pricing": "owned", "instance": "my box", "owned": box}
    if workload == "training":
        opt["hours_per_run"] = 100
        sc: dict[str, Any] = {"options": [opt]}
    else:
        del box["dedicated"]
        opt["peak_qps"] = 10
        sc = {"workload": "serving", "volumes": {"requests_per_month": 1_000_000}, "options": [opt]}
    return make_bill(parse_scenario({**sc, "extras": {"tax_percent": 20, **extras}}), CAT).options[0]


def test_tax_leaves_internal_staff_pay_out_by_default() -> None:
    o = _owned()
    # lease 10,000 + facility 10 kW x 200 = 2,000 + staff 5,000 + energy 10 x 1.5 x 0.1 x 100 h = 150 = 17,150;
    # tax 20% of what vendors bill (17,150 - 5,000 staff = 12,150) = 2,430: 19,580 a month
    assert o.monthly_cost.value == D("19580.00")
    assert any(li.name == "tax (20%, not on internal staff pay)" for li in o.line_items)


def test_tax_on_staff_pay_is_the_scenarios_choice() -> None:
    assert _owned(tax_staff=True).monthly_cost.value == D("20580.00")  # 17,150 x 1.2


def test_serving_tax_leaves_staff_pay_out_too() -> None:
    # always on: 10,000 + 2,000 + 5,000 + energy 1.5 an hour x 730 = 1,095: 18,095; tax 20% of 13,095 = 2,619
    assert _owned("serving").monthly_cost.value == D("20714.00")
    assert _owned("serving", tax_staff=True).monthly_cost.value == D("18095") * D("1.2")  # 21,714.00


def test_tax_staff_must_be_true_or_false() -> None:
    with pytest.raises(UserError) as e:
        _owned(tax_staff="sometimes")
    assert e.value.fix is not None and "tax_staff = true" in e.value.fix
