"""Catalog importers: the AWS Price List bulk offer file (AmazonEC2), GPU rental quote CSVs, and a TOML writer.

Each importer returns ``list[PriceRow]`` with its source, date and origin file, or raises ``InputFileError``
naming the file (and line/column or byte) — never a partial result.
"""

from __future__ import annotations

from accelpilot.catalog.importers.aws import AwsImportReport, import_aws_offer
from accelpilot.catalog.importers.rentals import import_rental_csv
from accelpilot.catalog.importers.toml_out import catalog_toml, write_catalog_toml

__all__ = ["AwsImportReport", "catalog_toml", "import_aws_offer", "import_rental_csv", "write_catalog_toml"]
