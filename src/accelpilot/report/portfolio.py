"""The portfolio report: estates side by side, lifetime cost against the budget over time, each workload's
own gates and evidence, and the estate verdict with its reasons (issue 31). Self-contained HTML, as the
scenario report: autoescaped, no script, the chart an inline SVG."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from accelpilot.portfolio.price import cumulative, to_json
from accelpilot.portfolio.procedure import PortfolioRun
from accelpilot.report.model import Chart, Series


def lifetime_chart(run: PortfolioRun) -> Chart:
    """Cumulative cost of each estate, month by month, and the budget as a dashed line."""
    p = run.price
    months = list(range(p.lifetime_months + 1))
    series = [
        Series(name=e.name, x=[float(m) for m in months], y=[float(v) for v in cumulative(e, p.lifetime_months)])
        for e in p.estates
    ]
    if p.budget is not None:
        series.append(Series(name="budget", x=[0.0, float(p.lifetime_months)], y=[float(p.budget)] * 2, style="--"))
    return Chart(
        id="portfolio-lifetime",
        title=f"Lifetime cost against the budget ({p.currency})",
        type="line",
        x_label="month",
        y_label=f"cumulative cost ({p.currency})",
        series=series,
    )


def portfolio_json(run: PortfolioRun) -> dict[str, Any]:
    out = to_json(run.price)
    v = run.verdict
    out["verdict"] = {
        "winner": v.winner,
        "headline": v.headline,
        "margin_needed": float(v.margin_needed),
        "estates": [{"name": e.name, "eligible": e.eligible, "reasons": e.reasons} for e in v.estates],
    }
    out["workloads"] = {
        n: {
            "scenario": run.scenarios[n].path,
            "verdict": d.verdict,
            "gates": [
                {
                    "id": g.id,
                    "question": g.question,
                    "status": g.status,
                    "reason": g.reason,
                    "evidence": g.evidence.model_dump(mode="json"),
                }
                for g in d.gates
            ],
        }
        for n, d in run.decisions.items()
    }
    return out


def render_portfolio_html(run: PortfolioRun) -> str:
    from accelpilot.report.charts import chart_data_uri
    from accelpilot.report.render_html import _env

    return (
        _env()
        .get_template("portfolio.html.j2")
        .render(
            run=run,
            p=run.price,
            v=run.verdict,
            chart=chart_data_uri(lifetime_chart(run)),
            money=lambda f: f"{f.value:,.2f}",
            float=float,
        )
    )


def render_portfolio_md(run: PortfolioRun) -> str:
    """The same report as Markdown (the estates, the verdict and its reasons; the chart is in the HTML)."""
    from accelpilot.report.render_md import esc as md_escape

    p, v = run.price, run.verdict
    out = [f"# {md_escape(p.name)}", "", f"**{md_escape(v.headline)}**", ""]
    out += [
        f"| estate | monthly | one-off | lifetime ({p.currency}) | within budget |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for e in p.estates:
        budget = "-" if e.within_budget is None else ("yes" if e.within_budget else "no")
        out.append(
            f"| {md_escape(e.name)} | {e.monthly_cost.value:,.2f} | {e.one_off_cost.value:,.2f} "
            f"| {e.lifetime_cost.value:,.2f} | {budget} |"
        )
    out.append("")
    for ev in v.estates:
        out.append(f"- **{md_escape(ev.name)}**: {'can win' if ev.eligible else 'cannot win'}")
        out += [f"  - {md_escape(r)}" for r in ev.reasons]
    return "\n".join(out) + "\n"


def write_portfolio_report(run: PortfolioRun, out: Path) -> dict[str, Path]:
    """report.html, report.md and report.json in ``out`` (checked as the scenario report's folder is)."""
    from accelpilot.atomic import write_text_atomic
    from accelpilot.report.write import check_report_dir

    out = check_report_dir(out)
    html = render_portfolio_html(run)  # rendered before anything is written
    text = json.dumps(portfolio_json(run), indent=2, ensure_ascii=False)
    out.mkdir(exist_ok=True)
    md = render_portfolio_md(run)
    paths = {"report.html": out / "report.html", "report.md": out / "report.md", "report.json": out / "report.json"}
    write_text_atomic(paths["report.html"], html)
    write_text_atomic(paths["report.md"], md)  # replaces a scenario report's, so the folder holds one report
    write_text_atomic(paths["report.json"], text)
    return paths
