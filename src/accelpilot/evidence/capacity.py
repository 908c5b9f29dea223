"""The capacity gate, answered from evidence: is the option's instance type offered where it must run, and do
the vCPUs it needs fit the account's quota (or does a capacity block cover the run)?

Pure functions over plain data: the caller gathers what each option needs (a ``Need``) once, then asks.
``pass`` names the headroom, ``fail`` names the shortfall, ``unknown`` names the missing evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from accelpilot.evidence.model import CapacityBlock, EvidenceSet, Quota, Reservation
from accelpilot.evidence.quotas import ON_DEMAND_QUOTA_PRICING, covers, find_quota
from accelpilot.figures import Figure, Kind

Status = Literal["pass", "fail", "unknown"]
# Pricing models whose capacity this gate can judge from an AWS account.
CLOUD_PRICING = ON_DEMAND_QUOTA_PRICING | {"spot", "capacity_block"}


@dataclass(frozen=True)
class Need:
    """What one option asks of the account."""

    option: str
    instance_type: str
    instances: int
    pricing: str
    regions: tuple[str, ...]
    zones: tuple[str, ...] = ()
    vcpus_per_instance: int | None = None
    vcpus_source: str = ""
    run_hours: Decimal | None = None  # how long one run holds the instances (a capacity block must cover it)


class EvidenceLine(BaseModel):
    """One sentence of evidence and the file it rests on."""

    model_config = ConfigDict(frozen=True)

    text: str
    file: str = ""
    command: str = ""


class RegionCheck(BaseModel):
    model_config = ConfigDict(frozen=True)

    region: str
    status: Status
    zones_offered: list[str] = []
    vcpus_needed: int | None = None
    quota: Figure | None = None
    quota_name: str = ""
    headroom_vcpus: Decimal | None = None
    blocks: list[str] = []  # capacity blocks that fit, in words
    block_price: Figure | None = None  # cheapest fitting block, per instance-hour (derived)
    spot_scores: list[str] = []
    lines: list[EvidenceLine] = []


class CapacityCheck(BaseModel):
    """The capacity gate for one option."""

    model_config = ConfigDict(frozen=True)

    option: str
    instance_type: str
    pricing: str
    status: Status
    reason: str
    shortfalls: list[str] = []
    missing: list[str] = []
    regions: list[RegionCheck] = []
    files: list[str] = []
    evidence_given: bool = True  # False: no evidence file at all (the gate then asks for them)

    @property
    def lines(self) -> list[EvidenceLine]:
        return [ln for r in self.regions for ln in r.lines]


def _name(path: str) -> str:
    return Path(path).name


def _block_words(b: CapacityBlock) -> str:
    return (
        f"{b.offering_id}: {b.instance_count} x {b.instance_type} in {b.zone} from {b.start:%Y-%m-%d %H:%M} UTC "
        f"for {b.duration_hours} h, {b.upfront_fee} {b.currency} up front"
    )


def _fitting_blocks(ev: EvidenceSet, need: Need, region: str) -> list[CapacityBlock]:
    out = []
    for b in ev.blocks:
        if b.instance_type != need.instance_type or b.region != region:
            continue
        if need.zones and b.zone not in need.zones:
            continue
        if b.instance_count < need.instances:
            continue
        if need.run_hours is not None and b.duration_hours < need.run_hours:
            continue
        out.append(b)
    return out


def _check_region(ev: EvidenceSet, need: Need, region: str) -> tuple[RegionCheck, list[str], list[str]]:
    lines: list[EvidenceLine] = []
    fails: list[str] = []
    unknown: list[str] = []
    it = need.instance_type
    zones_offered: list[str] = []

    # 1. Is the type offered where it must run? A listing cut short (NextToken) can say yes, never no.
    offers = [o for o in ev.offerings if o.instance_type == it and o.region == region]
    zones_offered = sorted({o.location for o in offers})
    cut = ev.truncated_for("instance_type_offerings", region)
    if not offers and region not in ev.regions_for("instance_type_offerings"):
        if cut:
            unknown.append(
                f"the offerings listing for {region} was cut short ({_name(cut)} holds a NextToken): "
                "rerun describe-instance-type-offerings without --max-items"
            )
            lines.append(EvidenceLine(text=f"{region}: {it} not on the listing's first page (cut short)", file=cut))
        else:
            unknown.append(f"no instance-type offerings file for {region}")
    elif not offers:
        file = _file_for(ev, "instance_type_offerings", region)
        fails.append(f"{it} is not offered in {region} (not listed in {_name(file)})")
        lines.append(EvidenceLine(text=f"{region}: {it} is not listed as offered", file=file))
    else:
        by_region = any(o.location_type == "region" for o in offers)  # a region-level file says nothing of zones
        missing_z = [z for z in need.zones if region_of(z) == region and z not in zones_offered and not by_region]
        if missing_z:
            if cut or any(f.truncated for f in ev.files if f.path == offers[0].file):
                unknown.append(f"{it} not listed in zone(s) {', '.join(missing_z)} of a listing cut short")
            else:
                fails.append(f"{it} is not offered in required zone(s) {', '.join(missing_z)}")
        lines.append(
            EvidenceLine(
                text=f"{region}: {it} offered in {', '.join(zones_offered)}",
                file=offers[0].file,
                command=offers[0].command,
            )
        )

    # 2. Can the needed instances be obtained: a capacity block, or vCPUs within the quota?
    blocks = _fitting_blocks(ev, need, region)
    block_files = ev.regions_for("capacity_block_offerings")
    block_price = min((b.per_instance_hour() for b in blocks), key=lambda f: f.value, default=None)
    for b in blocks:
        lines.append(EvidenceLine(text=f"{region}: capacity block {_block_words(b)}", file=b.file, command=b.command))
    vcpus_needed: int | None = None
    quota_fig: Figure | None = None
    quota_name = ""
    headroom: Decimal | None = None
    if need.pricing == "capacity_block":
        if blocks:
            pass
        elif region in block_files:
            fails.append(
                f"no capacity block of {need.instances} x {it}"
                + (f" for {need.run_hours} h" if need.run_hours is not None else "")
                + f" offered in {region}"
            )
            file = _file_for(ev, "capacity_block_offerings", region)
            lines.append(EvidenceLine(text=f"{region}: no capacity block fits {need.instances} x {it}", file=file))
        else:
            unknown.append(f"no capacity block offerings file for {region}")
    else:
        # Only capacity already held stands in for the quota: a block on offer is not yet bought.
        covering = _held(ev, need, region)
        for r in covering:
            lines.append(
                EvidenceLine(
                    text=f"{region}: capacity held, {r.reservation_id} ({r.kind}, {r.state}): {r.available} of "
                    f"{r.total} x {r.instance_type} free in {r.zone}",
                    file=r.file,
                    command=r.command,
                )
            )
        if need.vcpus_per_instance is None:
            unknown.append(f"the catalog holds no vCPU count for {it} (add vcpus to its [[instance]] row)")
        else:
            vcpus_needed = need.instances * need.vcpus_per_instance
            q = find_quota(ev.quotas, it, need.pricing, region)
            kind = "spot" if need.pricing == "spot" else "On-Demand"
            if q is None:
                if covering:
                    pass  # capacity held covers the run whatever the quota
                elif region in ev.regions_for("service_quotas") | ev.regions_for("service_quota"):
                    unknown.append(f"no {kind} EC2 quota covering {it} in the quota files for {region}")
                else:
                    unknown.append(f"no EC2 service-quotas file for {region}")
            else:
                quota_fig = q.figure()
                quota_name = f"{q.quota_code} {q.quota_name!r}"
                in_use, unsized = _running_vcpus(ev, q, need.pricing == "spot", region)
                headroom = q.value - in_use - vcpus_needed
                what = (
                    f"needs {vcpus_needed} vCPUs ({need.instances} x {it} x {need.vcpus_per_instance} vCPU); "
                    f"{'AWS default quota' if q.default else 'quota'} {q.quota_code} {q.quota_name!r} in {region} "
                    f"is {q.value:f} vCPUs" + (f", {in_use} already in use by running instances" if in_use else "")
                )
                if unsized:
                    unknown.append(f"running instance(s) {', '.join(unsized)} in {region} have no CpuOptions")
                if q.default and not covering:
                    # A default is what AWS starts an account at, not what this account has: never a pass.
                    unknown.append(
                        f"{what}: that is AWS's default value, not this account's; "
                        "export `aws service-quotas list-service-quotas --service-code ec2`"
                    )
                elif headroom < 0 and not covering:
                    fails.append(f"{what}: short by {-headroom:f} vCPUs")
                lines.append(
                    EvidenceLine(
                        text=f"{region}: {what}; "
                        + (f"headroom {headroom:f} vCPUs" if headroom >= 0 else f"short by {-headroom:f} vCPUs")
                        + (" (capacity already held covers the run)" if headroom < 0 and covering else ""),
                        file=q.file,
                        command=q.command,
                    )
                )

    # 3. Spot placement scores: advisory, shown, never decisive.
    spot: list[str] = []
    for s in ev.scores:
        if s.region != region or (s.instance_types and it not in s.instance_types):
            continue
        where = f"{region}{' ' + s.zone_id if s.zone_id else ''}"
        tied = "" if s.instance_types else " (file name names no instance type: region-level)"
        spot.append(f"{where}: {s.score}/10{tied}")
        lines.append(
            EvidenceLine(text=f"spot placement score {where}: {s.score}/10{tied}", file=s.file, command=s.command)
        )

    status: Status = "fail" if fails else "unknown" if unknown else "pass"
    rc = RegionCheck(
        region=region,
        status=status,
        zones_offered=zones_offered,
        vcpus_needed=vcpus_needed,
        quota=quota_fig,
        quota_name=quota_name,
        headroom_vcpus=headroom,
        blocks=[_block_words(b) for b in blocks],
        block_price=block_price,
        spot_scores=spot,
        lines=lines,
    )
    return rc, fails, unknown


def _held(ev: EvidenceSet, need: Need, region: str) -> list[Reservation]:
    """Capacity reservations (bought capacity blocks included) of the type in the region with room for the run."""
    return [
        r
        for r in ev.reservations
        if r.instance_type == need.instance_type
        and r.region == region
        and r.state in ("active", "scheduled", "payment-pending")
        and r.available >= need.instances
        and (
            need.run_hours is None
            or r.end is None
            or r.start is None
            or Decimal(str((r.end - r.start).total_seconds())) / 3600 >= need.run_hours
        )
    ]


def _running_vcpus(ev: EvidenceSet, q: Quota, spot: bool, region: str) -> tuple[int, list[str]]:
    """vCPUs already counted against the quota by running instances of the types it covers."""
    mine = [r for r in ev.running if r.region == region and r.spot == spot and covers(q, r.instance_type)]
    return sum(r.vcpus or 0 for r in mine), [r.instance_id for r in mine if r.vcpus is None]


def region_of(zone: str) -> str | None:
    from accelpilot.evidence.read import region_of_zone

    return region_of_zone(zone)


def _file_for(ev: EvidenceSet, shape: str, region: str) -> str:
    return next((f.path for f in ev.files if f.shape == shape and region in f.regions), "")


def check_capacity(ev: EvidenceSet, need: Need) -> CapacityCheck:
    """The capacity gate for one option: pass, fail with the shortfall named, or unknown with what is missing."""
    base = {"option": need.option, "instance_type": need.instance_type, "pricing": need.pricing}
    if ev.empty:
        return CapacityCheck(
            **base,
            status="unknown",
            reason="no capacity evidence given",
            missing=["evidence files ([evidence] files)"],
            evidence_given=False,
        )
    regions = list(dict.fromkeys(list(need.regions) + [r for z in need.zones if (r := region_of(z)) is not None]))
    if not regions:
        return CapacityCheck(
            **base,
            status="unknown",
            reason=f"{need.option} names no region to check",
            missing=[f"a region on option {need.option!r} or [evidence] regions"],
        )
    checks, fails, unknown = [], [], []
    for r in regions:
        rc, f, u = _check_region(ev, need, r)
        checks.append(rc)
        fails += f
        unknown += u
    files = sorted({ln.file for rc in checks for ln in rc.lines if ln.file})
    if fails:
        status: Status = "fail"
        reason = "; ".join(fails)
    elif unknown:
        status = "unknown"
        reason = "not enough evidence: " + "; ".join(unknown)
    else:
        status = "pass"
        bits = []
        for rc in checks:
            if rc.blocks and (need.pricing == "capacity_block" or rc.headroom_vcpus is None or rc.headroom_vcpus < 0):
                bits.append(f"{rc.region}: a capacity block covers {need.instances} x {need.instance_type}")
            elif rc.headroom_vcpus is not None:
                bits.append(
                    f"{rc.region}: offered in {len(rc.zones_offered)} zone(s), {rc.vcpus_needed} vCPUs fit the quota "
                    f"({rc.headroom_vcpus:f} vCPUs headroom)"
                )
        reason = "; ".join(bits)
    return CapacityCheck(
        **base, status=status, reason=reason, shortfalls=fails, missing=unknown, regions=checks, files=files
    )


def vcpu_figure(need: Need) -> Figure | None:
    """The vCPUs one option needs, derived from the catalog's per-instance count."""
    if need.vcpus_per_instance is None:
        return None
    per = Figure(
        value=need.vcpus_per_instance,
        unit="vCPU",
        kind=Kind.LIST_PRICE,
        source=need.vcpus_source,
        label=f"{need.instance_type} vCPUs",
    )
    return (per * need.instances).with_label(f"{need.option}: vCPUs needed")
