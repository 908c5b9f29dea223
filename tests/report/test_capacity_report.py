"""The report shows a capacity section per option, the current-spend baseline with its period, and the gates'
evidence lines citing the files."""

from __future__ import annotations

from pathlib import Path

from accelpilot.procedure import make_report
from accelpilot.report.render_html import render_html
from accelpilot.report.render_md import render_md

FIX = Path(__file__).parents[1] / "evidence" / "fixtures"

SCENARIO = """
name = "capacity report"
baseline = "current deployment"
[volumes]
runs_per_month = 4
[[options]]
name = "trn1 <x>"
pricing = "on_demand"
instance = "trn1.32xlarge"
region = "us-east-1"
instances = 2
hours_per_run = 100
[[options]]
name = "current deployment"
pricing = "measured_spend"
instance = "p5.48xlarge"
instances = 2
[options.spend]
monthly_cost = "78871.73"
period = "2026-09..2026-10"
months = 2
source = "CUR 2.0 export cur.parquet, period 2026-09..2026-10"
[evidence]
files = ["{fx}/offerings-us-east-1.json", "{fx}/quotas-us-east-1.json", "{fx}/spot-scores-p5.48xlarge.json"]
"""


def test_capacity_section_spend_baseline_and_evidence_lines(tmp_path: Path) -> None:
    p = tmp_path / "s.toml"
    p.write_text(SCENARIO.format(fx=FIX))
    rep = make_report(p)
    [cap] = rep.decision.capacity
    assert (cap.option, cap.status) == ("trn1 <x>", "pass")
    html = render_html(rep)
    sec = html[html.index('<section id="capacity">') : html.index("</section>", html.index('<section id="capacity">'))]
    assert "trn1 &lt;x&gt;" in sec and "us-east-1a, us-east-1f" in sec and "256 of 256 vCPUs, headroom 0" in sec
    assert "L-2C3B7624" in sec and "quotas-us-east-1.json" in sec
    assert 'id="current-spend"' in html and "78,871.73 USD/month" in html and "2026-09..2026-10" in html
    assert "account evidence: trn1 &lt;x&gt;: us-east-1: needs 256 vCPUs" in html and "(quotas-us-east-1.json)" in html
    md = render_md(rep)
    assert "## Capacity from the AWS account" in md and "Current spend: current deployment" in md
    assert "account evidence:" in md


def test_no_section_without_cloud_options(tmp_path: Path) -> None:
    p = tmp_path / "s.toml"
    p.write_text(
        SCENARIO.format(fx=FIX)
        .split('[[options]]\nname = "current')[0]
        .replace('baseline = "current deployment"', "")
        .replace('pricing = "on_demand"', 'pricing = "rental"\nprice_per_hour = 3')
        .replace('instance = "trn1.32xlarge"', 'instance = "H100@Hyperstack"')
    )
    rep = make_report(p)
    assert rep.decision.capacity == [] and '<section id="capacity">' not in render_html(rep)
