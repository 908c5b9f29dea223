"""Batches padded to their own longest sample (rule ``dynamic-padding``): ``pad_sequence`` in a collator, a pad or
allocation to ``max(len(s) for s in batch)`` (VITS, lit-llama), a tokenizer asked for ``padding="longest"`` (BLIP).
Each batch gets a new length: a new shape, a recompile, under torch.compile."""

from __future__ import annotations

import ast
import re

from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.post_kit import unit_trees

_FUNC = (ast.FunctionDef, ast.AsyncFunctionDef)
# Lines a batch is padded to its longest on: ``max(len(...))``, or a tokenizer call's ``padding="longest"``/``True``;
# matched at each ``bytes.find`` hit (a regex scan of every file of a library costs more than the parse it saves).
_MAX_LEN_AT = re.compile(rb"max\((?:\s*\[)?\s*(?:len\(|map\(\s*len\b)")
_PADDING_AT = re.compile(rb"padding\s*=\s*(?:[\"']longest[\"']|True)")


def _lines_at(data: bytes, word: bytes, pattern: re.Pattern[bytes]) -> list[int]:
    out: list[int] = []
    i = data.find(word)
    while i != -1:
        if pattern.match(data, i) is not None:
            out.append(data.count(b"\n", 0, i) + 1)
        i = data.find(word, i + len(word))
    return out


def collator_pads(tree: ast.Module) -> list[tuple[ast.Call, str]]:
    """``pad_sequence`` calls in a collator (a class or def named ``*collat*``): torch pads to the longest sequence
    of the list, so every batch has its own length (a new shape, a recompile, under torch.compile)."""
    out: list[tuple[ast.Call, str]] = []
    collators = [s for s in ast.walk(tree) if isinstance(s, (ast.ClassDef, *_FUNC)) and "collat" in s.name.lower()]
    # a module-level helper a collator calls by name (the E(3) diffusion's ``batch_stack``, which ``collate_fn``
    # applies to every property): its pads are the collator's
    helpers = {n.name: n for n in tree.body if isinstance(n, _FUNC)}
    called = {
        c.func.id: scope.name
        for scope in collators
        for c in ast.walk(scope)
        if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id in helpers
    }
    scopes: list[tuple[ast.AST, str]] = [(s, s.name) for s in collators]
    scopes += [(helpers[h], f"{h} (called by {by})") for h, by in called.items()]
    for scope, where in scopes:
        for node in ast.walk(scope):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                if name == "pad_sequence":
                    out.append((node, where))
    unique = {id(n): (n, w) for n, w in out}  # a def inside a collator class is walked twice
    return list(unique.values())


# Calls that allocate or pad a tensor to a length: the batch's shape follows their size arguments.
_SIZED = frozenset(
    {"zeros", "ones", "full", "empty", "new_zeros", "new_full", "new_ones", "LongTensor", "FloatTensor", "pad"}
)


def _is_max_len(v: ast.expr) -> bool:
    """``max(len(s) for s in b)`` / ``max([len(s) ...])`` / ``max(map(len, b))``."""
    if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "max" and len(v.args) == 1):
        return False
    a = v.args[0]
    if isinstance(a, (ast.GeneratorExp, ast.ListComp)):
        e = a.elt
        return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "len"
    return (
        isinstance(a, ast.Call)
        and isinstance(a.func, ast.Name)
        and a.func.id == "map"
        and bool(a.args)
        and isinstance(a.args[0], ast.Name)
        and a.args[0].id == "len"
    )


def _holds(node: ast.AST, lines: list[int]) -> bool:
    lo, hi = getattr(node, "lineno", 0), getattr(node, "end_lineno", 0) or 0
    return any(lo <= ln <= hi for ln in lines)


def _calls_at(tree: ast.AST, lines: list[int]) -> list[ast.AST]:
    """The nodes on the way to ``lines``, descending only into nodes that hold one (a tokenizer class is large)."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if _holds(child, lines):
                out.append(child)
                todo.append(child)
    return out


def longest_pads(tree: ast.Module, lines: tuple[list[int], list[int]] | None = None) -> list[tuple[ast.AST, str]]:
    """A batch padded to its longest sample by hand (lit-llama's ``max_len = max(len(s) for s in input_ids)`` then
    a pad to it; VITS's ``torch.LongTensor(len(batch), max_text_len)``), or by a tokenizer asked to
    (``tokenizer(text, padding="longest", return_tensors="pt")``): a new length per batch."""
    out: list[tuple[ast.AST, str]] = []
    for fn in (n for n in ast.walk(tree) if isinstance(n, _FUNC) and (lines is None or _holds(n, lines[0]))):
        longest = {
            t.id
            for a in ast.walk(fn)
            if isinstance(a, ast.Assign) and _is_max_len(a.value)
            for t in a.targets
            if isinstance(t, ast.Name)
        }
        # a def nested in it that reads the length (lit-llama's ``pad_right``) pads to it when called
        readers = {
            d.name
            for d in ast.walk(fn)
            if isinstance(d, _FUNC)
            and d is not fn
            and any(isinstance(n, ast.Name) and n.id in longest for n in ast.walk(d))
        }
        for node in ast.walk(fn) if longest else ():
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            used = {
                n.id
                for a in (*node.args, *(k.value for k in node.keywords))
                for n in ast.walk(a)
                if isinstance(n, ast.Name)
            }
            if name in readers:
                used |= longest
            if (name in _SIZED or "pad" in name.lower()) and (hit := used & longest):
                out.append((node, f"{name}(...) to {sorted(hit)[0]} = max(len(...)): each batch padded to its longest"))
                break  # one line per function
    for node in _calls_at(tree, lines[1]) if lines is not None else ast.walk(tree):
        if isinstance(node, ast.Call) and any(k.arg == "return_tensors" for k in node.keywords):
            pad = next((k.value for k in node.keywords if k.arg == "padding"), None)
            f = node.func
            if "Collator" in (f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""):
                continue  # a Hugging Face collator: its own line (``DataCollatorForSeq2Seq``)
            if isinstance(pad, ast.Constant) and pad.value in ("longest", True):
                out.append((node, f"tokenizer padding={pad.value!r}: each batch padded to its longest text"))
    return out


def padding_lines(data: bytes) -> list[RawFinding]:
    """The pads to a batch's longest of one source (``longest_pads``), read from a whole file behind a byte gate:
    only the blocks holding a ``max(len(`` or a ``padding="longest"`` line are parsed (a library's tokenizers name
    ``padding=True`` in hundreds of docstrings and calls)."""
    if b"max(" not in data and b"padding" not in data:
        return []
    maxlen = _lines_at(data, b"max(", _MAX_LEN_AT)
    padded = _lines_at(data, b"padding", _PADDING_AT)
    lines = maxlen + padded
    if not lines:
        return []
    trees = unit_trees(data, lines)
    if not trees:
        return []
    text = data.decode("utf-8", "replace").splitlines()
    out: list[RawFinding] = []
    for tree in trees:
        for node, msg in longest_pads(tree, (maxlen, padded)):
            ln = getattr(node, "lineno", 0)
            out.append(("dynamic-padding", ln, msg, text[ln - 1] if 0 < ln <= len(text) else "", None, None))
    return out
