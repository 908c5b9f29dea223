"""The project's size rule, held for porting/: no module over 600 lines (issue 27: a scanner the next engineer can
change)."""

from __future__ import annotations

from pathlib import Path

import accelpilot.porting

PORTING = Path(accelpilot.porting.__file__).parent


def test_no_porting_module_is_over_600_lines() -> None:
    sizes = {
        p.relative_to(PORTING).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for p in PORTING.rglob("*.py")
    }
    assert len(sizes) > 20  # the package was found
    assert {name: n for name, n in sizes.items() if n > 600} == {}
