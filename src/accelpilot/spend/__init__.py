"""The bill the team already pays: an AWS Cost and Usage Report 2.0 export summarised with DuckDB."""

from __future__ import annotations

from accelpilot.spend.model import ResourceRow, SpendRow, SpendSummary

__all__ = ["ResourceRow", "SpendRow", "SpendSummary"]
