"""One self-contained HTML file: inline CSS, charts as base64 SVG, no script, no external URL.

Jinja2 autoescapes every string (option, workload and file names come from user files); nothing from user
data is marked safe. A Content-Security-Policy meta tag forbids scripts and remote loads as a second guard.
"""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from accelpilot.decide.gates import QUESTIONS
from accelpilot.figures import fmt_number
from accelpilot.report.charts import chart_data_uri
from accelpilot.report.fmt import KIND_LETTER, Footnotes, fmt_with_unit, kind_label
from accelpilot.report.model import Report
from accelpilot.termtext import html_text

TEMPLATES = Path(__file__).parent / "templates"


def _env() -> Environment:
    return Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=select_autoescape(enabled_extensions=("html", "j2"), default=True),
        undefined=StrictUndefined,
        finalize=html_text,  # raw escapes and bidi overrides from files shown as text (issue 28)
        trim_blocks=False,
        lstrip_blocks=False,
    )


def render_html(report: Report) -> str:
    notes = Footnotes()
    tpl = _env().get_template("report.html.j2")
    return tpl.render(
        r=report,
        fn=notes.ref,
        footnotes=lambda: list(notes.items),
        fmt=fmt_with_unit,
        letter=lambda k: KIND_LETTER.get(k, "?"),
        kind_label=kind_label,
        plain=lambda v: fmt_number(v),
        chart_uri=chart_data_uri,
        gate_q={k: q for k, (_, q) in QUESTIONS.items()},
    )
