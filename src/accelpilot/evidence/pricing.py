"""Live list prices from the AWS Price List query API (``pricing.get_products``), saved as an offer file.

Each ``PriceList`` entry is one product with its terms (a JSON string). They are regrouped into the bulk
offer file's shape (``products`` by SKU, ``terms.OnDemand``/``terms.Reserved`` by SKU), so the catalog's
existing offer-file importer reads them (``--catalog prices-aws-REGION.json``) and a run is reproducible offline.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from accelpilot.errors import ConfigError, InputFileError
from accelpilot.evidence.collect import Progress, all_pages, aws_call, load_boto3, write_json

# The Price List query API is served from these regions only; any of them lists every region's prices.
PRICING_ENDPOINT = "us-east-1"


def make_pricing_client(profile: str | None = None) -> Any:
    boto3 = load_boto3()
    session = boto3.Session(profile_name=profile) if profile else boto3.Session()
    return session.client("pricing", region_name=PRICING_ENDPOINT)


def product_filters(instance: str, region: str) -> list[dict[str, str]]:
    """The same products the offer-file importer keeps: Linux, shared tenancy, no preinstalled software, used."""
    pairs = [
        ("instanceType", instance),
        ("regionCode", region),
        ("operatingSystem", "Linux"),
        ("tenancy", "Shared"),
        ("preInstalledSw", "NA"),
        ("capacitystatus", "Used"),
    ]
    return [{"Type": "TERM_MATCH", "Field": f, "Value": v} for f, v in pairs]


def offer_from_price_list(items: Sequence[str | dict[str, Any]]) -> dict[str, Any]:
    """Price List entries -> the bulk offer file's shape."""
    products: dict[str, Any] = {}
    terms: dict[str, dict[str, Any]] = {"OnDemand": {}, "Reserved": {}}
    published = ""
    for i, raw in enumerate(items):
        try:
            item = json.loads(raw) if isinstance(raw, str) else raw
            prod = item["product"]
            sku = prod["sku"]
        except (ValueError, KeyError, TypeError):
            raise InputFileError(
                f"PriceList[{i}] is not a Price List product (no product.sku)",
                file="pricing.get_products",
                fix="report this: the API answered in an unexpected shape",
            ) from None
        products[sku] = prod
        for section in ("OnDemand", "Reserved"):
            sec = (item.get("terms") or {}).get(section) or {}
            if sec:
                terms[section].setdefault(sku, {}).update(sec)
        published = max(published, str(item.get("publicationDate") or ""))
    return {
        "formatVersion": "v1.0",
        "disclaimer": "Regrouped by accelpilot from AWS Price List query API (pricing.get_products) answers.",
        "offerCode": "AmazonEC2",
        "version": published,
        "publicationDate": published,
        "products": products,
        "terms": terms,
    }


def fetch_offer(
    region: str,
    instances: Sequence[str],
    out: Path | str,
    *,
    client: Any | None = None,
    progress: Progress | None = None,
) -> Path:
    """Fetch on-demand and reserved prices of ``instances`` in ``region``; write the offer file ``out``."""
    if not instances:
        raise ConfigError("name at least one instance type", field="--instance", fix="e.g. --instance trn1.32xlarge")
    cl = client if client is not None else make_pricing_client()
    items: list[Any] = []
    for it in instances:
        if progress:
            progress(f"Price List: {it} in {region}")
        items += aws_call(
            "pricing:GetProducts",
            lambda it=it: all_pages(  # type: ignore[misc]
                cl,
                "get_products",
                "PriceList",
                ServiceCode="AmazonEC2",
                Filters=product_filters(it, region),
                FormatVersion="aws_v1",
            ),
        )
    if not items:
        raise InputFileError(
            f"the Price List has no Linux on-demand product for {', '.join(instances)} in {region}",
            file="pricing.get_products",
            fix="check the instance names and the region code",
        )
    path = Path(out)
    write_json(path, offer_from_price_list(items))
    return path
