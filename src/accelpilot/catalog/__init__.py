"""The price and spec catalog: bundled rows with provenance, user overrides, importers."""

from accelpilot.catalog.loader import Catalog, load_catalog, parse_pricing
from accelpilot.catalog.model import ClaimRow, DefaultRow, InstanceRow, PriceRow, Pricing, SpecRow

__all__ = [
    "Catalog",
    "ClaimRow",
    "DefaultRow",
    "InstanceRow",
    "PriceRow",
    "Pricing",
    "SpecRow",
    "load_catalog",
    "parse_pricing",
]
