"""Data-dependent ops on host data (whisper's ``transcribe.py`` and ``timing.py``, round 1): numpy's ``nonzero`` on
an array built with ``np.array`` and ``torch.where``/``nonzero`` on a tensor ``torch.tensor(list)`` built on the CPU
are not device hazards; the same ops on a device tensor stay findings."""

from __future__ import annotations

from accelpilot.porting.scan import scan_python

HOST = """\
import numpy as np
import torch


def add_word_timestamps(alignment):
    durations = np.array([t.end - t.start for t in alignment])
    return durations[durations.nonzero()]


def segments(result, begin):
    tokens = torch.tensor(result.tokens)
    stamps: torch.Tensor = tokens.ge(begin)
    consecutive = torch.where(stamps[:-1] & stamps[1:])[0]
    return tokens[stamps.nonzero().flatten()], consecutive


def on_device(result, begin, device):
    tokens = torch.tensor(result.tokens, device=device)
    stamps = tokens.ge(begin)
    moved = torch.tensor(result.tokens).to(device)
    first = torch.where(stamps[:-1] & stamps[1:])[0]
    second = stamps.nonzero()
    return first, second, moved.nonzero()
"""


def test_data_dependent_ops_on_host_data_are_not_findings() -> None:
    lines = sorted(ln or 0 for r, ln, *_ in scan_python(HOST) if r == "data-dependent-op")
    assert lines == [21, 22, 23]  # on_device: torch.where, stamps.nonzero(), moved.nonzero()


def test_an_import_under_a_broad_handler_is_optional() -> None:
    """``try: import apex`` / ``except: print(...)`` (ConvNeXt's mmcv_custom, round 3) is an optional import like
    one under ``except ImportError``; a body that also uses the package, or an unguarded import, stays."""
    guarded = "try:\n    import apex\n    has_apex = True\nexcept:\n    print('apex is not installed')\n"
    uses = "try:\n    import apex\n    apex.setup()\nexcept Exception:\n    print(1)\n"
    ctx = {name: [c for r, *_, c in scan_python(src) if r == "apex"] for name, src in (("g", guarded), ("u", uses))}
    assert ctx == {"g": ["optional"], "u": [None]}
