"""The scenario: the question being asked, as a validated TOML file.

Options name an instance (or owned system), a pricing model and where hours come from (a pilot result
file, or assumed hours); volumes, engineering and extras complete the bill. Gate answers (used by decide/)
live in ``[gates]``. Validation happens once, here, with no side effects; errors name file, field and fix.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
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
    "serverless",
    "measured_spend",  # the bill the team already pays, from a CUR export (accelpilot spend import --as-baseline)
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

    @field_validator("*", mode="after")
    @classmethod
    def _no_nan_or_negative_after(cls, v: Any, info: Any) -> Any:
        """Again after parsing: a number written as a TOML string ("-5") must meet the same rules."""
        if isinstance(v, (int, Decimal)) and not isinstance(v, bool):
            return _finite_nonneg(v, info.field_name)
        return v


class Extras(_Strict):
    """Costs around the compute: storage, snapshots, egress (AWS tiers), support, idle time."""

    storage_gb_months: Decimal = Decimal(0)  # EBS gp3 GB kept per month
    object_storage_gb_months: Decimal = Decimal(0)  # S3 Standard GB kept per month
    snapshot_gb_months: Decimal = Decimal(0)
    data_transfer_out_gb: Decimal = Decimal(0)  # per month, priced with AWS's tiers after the free allowance
    inter_region_transfer_gb: Decimal = Decimal(0)  # per month, between Regions (catalog default rate)
    tax_percent: Decimal = Decimal(0)  # of everything billed: AWS list prices exclude taxes and duties
    support_percent: Decimal = Decimal(0)  # of compute
    idle_fraction: Decimal = Field(default=Decimal(0), lt=1)  # share of provisioned time doing no useful work
    # whether tax_percent applies to internal staff pay ([options.owned] staff_per_month). false (default): a
    # sales tax or VAT is charged on what a vendor bills, and payroll is not bought from one (payroll taxes belong
    # in the loaded staff cost you give); true where your jurisdiction or accounting charges it.
    tax_staff: bool = False

    @field_validator("tax_percent", "support_percent")
    @classmethod
    def _percent(cls, v: Decimal, info: Any) -> Decimal:
        # a share of the bill above the whole bill is a typo (150 for 15?), not a rate AWS or a tax office charges
        if not 0 <= v <= 100:
            raise ValueError(f"{info.field_name} is a percentage from 0 to 100 (15 means 15%); {v} is out of range")
        return v

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
    # false (default): other work fills the box's productive hours this workload leaves, and carries their cost
    # (shown as a figure); true: the whole box is this workload's, bought in whole boxes.
    dedicated: bool = False

    @model_validator(mode="after")
    def _one_cost(self) -> Owned:
        if self.purchase is None and self.lease_per_month is None:
            raise ValueError("owned hardware needs purchase or lease_per_month")
        if self.purchase is not None and self.residual_value > self.purchase:
            raise ValueError(
                f"residual_value ({self.residual_value}) is above purchase ({self.purchase}); "
                "give a residual value no larger than the purchase price"
            )
        return self


class Spot(_Strict):
    """Spot: an interruption rate times the measured cost of one restart gives the expected re-work per run."""

    # assumed; when left out, read from the Spot Instance Advisor file under [evidence] files (bill.spot)
    interruptions_per_hour: Decimal | None = Field(default=None, ge=0)
    restart_result: str | None = None  # a training result with --interrupt-at figures; default: the option's result
    restart_s: Decimal | None = None  # assumed cost of one interruption, when no result measured it
    # geometric (default): interruptions also strike the re-work, so re-work hours = billed x q / (1 - q) with
    # q = interruptions_per_hour x cost of one interruption in hours (DESIGN.md, "Spot re-work"); linear: billed
    # x q, the first term alone (understates it as q grows; kept to compare with earlier bills).
    rework: Literal["geometric", "linear"] = "geometric"


class Serverless(_Strict):
    """Serverless GPU: billed per second while a worker exists (cold start, busy, idle timeout)."""

    scale_ups_per_month: Decimal  # scale-from-zero events (assumed; bursts of intermittent traffic)
    idle_timeout_s: Decimal  # billed after each burst before the worker stops
    cold_start_s: Decimal | None = None  # default: the serving result's measured bucket builds
    min_workers: int = Field(default=0, ge=0)  # always-on workers, billed every second
    # share of a live worker's time it serves at the measured peak rate: busy worker-seconds = requests / (peak x
    # duty). 1 (default): live workers fully busy, the cheapest serverless can be (the bill notes it is assumed);
    # 0.25: requests trickle in and a worker is busy a quarter of the time it lives.
    duty: Decimal | None = Field(default=None, gt=0, le=1)


class MeasuredSpend(_Strict):
    """What ``accelpilot spend import --as-baseline`` measured: the monthly cost comes from the CUR, not a price."""

    monthly_cost: Decimal
    currency: str = "USD"
    period: str
    months: int = Field(gt=0)
    instance_types: list[str] = Field(default_factory=list)
    instance_hours_per_month: Decimal | None = None
    source: str
    as_of: dt.date | None = None


class EvidenceFiles(_Strict):
    """``[evidence]``: AWS CLI JSON files (offerings, capacity blocks, quotas, spot scores) that answer the
    capacity gate, and where the workload must run (regions default to each option's region)."""

    files: list[str] = Field(default_factory=list)
    regions: list[str] = Field(default_factory=list)
    zones: list[str] = Field(default_factory=list)


class Option(_Strict):
    name: str = Field(min_length=1)
    pricing: str
    instance: str | None = None  # catalog instance (cloud/rental) or a label for owned systems
    region: str | None = None
    instances: int = Field(default=1, gt=0)  # instances (or rented GPUs) used by one run
    hours_per_run: Decimal | None = None  # assumed hours; or take them from `result`
    result: str | None = None  # a training pilot result file (measured)
    # why `result` is unverified (its .sha256 missing or not matching): `collect --accept-unverified` writes it;
    # the bill then marks the result's figures "unverified", not "measured", and uses the assumed margin.
    result_unverified: str | None = None
    tokens_per_run: Decimal | None = None  # with `result`: hours = tokens / measured throughput
    # with `result`: a one-node `--scaling` result of the same instance (launch writes its task beside a
    # multi-node one; collect joins it): the bill scales `result` by the efficiency at the nearest world size
    scaling_result: str | None = None
    scaling_efficiency: Decimal = Field(default=Decimal(1), gt=0, le=1)  # from the pilot device to the instance
    accepted_share: Decimal | None = Field(default=None, gt=0, le=1)  # share of runs that meet quality
    peak_qps: Decimal | None = None  # serving: accepted requests/s per instance under the SLO (assumed)
    goodput_share: Decimal | None = Field(default=None, gt=0, le=1)
    tokens_per_request: Decimal | None = None
    porting_days: Decimal = Decimal(0)
    maintenance_per_month: Decimal = Decimal(0)  # keeping a second toolchain alive
    price_per_hour: Decimal | None = None  # override the catalog (shown as an assumption)
    # reserved: instances signed for the whole term whatever the use (default: `instances`); use above it is
    # billed at the on-demand rate.
    commitment_instances: int | None = Field(default=None, ge=0)
    # reserved: true (default) bills every hour of the term; false prices only this workload's hours at the
    # reserved rate and shows the rest of the term as assumed to be other work (seed 004's rate arithmetic).
    dedicated: bool | None = None
    # reserved: how the term is paid, as AWS sells it. no_upfront (default): an hourly rate (the catalog's, or
    # price_per_hour). partial_upfront: `upfront` (USD per instance, once per term) + price_per_hour as the hourly
    # part. all_upfront: `upfront` only. The upfront sum is owed at signing and spread over the term's months.
    payment_option: Literal["no_upfront", "partial_upfront", "all_upfront"] | None = None
    upfront: Decimal | None = Field(default=None, gt=0)
    extras: Extras | None = None
    owned: Owned | None = None
    operation: Literal["always_on", "scheduled"] = "always_on"  # serving with [traffic]: which fleet is billed
    spot: Spot | None = None
    serverless: Serverless | None = None
    spend: MeasuredSpend | None = None  # pricing = "measured_spend"

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
        if (self.pricing == "measured_spend") != (self.spend is not None):
            raise ValueError('pricing = "measured_spend" goes with an [options.spend] table, and only with it')
        if self.pricing in ("owned", "buy_and_host"):
            if self.owned is None:
                raise ValueError(f"{self.pricing} options need an [options.owned] table (purchase or lease)")
        elif not self.instance:
            raise ValueError("cloud and rental options need an instance from the catalog")
        if self.pricing == "serverless" and self.serverless is None:
            raise ValueError(
                "serverless options need an [options.serverless] table (scale_ups_per_month, idle_timeout_s)"
            )
        self._payment()
        if self.scaling_result is not None and self.result is None:
            raise ValueError("scaling_result scales a measured result: give result too (collect writes both)")
        if self.commitment_instances == 0:
            raise ValueError(
                'commitment_instances = 0 commits nothing: set it to at least 1, or use pricing = "on_demand"'
            )
        if self.dedicated is not None and not self.pricing.startswith("reserved"):
            raise ValueError(
                "dedicated applies to reserved options; for owned hardware put it in [options.owned]"
                if self.owned is not None
                else f"dedicated applies to reserved options, not {self.pricing}; remove it"
            )
        return self

    def _payment(self) -> None:
        """payment_option and upfront: reserved terms only, each option with the parts it is sold with."""
        pay = self.payment_option
        if (pay is not None or self.upfront is not None) and not self.pricing.startswith("reserved"):
            raise ValueError(f"payment_option and upfront apply to reserved options, not {self.pricing}; remove them")
        if pay in ("partial_upfront", "all_upfront") and self.upfront is None:
            raise ValueError(f"payment_option {pay!r} needs upfront = <USD per instance for one term>")
        if pay in (None, "no_upfront") and self.upfront is not None:
            raise ValueError('upfront goes with payment_option = "partial_upfront" or "all_upfront"; add one')
        if pay == "partial_upfront" and self.price_per_hour is None:
            raise ValueError("partial_upfront needs price_per_hour = <the hourly part AWS lists with the upfront>")
        if pay == "all_upfront" and self.price_per_hour is not None:
            raise ValueError("all_upfront has no hourly part: remove price_per_hour")
        if self.upfront is not None and self.dedicated is False:
            raise ValueError("an upfront term is owed whole: remove dedicated = false (or use no_upfront)")


class Volumes(_Strict):
    runs_per_month: Decimal = Field(default=Decimal(1), gt=0)
    requests_per_month: Decimal | None = Field(default=None, gt=0)  # serving; leave out for capacity pricing
    months: int = Field(default=36, gt=0)


class Traffic(_Strict):
    """How serving traffic is spread: a peak-to-mean ratio, or 24 hourly weights (one day, repeated)."""

    peak_to_mean: Decimal | None = Field(default=None, ge=1)
    hourly_weights: list[Decimal] | None = None
    headroom: Decimal = Decimal("0.2")  # capacity kept above the peak rate

    @model_validator(mode="after")
    def _one_shape(self) -> Traffic:
        if self.hourly_weights is not None:
            if len(self.hourly_weights) != 24:
                raise ValueError(
                    f"hourly_weights needs 24 numbers, one per hour of the day (got {len(self.hourly_weights)})"
                )
            if any(w < 0 for w in self.hourly_weights) or not any(self.hourly_weights):
                raise ValueError("hourly_weights must be non-negative and not all zero")
            if self.peak_to_mean is not None:
                raise ValueError("give peak_to_mean or hourly_weights, not both")
        return self


class DecisionRule(_Strict):
    """How large a saving must be to act on: within the margin, keep the working deployment (seed 004)."""

    margin: Decimal = Field(default=Decimal("0.15"), lt=1)  # when both sides are measured
    assumed_margin: Decimal = Field(default=Decimal("0.30"), lt=1)  # when either side's hours are assumed


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
    traffic: Traffic | None = None
    decision: DecisionRule = DecisionRule()  # serving: size fleets from the measured peak and this profile
    options: list[Option] = Field(min_length=1)
    gates: Gates = Gates()
    evidence: EvidenceFiles = EvidenceFiles()
    path: str = ""  # where it was read from (set by the loader)

    @model_validator(mode="after")
    def _names(self) -> Scenario:
        names = [o.name for o in self.options]
        dup = {n for n, k in Counter(names).items() if k > 1}  # not names.count(n) per name: quadratic
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


FIXES = {
    "duty": "give the share of a live worker's time spent serving at its peak rate, above 0 and at most 1 "
    "(0.25 for a quarter busy), or remove duty for fully busy workers",
    "rework": 'use rework = "geometric" (default: interruptions also strike the re-work) or "linear"',
    "tax_staff": "use tax_staff = true (tax charged on internal staff pay) or false (default)",
    "requests_per_month": "give the monthly request volume, or leave requests_per_month out to price one "
    "always-on instance at its capacity",
}


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
        # a whole-scenario check (unique option names, the baseline) has an empty location
        fix = (
            "remove it or check the spelling"
            if err["type"] == "extra_forbidden"
            else FIXES.get(str(loc[-1]))
            if loc
            else None
        )
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
            fix='set currency = "USD" (the bill is in USD; catalog prices in another currency are converted with '
            "a dated [[rate]] row in a --catalog file)",
        )
