"""``FileReach`` reads the def/class headers of a file: every one, at its line's start, the first line included."""

from __future__ import annotations

import re

from accelpilot.porting.scan.reach import FileReach

SRC = b"def first():\n    pass\nclass B:\n    async def c(self):\n        def inner(): ...\n\nasync def d(): ...\n"


def test_headers_are_every_def_and_class_at_its_line_start() -> None:
    reference = re.compile(rb"^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+(\w+)", re.M)  # the plain reading
    want = [(m.start(), len(m.group(1)), m.group(2), m.group(3).decode()) for m in reference.finditer(SRC)]
    assert FileReach(SRC).headers == want
    assert [h[3] for h in want] == ["first", "B", "c", "inner", "d"]
    assert FileReach(b"x = 1\n" + SRC).headers[0] == (6, 0, b"def", "first")
