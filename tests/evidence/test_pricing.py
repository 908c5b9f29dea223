"""prices --fetch aws: Price List answers (Stubber, documented shape) become an offer file the catalog reads."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

boto3 = pytest.importorskip("boto3", reason="the aws extra (boto3) is not installed")
from botocore.stub import Stubber  # noqa: E402

from accelpilot.catalog.importers import import_aws_offer  # noqa: E402
from accelpilot.catalog.model import Pricing  # noqa: E402
from accelpilot.evidence.pricing import fetch_offer, product_filters  # noqa: E402


def _product(sku: str, on_demand: str, reserved_1y: str) -> str:
    """One PriceList entry as the API returns it: a JSON string (AWS Price List query API, aws_v1)."""
    od_code, ri_code = "JRTCKXETXF", "4NA7Y494T4"
    return json.dumps(
        {
            "product": {
                "productFamily": "Compute Instance",
                "attributes": {
                    "instanceType": "trn1.32xlarge",
                    "regionCode": "us-east-1",
                    "location": "US East (N. Virginia)",
                    "operatingSystem": "Linux",
                    "tenancy": "Shared",
                    "preInstalledSw": "NA",
                    "capacitystatus": "Used",
                    "marketoption": "OnDemand",
                    "vcpu": "128",
                    "servicecode": "AmazonEC2",
                },
                "sku": sku,
            },
            "serviceCode": "AmazonEC2",
            "terms": {
                "OnDemand": {
                    f"{sku}.{od_code}": {
                        "priceDimensions": {
                            f"{sku}.{od_code}.6YS6EN2CT7": {
                                "unit": "Hrs",
                                "endRange": "Inf",
                                "description": "$21.50 per On Demand Linux trn1.32xlarge Instance Hour",
                                "appliesTo": [],
                                "rateCode": f"{sku}.{od_code}.6YS6EN2CT7",
                                "beginRange": "0",
                                "pricePerUnit": {"USD": on_demand},
                            }
                        },
                        "sku": sku,
                        "effectiveDate": "2026-11-01T00:00:00Z",
                        "offerTermCode": od_code,
                        "termAttributes": {},
                    }
                },
                "Reserved": {
                    f"{sku}.{ri_code}": {
                        "priceDimensions": {
                            f"{sku}.{ri_code}.6YS6EN2CT7": {
                                "unit": "Hrs",
                                "endRange": "Inf",
                                "description": "Linux/UNIX (Amazon VPC), trn1.32xlarge reserved instance applied",
                                "appliesTo": [],
                                "rateCode": f"{sku}.{ri_code}.6YS6EN2CT7",
                                "beginRange": "0",
                                "pricePerUnit": {"USD": reserved_1y},
                            }
                        },
                        "sku": sku,
                        "effectiveDate": "2026-11-01T00:00:00Z",
                        "offerTermCode": ri_code,
                        "termAttributes": {
                            "LeaseContractLength": "1yr",
                            "OfferingClass": "standard",
                            "PurchaseOption": "No Upfront",
                        },
                    }
                },
            },
            "version": "20261120181103",
            "publicationDate": "2026-11-20T18:11:03Z",
        }
    )


def test_fetch_writes_an_offer_file_the_catalog_reads(tmp_path: Path) -> None:
    client: Any = boto3.client(
        "pricing", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
    )
    stub = Stubber(client)
    stub.add_response(
        "get_products",
        {"FormatVersion": "aws_v1", "PriceList": [_product("ABCDEFGHIJKLMNOP", "21.5000000000", "13.2800000000")]},
        {
            "ServiceCode": "AmazonEC2",
            "Filters": product_filters("trn1.32xlarge", "us-east-1"),
            "FormatVersion": "aws_v1",
        },
    )
    with stub:
        path = fetch_offer("us-east-1", ["trn1.32xlarge"], tmp_path / "prices-aws-us-east-1.json", client=client)
        stub.assert_no_pending_responses()
    rows = {r.pricing: r for r in import_aws_offer(path)}
    assert rows[Pricing.ON_DEMAND].price_per_hour == Decimal("21.5")
    assert rows[Pricing.RESERVED_1Y].price_per_hour == Decimal("13.28")
    assert rows[Pricing.ON_DEMAND].region == "us-east-1"
    assert rows[Pricing.ON_DEMAND].accelerator_count == 16  # the catalog's InstanceRow wins
    assert str(rows[Pricing.ON_DEMAND].as_of) == "2026-11-20"


def test_no_product_is_one_line(tmp_path: Path) -> None:
    from accelpilot.errors import InputFileError

    client: Any = boto3.client(
        "pricing", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
    )
    stub = Stubber(client)
    stub.add_response("get_products", {"FormatVersion": "aws_v1", "PriceList": []})
    with stub, pytest.raises(InputFileError, match="no Linux on-demand product for trn9.32xlarge"):
        fetch_offer("us-east-1", ["trn9.32xlarge"], tmp_path / "x.json", client=client)
    assert not (tmp_path / "x.json").exists()
