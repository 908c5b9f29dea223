"""Plain-text tables for the terminal bill, drawn in rich's default box style without rich's layout engine.

rich measures every cell of every table (and a whole panel twice): 1,000 options' line-item tables cost ~5 s
of CPU, ten times the bill itself (issue 26's speed). These tables are sized once from their cells' lengths;
the widest left-aligned column wraps to fit the width. Cells are made visible (controls escaped) by the
caller.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence


def draw(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    right: Sequence[bool],
    width: int,
    title: str = "",
    caption: str = "",
    title_left: bool = False,
) -> list[str]:
    """The table's lines: heavy head, light body; wider than ``width``, its widest left-aligned column wraps."""
    n = len(headers)
    widths = [len(h) for h in headers]
    for r in rows:
        for i, c in enumerate(r):
            if len(c) > widths[i]:
                widths[i] = len(c)
    excess = sum(widths) + 3 * n + 1 - width
    if excess > 0:  # narrow the widest left-aligned column (a name, a source) and wrap its cells
        col = max((i for i in range(n) if not right[i]), key=lambda i: widths[i], default=n - 1)
        widths[col] = max(8, widths[col] - excess)
    out: list[str] = []
    full = sum(widths) + 3 * n + 1
    if title:
        out.append(title if title_left else title.center(full).rstrip())
    out.append("┏" + "┳".join("━" * (w + 2) for w in widths) + "┓")
    out.append("┃" + "┃".join(f" {h[:w]:<{w}} " for h, w in zip(headers, widths, strict=True)) + "┃")
    out.append("┡" + "╇".join("━" * (w + 2) for w in widths) + "┩")
    for r in rows:
        parts = [
            (textwrap.wrap(c, w, break_on_hyphens=False) or [""]) if len(c) > w else [c]
            for c, w in zip(r, widths, strict=True)
        ]
        for k in range(max(len(p) for p in parts)):
            cells = [p[k] if k < len(p) else "" for p in parts]
            padded = (
                f" {c:>{w}} " if right[i] else f" {c:<{w}} " for i, (c, w) in enumerate(zip(cells, widths, strict=True))
            )
            out.append("│" + "│".join(padded) + "│")
    out.append("└" + "┴".join("─" * (w + 2) for w in widths) + "┘")
    if caption:
        out.append(caption.center(full).rstrip())
    return out


def boxed(lines: Sequence[str], title: str, width: int) -> list[str]:
    """Lines inside a light box with a title in its top edge (what rich's Panel drew), wrapped to ``width``."""
    room = max(20, width - 4)
    lines = [
        piece for s in lines for piece in (textwrap.wrap(s, room, break_on_hyphens=False) if len(s) > room else [s])
    ]
    inner = max([len(s) for s in lines] + [len(title) + 2])
    head = f" {title} "
    left = (inner + 2 - len(head)) // 2
    out = ["╭" + "─" * left + head + "─" * (inner + 2 - left - len(head)) + "╮"]
    out += [f"│ {s:<{inner}} │" for s in lines]
    out.append("╰" + "─" * (inner + 2) + "╯")
    return out
