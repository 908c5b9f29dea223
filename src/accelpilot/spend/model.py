"""What the team already pays, summarised from a Cost and Usage Report 2.0 export, as plain data."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from pydantic import BaseModel, ConfigDict

from accelpilot.figures import Figure, Kind


class SpendRow(BaseModel):
    """One instance type in one month."""

    model_config = ConfigDict(frozen=True)

    instance_type: str
    month: str  # YYYY-MM
    instance_hours: Decimal
    usage_cost: Decimal  # on-demand (net unblended), reservation and Savings Plan effective cost
    credits: Decimal  # credits and refunds carrying this instance type (negative)
    effective_cost: Decimal  # usage_cost + credits
    resources: int  # distinct resource ids (instances) seen
    concurrent: int = 0  # peak instances running at once (from each line's start, end and hours)
    hours_in_month: int
    mean_share_of_month: Decimal  # instance-hours / (resources x hours in the month)


class ResourceRow(BaseModel):
    """One resource (instance) in one month: how much of the month it ran."""

    model_config = ConfigDict(frozen=True)

    resource_id: str
    instance_type: str
    month: str
    instance_hours: Decimal
    share_of_month: Decimal


class SpendSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    files: list[str]
    file_format: str  # parquet or csv
    currency: str
    currency_note: str = ""
    period: str  # first..last month seen, or the period asked for
    months: list[str]
    partial_months: dict[str, Decimal] = {}  # month -> share of it the export covers, where under 1
    filters: list[str] = []
    rows: list[SpendRow]
    unattributed: dict[str, Decimal] = {}  # line item type -> cost not attributed to an instance type
    unused_commitment: dict[str, Decimal] = {}  # RIFee / SavingsPlanRecurringFee -> the part paid for and unused
    last_usage: dt.datetime | None = None
    as_of: dt.date

    @property
    def source(self) -> str:
        names = ", ".join(f.rsplit("/", 1)[-1] for f in self.files[:3])
        more = f" and {len(self.files) - 3} more" if len(self.files) > 3 else ""
        return f"CUR 2.0 export {names}{more}, period {self.period}"

    @property
    def month_equivalents(self) -> Decimal:
        """Months in the period, each partial one counted as the share of it the export covers."""
        return sum((self.partial_months.get(m, Decimal(1)) for m in self.months), Decimal(0))

    def total(self, instance_types: list[str] | None = None) -> Decimal:
        return sum(
            (r.effective_cost for r in self.rows if not instance_types or r.instance_type in instance_types),
            Decimal(0),
        )

    def monthly_figure(self, instance_types: list[str] | None = None) -> Figure:
        """Measured effective cost per month: the period's total / the months in the period."""
        label = ", ".join(instance_types) if instance_types else "all instance types"
        return Figure(
            value=self.total(instance_types) / self.month_equivalents,
            unit=f"{self.currency}/month",
            kind=Kind.MEASURED,
            source=self.source,
            as_of=self.as_of,
            label=f"measured spend per month ({label})",
            note=f"effective cost incl. reservation and Savings Plan effective cost, credits and refunds, "
            f"over {self.month_equivalents:.2f} month(s)"
            + (f" (partial: {', '.join(self.partial_months)})" if self.partial_months else ""),
        )
