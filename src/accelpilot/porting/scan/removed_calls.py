"""Calls whose library changed under them since the code was written, found on the AST (``stack_upgrade.py`` reads
the rest): each fails when the line runs, so it blocks where an entry point runs it.

- ``scores, _ = pack_padded_sequence(...)``: a ``PackedSequence`` has four fields since torch 1.1 (``data``,
  ``batch_sizes``, ``sorted_indices``, ``unsorted_indices``), so unpacking two raises ``ValueError: too many values to
  unpack (expected 2)`` (tried on torch 2.13; the image-captioning tutorial's training loss).
- ``librosa.output.write_wav(...)``: librosa 0.8 removed ``librosa.output`` (librosa 0.11.0's wheel has no such
  module), an ``AttributeError`` (Conv-TasNet's separation script; ``soundfile.write`` replaces it)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

BYTE_GATE = (b"pack_padded_sequence", b"librosa.output")


def _name(f: ast.expr) -> str | None:
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def removed_call_sites(tree: ast.Module) -> Iterable[tuple[ast.AST, str, bool | None]]:
    """(node, message, None: fails when the line runs) of each such call."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and _name(node.value.func) == "pack_padded_sequence"
            and any(isinstance(t, (ast.Tuple, ast.List)) and len(t.elts) == 2 for t in node.targets)
        ):
            yield (
                node,
                "x, y = pack_padded_sequence(...) (a torch PackedSequence has four fields since torch 1.1: "
                "ValueError, too many values to unpack)",
                None,
            )
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "output"
            and isinstance(node.value.value, ast.Name)
            and node.value.value.id == "librosa"
        ):
            yield node, f"librosa.output.{node.attr} (librosa 0.8 removed librosa.output: AttributeError)", None
