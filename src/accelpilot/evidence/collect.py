"""Live reads with the user's own AWS credentials (boto3, an optional extra), written as the AWS CLI's JSON.

``collect`` calls the same four sources a user could export by hand and writes each answer in the CLI's
shape, so ``accelpilot evidence import`` (and a scenario's ``[evidence] files``) reads them back offline and
a run is reproducible without the account. Nothing here runs in tests against AWS: botocore's Stubber
answers with responses in AWS's documented shapes.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from accelpilot.atomic import write_text_atomic
from accelpilot.errors import ConfigError, UserError
from accelpilot.evidence.model import EvidenceSet
from accelpilot.evidence.read import parse

Progress = Callable[[str], None]


class AwsAccessError(UserError):
    """No credentials, no region, no permission or no network: one line, exit 2."""


def load_boto3() -> Any:
    try:
        import boto3
    except ImportError:
        raise ConfigError(
            "live AWS reads need boto3", fix="pip install 'accelpilot[aws]', or export the files with the AWS CLI"
        ) from None
    return boto3


def make_clients(region: str, profile: str | None = None) -> dict[str, Any]:
    """Real clients from the user's default credential chain (never from anything accelpilot stores)."""
    boto3 = load_boto3()
    from botocore import exceptions as bx

    try:
        session = (
            boto3.Session(profile_name=profile, region_name=region) if profile else boto3.Session(region_name=region)
        )
        return {
            "ec2": session.client("ec2", region_name=region),
            "service-quotas": session.client("service-quotas", region_name=region),
        }
    except bx.ProfileNotFound:
        raise AwsAccessError(
            f"no AWS profile {profile!r} in the AWS config", fix="pass a profile `aws configure list-profiles` names"
        ) from None
    except (bx.InvalidRegionError, ValueError):
        raise AwsAccessError(f"{region!r} is not an AWS region name", fix="pass e.g. --region us-east-1") from None


def aws_call(what: str, fn: Callable[[], Any]) -> Any:
    """Run one AWS call; credential, permission and network failures become one line naming the call."""
    try:
        from botocore import exceptions as bx
    except ImportError:  # pragma: no cover - botocore comes with boto3
        return fn()
    try:
        return fn()
    except bx.NoCredentialsError:
        raise AwsAccessError(
            f"no AWS credentials found for {what}",
            fix="run `aws configure` or set AWS_PROFILE / AWS_ACCESS_KEY_ID, or import exported files instead",
        ) from None
    except bx.NoRegionError:
        raise AwsAccessError(f"no AWS region for {what}", fix="pass --region") from None
    except (bx.EndpointConnectionError, bx.ConnectTimeoutError, bx.ReadTimeoutError) as exc:
        raise AwsAccessError(f"cannot reach AWS for {what}: {exc}", fix="check the network, or import files") from None
    except bx.ClientError as exc:
        err = exc.response.get("Error", {})
        raise AwsAccessError(
            f"AWS refused {what}: {err.get('Code', 'error')}: {err.get('Message', '')}".rstrip(": "),
            fix="grant the IAM permission for this call, or export the file with the AWS CLI",
        ) from None


def all_pages(client: Any, op: str, key: str, **kw: Any) -> list[Any]:
    """All pages of a paginated call, merged under ``key`` the way the AWS CLI prints them."""
    if client.can_paginate(op):
        out: list[Any] = []
        for page in client.get_paginator(op).paginate(**kw):
            out += page.get(key, [])
        return out
    return list(getattr(client, op)(**kw).get(key, []))


def _json_default(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        return v.isoformat()
    if isinstance(v, dt.date):
        return v.isoformat()
    raise TypeError(f"cannot write {type(v).__name__} as JSON")


def write_json(path: Path, data: Any) -> str:
    """Atomically (temp file, fsync, rename), four-space indented like the AWS CLI."""
    text = json.dumps(data, indent=4, default=_json_default) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, text)
    return text


