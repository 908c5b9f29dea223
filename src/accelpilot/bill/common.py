"""What every pricing model uses: scenario figures, catalog defaults, price rows, extras, tax, support, totals."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Literal

from accelpilot.bill.model import LineItem
from accelpilot.bill.scenario import Extras, Option
from accelpilot.catalog.loader import Catalog, parse_pricing
from accelpilot.catalog.model import PriceRow
from accelpilot.errors import UnitMismatchError, VendorClaimError
from accelpilot.figures import Figure, Kind, assumption, constant

SECONDS_PER_HOUR = constant(3600).model_copy(update={"unit": "s/h"})
M36 = constant(36).model_copy(update={"unit": "month", "label": "36 months"})
DTO_TIERS_GB = (Decimal(10240), Decimal(40960), Decimal(102400))  # 10 TB, next 40 TB, next 100 TB, then the rest


def _a(value: Any, unit: str, label: str, where: str) -> Figure:
    return assumption(value, unit, source=f"scenario {where}", label=label)


def _hours_per_month(cat: Catalog) -> Figure:
    return _d(cat, "hours_per_month")


def _zero(currency: str, per: str = "") -> Figure:
    unit = currency + (f"/{per}" if per else "")
    return Figure(value=0, unit=unit, kind=Kind.DERIVED, label="none")


def _sum(items: list[Figure], currency: str, per: str = "") -> Figure:
    if not items:
        return _zero(currency, per)
    total = items[0]
    for f in items[1:]:
        total = total + f
    return total


def _price(opt: Option, cat: Catalog, where: str, file: str | None = None) -> tuple[Figure, str | None, int | None]:
    if opt.price_per_hour is not None:
        return _a(opt.price_per_hour, "USD/h", f"{opt.instance} price per hour (override)", where), None, None
    assert opt.instance is not None
    row = cat.find_price(opt.instance, parse_pricing(opt.pricing), opt.region, where=where, file=file)
    return _usable_price(row, where, cat), row.accelerator, row.accelerator_count


def in_usd(fig: Figure, row: PriceRow, cat: Catalog | None, field: str) -> Figure:
    """A price row's figure in USD: as listed, or converted once with the catalog's dated [[rate]] for its currency
    (the figure keeps the rate as an input and says so in its note). No rate: refused with the fix."""
    if row.currency == "USD":
        return fig
    rate = cat.exchange(row.currency) if cat is not None else None
    if rate is None:
        raise UnitMismatchError(
            f"the {row.pricing.value} price of {row.instance} is in {row.currency}; this bill is in USD",
            file=row.origin,
            field=f"price {row.instance} {row.pricing.value}.{field}",
            fix=f'add a dated exchange rate to a --catalog file: [[rate]] currency = "{row.currency}", rate = '
            f"<USD per {row.currency}>, as_of = <date>, source = <where it is published>; or give the row in USD",
        )
    note = (
        f"converted once from {fig.value} {fig.unit} at {rate.rate} USD per {row.currency} "
        f"({rate.source}, {rate.as_of}; the price as of {row.as_of})"
    )
    return (fig * rate.figure()).with_label(f"{fig.label} in USD", note=note)


CONVERTED = "converted once from "  # how in_usd's note begins: options show it in their notes


def _usable_price(row: PriceRow, where: str, cat: Catalog | None = None) -> Figure:
    """A price row as a figure, refusing a vendor claim or a foreign currency with the row's file and field."""
    if row.kind is Kind.VENDOR_CLAIM:
        raise VendorClaimError(
            f"the {row.pricing.value} price of {row.instance} used by {where} is a vendor claim",
            file=row.origin,
            field=f"price {row.instance} {row.pricing.value}.kind",
            fix='replace it with a listed price (kind = "list_price") or your own figure (kind = "assumption")',
        )
    return in_usd(row.price_figure(), row, cat, "currency")


def dto_monthly(gb: Figure, cat: Catalog) -> Figure:
    """Data transfer out to the internet with AWS's monthly tiers."""
    remaining = gb.value
    items: list[Figure] = []
    bounds = [*DTO_TIERS_GB, None]
    for i, size in enumerate(bounds, start=1):
        if remaining <= 0:
            break
        take = remaining if size is None else min(remaining, size)
        part = gb * (take / gb.value) if take != gb.value else gb
        rate = _d(cat, f"dto_tier{i}_per_gb")
        items.append(part.model_copy(update={"unit": "GB/month"}) * rate)
        remaining -= take
    return _sum(items, "USD", "month").with_label("data transfer out")


def _extras_monthly(ex: Extras, cat: Catalog, where: str) -> list[LineItem]:
    out: list[LineItem] = []
    table = [
        ("storage_gb_months", "block storage (EBS gp3)", "ebs_gp3_per_gb_month"),
        ("object_storage_gb_months", "object storage (S3 Standard)", "s3_standard_per_gb_month"),
        ("snapshot_gb_months", "snapshots", "snapshot_per_gb_month"),
    ]
    for field, label, key in table:
        v = getattr(ex, field)
        if v:
            out.append(
                LineItem(
                    name=label,
                    per="month",
                    figure=(_a(v, "GB", field, where) * _d(cat, key)).with_label(label),
                )
            )
    if ex.data_transfer_out_gb:
        gb = _a(ex.data_transfer_out_gb, "GB/month", "data_transfer_out_gb", where)
        free = _d(cat, "dto_free_gb_per_month")
        if gb.value > free.value:
            # AWS's free allowance comes off the top; the tiers apply beyond it.
            out.append(LineItem(name="data transfer out", per="month", figure=dto_monthly(gb - free, cat)))
        else:
            out.append(
                LineItem(
                    name="data transfer out (within the free allowance)",
                    per="month",
                    figure=(gb * _zero("USD", "GB")).with_label("data transfer out"),
                )
            )
    if ex.inter_region_transfer_gb:
        gb = _a(ex.inter_region_transfer_gb, "GB/month", "inter_region_transfer_gb", where)
        out.append(
            LineItem(
                name="inter-region transfer",
                per="month",
                figure=(gb * _d(cat, "inter_region_transfer_per_gb")).with_label("inter-region transfer"),
            )
        )
    return out


