"""The Python visitor: what is and is not a code path."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_python

REPO = Path(__file__).parent.parent / "fixtures" / "repo"


def test_docstrings_and_comments_are_not_code() -> None:
    src = '"""torch.cuda.synchronize() and "cuda" in a docstring."""\n# x.cuda()\ndef f():\n    """s3://b/k"""\n'
    assert scan_python(src) == []
    assert scan_python(src, prune=False) == []


def test_numpy_unique_and_non_forward_item_are_not_hazards() -> None:
    src = "import numpy as np\nimport torch\n\ndef prep(a):\n    return np.unique(a), a.sum().item()\n"
    assert scan_python(src) == []
