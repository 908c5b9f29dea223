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


def test_a_comparison_with_a_device_string_is_not_placement() -> None:
    """``== "mps"``, ``in ("cpu", "mps")``, ``!= "cuda"`` branch on another backend; ``torch.device("mps")``,
    ``.to("mps")``, ``device="cuda"`` select one, and stay findings."""
    src = (
        "import torch\n"
        'if x.device.type == "mps":\n'  # 2: comparison
        '    y = 1 if d.type in ("cpu", "mps") else 2\n'  # 3: comparison in a tuple
        'if device_map != "cuda" and dev not in ["cuda:0"]:\n'  # 4: comparisons
        '    m = torch.device("mps")\n'  # 5: placement
        'x = x.to("mps")\n'  # 6: placement
        'z = torch.ones(2, device="cuda")\n'  # 7: placement
        'ok = "xla" == kind\n'  # 8: an XLA branch is run by a Neuron port: stays
    )
    for prune in (True, False):
        assert sorted((r, ln) for r, ln, *_ in scan_python(src, prune=prune)) == [
            ("cuda-device-literal", 7),
            ("mps-device", 5),
            ("mps-device", 6),
            ("xla-api", 8),
        ]
