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


def region_of_zone(zone: str) -> str | None:
    """``us-east-1a`` -> ``us-east-1``; Local Zones (``us-east-1-bos-1a``) belong to their parent region."""
    m = _REGION.match(zone)
    return m.group(1) if m else None


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
    if shape == "instance_type_offerings":
        for i, d in enumerate(_list(p, data, "InstanceTypeOfferings")):
            w = f"InstanceTypeOfferings[{i}]"
            loc_type = _str(p, d, "LocationType", w)
            loc = _str(p, d, "Location", w)
            region = loc if loc_type == "region" else region_of_zone(loc) if loc_type == "availability-zone" else None
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
            if "CapacityBlockDurationHours" in d:
                hours = _dec(p, d["CapacityBlockDurationHours"], f"{w}.CapacityBlockDurationHours")
            elif "CapacityBlockDurationMinutes" in d:
                hours = _dec(p, d["CapacityBlockDurationMinutes"], f"{w}.CapacityBlockDurationMinutes") / 60
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
    n = len(offerings) + len(blocks) + len(quotas) + len(scores)
    ef = EvidenceFile(path=str(p), shape=shape, command=COMMANDS[shape], as_of=as_of, items=n, regions=regions)
    return EvidenceSet(
        files=(ef,), offerings=tuple(offerings), blocks=tuple(blocks), quotas=tuple(quotas), scores=tuple(scores)
    )


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
