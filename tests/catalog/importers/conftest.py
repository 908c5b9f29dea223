"""Fixtures for the catalog importer tests: the real-format offer sample and a synthetic large offer file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def offer_path() -> Path:
    return FIXTURES / "amazonec2-offer-sample.json"


@pytest.fixture
def rental_path() -> Path:
    return FIXTURES / "rental-quotes.csv"


def _attrs(instance: str, region: str, family: str) -> dict[str, str]:
    return {
        "servicecode": "AmazonEC2",
        "location": "US East (N. Virginia)",
        "locationType": "AWS Region",
        "instanceType": instance,
        "currentGeneration": "Yes",
        "instanceFamily": family,
        "vcpu": "8",
        "physicalProcessor": "Intel Xeon Platinum 8175",
        "clockSpeed": "3.1 GHz",
        "memory": "32 GiB",
        "storage": "EBS only",
        "networkPerformance": "Up to 10 Gigabit",
        "processorArchitecture": "64-bit",
        "tenancy": "Shared",
        "operatingSystem": "Linux",
        "licenseModel": "No License required",
        "usagetype": f"BoxUsage:{instance}",
        "operation": "RunInstances",
        "capacitystatus": "Used",
        "ecu": "16",
        "normalizationSizeFactor": "8",
        "preInstalledSw": "NA",
        "regionCode": region,
        "servicename": "Amazon Elastic Compute Cloud",
        "marketoption": "OnDemand",
    }


def write_synthetic_offer(path: Path, n_products: int, every: int = 1000) -> int:
    """Write an offer file with ``n_products`` products (one trn1.32xlarge per ``every``, each in its own
    region, the rest m5), written product by product so the generator itself stays small. Returns the
    number of trn1 products."""
    n_trn = 0
    with path.open("w", encoding="utf-8") as f:
        f.write(
            '{"formatVersion":"v1.0","disclaimer":"synthetic","offerCode":"AmazonEC2",'
            '"version":"20261101000000","publicationDate":"2026-11-01T00:00:00Z","products":{'
        )
        for i in range(n_products):
            sku = f"SYN{i:013d}"
            if i % every == 0:
                n_trn += 1
                attrs = _attrs("trn1.32xlarge", f"syn-region-{i}", "Machine Learning ASIC Instances")
            else:
                attrs = _attrs(f"m5.{i % 7}xlarge", "us-east-1", "General purpose")
            prod = {"sku": sku, "productFamily": "Compute Instance", "attributes": attrs}
            f.write(("," if i else "") + json.dumps(sku) + ":" + json.dumps(prod))
        f.write('},"terms":{"OnDemand":{')
        for i in range(n_products):
            sku = f"SYN{i:013d}"
            code = f"{sku}.JRTCKXETXF"
            rate = f"{code}.6YS6EN2CT7"
            term = {
                code: {
                    "offerTermCode": "JRTCKXETXF",
                    "sku": sku,
                    "effectiveDate": "2026-11-01T00:00:00Z",
                    "priceDimensions": {
                        rate: {
                            "rateCode": rate,
                            "description": "synthetic",
                            "beginRange": "0",
                            "endRange": "Inf",
                            "unit": "Hrs",
                            "pricePerUnit": {"USD": "21.5000000000" if i % every == 0 else "0.1920000000"},
                            "appliesTo": [],
                        }
                    },
                    "termAttributes": {},
                }
            }
            f.write(("," if i else "") + json.dumps(sku) + ":" + json.dumps(term))
        f.write('},"Reserved":{}}}\n')
    return n_trn


@pytest.fixture
def synthetic_offer() -> Callable[[Path, int, int], int]:
    return write_synthetic_offer
