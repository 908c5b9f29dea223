"""The scenario: the question being asked, as a validated TOML file.

Options name an instance (or owned system), a pricing model and where hours come from (a pilot result
file, or assumed hours); volumes, engineering and extras complete the bill. Gate answers (used by decide/)
live in ``[gates]``. Validation happens once, here, with no side effects; errors name file, field and fix.
"""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from accelpilot.errors import ConfigError, InputFileError

PRICING_MODELS = (
    "on_demand",
    "reserved_1y",
    "reserved_3y",
    "capacity_block",
    "spot",
    "rental",
    "owned",
    "buy_and_host",
)


MAX_INPUT = 1e12  # larger than any real count of hours, runs, days or money; keeps every product computable


def _finite_nonneg(v: Any, what: str) -> Any:
    if v is None:
        return v
    if isinstance(v, bool):
        raise ValueError(f"{what} must be a number")
    if isinstance(v, (int, float, Decimal)):
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"{what} must be a finite number")
        if isinstance(v, Decimal) and not v.is_finite():
            raise ValueError(f"{what} must be a finite number")
        if v < 0:
            raise ValueError(f"{what} must not be negative")
        if v > MAX_INPUT:
            # 1e308 hours would overflow cent arithmetic (decimal.InvalidOperation) deep inside the bill.
            raise ValueError(f"{what} must be at most {MAX_INPUT:.0e}, got {v:.3g}")
    return v


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("*", mode="before")
    @classmethod
    def _no_nan_or_negative(cls, v: Any, info: Any) -> Any:
        if isinstance(v, (int, float, Decimal)) and not isinstance(v, bool):
            return _finite_nonneg(v, info.field_name)
        return v


class Extras(_Strict):
    """Costs around the compute: storage, snapshots, egress (AWS tiers), support, idle time."""

    storage_gb_months: Decimal = Decimal(0)  # EBS gp3 GB kept per month
    object_storage_gb_months: Decimal = Decimal(0)  # S3 Standard GB kept per month
    snapshot_gb_months: Decimal = Decimal(0)
    data_transfer_out_gb: Decimal = Decimal(0)  # per month, priced with AWS's tiers
    support_percent: Decimal = Decimal(0)  # of compute
    idle_fraction: Decimal = Field(default=Decimal(0), lt=1)  # share of provisioned time doing no useful work

    @property
    def is_empty(self) -> bool:
        return all(getattr(self, f) == 0 for f in type(self).model_fields)


class Owned(_Strict):
    """Owned or bought-and-hosted hardware. Missing values fall back to catalog defaults (labelled as such)."""

    purchase: Decimal | None = None  # one-off purchase price of the system
    lease_per_month: Decimal | None = None
    life_months: int = Field(default=36, gt=0)  # amortisation period
    power_kw: Decimal | None = None  # default: catalog dgx_h100_power
    pue: Decimal | None = None
    electricity_per_kwh: Decimal | None = None
    colocation_per_kw_month: Decimal | None = None  # owned in colocation; buy_and_host: the host's facility fee
    hosting_per_month: Decimal = Decimal(0)  # buy_and_host: the provider's operations fee
    network_per_month: Decimal = Decimal(0)
    support_per_month: Decimal = Decimal(0)
    spares_percent_per_year: Decimal = Decimal(0)  # of purchase
    staff_per_month: Decimal = Decimal(0)
    utilisation: Decimal = Field(default=Decimal("0.6"), gt=0, le=1)
    residual_value: Decimal = Decimal(0)  # only with a credible resale/redeployment path

    @model_validator(mode="after")
    def _one_cost(self) -> Owned:
        if self.purchase is None and self.lease_per_month is None:
            raise ValueError("owned hardware needs purchase or lease_per_month")
        return self


