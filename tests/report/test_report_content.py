"""The report's content and its three renderings: sections, provenance on every number, escaping, charts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from accelpilot.catalog import load_catalog
from accelpilot.errors import VendorClaimError
from accelpilot.figures import assumption
from accelpilot.procedure import make_report
from accelpilot.report.render_html import render_html
from accelpilot.report.render_json import render_json
from accelpilot.report.render_md import render_md
from accelpilot.report.write import write_report


@pytest.fixture
def report(files: dict[str, Any]) -> Any:
    return make_report(files["scenario"], results=[files["cpu"]], scan_log=files["log"])


def test_model_sections(report: Any, files: dict[str, Any]) -> None:
    assert report.decision.verdict == "qualify_trainium"
    assert report.options[0].name.startswith("<script>")
    ids = {c.id for c in report.charts}
    assert {"payback", "tco36", "sensitivity-utilisation", "sensitivity-runs"} <= ids
    # the priced Trainium result and the CPU result passed with --results are both shown
    paths = {Path(p.path).name: p for p in report.pilots}
    assert set(paths) == {"cpu-train.json", "trn.json"}
    assert paths["trn.json"].priced_by == ["trn $x$ _hidden"]
    assert paths["cpu-train.json"].priced_by == []
    keys = {f.key for f in paths["trn.json"].figures}
    assert {"tokens_per_s", "compile_time_s", "recompile_time_s", "time_to_target_s", "restart_s"} <= keys
    assert all(f.figure.kind == "measured" for f in paths["trn.json"].figures)
    assert paths["trn.json"].charts and paths["trn.json"].charts[0].type == "step"  # step-time CDF
    assert report.portability is not None and len(report.portability.findings) == 2
    assert len(report.decision.exit_tests) == 2


def test_vendor_claims_apart_and_never_in_arithmetic(report: Any) -> None:
    assert report.vendor_claims and all(not c.used_in_arithmetic for c in report.vendor_claims)
    # Each claim the report shows refuses arithmetic: that, not a flag, is what keeps it out of the numbers.
    cat = load_catalog()
    for c in report.vendor_claims:
        row = cat.claim(c.id)
        assert row is not None
        with pytest.raises(VendorClaimError):
            _ = assumption(10, "h") * row.figure()
    kinds = set()
    for o in report.options:
        for li in o.line_items:
            kinds |= {li.figure.kind, *(lf.kind for lf in li.figure.leaves)}
    assert "vendor_claim" not in kinds


def test_sensitivity_matches_the_bill(report: Any) -> None:
    sc_runs = report.scenario.runs_per_month
    chart = next(c for c in report.charts if c.id == "sensitivity-runs")
    for s, o in zip(chart.series, report.options, strict=True):
        i = s.x.index(sc_runs)
        want = o.cost_per_accepted_run.value + (o.one_off_cost.value / report.scenario.months + 0) / sc_runs
        assert s.y[i] == pytest.approx(want, rel=1e-9)


def test_payback_chart_follows_comparison(report: Any) -> None:
    chart = next(c for c in report.charts if c.id == "payback")
    base, cand = chart.series
    assert base.y[0] == 0 and cand.y[0] == pytest.approx(2400.0)
    comp = report.comparisons[0]
    n = comp.break_even_runs
    assert cand.y[n] <= base.y[n] and cand.y[n - 1] > base.y[n - 1]


def test_json_round_trip(report: Any) -> None:
    data = json.loads(render_json(report))
    assert data["decision"]["verdict"] == "qualify_trainium"
    assert data["options"][1]["cost_per_accepted_run"]["kind"] == "derived"
    assert data["vendor_claims"][0]["kind"] == "vendor_claim"


def test_html_every_number_has_provenance(report: Any) -> None:
    html = render_html(report)
    nums = re.findall(r'<span class="num k-(\w+)" title="([^"]*)">', html)
    assert len(nums) > 40
    assert {k for k, _ in nums} >= {"measured", "list_price", "derived", "assumption"}
    assert all(title.strip() for _, title in nums)
    # every footnote number resolves to a source entry
    refs = {int(n) for n in re.findall(r'href="#src-(\d+)"', html)}
    ids = {int(n) for n in re.findall(r'<li id="src-(\d+)">', html)}
    assert refs and refs <= ids


def test_html_self_contained_and_escaped(report: Any, evil: str) -> None:
    html = render_html(report)
    assert evil not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script" not in html.lower()
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert html.count('<img class="chart-img" src="data:image/svg+xml;base64,') >= 5


def test_markdown_sections_and_escaping(report: Any, evil: str) -> None:
    md = render_md(report)
    for head in (
        "## Verdict",
        "## Decision gates",
        "## The bill per option",
        "## Exit test",
        "## Measured pilots",
        "## Portability log",
        "## Vendor claims",
        "## Sources of the numbers",
    ):
        assert head in md
    assert evil not in md and "&lt;script&gt;" in md
    assert "*measured*" in md and "*listed*" in md and "*assumed*" in md


def test_write_is_all_or_nothing(report: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "rep"
    write_report(report, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(before) == {"report.html", "report.md", "report.json"}

    import accelpilot.report.write as w

    def boom(_: Any) -> str:
        raise RuntimeError("renderer failed")

    monkeypatch.setattr(w, "render_md", boom)
    with pytest.raises(RuntimeError):
        write_report(report, out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".rep.")]


def test_report_for_the_bundled_worked_example() -> None:
    from accelpilot.procedure import bundled_scenario

    rep = make_report(bundled_scenario())
    by = {o.name: o.cost_per_accepted_run for o in rep.options}
    assert all(f is not None for f in by.values())
    assert by["p5.48xlarge on-demand"].value == pytest.approx(1100.80)  # type: ignore[union-attr]
    assert by["trn1.32xlarge on-demand"].value == pytest.approx(559.00)  # type: ignore[union-attr]
    assert by["trn1.32xlarge reserved 3 years"].value == pytest.approx(213.20)  # type: ignore[union-attr]
    comp = next(c for c in rep.comparisons if c.candidate == "trn1.32xlarge on-demand")
    assert comp.break_even_runs == 5
    assert rep.decision.verdict == "not_enough_evidence"  # the worked example's hours are assumptions
