"""Reading the AWS CLI's JSON shapes: every accepted shape, and one line for each kind of bad input."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest

from accelpilot.errors import InputFileError
from accelpilot.evidence import read_file, read_files
from accelpilot.figures import Kind

FIX = Path(__file__).parent / "fixtures"


def test_offerings_give_zones_and_regions() -> None:
    ev = read_file(FIX / "offerings-us-east-1.json")
    assert [(o.instance_type, o.location, o.region) for o in ev.offerings][:2] == [
        ("trn1.32xlarge", "us-east-1a", "us-east-1"),
        ("trn1.32xlarge", "us-east-1f", "us-east-1"),
    ]
    assert ev.files[0].shape == "instance_type_offerings"
    assert ev.files[0].regions == ("us-east-1",)
    assert "describe-instance-type-offerings" in ev.files[0].command


def test_empty_offerings_take_region_from_the_file_name() -> None:
    ev = read_file(FIX / "offerings-us-west-1.json")
    assert ev.offerings == ()
    assert ev.regions_for("instance_type_offerings") == {"us-west-1"}


def test_capacity_block_fee_and_derived_hourly_price() -> None:
    ev = read_file(FIX / "capacity-blocks-us-east-1.json")
    b = ev.blocks[0]
    assert (b.instance_type, b.zone, b.region, b.instance_count) == ("p5.48xlarge", "us-east-1a", "us-east-1", 4)
    assert b.start == dt.datetime(2026, 12, 7, 11, 30, tzinfo=dt.timezone.utc)
    fee = b.fee_figure()
    assert fee.value == Decimal("31464.96") and fee.unit == "USD" and fee.kind is Kind.MEASURED
    assert str(FIX / "capacity-blocks-us-east-1.json") in fee.source
    # 31464.96 USD / (4 instances x 48 h) = 163.88 USD per instance-hour, by hand
    per = b.per_instance_hour()
    assert per.value == Decimal("163.88") and per.unit == "USD/h" and per.kind is Kind.DERIVED


def test_quotas_are_vcpu_figures_with_region_from_the_arn() -> None:
    ev = read_file(FIX / "quotas-us-east-1.json")
    trn = next(q for q in ev.quotas if q.quota_name == "Running On-Demand Trn instances")
    assert trn.region == "us-east-1" and trn.value == 256
    f = trn.figure()
    assert (f.unit, f.kind, f.as_of) == ("vCPU", Kind.MEASURED, trn.as_of)
    assert "list-service-quotas" in f.source


def test_get_service_quota_shape() -> None:
    ev = read_file(FIX / "get-service-quota-inf-us-west-2.json")
    assert [(q.quota_code, q.region, q.value) for q in ev.quotas] == [("L-1945791B", "us-west-2", 96)]
    assert ev.files[0].shape == "service_quota"


def test_spot_scores_take_instance_types_from_the_file_name() -> None:
    ev = read_file(FIX / "spot-scores-p5.48xlarge.json")
    assert [(s.region, s.score, s.instance_types) for s in ev.scores] == [
        ("us-east-1", 3, ("p5.48xlarge",)),
        ("us-west-2", 6, ("p5.48xlarge",)),
    ]


def test_file_date_is_its_modification_time(tmp_path: Path) -> None:
    import os

    p = tmp_path / "offerings.json"
    p.write_text((FIX / "offerings-us-east-1.json").read_text())
    t = dt.datetime(2026, 3, 4, 12, tzinfo=dt.timezone.utc).timestamp()
    os.utime(p, (t, t))
    assert read_file(p).offerings[0].as_of == dt.date(2026, 3, 4)


def test_read_files_merges_in_order() -> None:
    names = ["offerings-us-east-1", "offerings-us-west-1", "quotas-us-east-1", "get-service-quota-inf-us-west-2"]
    names += ["capacity-blocks-us-east-1", "spot-scores-p5.48xlarge"]
    ev = read_files(FIX / f"{n}.json" for n in names)
    assert [Path(f.path).stem for f in ev.files] == names
    assert {f.shape for f in ev.files} == {
        "instance_type_offerings",
        "capacity_block_offerings",
        "service_quotas",
        "service_quota",
        "spot_placement_scores",
    }


# --- bad input: one line naming the file and the fix --------------------------------------------


def _one_line(exc: pytest.ExceptionInfo[InputFileError]) -> str:
    msg = str(exc.value)
    assert "\n" not in msg
    return msg


def test_unknown_shape_names_the_accepted_shapes() -> None:
    with pytest.raises(InputFileError) as exc:
        read_file(FIX / "unknown-shape.json")
    msg = _one_line(exc)
    assert "unknown-shape.json" in msg and "Vpcs" in msg
    for key in ("InstanceTypeOfferings", "CapacityBlockOfferings", "Quotas", "Quota", "SpotPlacementScores"):
        assert key in msg


def test_quota_in_an_unexpected_unit_is_refused() -> None:
    with pytest.raises(InputFileError) as exc:
        read_file(FIX / "quota-bad-unit.json")
    msg = _one_line(exc)
    assert "L-2C3B7624" in msg and "'Bytes'" in msg and "vCPU" in msg


def test_quota_counting_instances_not_vcpus_is_refused(tmp_path: Path) -> None:
    d = json.loads((FIX / "quotas-us-east-1.json").read_text())
    q = d["Quotas"][1]
    q["UsageMetric"]["MetricDimensions"]["Resource"] = "Instance"
    p = tmp_path / "q.json"
    p.write_text(json.dumps({"Quotas": [q]}))
    with pytest.raises(InputFileError, match="Resource 'Instance'"):
        read_file(p)


def test_other_quotas_in_other_units_are_kept_not_refused(tmp_path: Path) -> None:
    d = {"Quotas": [dict(json.loads((FIX / "quotas-us-east-1.json").read_text())["Quotas"][4], Unit="Bytes")]}
    p = tmp_path / "q.json"
    p.write_text(json.dumps(d))
    assert read_file(p).quotas[0].quota_name == "EC2-VPC Elastic IPs"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("{not json", "not JSON"),
        ('{"CapacityBlockOfferings": [{"CapacityBlockOfferingId": "cbr-1"}]}', "AvailabilityZone is missing"),
        ('{"InstanceTypeOfferings": {}}', "must be a list"),
        ('{"SpotPlacementScores": [{"Region": "us-east-1", "Score": 11}]}', "1-10"),
    ],
)
def test_malformed_files_are_one_line(tmp_path: Path, text: str, needle: str) -> None:
    p = tmp_path / "bad.json"
    p.write_text(text)
    with pytest.raises(InputFileError) as exc:
        read_file(p)
    msg = _one_line(exc)
    assert needle in msg and "bad.json" in msg
