"""The portfolio report: written by the CLI, and its lifetime chart shown in a real browser (Debian chromium,
driven by Playwright, as tests/report/test_report_browser.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from accelpilot.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "split-estate" / "portfolio.toml"
CHROMIUM = "/usr/bin/chromium"


def test_report_portfolio_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rep"
    assert main(["report", "--portfolio", str(EXAMPLE), "--out", str(out)]) == 0
    data = json.loads((out / "report.json").read_text())
    assert data["verdict"]["winner"] == "train on GPU, serve on inf2"
    gates = {g["id"]: g for g in data["workloads"]["fine-tune"]["gates"]}
    assert any(g["evidence"]["scenario_field"] == "gates.validated_on_target" for g in gates.values())
    html = (out / "report.html").read_text()
    assert "data:image/svg+xml;base64," in html and "<script" not in html
    assert "cannot win" in html
    md = (out / "report.md").read_text()
    assert "| all GPU | 42,380.80 | 0.00 | 1,525,708.80 | no |" in md


def test_pilot_portfolio_writes_the_same_report(tmp_path: Path) -> None:
    out = tmp_path / "rep"
    assert main(["pilot", "--portfolio", str(EXAMPLE), "--out", str(out)]) == 0
    assert json.loads((out / "report.json").read_text())["cheapest"] == "all AWS silicon"


@pytest.mark.browser
def test_lifetime_chart_in_chromium(tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is absent (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    out = tmp_path / "rep"
    assert main(["report", "--portfolio", str(EXAMPLE), "--out", str(out)]) == 0
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = b.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto((out / "report.html").as_uri())
            img: Any = page.locator("#lifetime-chart img")
            # the browser decoded the SVG: a loaded image has a natural width (a broken one has 0)
            width = img.evaluate("i => i.complete ? i.naturalWidth : 0")
            assert width > 0
            box = img.bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 100
            assert "all AWS silicon" in page.locator("#estates table").first.inner_text()
            assert errors == []
        finally:
            b.close()
