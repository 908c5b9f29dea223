"""One text path per medium (issue 28 item 3): the same hostile names, fed through the evidence files a scenario
cites, reach report.md, report.html and the terminal summary only escaped. A zone named as a Markdown heading,
an ``<img onerror>`` or a ``javascript:`` link reached report.md raw before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from rich.console import Console

from accelpilot.procedure import make_report
from accelpilot.report.render_html import render_html
from accelpilot.report.render_md import render_md
from accelpilot.report.terminal import print_summary

FIX = Path(__file__).parents[1] / "evidence" / "fixtures"

# One name holding every way to escape a medium: a line break then a heading, raw HTML with a handler, a
# javascript: link, rich markup that would crash or restyle a terminal, an ANSI clear-screen, a bidi override.
HOSTILE = "us-east-1a\n# PWNED <img src=x onerror=alert(1)> [x](javascript:alert(1)) [/red] \x1b[2J \u202e"

CONTROLS = ["\x1b", "\u202e"]
# What is live in each medium: Markdown reads headings, inline HTML and links; HTML reads tags and hrefs.
RAW = {
    "report.md": ["\n# PWNED", "<img src=x", "](javascript:", *CONTROLS],
    "report.html": ["<img src=x", 'href="javascript:', *CONTROLS],
    "terminal": CONTROLS,
}

SCENARIO = """
name = "hostile text"
[volumes]
runs_per_month = 4
[[options]]
name = "trn1"
pricing = "on_demand"
instance = "trn1.32xlarge"
region = "us-east-1"
instances = 2
hours_per_run = 100
[[options]]
name = "p5"
pricing = "on_demand"
instance = "p5.48xlarge"
region = "us-east-1"
hours_per_run = 100
[evidence]
files = ["{d}/offerings-us-east-1.json", "{d}/quotas-us-east-1.json", "{d}/spot-scores-p5.48xlarge.json"]
"""


def _hostile_evidence(d: Path) -> None:
    for name in ("offerings-us-east-1.json", "quotas-us-east-1.json", "spot-scores-p5.48xlarge.json"):
        shutil.copy(FIX / name, d / name)
    off = json.loads((d / "offerings-us-east-1.json").read_text())
    for o in off["InstanceTypeOfferings"]:
        if o["Location"] == "us-east-1a":
            o["Location"] = HOSTILE
    (d / "offerings-us-east-1.json").write_text(json.dumps(off))


def test_hostile_zone_names_reach_no_medium_raw(tmp_path: Path) -> None:
    _hostile_evidence(tmp_path)
    p = tmp_path / "s.toml"
    p.write_text(SCENARIO.format(d=tmp_path))
    rep = make_report(p)
    zones = [z for c in rep.decision.capacity for rc in c.regions for z in rc.zones_offered]
    assert HOSTILE in zones  # the hostile name did get this far: the test feeds what it says it feeds

    md = render_md(rep)
    html = render_html(rep)
    buf = Console(record=True, width=200, force_terminal=True, color_system=None)
    print_summary(rep, buf)
    term = buf.export_text()
    for medium, text in (("report.md", md), ("report.html", html), ("terminal", term)):
        for raw in RAW[medium]:
            assert raw not in text, f"{raw!r} reached {medium} raw"
    assert "\\# PWNED &lt;img" in md  # shown as text, escaped
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "\\x1b[2J" in html and "\\u202e" in html  # controls shown as escapes
