"""Two of issue 27's shape and device hazards on whisper's shape (round 1): a KV cache entry grown with
``torch.cat`` in a forward hook (``growing-sequence``), and a sparse tensor registered as a module buffer
(``sparse-tensor``), blocking when the default path imports its module."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path, scan_python

HOOKS = """\
import torch


def install_kv_cache_hooks(model, cache=None):
    cache = {**cache} if cache else {}

    def save_to_cache(module, _, output):
        if module not in cache:
            cache[module] = output
        else:
            cache[module] = torch.cat([cache[module], output], dim=1).detach()
        return cache[module]

    joined = {}
    joined["x"] = torch.cat([joined["y"], model], dim=1)  # another entry: a one-off join
    return cache, save_to_cache
"""

MODEL = """\
import torch
from torch import nn


class Whisper(nn.Module):
    def __init__(self, n):
        super().__init__()
        heads = torch.zeros(n, n, dtype=torch.bool)
        self.register_buffer("alignment_heads", heads.to_sparse(), persistent=False)

    def indices(self):
        return self.alignment_heads.indices()


def sparse_helper(x):
    return x.to_sparse()
"""


def test_a_cache_entry_grown_in_a_hook_is_a_growing_sequence() -> None:
    assert [ln for r, ln, *_ in scan_python(HOOKS) if r == "growing-sequence"] == [11]


def test_a_sparse_buffer_on_the_default_path_blocks(tmp_path: Path) -> None:
    pkg = tmp_path / "whisper"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .model import Whisper\n")
    (pkg / "model.py").write_text(MODEL)
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='whisper', packages=['whisper'])\n")
    by = {f.line: f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "sparse-tensor"}
    assert by[9].severity == "blocking" and "registers a sparse tensor as a module buffer" in (by[9].reason or "")
    assert by[16].severity == "warning"  # a sparse tensor made in a function: listed, not blocking
    (pkg / "__init__.py").write_text("")  # nothing imports the model: not on the default path
    by = {f.line: f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "sparse-tensor"}
    assert by[9].severity == "warning"
