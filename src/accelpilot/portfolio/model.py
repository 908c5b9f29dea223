"""The portfolio file: workloads (ordinary scenarios) and the estates that choose one option for each."""

from __future__ import annotations

from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Head(_Strict):
    name: str = "portfolio"
    lifetime_months: int = Field(gt=0)
    budget: Decimal | None = Field(default=None, ge=0)  # in the scenarios' currency
    day_rate: Decimal = Field(default=Decimal(0), ge=0)


class Workload(_Strict):
    name: str = Field(min_length=1)
    scenario: str = Field(min_length=1)  # relative to the portfolio file


class Estate(_Strict):
    name: str = Field(min_length=1)
    options: dict[str, str]  # workload name -> option name in that workload's scenario
    validation_days_per_release: Decimal = Field(default=Decimal(0), ge=0)
    releases_per_year: Decimal = Field(default=Decimal(0), ge=0)


class Portfolio(_Strict):
    portfolio: Head
    workloads: list[Workload] = Field(min_length=1)
    estates: list[Estate] = Field(min_length=1)
    path: str = ""
