"""False-positive classes of the device-placement, data-dependent-op and tensor-control-flow families found on the
installed transformers (issue 12, round scanfp7), each beside the near miss that must stay a finding: exact findings
and items, and pruned scans equal to full parses."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path, scan_python


def _raw(src: str) -> list[tuple[str, int | None, str | None]]:
    """(rule, line, context) of every finding, asserting the pruned scan equals the full parse."""
    full = sorted((r, ln, ctx) for r, ln, _m, _s, _sub, ctx in scan_python(src, prune=False))
    assert sorted((r, ln, ctx) for r, ln, _m, _s, _sub, ctx in scan_python(src, prune=True)) == full
    return full


def test_a_type_annotation_naming_a_cuda_type_places_nothing() -> None:
    """``stream: torch.cuda.Stream`` (an argument, a return, an annotated assignment) names a type; the stream is
    made where it is created. Stays: ``torch.cuda.Stream()`` called (as a value or a default), ``torch.cuda`` in the
    annotated assignment's value."""
    src = (
        "from __future__ import annotations\n"
        "import torch\n"
        "def make(device: torch.device, stream: torch.cuda.Stream | None = None) -> torch.cuda.Stream:\n"  # 3: types
        "    other: torch.cuda.Stream = device_module(device).Stream()\n"  # 4: annotation only
        "    mine: torch.cuda.Stream = torch.cuda.Stream()\n"  # 5: the value creates a CUDA stream
        "    return other\n"
        "def graph(g: 'torch.cuda.CUDAGraph', s=torch.cuda.Stream()):\n"  # 7: the default is a call
        "    x: int\n"
        "    return g\n"
    )
    assert _raw(src) == [("torch-cuda-api", 5, None), ("torch-cuda-api", 7, None)]


def test_annotations_leave_the_continuous_batching_item_shape(tmp_path: Path) -> None:
    """A file whose only CUDA mentions are annotations makes no item; the file that creates the stream keeps one."""
    (tmp_path / "io.py").write_text(
        "import torch\n"
        "class IO:\n"
        "    def __init__(self, device):\n"
        "        self.h2d: torch.cuda.Stream = make_stream(device)\n"
        "    def send(self, stream: torch.cuda.Stream) -> None:\n"
        "        pass\n"
    )
    (tmp_path / "streams.py").write_text(
        "import torch\ndef make_stream(device) -> torch.cuda.Stream:\n    return torch.cuda.Stream(device)\n"
    )
    log = scan_path(tmp_path, jobs=1)
    assert [(i.key, [ln.line for ln in i.lines]) for i in log.items] == [("file|device-placement|streams.py", [3])]