def collect(
    region: str,
    instances: Sequence[str],
    out_dir: Path | str,
    *,
    clients: dict[str, Any] | None = None,
    block_hours: int = 24,
    instance_count: int = 1,
    progress: Progress | None = None,
) -> tuple[list[Path], EvidenceSet]:
    """Read offerings, capacity blocks, EC2 quotas and spot scores for ``instances`` in ``region``; write files.

    Returns the files written and the evidence they hold (parsed from the very text written).
    """
    if not instances:
        raise ConfigError("name at least one instance type", field="--instances", fix="e.g. --instances trn1.32xlarge")
    cl = clients if clients is not None else make_clients(region)
    ec2, sq = cl["ec2"], cl["service-quotas"]
    out = Path(out_dir)
    say = progress or (lambda _m: None)
    written: list[tuple[Path, Any]] = []

    say(f"instance-type offerings in {region}")
    offers = aws_call(
        "ec2:DescribeInstanceTypeOfferings",
        lambda: all_pages(
            ec2,
            "describe_instance_type_offerings",
            "InstanceTypeOfferings",
            LocationType="availability-zone",
            Filters=[{"Name": "instance-type", "Values": list(instances)}],
        ),
    )
    written.append((out / f"instance-type-offerings-{region}.json", {"InstanceTypeOfferings": offers}))

    blocks: list[Any] = []
    for it in instances:
        say(f"capacity block offerings for {it}")
        blocks += aws_call(
            "ec2:DescribeCapacityBlockOfferings",
            lambda it=it: all_pages(  # type: ignore[misc]
                ec2,
                "describe_capacity_block_offerings",
                "CapacityBlockOfferings",
                InstanceType=it,
                InstanceCount=instance_count,
                CapacityDurationHours=block_hours,
            ),
        )
    written.append((out / f"capacity-block-offerings-{region}.json", {"CapacityBlockOfferings": blocks}))

    say(f"EC2 service quotas in {region}")
    quotas = aws_call(
        "servicequotas:ListServiceQuotas", lambda: all_pages(sq, "list_service_quotas", "Quotas", ServiceCode="ec2")
    )
    written.append((out / f"service-quotas-ec2-{region}.json", {"Quotas": quotas}))

    # What already draws on the quota, and capacity already bought: the gate subtracts the one and counts the other.
    say(f"running instances in {region}")
    running = aws_call(
        "ec2:DescribeInstances",
        lambda: all_pages(
            ec2,
            "describe_instances",
            "Reservations",
            Filters=[{"Name": "instance-state-name", "Values": ["pending", "running"]}],
        ),
    )
    written.append((out / f"instances-{region}.json", {"Reservations": running}))
    say(f"capacity reservations in {region}")
    held = aws_call(
        "ec2:DescribeCapacityReservations",
        lambda: all_pages(ec2, "describe_capacity_reservations", "CapacityReservations"),
    )
    written.append((out / f"capacity-reservations-{region}.json", {"CapacityReservations": held}))

    for it in instances:
        say(f"spot placement scores for {it}")
        scores = aws_call(
            "ec2:GetSpotPlacementScores",
            lambda it=it: all_pages(  # type: ignore[misc]
                ec2,
                "get_spot_placement_scores",
                "SpotPlacementScores",
                InstanceTypes=[it],
                TargetCapacity=instance_count,
                TargetCapacityUnitType="units",
                SingleAvailabilityZone=False,
                RegionNames=[region],
            ),
        )
        written.append((out / f"spot-placement-scores-{it}-{region}.json", {"SpotPlacementScores": scores}))

    ev = EvidenceSet()
    paths = []
    for path, data in written:
        text = write_json(path, data)
        # Dated like the import dates it (the file's time), so collect and import agree to the day.
        as_of = dt.datetime.fromtimestamp(path.stat().st_mtime, tz=dt.timezone.utc).date()
        ev = ev.merged(parse(json.loads(text), path, as_of))
        paths.append(path)
    return paths, ev
