"""The report as JSON: the same content model the HTML and Markdown show, charts as data series."""

from __future__ import annotations

import json

from accelpilot.report.model import Report


def render_json(report: Report) -> str:
    return json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
