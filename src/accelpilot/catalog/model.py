"""Catalog rows: prices, hardware specs, vendor claims and owned-hardware defaults, each with its passport.

A price row holds the *instance* price as listed; the per-accelerator-hour price is always derived
(instance price / physical accelerator count), never stored.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from accelpilot.figures import Figure, Kind, to_decimal


class Pricing(str, Enum):
    """How compute is bought. Capacity blocks are their own column: never shown as on-demand."""

    ON_DEMAND = "on_demand"
    RESERVED_1Y = "reserved_1y"
    RESERVED_3Y = "reserved_3y"
    CAPACITY_BLOCK = "capacity_block"
    SPOT = "spot"
    RENTAL = "rental"
    SERVERLESS = "serverless"  # listed per second (price_per_second); the hourly figure is derived for tables


class PriceRow(BaseModel):
    """One listed price for a whole instance-hour (or a GPU-hour for rentals, where count is 1)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    instance: str  # "trn1.32xlarge"; rentals: "<gpu>@<provider>", e.g. "H100@Hyperstack"
    accelerator: str  # catalog accelerator name: Trainium, Trainium2, Inferentia2, H100, ...
    accelerator_count: int = Field(gt=0)
    pricing: Pricing
    price_per_hour: Decimal = Field(ge=0)
    currency: str = "USD"
    region: str | None = None  # None where the source names none (then shown as "not named")
    as_of: dt.date
    source: str
    kind: Kind = Kind.LIST_PRICE
    provider: str = "AWS"
    note: str = ""
    origin: str = "bundled"  # the file this row came from
    overrides: str | None = None  # origin of the row this one replaced, when a later file won
    price_per_second: Decimal | None = None  # serverless: the listed per-second price
    billing_increment_s: Decimal | None = None  # serverless: each worker's billed time rounds up to this

    @model_validator(mode="before")
    @classmethod
    def _hourly_from_per_second(cls, data: Any) -> Any:
        """A per-second row (serverless) gets its hourly price derived for tables, never typed."""
        if isinstance(data, dict) and data.get("price_per_second") is not None and "price_per_hour" not in data:
            data = {**data, "price_per_hour": to_decimal(data["price_per_second"], "price_per_second") * 3600}
        return data

    @field_validator("price_per_hour", mode="before")
    @classmethod
    def _price(cls, v: Any) -> Decimal:
        return to_decimal(v, "price_per_hour")

    @property
    def key(self) -> tuple[str, str, str]:
        """Identity for overrides: the same instance, pricing model and region."""
        return (self.instance.lower(), self.pricing.value, (self.region or "").lower())

    def price_figure(self) -> Figure:
        unit = f"{self.currency}/h"
        return Figure(
            value=self.price_per_hour,
            unit=unit,
            kind=self.kind,
            source=self.source,
            as_of=self.as_of,
            region=self.region,
            label=f"{self.instance} {self.pricing.value} price per instance-hour",
        )

    def per_accelerator_hour(self) -> Figure:
        """Derived: instance price / physical accelerator count. The instance is still billed whole."""
        count = Figure(
            value=self.accelerator_count,
            unit="",
            kind=Kind.LIST_PRICE,
            source=self.source,
            as_of=self.as_of,
            label=f"{self.instance} accelerator count",
        )
        return (self.price_figure() / count).with_label(
            f"{self.instance} {self.pricing.value} price per accelerator-hour",
            note="derived: instance price / physical accelerator count",
        )


class SpecRow(BaseModel):
    """Datasheet figures for one accelerator chip (listed, so usable as a peak for MFU)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    accelerator: str
    memory_gib: float | None = None
    memory_bandwidth_gbs: float | None = None  # GB/s as printed; GiB/s sources are converted in the note
    bf16_tflops: float | None = None  # dense
    fp8_tflops: float | None = None
    fp32_tflops: float | None = None
    cores: int | None = None
    as_of: dt.date
    source: str
    note: str = ""
    origin: str = "bundled"

    def peak_flops(self, precision: str) -> Figure | None:
        """Peak FLOP/s for a precision (bf16/fp16 use the dense bf16 figure)."""
        tflops = {
            "bf16": self.bf16_tflops,
            "fp16": self.bf16_tflops,
            "fp8": self.fp8_tflops,
            "fp32": self.fp32_tflops,
        }.get(precision)
        if tflops is None:
            return None
        return Figure(
            value=Decimal(str(tflops)) * Decimal(10) ** 12,
            unit="FLOP/s",
            kind=Kind.LIST_PRICE,
            source=self.source,
            as_of=self.as_of,
            label=f"{self.accelerator} peak {precision} FLOP/s",
        )


class InstanceRow(BaseModel):
    """An instance type's configuration: which chip, how many, how much accelerator memory."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    instance: str
    accelerator: str
    accelerator_count: int = Field(gt=0)
    accelerator_memory_gib: float | None = None
    as_of: dt.date
    source: str
    origin: str = "bundled"
    vcpus: int | None = Field(default=None, gt=0)  # EC2 quotas count vCPUs: the capacity gate compares them
    vcpus_source: str = ""


class ClaimRow(BaseModel):
    """A vendor claim: shown apart in reports, refused by arithmetic."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    vendor: str
    text: str
    value: Decimal | None = None  # the headline multiplier or share, if any (still never used)
    unit: str = ""
    as_of: dt.date
    source: str
    origin: str = "bundled"

    def figure(self) -> Figure:
        return Figure(
            value=self.value if self.value is not None else 0,
            unit=self.unit,
            kind=Kind.VENDOR_CLAIM,
            source=self.source,
            as_of=self.as_of,
            label=self.id,
            note=self.text,
        )


class RateRow(BaseModel):
    """A dated exchange rate: one unit of ``currency`` is ``rate`` units of ``to`` (USD), as ``source`` stated it on
    ``as_of``. A price row in ``currency`` is converted with it once, where an option's price is gathered."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    currency: str = Field(pattern=r"^[A-Z]{3}$")  # ISO 4217, e.g. "EUR"
    to: str = Field(default="USD", pattern=r"^[A-Z]{3}$")
    rate: Decimal = Field(gt=0)
    as_of: dt.date
    source: str = Field(min_length=1)
    kind: Kind = Kind.LIST_PRICE  # a published reference rate; "assumption" for your own
    origin: str = "bundled"

    @field_validator("rate", mode="before")
    @classmethod
    def _rate(cls, v: Any) -> Decimal:
        return to_decimal(v, "rate")

    def figure(self) -> Figure:
        return Figure(
            value=self.rate,
            unit=f"{self.to}/{self.currency}",
            kind=self.kind,
            source=self.source,
            as_of=self.as_of,
            label=f"exchange rate, {self.to} per {self.currency}",
        )


class DefaultRow(BaseModel):
    """A sourced default for owned/hosted options and cloud extras (PUE, colocation, egress tiers...)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    value: Decimal
    unit: str
    as_of: dt.date | None = None
    source: str
    kind: Kind = Kind.LIST_PRICE
    note: str = ""
    origin: str = "bundled"

    @field_validator("value", mode="before")
    @classmethod
    def _value(cls, v: Any) -> Decimal:
        return to_decimal(v, "value")

    def figure(self) -> Figure:
        return Figure(
            value=self.value,
            unit=self.unit,
            kind=self.kind,
            source=self.source,
            as_of=self.as_of,
            label=self.id,
            note=self.note,
        )
