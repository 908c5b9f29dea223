"""Issue 29's evidence cases and issue 28's hostile evidence input, each on a file in the AWS CLI's own shape.

Shapes, from AWS's pages:
- offerings, NextToken under --max-items, --location-type availability-zone-id:
  https://docs.aws.amazon.com/cli/latest/reference/ec2/describe-instance-type-offerings.html
- capacity block offerings (CapacityBlockDurationHours, CapacityBlockDurationMinutes):
  https://docs.aws.amazon.com/cli/latest/reference/ec2/describe-capacity-block-offerings.html
- default quotas (same Quotas shape as list-service-quotas):
  https://boto3.amazonaws.com/v1/documentation/api/latest/reference/services/service-quotas/paginator/ListAWSDefaultServiceQuotas.html
- running instances: https://docs.aws.amazon.com/cli/latest/reference/ec2/describe-instances.html
- capacity held (ReservationType capacity-block):
  https://docs.aws.amazon.com/cli/latest/reference/ec2/describe-capacity-reservations.html
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from accelpilot.errors import InputFileError
from accelpilot.evidence import Need, check_capacity, read_files
from accelpilot.evidence.read import read_file, region_of_zone

FIX = Path(__file__).parent / "fixtures"


def need(it: str, n: int, region: str, **kw: object) -> Need:
    args: dict = dict(
        option="o", instance_type=it, instances=n, pricing="on_demand", regions=(region,), vcpus_per_instance=128
    )
    args.update(kw)
    return Need(**args)


def test_a_listing_cut_short_says_unknown_not_not_offered() -> None:
    ev = read_files([FIX / "offerings-truncated-us-west-2.json"])
    assert ev.files[0].truncated
    c = check_capacity(ev, need("p5.48xlarge", 1, "us-west-2"))
    assert c.status == "unknown" and "cut short" in c.reason and "not offered" not in c.reason
    # a type on the first page is still offered
    assert check_capacity(ev, need("m5.large", 1, "us-west-2")).regions[0].zones_offered == ["us-west-2a"]


def test_zone_ids_belong_to_their_region() -> None:
    assert (region_of_zone("use1-az6"), region_of_zone("apne1-az4"), region_of_zone("usw2-lax1-az1")) == (
        "us-east-1",
        "ap-northeast-1",
        "us-west-2",
    )
    ev = read_files([FIX / "offerings-zone-ids.json"])
    c = check_capacity(ev, need("trn1.32xlarge", 1, "us-east-1"))
    assert "no instance-type offerings file" not in c.reason
    assert c.regions[0].zones_offered == ["use1-az4", "use1-az6"]


def test_a_block_keeps_its_minutes() -> None:
    (b,) = read_file(FIX / "capacity-block-47h35m-us-east-2.json").blocks
    assert b.duration_hours == Decimal(47) + Decimal(35) / 60  # 47 h 35 min
    # 1856.83 / (1 x 47 h 35 min = 2855 min): 1856.83 x 60 / 2855 = 111409.8 / 2855 = 39.0227 per instance-hour
    assert round(b.per_instance_hour().value, 4) == Decimal("39.0227")
    ev = read_files([FIX / "capacity-block-47h35m-us-east-2.json"])
    # a run of 47.5 h fits in 47 h 35 min (read as 47 h it would not)
    c = check_capacity(ev, need("p5.48xlarge", 1, "us-east-2", pricing="capacity_block", run_hours=Decimal("47.5")))
    assert c.regions[0].blocks


def test_default_quotas_are_never_a_pass() -> None:
    ev = read_files([FIX / "offerings-us-east-1.json", FIX / "default-quotas-us-east-1.json"])
    assert ev.quotas[0].default
    c = check_capacity(ev, need("trn1.32xlarge", 1, "us-east-1"))  # 128 of 256 would fit
    assert c.status == "unknown" and "AWS's default value" in c.reason


def test_running_instances_are_subtracted() -> None:
    files = [FIX / "offerings-us-east-1.json", FIX / "quotas-us-east-1.json"]
    assert check_capacity(read_files(files), need("trn1.32xlarge", 2, "us-east-1")).status == "pass"
    ev = read_files([*files, FIX / "instances-us-east-1.json"])
    c = check_capacity(ev, need("trn1.32xlarge", 2, "us-east-1"))
    # quota 256 - 128 running (64 cores x 2 threads; the stopped one holds none) - 2 x 128 needed = -128
    assert c.status == "fail" and "short by 128 vCPUs" in c.reason
    assert c.regions[0].headroom_vcpus == Decimal(-128)


def test_capacity_held_covers_the_run() -> None:
    files = [FIX / "offerings-us-east-1.json", FIX / "quotas-us-east-1.json"]
    assert check_capacity(read_files(files), need("trn1.32xlarge", 4, "us-east-1")).status == "fail"  # 512 > 256
    ev = read_files([*files, FIX / "capacity-reservations-us-east-1.json"])
    (r,) = ev.reservations
    assert (r.kind, r.available, r.region) == ("capacity-block", 4, "us-east-1")
    c = check_capacity(ev, need("trn1.32xlarge", 4, "us-east-1", run_hours=Decimal(100)))
    assert c.status == "pass", c.reason
    assert any("capacity held" in ln.text for ln in c.lines)
    # the block held is 168 h: a 200 h run is not covered
    assert check_capacity(ev, need("trn1.32xlarge", 4, "us-east-1", run_hours=Decimal(200))).status == "fail"


# --- issue 28 -------------------------------------------------------------------------------------------------


def test_deeply_nested_json_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "deep.json"
    f.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(InputFileError, match="nested too deep"):
        read_file(f)


def test_markup_in_a_quota_name_is_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from accelpilot.cli import main

    data = json.loads((FIX / "quotas-us-east-1.json").read_text())
    data["Quotas"][0]["QuotaName"] = "Running On-Demand [/red][link=javascript:x]Trn instances"
    f = tmp_path / "quotas-us-east-1.json"
    f.write_text(json.dumps(data))
    code = main(["evidence", "import", str(f)])
    out = capsys.readouterr().out
    compact = "".join(ch for ch in out if not ch.isspace() and ch != "\u2502")  # the cell may wrap
    assert code == 0 and "[/red][link=javascript:x]" in compact
