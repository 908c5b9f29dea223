"""The terminal bill as plain-text tables: every line fits the width, text from files is shown, never obeyed."""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from accelpilot.bill.compute import make_bill
from accelpilot.bill.render import render_bill
from accelpilot.bill.scenario import parse_scenario
from accelpilot.bill.text_table import draw
from accelpilot.catalog import load_catalog


@dataclass
class _Console:
    width: int
    file: io.StringIO = field(default_factory=io.StringIO)


def test_every_line_fits_and_a_control_character_is_shown_escaped() -> None:
    opts = [
        {"name": "gpu \x1b[2J [bold]x[/]", "instance": "p5.48xlarge", "pricing": "on_demand", "hours_per_run": 20},
        {"name": "trn", "instance": "trn1.32xlarge", "pricing": "on_demand", "hours_per_run": 26, "porting_days": 3},
    ]
    con = _Console(width=100)
    render_bill(make_bill(parse_scenario({"options": opts}), load_catalog()), con)
    out = con.file.getvalue()
    assert "\x1b" not in out and "gpu \\x1b[2J [bold]x[/]" in out  # the name as its characters, markup as text
    assert max(len(line) for line in out.splitlines()) <= 100
    assert "1,100.80" in out and "559.00" in out  # 55.04 x 20 h; 21.50 x 26 h


def test_the_last_column_wraps_and_numbers_align_right() -> None:
    lines = draw(["a", "n", "source"], [["x", "1.00", "word " * 10], ["yy", "10.00", "s"]], [False, True, False], 30)
    assert max(len(s) for s in lines) <= 30
    assert "│ x  │  1.00 │" in lines[3]  # right-aligned under the widest number
    assert sum("word" in s for s in lines) > 1  # the source wrapped onto more lines