class Option(_Strict):
    name: str = Field(min_length=1)
    pricing: str
    instance: str | None = None  # catalog instance (cloud/rental) or a label for owned systems
    region: str | None = None
    instances: int = Field(default=1, gt=0)  # instances (or rented GPUs) used by one run
    hours_per_run: Decimal | None = None  # assumed hours; or take them from `result`
    result: str | None = None  # a training pilot result file (measured)
    tokens_per_run: Decimal | None = None  # with `result`: hours = tokens / measured throughput
    scaling_efficiency: Decimal = Field(default=Decimal(1), gt=0, le=1)  # from the pilot device to the instance
    accepted_share: Decimal | None = Field(default=None, gt=0, le=1)  # share of runs that meet quality
    peak_qps: Decimal | None = None  # serving: accepted requests/s per instance under the SLO (assumed)
    goodput_share: Decimal | None = Field(default=None, gt=0, le=1)
    tokens_per_request: Decimal | None = None
    porting_days: Decimal = Decimal(0)
    maintenance_per_month: Decimal = Decimal(0)  # keeping a second toolchain alive
    price_per_hour: Decimal | None = None  # override the catalog (shown as an assumption)
    commitment_instances: int = Field(default=0, ge=0)  # reserved: instances signed for whatever the use
    extras: Extras | None = None
    owned: Owned | None = None

    @field_validator("pricing")
    @classmethod
    def _pricing(cls, v: str) -> str:
        t = v.strip().lower().replace("-", "_")
        if t not in PRICING_MODELS:
            import difflib

            close = difflib.get_close_matches(t, PRICING_MODELS, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"one of {', '.join(PRICING_MODELS)}"
            raise ValueError(f"unknown pricing model {v!r}; {hint}")
        return t

    @model_validator(mode="after")
    def _coherent(self) -> Option:
        if self.pricing in ("owned", "buy_and_host"):
            if self.owned is None:
                raise ValueError(f"{self.pricing} options need an [options.owned] table (purchase or lease)")
        elif not self.instance:
            raise ValueError("cloud and rental options need an instance from the catalog")
        return self


class Volumes(_Strict):
    runs_per_month: Decimal = Field(default=Decimal(1), gt=0)
    requests_per_month: Decimal | None = None  # serving
    months: int = Field(default=36, gt=0)


class Engineering(_Strict):
    day_rate: Decimal = Decimal(0)


class Gates(BaseModel):
    """The seed's qualitative questions; None = not answered (the verdict says so)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    aws_production_home: bool | None = None
    validated_on_target: bool | None = None
    accepts_aws_tooling: bool | None = None
    capacity_available: bool | None = None
    must_move_between_sites: bool | None = None
    research_churn: bool | None = None
    must_own_hardware: bool | None = None
    second_cloud_or_dr: bool | None = None
    ops_centred_on_cuda: bool | None = None
    target_platform: str = "trainium"
    workload_lifetime_months: int | None = Field(default=None, gt=0)


class Scenario(_Strict):
    name: str = "scenario"
    description: str = ""
    currency: str = "USD"
    workload: Literal["training", "serving"] = "training"
    baseline: str | None = None  # option name all others are compared with; default: the first option
    volumes: Volumes = Volumes()
    engineering: Engineering = Engineering()
    extras: Extras = Extras()
    options: list[Option] = Field(min_length=1)
    gates: Gates = Gates()
    path: str = ""  # where it was read from (set by the loader)

    @model_validator(mode="after")
    def _names(self) -> Scenario:
        names = [o.name for o in self.options]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"option names must be unique (repeated: {', '.join(sorted(dup))})")
        if self.baseline is not None and self.baseline not in names:
            import difflib

            close = difflib.get_close_matches(self.baseline, names, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"options are: {', '.join(names)}"
            raise ValueError(f"baseline {self.baseline!r} names no option; {hint}")
        return self

    @property
    def baseline_name(self) -> str:
        return self.baseline or self.options[0].name

    def resolve(self, relpath: str) -> Path:
        """A path in the scenario, relative to the scenario file."""
        p = Path(relpath)
        return p if p.is_absolute() or not self.path else Path(self.path).parent / p


def _flatten(data: dict[str, Any]) -> dict[str, Any]:
    """Accept ``[scenario]`` holding the top-level keys, as well as keys at the top."""
    data = dict(data)
    head = data.pop("scenario", None)
    if isinstance(head, dict):
        for k, v in head.items():
            data.setdefault(k, v)
    elif head is not None:
        raise ValueError("[scenario] must be a table")
    return data


def parse_scenario(data: dict[str, Any], path: str = "") -> Scenario:
    try:
        flat = _flatten(data)
        flat["path"] = path
        return Scenario.model_validate(flat)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = list(err["loc"])
        field = _field_name(loc, data)
        msg = str(err["msg"]).removeprefix("Value error, ")
        fix = "remove it or check the spelling" if err["type"] == "extra_forbidden" else None
        if err["type"] == "extra_forbidden":
            msg = "unknown field"
        raise ConfigError(msg, file=path or None, field=field, fix=fix) from None
    except ValueError as exc:
        raise ConfigError(str(exc), file=path or None) from None


def _field_name(loc: list[Any], data: dict[str, Any]) -> str:
    """``options[2].hours_per_run`` with the option's name when known."""
    out = ""
    for i, part in enumerate(loc):
        if isinstance(part, int):
            name = None
            if i > 0 and loc[i - 1] == "options":
                opts = data.get("options") or []
                if 0 <= part < len(opts) and isinstance(opts[part], dict):
                    name = opts[part].get("name")
            out += f"[{part + 1}{' ' + repr(name) if name else ''}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def load_scenario(path: Path | str) -> Scenario:
    from accelpilot.catalog.loader import read_toml

    p = Path(path)
    data = read_toml(p)
    return parse_scenario(data, str(p))


def check_money_unit(currency: str, where: str) -> None:
    if currency != "USD":
        raise InputFileError(
            f"currency {currency!r} is not supported by the bundled catalog (USD)",
            file=where,
            field="currency",
            fix="use USD or supply a catalog in your currency",
        )
