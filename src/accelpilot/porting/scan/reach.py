"""Reach within one file, read lexically: is a def only ever called from weight initialisation?

A float64 position table built in ``build_sincos(...)`` and called only from ``_init_weights`` runs when weights are
created, not in the compiled forward. Which def holds a line, and which defs name a function, are read from the
source bytes (indentation and ``def`` headers), so this needs no full parse of a pruned file; it runs only for the
few lines it is asked about.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterator

# Defs that initialise weights: transformers' ``_init_weights``/``init_weights``/``initialize_weights``
# (``_initialize_weights`` too). ``__init__`` is not one: a float64 buffer made there is what forward reads.
INIT_DEFS = re.compile(r"^_?init(ialize)?_weights$")
# Newline-first (the first line matched apart): sre skips to each "\n", twice as fast as "^" under re.M.
_HEADER = re.compile(rb"\n([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+(\w+)")
_FIRST_HEADER = re.compile(rb"([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+(\w+)")
_MAX_DEPTH = 4


_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def word_positions(data: bytes, word: bytes) -> Iterator[int]:
    """Starts of ``\\bword\\b`` in ``data``. For an identifier the leading boundary is checked by hand: a pattern that
    opens with the literal is found by sre's fast literal search, ten times faster than one opening with ``\\b``.
    No match is lost: a rejected match is all word bytes, so no word-bounded match can start inside it."""
    if not word or not all(b in _WORD_BYTES for b in word):
        yield from (m.start() for m in re.finditer(rb"\b" + re.escape(word) + rb"\b", data))
        return
    for m in re.finditer(re.escape(word) + rb"\b", data):
        pos = m.start()
        if pos == 0 or data[pos - 1] not in _WORD_BYTES:
            yield pos


class FileReach:
    """The ``def``/``class`` headers of one file, for "which def holds this line" and "who names this def"."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        first = _FIRST_HEADER.match(data)
        self.headers = [
            (m.start() + (m is not first), len(m.group(1)), m.group(2), m.group(3).decode())
            for m in (*((first,) if first else ()), *_HEADER.finditer(data))
        ]
        self.starts = [h[0] for h in self.headers]

    def enclosing_def(self, pos: int) -> str | None:
        """The innermost def holding the line at byte ``pos`` (None at module or class level)."""
        i = self._holder(pos)
        return None if i is None else self.headers[i][3]

    def classes_at_line(self, line: int) -> set[str]:
        """The classes whose body holds the line (nested ones too), read from headers and indentation."""
        if not 1 <= line <= len(self.line_starts):
            return set()
        ls = self.line_starts[line - 1]
        text = self.data[ls : ls + 400]
        indent = len(text) - len(text.lstrip(b" \t"))
        found: set[str] = set()
        for i in range(bisect.bisect_right(self.starts, ls) - 1, -1, -1):
            start, h_indent, kind, name = self.headers[i]
            if start < ls and h_indent < indent:
                if self._closed(start, ls, h_indent):
                    break  # that block ended before the line (``if x:`` at its level follows a class)
                indent = h_indent  # the header holding this line; go on outwards from it
                if kind == b"class":
                    found.add(name)
        return found

    def _closed(self, start: int, end: int, indent: int) -> bool:
        """A code line between the header at ``start`` and ``end`` is indented no deeper than the header: its block
        ended there (blank lines, comments and the header's own continuation lines aside)."""
        body = self.data.find(b":\n", start, end)  # the header's own line(s) end at the first ``:`` line end
        for line in self.data[body + 2 if body >= 0 else end : end].splitlines():
            stripped = line.lstrip(b" \t")
            if stripped and not stripped.startswith((b"#", b")", b"]", b"}")) and len(line) - len(stripped) <= indent:
                return True
        return False

    def _holder(self, pos: int) -> int | None:
        """Index in ``headers`` of the innermost def holding byte ``pos`` (None at module or class level)."""
        ls = self.data.rfind(b"\n", 0, pos) + 1
        line = self.data[ls : ls + 400]
        indent = len(line) - len(line.lstrip(b" \t"))
        for i in range(bisect.bisect_right(self.starts, ls) - 1, -1, -1):
            start, h_indent, kind, _ = self.headers[i]
            if start < ls and h_indent < indent:
                return i if kind == b"def" else None
        return None

    def sole_caller(self, name: str) -> tuple[str, int] | None:
        """``(caller, line of its def)`` when ``name`` is a helper (a module-level def or a ``_private`` method,
        defined once in this file) and every mention of it sits in that one other def: the caller's rewrite is the
        helper's. None when it is mentioned at module or class level, from two defs, or never (another file may
        call it)."""
        defs = [h for h in self.headers if h[2] == b"def" and h[3] == name]
        if len(defs) != 1 or not (defs[0][1] == 0 or (name.startswith("_") and not name.startswith("__"))):
            return None
        caller: int | None = None
        for pos in self._mentions(name):
            i = self._holder(pos)
            if i is None or (caller is not None and i != caller) or self.headers[i][3] == name:
                return None
            caller = i
        if caller is None:
            return None
        start = self.headers[caller][0]
        return self.headers[caller][3], self.data.count(b"\n", 0, start) + 1

    def _mentions(self, name: str) -> Iterator[int]:
        """Byte offsets of ``name`` as a word, outside comments and its own ``def``/``class`` header."""
        for pos in word_positions(self.data, name.encode()):
            ls = self.data.rfind(b"\n", 0, pos) + 1
            head = self.data[ls:pos].lstrip()
            if not (head.startswith(b"#") or head.endswith((b"def ", b"class "))):
                yield pos

    @functools.cached_property
    def line_starts(self) -> list[int]:
        """Byte offset of each line's start (built on first use: the sole-caller check never needs it)."""
        return [0, *(m.end() for m in re.finditer(rb"\n", self.data))]

    def def_at_line(self, line: int) -> str | None:
        if not 1 <= line <= len(self.line_starts):
            return None
        return self.enclosing_def(self.line_starts[line - 1])

    def only_reached_from(self, roots: frozenset[str], name: str) -> bool:
        """``name`` is one of ``roots``, or every mention of it in this file sits in a def only reached from them
        (``build_delay_pattern_mask``, called from ``generate`` and ``prepare_inputs_for_generation``). As in
        ``init_only``, a def never mentioned, or named at module level, is not shown to be reached only from them."""
        return self._reached_only_from(roots.__contains__, name)

    def init_only(self, name: str) -> bool:
        """``name`` is a weight-initialisation def, or every mention of it in this file (outside its own ``def``
        header and comments) sits in a def that is only reached from one. A def never mentioned is not shown to
        be init-only (another file may call it), nor is one named at module level (``__all__``, a default)."""
        return self._reached_only_from(lambda n: INIT_DEFS.match(n) is not None, name)

    def _reached_only_from(
        self, is_root: Callable[[str], bool], name: str, depth: int = 0, seen: frozenset[str] = frozenset()
    ) -> bool:
        """``name`` is a root, or every mention of it in this file sits in a def that is only reached from roots
        (callers followed to ``_MAX_DEPTH``; a cycle, a module-level mention or no mention at all shows nothing)."""
        if is_root(name):
            return True
        if depth >= _MAX_DEPTH or name in seen:
            return False
        callers: set[str] = set()
        for pos in self._mentions(name):
            caller = self.enclosing_def(pos)
            if caller is None:
                return False
            callers.add(caller)
        return bool(callers) and all(self._reached_only_from(is_root, c, depth + 1, seen | {name}) for c in callers)
