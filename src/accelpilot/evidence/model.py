"""Evidence from the user's AWS account, as plain data: offerings, capacity blocks, quotas, spot scores.

Each item remembers the file it was read from and the AWS command that prints that shape, so every
figure it yields is ``measured`` with a source a person can re-run.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict

from accelpilot.figures import Figure, Kind

Shape = Literal[
    "instance_type_offerings",
    "capacity_block_offerings",
    "service_quotas",
    "service_quota",
    "spot_placement_scores",
    "spot_advisor",
    "instances",
    "capacity_reservations",
]

# The AWS CLI command that prints each accepted shape (the top-level key says which one a file is).
COMMANDS: dict[str, str] = {
    "instance_type_offerings": "aws ec2 describe-instance-type-offerings --location-type availability-zone",
    "capacity_block_offerings": "aws ec2 describe-capacity-block-offerings",
    "service_quotas": "aws service-quotas list-service-quotas --service-code ec2",
    "service_quota": "aws service-quotas get-service-quota --service-code ec2",
    "spot_placement_scores": "aws ec2 get-spot-placement-scores",
    "instances": "aws ec2 describe-instances",
    "capacity_reservations": "aws ec2 describe-capacity-reservations",
    # Not a CLI command: the public JSON behind the Spot Instance Advisor page (no API prints it).
    "spot_advisor": "the Spot Instance Advisor data (spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json)",
}
TOP_KEYS: dict[str, str] = {
    "InstanceTypeOfferings": "instance_type_offerings",
    "CapacityBlockOfferings": "capacity_block_offerings",
    "Quotas": "service_quotas",
    "Quota": "service_quota",
    "SpotPlacementScores": "spot_placement_scores",
    "spot_advisor": "spot_advisor",
    "Reservations": "instances",
    "CapacityReservations": "capacity_reservations",
}
DEFAULT_QUOTAS = "aws service-quotas list-aws-default-service-quotas --service-code ec2"


class _Item(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    command: str
    as_of: dt.date

    @property
    def source(self) -> str:
        return f"{self.file} ({self.command})"

    def _fig(self, value: Decimal | int, unit: str, label: str, region: str | None = None, note: str = "") -> Figure:
        return Figure(
            value=value,
            unit=unit,
            kind=Kind.MEASURED,
            source=self.source,
            as_of=self.as_of,
            region=region,
            label=label,
            note=note,
        )


class Offering(_Item):
    """An instance type offered in a zone (or a whole region, with ``--location-type region``)."""

    instance_type: str
    location_type: str  # availability-zone, availability-zone-id, region, outpost
    location: str
    region: str | None


class CapacityBlock(_Item):
    """An EC2 Capacity Block offering: a fixed count of instances for a fixed window, paid up front."""

    offering_id: str
    instance_type: str
    zone: str
    region: str | None
    instance_count: int
    start: dt.datetime
    end: dt.datetime
    duration_hours: Decimal
    upfront_fee: Decimal
    currency: str

    def fee_figure(self) -> Figure:
        return self._fig(
            self.upfront_fee,
            self.currency,
            f"capacity block {self.offering_id} upfront fee",
            self.region,
            note=f"{self.instance_count} x {self.instance_type} in {self.zone}, {self.start:%Y-%m-%d %H:%M} UTC "
            f"for {self.duration_hours} h",
        )

    def per_instance_hour(self) -> Figure:
        """Derived: upfront fee / (instances x hours): comparable with an hourly instance price."""
        hours = self._fig(self.duration_hours, "h", f"capacity block {self.offering_id} duration", self.region)
        count = self._fig(self.instance_count, "", f"capacity block {self.offering_id} instance count", self.region)
        return (self.fee_figure() / (hours * count)).with_label(
            f"{self.instance_type} capacity block price per instance-hour",
            note="derived: upfront fee / (instance count x duration hours)",
        )


class Quota(_Item):
    """A Service Quotas value. EC2 running-instance quotas count vCPUs (the API's Unit reads "None")."""

    service_code: str
    quota_code: str
    quota_name: str
    value: Decimal
    unit: str  # as the API prints it
    region: str | None
    adjustable: bool | None = None
    default: bool = False  # AWS's default value (list-aws-default-service-quotas), not the account's

    def figure(self) -> Figure:
        what = "AWS default quota" if self.default else "quota"
        return self._fig(self.value, "vCPU", f"{what} {self.quota_code} {self.quota_name!r}", self.region)


class Running(_Item):
    """An instance already running (``describe-instances``): its vCPUs count against the same quota."""

    instance_id: str
    instance_type: str
    zone: str
    region: str | None
    vcpus: int | None  # CpuOptions.CoreCount x ThreadsPerCore
    spot: bool = False  # InstanceLifecycle "spot": draws on the spot quota, not the On-Demand one


class Reservation(_Item):
    """Capacity already held (``describe-capacity-reservations``), a bought capacity block included."""

    reservation_id: str
    instance_type: str
    zone: str
    region: str | None
    total: int
    available: int
    state: str  # active, scheduled, expired, ...
    kind: str  # "default" (an On-Demand Capacity Reservation) or "capacity-block"
    start: dt.datetime | None = None
    end: dt.datetime | None = None


class SpotScore(_Item):
    """A spot placement score, 1 (unlikely to succeed) to 10 (very likely): advisory."""

    region: str
    zone_id: str | None = None
    score: int
    target_capacity: int | None = None
    instance_types: tuple[str, ...] = ()

    def figure(self) -> Figure:
        where = self.zone_id or self.region
        return self._fig(self.score, "", f"spot placement score {where}", self.region)


class SpotBand(BaseModel):
    """One of the Spot Instance Advisor's "frequency of interruption" bands (``ranges``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int
    label: str  # as AWS prints it: "<5%", "5-10%", ..., ">20%"
    max: Decimal  # the band's upper bound, percent of instances interrupted in the trailing month


class SpotAdvisor(_Item):
    """The Spot Instance Advisor's data: per region and Linux instance type, the savings over on-demand and the
    band of its frequency of interruption (the share of its Spot instances AWS reclaimed in the trailing
    month). Kept as one table per file, not one model per row: the file covers every region and type."""

    bands: tuple[SpotBand, ...]
    linux: dict[str, dict[str, tuple[int, int]]]  # region -> instance type -> (savings %, band index)

    def band(self, region: str, instance: str) -> SpotBand | None:
        row = self.linux.get(region, {}).get(instance)
        if row is None:
            return None
        return next((b for b in self.bands if b.index == row[1]), None)

    def interruption_share(self, region: str, instance: str) -> Figure | None:
        """The band's upper bound as a share of instances interrupted a month (the conservative end)."""
        b = self.band(region, instance)
        if b is None:
            return None
        return self._fig(
            b.max / 100,
            "1/month",  # interruptions per instance-month (read so by bill.spot)
            f"spot interruption frequency of {instance} in {region}: Spot Advisor band {b.label!r}, upper bound",
            region,
            note="share of Spot instances AWS interrupted in the trailing month; the band's upper bound is taken "
            "(conservative)",
        )


class EvidenceFile(BaseModel):
    """One file read: its shape and how many items it held."""

    model_config = ConfigDict(frozen=True)

    path: str
    shape: Shape
    command: str
    as_of: dt.date
    items: int
    regions: tuple[str, ...] = ()  # regions the file speaks for (from its content, else from its name)
    truncated: bool = False  # the CLI printed NextToken (--max-items): the listing is not the whole answer


class EvidenceSet(BaseModel):
    """Everything read from the evidence files, in file order."""

    model_config = ConfigDict(frozen=True)

    files: tuple[EvidenceFile, ...] = ()
    offerings: tuple[Offering, ...] = ()
    blocks: tuple[CapacityBlock, ...] = ()
    quotas: tuple[Quota, ...] = ()
    scores: tuple[SpotScore, ...] = ()
    advisors: tuple[SpotAdvisor, ...] = ()
    running: tuple[Running, ...] = ()
    reservations: tuple[Reservation, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.files

    def merged(self, other: EvidenceSet) -> EvidenceSet:
        return EvidenceSet(
            files=self.files + other.files,
            offerings=self.offerings + other.offerings,
            blocks=self.blocks + other.blocks,
            quotas=self.quotas + other.quotas,
            scores=self.scores + other.scores,
            advisors=self.advisors + other.advisors,
            running=self.running + other.running,
            reservations=self.reservations + other.reservations,
        )

    def regions_for(self, shape: str) -> set[str]:
        """Regions the files of one shape speak for: an empty answer for a region is still an answer; a listing
        cut short (NextToken) speaks for none, since what it lacks may be on the next page."""
        return {r for f in self.files if f.shape == shape and not f.truncated for r in f.regions}

    def truncated_for(self, shape: str, region: str) -> str | None:
        """The path of a cut-short file of that shape for the region, if any."""
        return next((f.path for f in self.files if f.shape == shape and f.truncated and region in f.regions), None)
