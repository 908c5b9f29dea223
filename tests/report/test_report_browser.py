"""report.html in a real browser (Debian chromium, driven by Playwright): renders cleanly, charts present,
hostile names shown as text and never run."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from accelpilot.procedure import make_report
from accelpilot.report.write import write_report

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NOTES_SHOT = Path("/work/notes/report-screenshot.png")

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Any:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is absent (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield b
        finally:
            b.close()


def test_report_in_chromium(browser: Any, files: dict[str, Any], tmp_path: Path, evil: str) -> None:
    rep = make_report(files["scenario"], results=[files["cpu"]], scan_log=files["log"], beside=[])
    paths = write_report(rep, tmp_path / "rep")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    console: list[tuple[str, str]] = []
    errors: list[str] = []
    dialogs: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: console.append((m.type, m.text)))
    page.on("pageerror", lambda e: errors.append(str(e)))

    def on_dialog(d: Any) -> None:
        dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", on_dialog)
    page.on("request", lambda r: requests.append(r.url))
    page.goto(paths["report.html"].resolve().as_uri())
    page.wait_for_load_state("load")

    assert [m for m in console if m[0] in ("error", "warning")] == []
    assert errors == [] and dialogs == []
    assert all(u.startswith(("file:", "data:")) for u in requests), requests

    # charts: payback, 36-month, two sensitivity, and one CDF per pilot with timed samples; all decoded
    imgs = page.locator("img.chart-img")
    assert imgs.count() >= 6
    widths = page.eval_on_selector_all("img.chart-img", "els => els.map(e => e.naturalWidth)")
    assert all(w > 100 for w in widths), widths

    # the hostile names are text on the page, not markup
    body = page.inner_text("body")
    assert f"{evil} scenario" in body
    assert f"{evil} gpu" in body
    assert f"workload {evil}" in body
    assert page.locator("script").count() == 0
    # hover text carries the provenance
    title = page.locator("span.num").first.get_attribute("title")
    assert title and any(k in title for k in ("measured", "listed", "derived", "assumed"))
    assert "Qualify" in page.inner_text("#verdict")

    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    if NOTES_SHOT.parent.exists():
        shutil.copyfile(shot, NOTES_SHOT)
    page.close()


def test_worked_example_in_chromium(browser: Any, tmp_path: Path) -> None:
    from accelpilot.procedure import bundled_scenario

    paths = write_report(make_report(bundled_scenario()), tmp_path / "rep")
    page = browser.new_page()
    console: list[tuple[str, str]] = []
    page.on("console", lambda m: console.append((m.type, m.text)))
    page.goto(paths["report.html"].resolve().as_uri())
    assert [m for m in console if m[0] == "error"] == []
    assert page.locator("img.chart-img").count() == 4
    assert "Not enough evidence" in page.inner_text("#verdict")
    assert "1,100.80 USD" in page.inner_text("#bill")
    page.close()
