"""Price rows as plain dicts for display and JSON: instance price and the derived per-accelerator-hour."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from accelpilot.catalog.loader import Catalog
from accelpilot.catalog.model import PriceRow


def _num(d: Decimal) -> float | int:
    return int(d) if d == d.to_integral_value() else float(d)


def price_row_dict(row: PriceRow) -> dict[str, Any]:
    per_acc = row.per_accelerator_hour()
    return {
        "instance": row.instance,
        "accelerator": row.accelerator,
        "accelerator_count": row.accelerator_count,
        "pricing": row.pricing.value,
        "price_per_hour": _num(row.price_per_hour),
        "price_per_accelerator_hour": _num(per_acc.value.normalize()),
        "price_per_accelerator_hour_kind": per_acc.kind.value,
        "currency": row.currency,
        "region": row.region,
        "as_of": row.as_of.isoformat(),
        "source": row.source,
        "kind": row.kind.value,
        "provider": row.provider,
        "note": row.note,
        "origin": row.origin,
        "overrides": row.overrides,
    }


def price_table(
    cat: Catalog,
    accelerator: str | None = None,
    pricing: str | None = None,
    instance: str | None = None,
    region: str | None = None,
) -> list[dict[str, Any]]:
    rows = cat.price_rows(accelerator=accelerator, pricing=pricing, instance=instance, region=region)
    return [price_row_dict(r) for r in rows]
