"""A name bound only under a CUDA test and read after it (``scan/unbound.py``): a ``torch-cuda-api`` line at the
test, blocking on an entry point (the qlora shape: ``n_gpus`` set under ``torch.cuda.is_available()``, read after).
Near misses: an ``else``, an earlier binding, a parameter, a read under the same test, a read in a nested def."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.unbound import unbound_off_cuda

QLORA = """\
import torch

def get_model(args):
    if torch.cuda.is_available():
        n_gpus = torch.cuda.device_count()
    if is_ipex_available() and torch.xpu.is_available():
        n_gpus = torch.xpu.device_count()
    max_memory = {i: "80GB" for i in range(n_gpus)}
    return max_memory

if __name__ == "__main__":
    get_model(None)
"""


def _lines(source: str) -> list[int | None]:
    return [ln for _, ln, _, _, _, _ in unbound_off_cuda(source.encode())]


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        (QLORA, [4]),
        ("import torch\nif torch.cuda.is_available():\n    dev = 'cuda'\nx = dev\n", [2]),  # module level
        ("import torch\nif flag and torch.cuda.is_available():\n    n = 1\nprint(n)\n", [2]),
        # near misses
        ("import torch\nif torch.cuda.is_available():\n    n = 1\nelse:\n    n = 0\nprint(n)\n", []),
        ("import torch\nn = 0\nif torch.cuda.is_available():\n    n = 1\nprint(n)\n", []),
        ("import torch\ndef f(n):\n    if torch.cuda.is_available():\n        n = 1\n    return n\n", []),
        ("import torch\nif torch.cuda.is_available():\n    n = 1\nif torch.cuda.is_available():\n    print(n)\n", []),
        ("import torch\nif torch.cuda.is_available():\n    n = 1\ndef g():\n    return n\n", []),
        ("import torch\nif torch.cuda.is_available():\n    n = 1\nn = 2\nprint(n)\n", []),
        ("import torch\nif use_gpu:\n    n = 1\nprint(n)\n", []),  # not a CUDA test: the scan does not judge it
    ],
)
def test_a_binding_only_under_a_cuda_test_read_after_it(source: str, lines: list[int | None]) -> None:
    assert _lines(source) == lines


def test_on_an_entry_point_it_blocks_with_the_read_named(tmp_path: Path) -> None:
    (tmp_path / "qlora.py").write_text(QLORA)
    (tmp_path / "README.md").write_text("Run `python qlora.py --model m`.\n")
    (f,) = [f for f in scan_path(tmp_path, jobs=1).findings if f.line == 4 and f.context is None]
    assert (f.rule, f.severity) == ("torch-cuda-api", "blocking")
    assert "`n_gpus` bound only under `if torch.cuda.is_available():` and read at line 8" in (f.reason or "")
