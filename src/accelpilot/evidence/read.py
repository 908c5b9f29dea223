"""Read the JSON the AWS CLI prints, in its exact shapes, into an EvidenceSet.

The shape is told by the top-level key (``InstanceTypeOfferings``, ``CapacityBlockOfferings``, ``Quotas``,
``Quota``, ``SpotPlacementScores``, and ``spot_advisor`` for the Spot Instance Advisor's public data file);
anything else is refused with the list of accepted shapes. The CLI prints
no date, so a file's date is its modification time (the collector writes files at collection time). Where the
content names no region (an empty answer, zone IDs), a region code in the file name stands in.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from accelpilot.errors import InputFileError
from accelpilot.evidence.model import (
    COMMANDS,
    TOP_KEYS,
    CapacityBlock,
    EvidenceFile,
    EvidenceSet,
    Offering,
    Quota,
    Reservation,
    Running,
    SpotAdvisor,
    SpotBand,
    SpotScore,
)
from accelpilot.evidence.quotas import check_quota_unit

_REGION = re.compile(
    r"(?<![a-z])([a-z]{2}(?:-gov|-iso[a-z]?)?-(?:north|south|east|west|central|northeast|northwest|southeast|southwest)-\d+)"
)
# An EC2 instance type in a file name (spot scores do not name the types they were asked for).
_INSTANCE = re.compile(r"(?<![a-z0-9])([a-z]+\d[a-z0-9-]*\.(?:\d*x?large|metal[a-z0-9-]*|medium|small|micro|nano))")

ACCEPTED = "; ".join(f"{k} ({COMMANDS[v]})" for k, v in TOP_KEYS.items())


# Zone IDs (``use1-az6``) name their region by a short code; the same physical zone in every account.
_ZONE_ID = re.compile(r"^([a-z]+)(\d+)-(?:[a-z]+\d*-)?az\d+$")
_ZONE_ID_AREA = {
    "use": "us-east", "usw": "us-west", "usge": "us-gov-east", "usgw": "us-gov-west", "cac": "ca-central",
    "caw": "ca-west", "mxc": "mx-central", "sae": "sa-east", "euw": "eu-west", "euc": "eu-central",
    "eun": "eu-north", "eus": "eu-south", "apne": "ap-northeast", "apse": "ap-southeast", "aps": "ap-south",
    "ape": "ap-east", "mec": "me-central", "mes": "me-south", "afs": "af-south", "ilc": "il-central",
}  # fmt: skip


def region_of_zone(zone: str) -> str | None:
    """``us-east-1a`` -> ``us-east-1``; Local Zones (``us-east-1-bos-1a``) belong to their parent region;
    zone IDs (``use1-az6``, ``usw2-lax1-az1``) map through their region code."""
    m = _REGION.match(zone)
    if m:
        return m.group(1)
    z = _ZONE_ID.match(zone)
    area = _ZONE_ID_AREA.get(z.group(1)) if z else None
    return f"{area}-{z.group(2)}" if z and area else None


def _regions_in_name(path: Path) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_REGION.findall(path.name)))


def instance_types_in_name(path: Path) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_INSTANCE.findall(path.name)))


def _bad(path: Path, what: str, fix: str) -> InputFileError:
    return InputFileError(what, file=str(path), fix=fix)


def _str(path: Path, d: dict[str, Any], key: str, where: str) -> str:
    v = d.get(key)
    if not isinstance(v, str) or not v:
        raise _bad(path, f"{where}.{key} is missing or not a string", "pass the AWS CLI's JSON output unchanged")
    return v


def _dec(path: Path, v: Any, where: str) -> Decimal:
    try:
        if isinstance(v, bool):
            raise InvalidOperation
        d = Decimal(str(v))
        if not d.is_finite():
            raise InvalidOperation
        # JSON numbers like 256.0 (quota values) read as 256, so messages and figures print plainly.
        return Decimal(int(d)) if d == d.to_integral_value() else d
    except (InvalidOperation, ValueError):
        raise _bad(path, f"{where} is not a number ({v!r})", "pass the AWS CLI's JSON output unchanged") from None


def _time(path: Path, v: Any, where: str) -> dt.datetime:
    try:
        t = dt.datetime.fromisoformat(str(v).strip().replace("Z", "+00:00"))
    except ValueError:
        raise _bad(
            path, f"{where} is not an ISO 8601 time ({v!r})", "pass the AWS CLI's JSON output unchanged"
        ) from None
    return t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)


def _list(path: Path, data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    items = data.get(key)
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise _bad(path, f"{key} must be a list of objects", "pass the AWS CLI's JSON output unchanged")
    return items


def read_file(path: Path | str) -> EvidenceSet:
    """One file: detect its shape, read every item, or raise one clear InputFileError."""
    p = Path(path)
    try:
        raw = p.read_text(encoding="utf-8")
        mtime = p.stat().st_mtime
    except OSError as exc:
        raise _bad(p, f"cannot read the file ({exc.strerror or exc})", "check the path") from None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _bad(
            p, f"not JSON (line {getattr(exc, 'lineno', '?')}): {exc}", "pass the AWS CLI's --output json"
        ) from None
    except RecursionError:  # a hostile file nests deeper than Python's parser goes; the CLI never does
        raise _bad(p, "JSON nested too deep to be AWS CLI output", "pass the AWS CLI's --output json") from None
    return parse(data, p, dt.datetime.fromtimestamp(mtime, tz=dt.timezone.utc).date())


def parse(data: Any, p: Path, as_of: dt.date) -> EvidenceSet:
    """Parsed JSON of one file (``p`` names it in messages and sources; ``as_of`` dates its figures)."""
    keys = [k for k in TOP_KEYS if isinstance(data, dict) and k in data]
    if not keys:
        seen = ", ".join(sorted(data)[:5]) if isinstance(data, dict) else type(data).__name__
        raise _bad(
            p,
            f"not a known AWS evidence shape (top-level: {seen or 'nothing'}); accepted: {ACCEPTED}",
            "export one of those commands with --output json",
        )
    shape = TOP_KEYS[keys[0]]
    base = {"file": str(p), "command": COMMANDS[shape], "as_of": as_of}
    name_regions = _regions_in_name(p)
    offerings: list[Offering] = []
    blocks: list[CapacityBlock] = []
    quotas: list[Quota] = []
    scores: list[SpotScore] = []
    running: list[Running] = []
    held: list[Reservation] = []
    # The CLI prints NextToken when --max-items cut the listing short: what is missing may be on the next page.
    truncated = bool(data.get("NextToken"))
    if shape == "instance_type_offerings":
        for i, d in enumerate(_list(p, data, "InstanceTypeOfferings")):
            w = f"InstanceTypeOfferings[{i}]"
            loc_type = _str(p, d, "LocationType", w)
            loc = _str(p, d, "Location", w)
            zonal = loc_type in ("availability-zone", "availability-zone-id")
            region = loc if loc_type == "region" else region_of_zone(loc) if zonal else None
            if region is None and len(name_regions) == 1:
                region = name_regions[0]
            offerings.append(
                Offering(
                    **base,
                    instance_type=_str(p, d, "InstanceType", w),
                    location_type=loc_type,
                    location=loc,
                    region=region,
                )
            )
        regions = tuple(dict.fromkeys([o.region for o in offerings if o.region] or name_regions))
    elif shape == "capacity_block_offerings":
        for i, d in enumerate(_list(p, data, "CapacityBlockOfferings")):
            w = f"CapacityBlockOfferings[{i}]"
            zone = _str(p, d, "AvailabilityZone", w)
            if "CapacityBlockDurationHours" in d or "CapacityBlockDurationMinutes" in d:
                # Hours and minutes are parts of one duration (47 h + 35 min), not two ways to say it.
                hours = _dec(p, d.get("CapacityBlockDurationHours", 0), f"{w}.CapacityBlockDurationHours")
                hours += _dec(p, d.get("CapacityBlockDurationMinutes", 0), f"{w}.CapacityBlockDurationMinutes") / 60
            else:
                raise _bad(p, f"{w} has no CapacityBlockDurationHours", "pass the AWS CLI's JSON output unchanged")
            count = _dec(p, d.get("InstanceCount"), f"{w}.InstanceCount")
            blocks.append(
                CapacityBlock(
                    **base,
                    offering_id=_str(p, d, "CapacityBlockOfferingId", w),
                    instance_type=_str(p, d, "InstanceType", w),
                    zone=zone,
                    region=region_of_zone(zone) or (name_regions[0] if len(name_regions) == 1 else None),
                    instance_count=int(count),
                    start=_time(p, d.get("StartDate"), f"{w}.StartDate"),
                    end=_time(p, d.get("EndDate"), f"{w}.EndDate"),
                    duration_hours=hours,
                    upfront_fee=_dec(p, d.get("UpfrontFee"), f"{w}.UpfrontFee"),
                    currency=_str(p, d, "CurrencyCode", w),
                )
            )
        regions = tuple(dict.fromkeys([b.region for b in blocks if b.region] or name_regions))
    elif shape in ("service_quotas", "service_quota"):
        items = _list(p, data, "Quotas") if shape == "service_quotas" else [data["Quota"]]
        if not isinstance(items[0], dict):
            raise _bad(p, "Quota must be an object", "pass the AWS CLI's JSON output unchanged")
        for i, d in enumerate(items):
            w = f"Quotas[{i}]" if shape == "service_quotas" else "Quota"
            arn = d.get("QuotaArn") or ""
            parts = arn.split(":") if isinstance(arn, str) else []
            region = parts[3] if len(parts) > 3 and parts[3] else (name_regions[0] if len(name_regions) == 1 else None)
            q = Quota(
                **base,
                service_code=_str(p, d, "ServiceCode", w),
                quota_code=_str(p, d, "QuotaCode", w),
                quota_name=_str(p, d, "QuotaName", w),
                value=_dec(p, d.get("Value"), f"{w}.Value"),
                unit=str(d.get("Unit") or ""),
                region=region,
                adjustable=d.get("Adjustable") if isinstance(d.get("Adjustable"), bool) else None,
                # list-aws-default-service-quotas prints the same shape; its ARNs name no account
                default="default" in p.name.lower() or (len(parts) > 4 and not parts[4]),
            )
            check_quota_unit(q, d.get("UsageMetric"), w)
            quotas.append(q)
        regions = tuple(dict.fromkeys([q.region for q in quotas if q.region] or name_regions))
    elif shape == "spot_advisor":
        advisor = _spot_advisor(data, p, base)
        n = sum(len(v) for v in advisor.linux.values())
        ef = EvidenceFile(
            path=str(p), shape=shape, command=COMMANDS[shape], as_of=as_of, items=n, regions=tuple(advisor.linux)
        )
        return EvidenceSet(files=(ef,), advisors=(advisor,))
    elif shape == "instances":
        running = _instances(data, p, base)
        regions = tuple(dict.fromkeys([r.region for r in running if r.region] or name_regions))
    elif shape == "capacity_reservations":
        held = _reservations(data, p, base)
        regions = tuple(dict.fromkeys([r.region for r in held if r.region] or name_regions))
    else:
        types = instance_types_in_name(p)
        for i, d in enumerate(_list(p, data, "SpotPlacementScores")):
            w = f"SpotPlacementScores[{i}]"
            score = _dec(p, d.get("Score"), f"{w}.Score")
            if not (1 <= score <= 10) or score != int(score):
                raise _bad(p, f"{w}.Score must be a whole number 1-10, got {score}", "pass the AWS CLI's output")
            zone_id = d.get("AvailabilityZoneId")
            scores.append(
                SpotScore(
                    **base,
                    region=_str(p, d, "Region", w),
                    zone_id=zone_id if isinstance(zone_id, str) and zone_id else None,
                    score=int(score),
                    instance_types=types,
                )
            )
        regions = tuple(dict.fromkeys([s.region for s in scores] or name_regions))
    n = len(offerings) + len(blocks) + len(quotas) + len(scores) + len(running) + len(held)
    ef = EvidenceFile(
        path=str(p), shape=shape, command=COMMANDS[shape], as_of=as_of, items=n, regions=regions, truncated=truncated
    )
    return EvidenceSet(
        files=(ef,),
        offerings=tuple(offerings),
        blocks=tuple(blocks),
        quotas=tuple(quotas),
        scores=tuple(scores),
        running=tuple(running),
        reservations=tuple(held),
    )


def _obj(d: dict[str, Any], key: str) -> dict[str, Any]:
    v = d.get(key)
    return v if isinstance(v, dict) else {}


def _instances(data: dict[str, Any], p: Path, base: dict[str, Any]) -> list[Running]:
    """``describe-instances``: Reservations[].Instances[]; only pending and running ones hold quota."""
    out = []
    for i, r in enumerate(_list(p, data, "Reservations")):
        for j, d in enumerate(_list(p, r, "Instances")):
            w = f"Reservations[{i}].Instances[{j}]"
            state = _obj(d, "State")
            if state.get("Name") not in ("pending", "running"):
                continue
            placement = _obj(d, "Placement")
            zone = str(placement.get("AvailabilityZone") or "")
            cpu = _obj(d, "CpuOptions")
            cores, threads = cpu.get("CoreCount"), cpu.get("ThreadsPerCore")
            vcpus = None
            if cores is not None and threads is not None:
                vcpus = int(
                    _dec(p, cores, f"{w}.CpuOptions.CoreCount") * _dec(p, threads, f"{w}.CpuOptions.ThreadsPerCore")
                )
            out.append(
                Running(
                    **base,
                    instance_id=_str(p, d, "InstanceId", w),
                    instance_type=_str(p, d, "InstanceType", w),
                    zone=zone,
                    region=region_of_zone(zone),
                    vcpus=vcpus,
                    spot=d.get("InstanceLifecycle") == "spot",
                )
            )
    return out


def _reservations(data: dict[str, Any], p: Path, base: dict[str, Any]) -> list[Reservation]:
    """``describe-capacity-reservations``: capacity held, On-Demand Capacity Reservations and bought blocks."""
    out = []
    for i, d in enumerate(_list(p, data, "CapacityReservations")):
        w = f"CapacityReservations[{i}]"
        zone = str(d.get("AvailabilityZone") or d.get("AvailabilityZoneId") or "")
        out.append(
            Reservation(
                **base,
                reservation_id=_str(p, d, "CapacityReservationId", w),
                instance_type=_str(p, d, "InstanceType", w),
                zone=zone,
                region=region_of_zone(zone),
                total=int(_dec(p, d.get("TotalInstanceCount"), f"{w}.TotalInstanceCount")),
                available=int(_dec(p, d.get("AvailableInstanceCount"), f"{w}.AvailableInstanceCount")),
                state=str(d.get("State") or ""),
                kind=str(d.get("ReservationType") or "default"),
                start=_time(p, d["StartDate"], f"{w}.StartDate") if d.get("StartDate") else None,
                end=_time(p, d["EndDate"], f"{w}.EndDate") if d.get("EndDate") else None,
            )
        )
    return out


def _spot_advisor(data: dict[str, Any], p: Path, base: dict[str, Any]) -> SpotAdvisor:
    """``ranges`` (the interruption bands) and ``spot_advisor`` -> region -> "Linux" -> type -> {"s", "r"}."""
    fix = "pass spot-advisor-data.json unchanged"
    bands = []
    for i, d in enumerate(_list(p, data, "ranges")):
        w = f"ranges[{i}]"
        idx, top = _dec(p, d.get("index"), f"{w}.index"), _dec(p, d.get("max"), f"{w}.max")
        if idx != int(idx) or not (0 < top <= 100):
            raise _bad(p, f"{w}: index must be whole and max a percentage above 0 (got {idx}, {top})", fix)
        bands.append(SpotBand(index=int(idx), label=_str(p, d, "label", w), max=top))
    known = {b.index for b in bands}
    regions = data.get("spot_advisor")
    if not isinstance(regions, dict):
        raise _bad(p, "spot_advisor must be an object of regions", fix)
    linux: dict[str, dict[str, tuple[int, int]]] = {}
    for region, oses in regions.items():
        rows = oses.get("Linux", {}) if isinstance(oses, dict) else None
        if not isinstance(rows, dict):
            raise _bad(p, f"spot_advisor.{region}.Linux must be an object of instance types", fix)
        out: dict[str, tuple[int, int]] = {}
        for inst, row in rows.items():
            w = f"spot_advisor.{region}.Linux.{inst}"
            if not isinstance(row, dict):
                raise _bad(p, f"{w} must be an object with s and r", fix)
            r = _dec(p, row.get("r"), f"{w}.r")
            if r not in known:
                raise _bad(p, f"{w}.r = {r} names no band in ranges ({sorted(known)})", fix)
            out[inst] = (int(_dec(p, row.get("s", 0), f"{w}.s")), int(r))
        linux[region] = out
    return SpotAdvisor(**base, bands=tuple(bands), linux=linux)


def read_files(paths: Iterable[Path | str]) -> EvidenceSet:
    out = EvidenceSet()
    for p in paths:
        out = out.merged(read_file(p))
    return out


def read_evidence(paths: Sequence[Path]) -> EvidenceSet | None:
    """The evidence files a bill or report names, read once by the caller so that bill/ and decide/ read no
    file; ``None`` when there are none."""
    return read_files(paths) if paths else None
