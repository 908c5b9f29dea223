"""Calls whose library changed under them since the code was written, found on the AST (``stack_upgrade.py`` reads
the rest): each fails when the line runs, so it blocks where an entry point runs it.

- ``scores, _ = pack_padded_sequence(...)``: a ``PackedSequence`` has four fields since torch 1.1 (``data``,
  ``batch_sizes``, ``sorted_indices``, ``unsorted_indices``), so unpacking two raises ``ValueError: too many values to
  unpack (expected 2)`` (tried on torch 2.13; the image-captioning tutorial's training loss).
- ``librosa.output.write_wav(...)``: librosa 0.8 removed ``librosa.output`` (librosa 0.11.0's wheel has no such
  module), an ``AttributeError`` (Conv-TasNet's separation script; ``soundfile.write`` replaces it).
- ``Image.ANTIALIAS``, ``Image.LINEAR``, ``Image.CUBIC``: Pillow 10 removed these aliases (``hasattr`` false on the
  installed Pillow 13.0.0; ``Image.LANCZOS``/``BILINEAR``/``BICUBIC`` stay), an ``AttributeError`` (monodepth2's
  dataset, round 41).
- ``models.resnet.model_urls``: torchvision's model modules no longer define ``model_urls`` (read in torchvision
  0.29.1's wheel: no module of ``torchvision/models`` binds it), an ``AttributeError`` (monodepth2's pose encoder).
- ``loss.data[0]``: torch 0.4 made a loss a 0-dim tensor, and indexing one raises ``IndexError: invalid index of a
  0-dim tensor`` (tried on torch 2.13; char-rnn's training step, round 43). Only on a name that says loss.
- ``self.val_iter.next()``: the Python 2 iterator method; torch 2.13's DataLoader iterator has no ``next`` (tried),
  an ``AttributeError`` (monodepth2's validation step). Only on a receiver named as an iterator, in a file that
  defines no ``next`` method of its own (a prefetcher class's ``next()`` is its own API)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

BYTE_GATE: tuple[bytes, ...] = (
    *(b"pack_padded_sequence", b"librosa.output", b"ANTIALIAS", b"Image.LINEAR", b"Image.CUBIC", b"model_urls"),
    *(b"iter.next()", b"iterator.next()", b"iter).next()", b"].next()", b".data[0]"),
)
_PIL_GONE = {"ANTIALIAS": "LANCZOS", "LINEAR": "BILINEAR", "CUBIC": "BICUBIC"}
# torchvision's model modules: ``torchvision.models.resnet.model_urls``, ``models.vgg.model_urls``
_TV_MODELS = frozenset({"models", "torchvision"})


def _name(f: ast.expr) -> str | None:
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _iterator(node: ast.expr) -> bool:
    """``iter(loader)``, ``self.val_iter``, ``data_loader_iter``, ``self.dataloader_iter_list[i]``: an iterator."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "iter":
        return True
    if isinstance(node, ast.Subscript):
        node = node.value
    name = _name(node)
    return name is not None and "iter" in name.lower()


def removed_call_sites(tree: ast.Module) -> Iterable[tuple[ast.AST, str, bool | None]]:
    """(node, message, None: fails when the line runs) of each such call."""
    own_next = any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "next" for n in ast.walk(tree))
    for node in ast.walk(tree):
        message = _removed(node, own_next)
        if message is not None:
            yield node, message, None


def _removed(node: ast.AST, own_next: bool) -> str | None:
    """Why the node fails on the current stack, or None; ``own_next``: the file defines a ``next`` method."""
    if isinstance(node, ast.Assign):
        if (
            isinstance(node.value, ast.Call)
            and _name(node.value.func) == "pack_padded_sequence"
            and any(isinstance(t, (ast.Tuple, ast.List)) and len(t.elts) == 2 for t in node.targets)
        ):
            return (
                "x, y = pack_padded_sequence(...) (a torch PackedSequence has four fields since torch 1.1: "
                "ValueError, too many values to unpack)"
            )
    elif isinstance(node, ast.Attribute):
        owner = node.value
        librosa = isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name) and owner.value.id == "librosa"
        if librosa and isinstance(owner, ast.Attribute) and owner.attr == "output":
            return f"librosa.output.{node.attr} (librosa 0.8 removed librosa.output: AttributeError)"
        if node.attr in _PIL_GONE and _name(owner) == "Image":
            return f"Image.{node.attr} (Pillow 10 removed it, use Image.{_PIL_GONE[node.attr]}: AttributeError)"
        if node.attr == "model_urls" and isinstance(owner, ast.Attribute) and _name(owner.value) in _TV_MODELS:
            return f"{ast.unparse(node)} (torchvision's model modules no longer define it: AttributeError)"
    elif isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "next" and not node.args and not own_next and _iterator(f.value):
            return (
                f"{ast.unparse(f)}() (the py2 iterator method: torch's DataLoader iterator has no next, "
                "AttributeError; use next(it))"
            )
    elif (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "data"
        and isinstance(node.slice, ast.Constant)
        and node.slice.value == 0
        and "loss" in (_name(node.value.value) or "").lower()
    ):
        return f"{ast.unparse(node)} (a loss is a 0-dim torch tensor since torch 0.4: IndexError, use .item())"
    return None