def _tax(
    items: list[LineItem],
    ex: Extras,
    where: str,
    per: Literal["run", "month"],
    cur: str,
    internal: Figure | None = None,
) -> list[LineItem]:
    """tax_percent of everything billed (AWS list prices exclude taxes and duties). Internal staff pay (items marked
    ``internal``, or ``internal`` folded into an item) is not billed by a vendor: taxed only with tax_staff."""
    if not ex.tax_percent:
        return []
    kept = items if ex.tax_staff else [li for li in items if not li.internal]
    base = _sum([li.figure for li in kept], cur, "" if per == "run" else "month")
    untaxed = len(kept) < len(items) or (internal is not None and not ex.tax_staff)
    if internal is not None and not ex.tax_staff:
        base = (base - internal).with_label("billed by vendors (staff pay left out)")
    share = _a(ex.tax_percent / 100, "", "tax share", where)
    name = f"tax ({ex.tax_percent}%" + (", not on internal staff pay)" if untaxed else ")")
    return [LineItem(name=name, per=per, figure=(base * share).with_label("tax"))]


TAX_STATEMENT = "AWS list prices exclude taxes and duties (seed 002, AWS EC2 pricing terms, 2026-09-28)"


def _d(cat: Catalog, key: str) -> Figure:
    """A catalog default as a figure; a default filed as a vendor claim names its file and field."""
    row = cat.default(key)
    if row.kind is not Kind.VENDOR_CLAIM:
        return cat.default_figure(key)
    if row.kind is Kind.VENDOR_CLAIM:
        raise VendorClaimError(
            f"catalog default {key!r} is a vendor claim and cannot enter a cost",
            file=row.origin,
            field=f"default {key}.kind",
            fix='replace it with a listed figure (kind = "list_price") or your own (kind = "assumption")',
        )
    return row.figure()


def _pct(f: Figure) -> str:
    return f"{f.value:.0%}"


def _h(f: Figure) -> str:
    return f"{f.value:,.0f}"


def _totals(
    monthly: Figure,
    maint: Figure,
    one_off: Figure,
    months: int,
    outstanding: Figure | None = None,
    horizon: Figure | None = None,
) -> tuple[Figure, Figure]:
    """Cost over the scenario's months and over 36 months: monthly cost and maintenance, plus the one-off port.

    A commitment whose term outlives the horizon adds what is still owed at its end (never dropped).
    ``horizon``: the months as a figure, when the caller made it once for the bill.
    """
    horizon = horizon or _a(months, "month", "months", "volumes")
    m36 = M36
    total = monthly * horizon + maint * horizon + one_off
    if outstanding is not None:
        total = total + outstanding
    return total.with_label(f"total over {months} months"), (monthly * m36 + maint * m36 + one_off).with_label(
        "total over 36 months"
    )


TERM_MONTHS = {"reserved_1y": 12, "reserved_3y": 36}


class _Priced:
    """What one pricing rule hands back to price_option (plain holder, no logic)."""

    def __init__(
        self,
        items: list[LineItem],
        monthly_items: list[LineItem] | None = None,
        coeff: dict[str, float] | None = None,
        notes: list[str] | None = None,
        paid_share: Figure | None = None,
        outstanding: Figure | None = None,
        accel: str | None = None,
        count: int | None = None,
        rated: Decimal | None = None,
        rated_outstanding: Decimal | None = None,
    ) -> None:
        self.items = items  # per run (usage-billed), or empty when the compute is billed by the month
        self.monthly_items = monthly_items or []  # per month whatever the use (a term, a whole box)
        self.coeff = coeff or {}
        self.notes = notes or []
        self.paid_share = paid_share
        self.outstanding = outstanding
        self.accel = accel
        self.count = count
        # the part of the items (per run, or per month) that scales with the option's hourly price, support
        # included, and of ``outstanding``: what the price flip point solves on (None: nothing priced by the hour)
        self.rated = rated
        self.rated_outstanding = rated_outstanding


def _support(base: Figure, ex: Extras, where: str, per: Literal["run", "month"]) -> list[LineItem]:
    if not ex.support_percent:
        return []
    share = _a(ex.support_percent / 100, "", "support share of compute", where)
    return [LineItem(name="support", per=per, figure=(base * share).with_label("support"))]


def _derived(value: Decimal, unit: str, label: str, *inputs: Figure, note: str = "") -> Figure:
    """A derived figure from a rule Figure arithmetic cannot express (ceil, max), keeping its inputs."""
    return Figure(
        value=value,
        unit=unit,
        kind=Kind.DERIVED,
        label=label,
        inputs=inputs,
        note=note,
        source=f"{label} from " + ", ".join(f.label or f.unit for f in inputs),
    )
