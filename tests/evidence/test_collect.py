"""The live collector against botocore's Stubber (no network): it writes the AWS CLI's shapes, and importing
those files gives back exactly the evidence the collector saw."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

boto3 = pytest.importorskip("boto3", reason="the aws extra (boto3) is not installed")
from botocore.stub import Stubber  # noqa: E402

from accelpilot.evidence import read_files  # noqa: E402
from accelpilot.evidence.collect import AwsAccessError, collect  # noqa: E402

REGION = "us-east-1"
TYPES = ["trn1.32xlarge", "p5.48xlarge"]


def _clients() -> dict[str, Any]:
    kw = {"region_name": REGION, "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
    return {"ec2": boto3.client("ec2", **kw), "service-quotas": boto3.client("service-quotas", **kw)}


def _quota(code: str, name: str, value: float, cls: str) -> dict[str, Any]:
    return {
        "ServiceCode": "ec2",
        "ServiceName": "Amazon Elastic Compute Cloud (Amazon EC2)",
        "QuotaArn": f"arn:aws:servicequotas:{REGION}:123456789012:ec2/{code}",
        "QuotaCode": code,
        "QuotaName": name,
        "Value": value,
        "Unit": "None",
        "Adjustable": True,
        "GlobalQuota": False,
        "UsageMetric": {
            "MetricNamespace": "AWS/Usage",
            "MetricName": "ResourceCount",
            "MetricDimensions": {"Class": cls, "Resource": "vCPU", "Service": "EC2", "Type": "Resource"},
            "MetricStatisticRecommendation": "Maximum",
        },
    }


def _stub(cl: dict[str, Any]) -> tuple[Stubber, Stubber]:
    ec2, sq = Stubber(cl["ec2"]), Stubber(cl["service-quotas"])
    ec2.add_response(
        "describe_instance_type_offerings",
        {
            "InstanceTypeOfferings": [
                {"InstanceType": "trn1.32xlarge", "LocationType": "availability-zone", "Location": "us-east-1a"},
                {"InstanceType": "p5.48xlarge", "LocationType": "availability-zone", "Location": "us-east-1b"},
            ],
            "NextToken": "page2",
        },
        {
            "LocationType": "availability-zone",
            "Filters": [{"Name": "instance-type", "Values": TYPES}],
        },
    )
    ec2.add_response(  # the second page: pagination is followed, as the CLI does
        "describe_instance_type_offerings",
        {
            "InstanceTypeOfferings": [
                {"InstanceType": "trn1.32xlarge", "LocationType": "availability-zone", "Location": "us-east-1f"}
            ]
        },
        {
            "LocationType": "availability-zone",
            "Filters": [{"Name": "instance-type", "Values": TYPES}],
            "NextToken": "page2",
        },
    )
    for it, offers in (
        ("trn1.32xlarge", []),
        (
            "p5.48xlarge",
            [
                {
                    "CapacityBlockOfferingId": "cbr-0123456789abcdef0",
                    "InstanceType": "p5.48xlarge",
                    "AvailabilityZone": "us-east-1b",
                    "InstanceCount": 2,
                    "StartDate": dt.datetime(2026, 12, 7, 11, 30, tzinfo=dt.timezone.utc),
                    "EndDate": dt.datetime(2026, 12, 8, 11, 30, tzinfo=dt.timezone.utc),
                    "CapacityBlockDurationHours": 24,
                    "UpfrontFee": "7866.24",
                    "CurrencyCode": "USD",
                    "Tenancy": "default",
                }
            ],
        ),
    ):
        ec2.add_response(
            "describe_capacity_block_offerings",
            {"CapacityBlockOfferings": offers},
            {"InstanceType": it, "InstanceCount": 2, "CapacityDurationHours": 24},
        )
    sq.add_response(
        "list_service_quotas",
        {
            "Quotas": [
                _quota("L-2C3B7624", "Running On-Demand Trn instances", 256.0, "Trn/OnDemand"),
                _quota("L-417A185B", "Running On-Demand P instances", 192.0, "P/OnDemand"),
            ]
        },
        {"ServiceCode": "ec2"},
    )
    ec2.add_response(
        "describe_instances",
        {
            "Reservations": [
                {
                    "ReservationId": "r-1234567890abcdef0",
                    "OwnerId": "123456789012",
                    "Instances": [
                        {
                            "InstanceId": "i-1234567890abcdef0",
                            "InstanceType": "trn1.32xlarge",
                            "Placement": {"AvailabilityZone": "us-east-1a"},
                            "State": {"Code": 16, "Name": "running"},
                            "CpuOptions": {"CoreCount": 64, "ThreadsPerCore": 2},
                        }
                    ],
                }
            ]
        },
        {"Filters": [{"Name": "instance-state-name", "Values": ["pending", "running"]}]},
    )
    ec2.add_response("describe_capacity_reservations", {"CapacityReservations": []}, {})
    for it, score in (("trn1.32xlarge", 7), ("p5.48xlarge", 2)):
        ec2.add_response(
            "get_spot_placement_scores",
            {"SpotPlacementScores": [{"Region": REGION, "Score": score}]},
            {
                "InstanceTypes": [it],
                "TargetCapacity": 2,
                "TargetCapacityUnitType": "units",
                "SingleAvailabilityZone": False,
                "RegionNames": [REGION],
            },
        )
    return ec2, sq


def test_collect_writes_cli_shapes_that_import_reads_back_identically(tmp_path: Path) -> None:
    cl = _clients()
    ec2, sq = _stub(cl)
    with ec2, sq:
        paths, ev = collect(REGION, TYPES, tmp_path, clients=cl, block_hours=24, instance_count=2)
        ec2.assert_no_pending_responses()
        sq.assert_no_pending_responses()
    assert [p.name for p in paths] == [
        "instance-type-offerings-us-east-1.json",
        "capacity-block-offerings-us-east-1.json",
        "service-quotas-ec2-us-east-1.json",
        "instances-us-east-1.json",
        "capacity-reservations-us-east-1.json",
        "spot-placement-scores-trn1.32xlarge-us-east-1.json",
        "spot-placement-scores-p5.48xlarge-us-east-1.json",
    ]
    # the files are the CLI's shapes: top-level key and nothing else (no ResponseMetadata, no NextToken)
    offers = json.loads(paths[0].read_text())
    assert list(offers) == ["InstanceTypeOfferings"] and len(offers["InstanceTypeOfferings"]) == 3
    block = json.loads(paths[1].read_text())["CapacityBlockOfferings"][0]
    assert block["StartDate"] == "2026-12-07T11:30:00+00:00" and block["UpfrontFee"] == "7866.24"
    back = read_files(paths)
    assert back == ev
    # and what came back is what the stubs said
    assert sorted(o.location for o in back.offerings if o.instance_type == "trn1.32xlarge") == [
        "us-east-1a",
        "us-east-1f",
    ]
    assert [(q.quota_code, q.value) for q in back.quotas] == [("L-2C3B7624", 256), ("L-417A185B", 192)]
    assert [(s.instance_types, s.score) for s in back.scores] == [(("trn1.32xlarge",), 7), (("p5.48xlarge",), 2)]
    assert back.blocks[0].per_instance_hour().value == Decimal("163.88")  # 7866.24 / (2 x 24), by hand
    assert [(r.instance_id, r.vcpus) for r in back.running] == [("i-1234567890abcdef0", 128)]  # 64 cores x 2


def test_unknown_profile_and_bad_region_are_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from accelpilot.evidence.collect import make_clients

    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    with pytest.raises(AwsAccessError, match="no AWS profile 'nosuch'"):
        make_clients(REGION, "nosuch")
    with pytest.raises(AwsAccessError, match="not an AWS region name"):
        make_clients("us east 1/../x")


def test_no_credentials_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    cl = {
        "ec2": boto3.Session(region_name=REGION).client("ec2"),
        "service-quotas": boto3.Session(region_name=REGION).client("service-quotas"),
    }
    with pytest.raises(AwsAccessError) as exc:
        collect(REGION, TYPES, tmp_path, clients=cl)
    assert "no AWS credentials" in str(exc.value) and "\n" not in str(exc.value)
    assert not list(tmp_path.glob("*.json"))  # nothing half-written


def test_permission_denied_names_the_call(tmp_path: Path) -> None:
    cl = _clients()
    ec2 = Stubber(cl["ec2"])
    ec2.add_client_error(
        "describe_instance_type_offerings", service_error_code="UnauthorizedOperation", service_message="denied"
    )
    with ec2, pytest.raises(AwsAccessError, match="ec2:DescribeInstanceTypeOfferings.*UnauthorizedOperation"):
        collect(REGION, TYPES, tmp_path, clients=cl)
