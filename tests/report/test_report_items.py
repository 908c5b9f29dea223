"""The portability section of the report reads porting items (issue 12): each item's reach reason is shown, and
the record-category line counts items (with the lines under them), not lines."""

from __future__ import annotations

import re
from pathlib import Path

from accelpilot.decide.portability import view_log
from accelpilot.porting.scan import scan_path
from accelpilot.procedure import bundled_scenario, make_report
from accelpilot.report.render_html import render_html
from accelpilot.report.render_md import render_md

FIXTURES = Path(__file__).parents[1] / "porting" / "fixtures"
BENCH = "in a benchmark script, not on the model's forward/backward path"
OPTIONAL = "optional path behind an availability check or an ImportError fallback"
LAUNCHED = (
    "on the default path: launches kernel add_kernel[grid](...) (kernels/fused.py) at ops/launch.py:11 "
    "(no flag, fallback or guard)"
)
IMPORTED = (
    "on the default path: from flash_attn import flash_attn_func at ops/attention.py:2 (no flag, fallback or guard)"
)


def test_item_reasons_and_item_counts_per_record_category() -> None:
    view = view_log(scan_path(FIXTURES / "items", jobs=1))
    # issue 27: a blocking item says why and which line reaches it; the Triton kernels of one file are one item
    assert {f.id: f.reason for f in view.findings if f.reason} == {
        "I1": LAUNCHED,  # the kernels of kernels/fused.py, launched unguarded in ops/launch.py
        "I2": IMPORTED,  # flash-attn imported at module level
        "I4": BENCH,  # copy_kernel in benchmarks/
        "I5": OPTIONAL,  # fast_kernel behind is_triton_available()
    }
    # items (and the lines under them), not the 28 device-specific lines of the summary, which hold 7 probes,
    # skip guards and test-only lines counted apart
    assert view.items_by_record_category() == [
        ("device-specific code path", 4, 21),
        ("container difference", 1, 2),
        ("unsupported operator", 0, 0),
        ("data movement step", 0, 0),
        ("operational integration", 1, 3),
    ]
    rep = make_report(bundled_scenario(), scan_log=view)
    html = render_html(rep).split('<section id="portability">', 1)[1].split("</section>", 1)[0]
    assert re.findall(r'<div class="reach">(.*?)</div>', html) == [
        LAUNCHED,
        IMPORTED,
        BENCH.replace("'", "&#39;"),
        OPTIONAL,
    ]
    assert (
        "device-specific code path: 4 items (21 lines) · container difference: 1 item (2 lines) · "
        "unsupported operator: 0 items · data movement step: 0 items · operational integration: 1 item (3 lines)"
    ) in html
    md = render_md(rep).split("## Portability log", 1)[1].split("## Vendor claims", 1)[0]
    assert "6 porting item(s) in 14 file(s)." in md
    assert "device-specific code path: 4 item(s) (21 lines) · container difference: 1 item(s) (2 lines)" in md
    assert (
        "3 lines in 1 file; 1 kernel: copy\\_kernel \\[in a benchmark script, not on the model's forward/backward path\\] |"
        in md
    )


def test_a_line_reached_otherwise_than_its_item_says_how() -> None:
    view = view_log(scan_path(FIXTURES / "launches", jobs=1))
    (item,) = [f for f in view.findings if "kernel family pkg/kernels/" in f.message]
    # launched on the main path: blocking, and the item says which launch reaches it (issue 27)
    assert item.reason == (
        "on the default path: launches kernel mm_kernel[grid](...) (pkg/kernels/matmul.py) at "
        "pkg/kernels/matmul.py:14 (no flag, fallback or guard)"
    )
    assert [ln for ln in item.lines if "[" in ln.replace("[grid]", "")] == [
        f"pkg/ops/fallback.py:2: imports kernel mm_kernel (pkg/kernels/matmul.py) [{OPTIONAL}]"
    ]


def test_an_older_log_of_findings_keeps_its_line_counts() -> None:
    log = scan_path(FIXTURES / "items", jobs=1).model_dump(mode="json")
    log["items"] = []
    view = view_log(log)
    assert view.findings[0].id == "F1" and view.items_by_record_category() == []
    html = render_html(make_report(bundled_scenario(), scan_log=view))
    assert "device-specific code path: 28 ·" in html  # the summary's line counts, as before
