"""A git submodule the tree declares but does not hold, imported by its code (``scan/submodules.py``): NeRF-pl's
``torchsearchsorted``."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.submodules import declared

GITMODULES = """\
[submodule "torchsearchsorted"]
\tpath = torchsearchsorted
\turl = https://github.com/aliutkus/torchsearchsorted.git
[submodule "third_party/lm-eval"]
\tpath = third_party/lm-eval
\turl = https://github.com/EleutherAI/lm-evaluation-harness/
"""


def test_gitmodules_are_read_to_the_last_section() -> None:
    assert declared(GITMODULES) == [
        ("torchsearchsorted", "https://github.com/aliutkus/torchsearchsorted.git"),
        ("third_party/lm-eval", "https://github.com/EleutherAI/lm-evaluation-harness/"),
    ]


def test_an_imported_submodule_that_is_not_checked_out_is_an_item(tmp_path: Path) -> None:
    """``from torchsearchsorted import searchsorted`` with the submodule's folder empty: one item at the import, named
    by the submodule. Near misses: a submodule nothing imports (the evaluation harness, imported as ``lm_eval``), and
    the same submodule once checked out (its files are scanned like any other)."""
    (tmp_path / ".gitmodules").write_text(GITMODULES)
    (tmp_path / "models").mkdir()
    (tmp_path / "models/rendering.py").write_text("import torch\nfrom torchsearchsorted import searchsorted\n")
    (tmp_path / "torchsearchsorted").mkdir()
    items = [(i.title, i.severity) for i in scan_path(tmp_path, jobs=1).items if i.rule == "submodule-unscanned"]
    assert items == [("git submodule not checked out (its code not scanned): torchsearchsorted", "warning")]
    [f] = [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "submodule-unscanned"]
    assert (f.file, f.line) == ("models/rendering.py", 2)
    (tmp_path / "torchsearchsorted/__init__.py").write_text("from .searchsorted import searchsorted\n")
    assert not [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "submodule-unscanned"]
