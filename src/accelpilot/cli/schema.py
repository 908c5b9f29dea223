"""`accelpilot schema ...`: JSON Schemas of the files accelpilot writes."""

from __future__ import annotations

from accelpilot.cli.app import schema_app
from accelpilot.cli.common import print_json


@schema_app.command("result")
def schema_result() -> None:
    """JSON Schema of a pilot result file."""
    from accelpilot.pilot.result import result_json_schema

    print_json(result_json_schema())
