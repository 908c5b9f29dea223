"""Names built to inject: into report.md (parsed with markdown-it, the CommonMark parser rich ships), into
report.html (in a real browser), and into the terminal (prices and the report summary)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from tests.hostile.hostile_kit import dump, training_result

from accelpilot.report.render_md import esc

Cli = Callable[..., tuple[int, str, str]]

HOSTILE_COMMAND = "accelpilot run train `x`\n\n<img src=x onerror=alert(1)>\n| a | b |\n- item `` ` ``"


def _md_tokens(text: str) -> list[Any]:
    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    out = []
    stack = md.parse(text)
    for t in stack:
        out.append(t)
        out.extend(t.children or [])
    return out


@pytest.mark.parametrize(
    "text",
    [
        HOSTILE_COMMAND,
        "<script>alert(1)</script>",
        "a|b",
        "line1\nline2\r\n<b>x</b>",
        "```",
        "- looks like a list",
        "1. looks numbered",
        "[link](javascript:alert(1))",
        "x\x1b[2Jy\u2028z",
    ],
)
def test_esc_leaves_no_html_no_block_and_keeps_the_text(text: str) -> None:
    for rendered in (esc(text), esc(text, code=True)):
        tokens = _md_tokens(f"before {rendered} after")
        kinds = {t.type for t in tokens}
        assert not kinds & {"html_inline", "html_block", "link_open", "bullet_list_open", "ordered_list_open"}, kinds
        assert [t.type for t in tokens if t.level == 0 and t.nesting == 1] == ["paragraph_open"]
        assert "softbreak" not in kinds and "hardbreak" not in kinds


def test_esc_in_a_table_keeps_one_cell() -> None:
    cell = esc("a|b `c|d` \n| e |")
    tokens = _md_tokens(f"| h1 | h2 |\n|---|---|\n| {cell} | x |\n")
    assert sum(t.type == "td_open" for t in tokens) == 2


def test_esc_code_span_round_trips_the_command() -> None:
    tokens = _md_tokens(f"Reproduce: {esc(HOSTILE_COMMAND, code=True)}")
    code = [t.content for t in tokens if t.type == "code_inline"]
    assert code == [HOSTILE_COMMAND.replace("\n", "\\n")]


def test_report_md_with_a_hostile_command(cli: Cli, good: dict[str, Path]) -> None:
    data = dump(training_result())
    data["command"] = HOSTILE_COMMAND
    data["workload"]["name"] = "w|<script>alert(1)</script>"
    good["trn"].write_text(json.dumps(data), encoding="utf-8")
    out = good["dir"].parent / "rep"
    code, _, err = cli("report", "--scenario", good["scenario"], "--out", out)
    assert code == 0, err
    md = (out / "report.md").read_text(encoding="utf-8")
    tokens = _md_tokens(md)
    assert not [t for t in tokens if t.type in ("html_inline", "html_block")]
    assert HOSTILE_COMMAND.replace("\n", "\\n") in [t.content for t in tokens if t.type == "code_inline"]
    assert "<script>" not in md and "<img" not in md.replace(HOSTILE_COMMAND.replace("\n", "\\n"), "")


ESCAPE = "\x1b[2J\x1b]0;owned\x07"


def test_prices_table_escapes_control_characters(cli: Cli, tmp_path: Path) -> None:
    cat = tmp_path / "c.toml"
    cat.write_text(
        "[[price]]\n"
        'instance = "evil\\u001b[2J.large"\naccelerator = "H100"\naccelerator_count = 8\npricing = "on_demand"\n'
        'price_per_hour = 10\nregion = "us-east-1"\nas_of = 2026-01-01\nsource = "[bold]src\\u001b]0;owned\\u0007"\n',
        encoding="utf-8",
    )
    code, out, err = cli("prices", "--catalog", cat, "--instance", "evil\x1b[2J.large")
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out
    assert "evil\\x1b[2J.large" in out
    assert "[bold]src\\x1b]0;owned\\x07" in out  # markup shown as text, not applied


def _toml_escape(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" if ord(c) < 32 else c for c in text)


def test_report_summary_escapes_control_characters(cli: Cli, good: dict[str, Path]) -> None:
    sc = good["scenario"]
    text = sc.read_text(encoding="utf-8").replace('name = "trn"', f'name = "trn{_toml_escape(ESCAPE)}"')
    sc.write_text(text, encoding="utf-8")
    code, out, err = cli("report", "--scenario", sc, "--out", good["dir"].parent / "rep")
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out
    assert "trn\\x1b[2J\\x1b]0;owned\\x07" in out


@pytest.mark.browser
def test_hostile_names_stay_text_in_chromium(good: dict[str, Path], tmp_path: Path) -> None:
    """Already held before issue 11: Jinja's autoescape keeps the HTML safe; kept here as a guarantee."""
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        pytest.skip(f"{chromium} is absent (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    from accelpilot.procedure import make_report
    from accelpilot.report.write import write_report

    data = dump(training_result())
    data["command"] = HOSTILE_COMMAND
    data["workload"]["name"] = "<script>alert(2)</script>"
    good["trn"].write_text(json.dumps(data), encoding="utf-8")
    paths = write_report(make_report(good["scenario"]), tmp_path / "rep")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            dialogs: list[str] = []

            def on_dialog(d: Any) -> None:
                dialogs.append(d.message)
                d.dismiss()

            page.on("dialog", on_dialog)
            page.goto(paths["report.html"].resolve().as_uri())
            page.wait_for_load_state("load")
            body = page.inner_text("body")
            scripts = page.eval_on_selector_all("script", "els => els.map(e => e.textContent)")
            imgs = page.eval_on_selector_all("img[onerror]", "els => els.length")
        finally:
            browser.close()
    assert dialogs == []
    assert "<script>alert(2)</script>" in body  # shown as text
    assert not any("alert(" in s for s in scripts)
    assert imgs == 0
