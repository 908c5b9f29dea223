"""The capacity gate from fixture files in AWS's documented shapes: pass, fail with the shortfall, unknown."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from accelpilot.evidence import EvidenceSet, Need, check_capacity, read_files

FIX = Path(__file__).parent / "fixtures"
EAST = read_files(
    FIX / n
    for n in (
        "offerings-us-east-1.json",
        "quotas-us-east-1.json",
        "capacity-blocks-us-east-1.json",
        "spot-scores-p5.48xlarge.json",
    )
)


def trn(n: int, **kw: object) -> Need:
    args: dict = dict(
        option="trn1",
        instance_type="trn1.32xlarge",
        instances=n,
        pricing="on_demand",
        regions=("us-east-1",),
        vcpus_per_instance=128,
        vcpus_source="AWS trn1 page",
    )
    args.update(kw)
    return Need(**args)


def test_pass_when_offered_and_vcpus_fit_the_quota() -> None:
    c = check_capacity(EAST, trn(2))
    assert c.status == "pass", c.reason
    r = c.regions[0]
    assert r.zones_offered == ["us-east-1a", "us-east-1f"]
    # 2 x 128 = 256 vCPUs against a 256-vCPU quota: headroom 0
    assert r.vcpus_needed == 256 and r.headroom_vcpus == 0
    assert "L-2C3B7624" in r.quota_name
    assert str(FIX / "quotas-us-east-1.json") in c.files


def test_fail_names_the_vcpu_shortfall() -> None:
    c = check_capacity(EAST, trn(3))
    assert c.status == "fail"
    # 3 x 128 = 384 needed, 256 allowed: short by 128
    assert "short by 128 vCPUs" in c.reason and "Running On-Demand Trn instances" in c.reason


def test_a_block_on_offer_does_not_cover_an_on_demand_run() -> None:
    # issue 29: a block on offer is not bought; an On-Demand run still needs the quota (4 x 128 = 512 > 256)
    c = check_capacity(EAST, trn(4, run_hours=Decimal(100)))
    assert c.status == "fail" and "short by 256 vCPUs" in c.reason
    # priced as a capacity block, the offering answers the gate
    assert check_capacity(EAST, trn(4, run_hours=Decimal(100), pricing="capacity_block")).status == "pass"
    assert check_capacity(EAST, trn(4, run_hours=Decimal(200), pricing="capacity_block")).status == "fail"  # 168 h


def test_a_block_outside_the_required_zones_does_not_count() -> None:
    # the trn1 block is in us-east-1f
    cb = {"run_hours": Decimal(100), "pricing": "capacity_block"}
    assert check_capacity(EAST, trn(4, zones=("us-east-1f",), **cb)).status == "pass"
    assert check_capacity(EAST, trn(4, zones=("us-east-1a",), **cb)).status == "fail"


def test_fail_when_a_required_zone_does_not_offer_the_type() -> None:
    c = check_capacity(EAST, trn(1, zones=("us-east-1b",)))
    assert c.status == "fail"
    assert "us-east-1b" in c.reason


def test_fail_when_the_region_offers_nothing() -> None:
    ev = EAST.merged(read_files([FIX / "offerings-us-west-1.json"]))
    c = check_capacity(ev, trn(1, regions=("us-west-1",)))
    assert c.status == "fail"
    assert "not offered in us-west-1" in c.reason


def test_unknown_without_evidence_and_says_what_is_missing() -> None:
    c = check_capacity(EvidenceSet(), trn(1))
    assert c.status == "unknown" and c.missing
    c = check_capacity(EAST, trn(1, regions=("eu-west-1",)))
    assert c.status == "unknown"
    assert "no instance-type offerings file for eu-west-1" in c.reason
    assert "no EC2 service-quotas file for eu-west-1" in c.reason


def test_unknown_without_the_catalog_vcpu_count() -> None:
    c = check_capacity(EAST, trn(1, vcpus_per_instance=None))
    assert c.status == "unknown" and "vCPU count" in c.reason


def test_capacity_block_pricing_needs_a_fitting_block() -> None:
    p5 = Need(
        option="p5 block",
        instance_type="p5.48xlarge",
        instances=4,
        pricing="capacity_block",
        regions=("us-east-1",),
        vcpus_per_instance=192,
        run_hours=Decimal(48),
    )
    c = check_capacity(EAST, p5)
    assert c.status == "pass", c.reason
    price = c.regions[0].block_price
    assert price is not None and price.value == Decimal("163.88")  # 31464.96 / (4 x 48), by hand
    c8 = check_capacity(EAST, Need(**{**p5.__dict__, "instances": 8}))
    assert c8.status == "fail" and "no capacity block of 8 x p5.48xlarge" in c8.reason


def test_spot_uses_the_spot_quota_and_shows_the_score() -> None:
    spot = Need(
        option="p5 spot",
        instance_type="p5.48xlarge",
        instances=1,
        pricing="spot",
        regions=("us-east-1",),
        vcpus_per_instance=192,
    )
    c = check_capacity(EAST, spot)
    # All P Spot Instance Requests = 64 vCPUs < 192: short by 128
    assert c.status == "fail" and "short by 128 vCPUs" in c.reason and "All P Spot" in c.reason
    assert c.regions[0].spot_scores == ["us-east-1: 3/10"]


def test_on_demand_p_quota_is_found_by_name_not_code() -> None:
    p5 = Need(
        option="p5",
        instance_type="p5.48xlarge",
        instances=2,
        pricing="reserved_1y",
        regions=("us-east-1",),
        vcpus_per_instance=192,
    )
    c = check_capacity(EAST, p5)
    assert c.status == "pass" and c.regions[0].headroom_vcpus == 0  # 384 quota - 2 x 192
