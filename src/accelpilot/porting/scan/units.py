"""Units: the smallest blocks of a file that parse on their own, and the docstrings a trigger line may sit in.

The pruning pass (``prune.py``) finds the lines where some rule's token appears; this module cuts the file into the
top-level blocks (``def``/``class``/statement, or a class's members) that hold such a line, so only those are parsed
(``parse_unit``), and drops the hits inside docstrings. Split from ``prune.py`` (issue 27's 600-line limit).
"""

from __future__ import annotations

import ast
import bisect
import re

from accelpilot.porting.scan.patterns import DISPATCHED_BY_DEFAULT
from accelpilot.porting.scan.prune import lexed

_CONTINUATION = (b"else", b"elif", b"except", b"finally", b"case")
# A newline-first pattern searches much faster than "^" with re.M (the engine skips to each "\n").
_COL0 = re.compile(rb"\n[^ \t\r\n#)\]}]")
_COL4 = re.compile(rb"\n    [^ \t\r\n#)\]}]")
_WORD = re.compile(rb"\w+")
_CLASS_WRAPPER = b"class _:\n"
_DISPATCHER = re.compile(b"|".join(re.escape(n.encode()) for n in sorted(DISPATCHED_BY_DEFAULT)))

# A unit is (first line, start offset, end offset, is_class_member): the smallest block parsed on its own.
Unit = tuple[int, int, int, bool]


def string_spans(data: bytes) -> list[tuple[int, int]]:
    """The interiors of the file's triple-quoted strings, as (offset after the opening quotes, offset of the closing
    quotes), paired in order with ``bytes.find``. A docstring's lines at column 0 or 4 ("Args:") are no statements:
    without this, a block starting inside one fails to parse and the whole file is parsed instead (a tenth of the
    scan's time on transformers). Triple quotes in a comment or inside a one-line string open nothing, and an
    escaped one closes nothing; a pairing still fooled only moves a boundary (a unit that then fails to parse falls
    back to the whole file) or keeps a docstring's lines (``outside_docstrings`` tests each string it drops)."""
    spans: list[tuple[int, int]] = []
    find = data.find
    floor = 0  # where the text after the last string starts
    i = 0
    nd, ns = find(b'"""'), find(b"'''")
    while True:
        if nd != -1 and nd < i:  # each kind is searched again only once passed: no rescan of the file per string
            nd = find(b'"""', i)
        if ns != -1 and ns < i:
            ns = find(b"'''", i)
        if nd == -1 and ns == -1:
            return spans
        q, s = (b'"""', nd) if ns == -1 or (nd != -1 and nd < ns) else (b"'''", ns)
        if not _code_at(data, max(floor, data.rfind(b"\n", 0, s) + 1), s):
            i = s + 3  # in a comment or a one-line string: not an opening
            continue
        e = find(q, s + 3)
        while e != -1 and _escaped(data, e):
            e = find(q, e + 1)
        if e == -1:
            return spans  # unterminated: the parse fails and falls back to the whole file
        spans.append((s + 3, e))
        i = floor = e + 3


def _code_at(data: bytes, start: int, s: int) -> bool:
    """Reading the line from ``start`` (outside any string), offset ``s`` is neither in a comment nor inside a
    one-line string."""
    last = 0
    for _, c, quote in lexed(data, start, s):
        if not quote and c == 35:  # "#"
            return False
        last = quote
    return not last


def _escaped(data: bytes, e: int) -> bool:
    """An odd run of backslashes stands before offset ``e``."""
    k = e
    while k > 0 and data[k - 1] == 92:
        k -= 1
    return (e - k) % 2 == 1


def _gaps(spans: list[tuple[int, int]], start: int, end: int) -> list[tuple[int, int]]:
    """(pos, endpos) ranges for a newline-first line pattern that skip the string interiors: a match must end before
    an interior opens and start at or after its closing quotes."""
    out: list[tuple[int, int]] = []
    pos = start
    for o, c in spans[max(0, bisect.bisect_right(spans, (start, -1)) - 1) :]:
        if c < pos:
            continue
        if o >= end:
            break
        if o > pos:
            out.append((pos, o))
        pos = max(pos, c)
    if pos < end:
        out.append((pos, end))
    return out


def _blocks(
    data: bytes, rx: re.Pattern[bytes], start: int, end: int, indent: int, line0: int, spans: list[tuple[int, int]]
) -> list[Unit]:
    """Statements at one indentation between two offsets, outside triple-quoted strings; decorators stay with their
    def/class."""
    starts: list[tuple[int, int]] = []
    pos = start
    lineno = line0
    pending_decorator = False
    count = data.count
    first = [] if start > 0 or data[:1] in (b"", b" ", b"\t", b"\r", b"\n", b"#", b")", b"]", b"}") else [None]
    found = (m for a, b in _gaps(spans, max(0, start - 1), end) for m in rx.finditer(data, a, b))
    for m in (*first, *found):
        off = m.start() + 1 if m is not None else 0
        lineno += count(b"\n", pos, off)
        pos = off
        head = off + indent
        if data.startswith(_CONTINUATION, head):
            word = _WORD.match(data, head)
            if word and word.group(0) in _CONTINUATION:
                continue
        if pending_decorator:
            if data.startswith((b"def ", b"class ", b"async "), head):
                pending_decorator = False
            continue
        if data[head] == 64:  # "@"
            pending_decorator = True
        starts.append((lineno, off))
    member = indent > 0
    return [(ln, off, starts[i + 1][1] if i + 1 < len(starts) else end, member) for i, (ln, off) in enumerate(starts)]


# A line that opens a block (its body may start with a docstring); ")" ends a def header split over lines.
_BLOCK_HEAD = re.compile(rb"\)|(?:async[ \t]+)?(?:def|class|if|elif|else|for|while|with|try|except|finally)\b")


def outside_docstrings(data: bytes, hits: list[int], spans: list[tuple[int, int]]) -> list[int]:
    """The trigger lines that do not lie in a docstring: a triple-quoted string standing alone as the first statement
    of the file or of a block (it opens its line, only a comment follows it, and the code line before it opens a
    block). The visitor never reads a bare string statement (``PyVisitor.v_expr``), so a token in one (an example's
    ``from_pretrained``, an option list naming ``"cuda"``) parses nothing. A string the lexical test is unsure of
    (an attribute docstring, one after a def header with a comment) keeps its lines: never a line of code lost."""
    if not hits or not spans:
        return hits
    drop: set[int] = set()
    pos, line = 0, 1
    count = data.count
    for o, c in spans:
        s = o - 3
        line += count(b"\n", pos, s)
        pos = s
        last = line + count(b"\n", s, c)
        i = bisect.bisect_left(hits, line)
        if i == len(hits) or hits[i] > last or not _is_docstring(data, s, c):
            continue
        while i < len(hits) and hits[i] <= last:
            drop.add(hits[i])
            i += 1
    return [h for h in hits if h not in drop] if drop else hits


def _is_docstring(data: bytes, s: int, c: int) -> bool:
    """The triple-quoted string from ``s`` (its first quote) to ``c`` (its closing quotes) is a block's or the file's
    first statement, read lexically (see ``outside_docstrings``)."""
    ls = data.rfind(b"\n", 0, s) + 1
    head = data[ls:s].strip()
    if head and not (len(head) <= 2 and head.isalpha()):  # only a string prefix (r, b, rb, u, f) may come before
        return False
    nl = data.find(b"\n", c + 3)
    tail = data[c + 3 : len(data) if nl == -1 else nl].strip()
    if tail and not tail.startswith(b"#"):
        return False
    end = ls - 1
    while end > 0:  # the code line before: blank and comment lines skipped
        start = data.rfind(b"\n", 0, end) + 1
        prev = data[start:end].strip()
        if prev and not prev.startswith(b"#"):
            return prev.endswith(b":") and _BLOCK_HEAD.match(prev) is not None
        end = start - 1
    return True  # no code before it: the module docstring


def units(data: bytes, hits: list[int], spans: list[tuple[int, int]] | None = None) -> list[Unit]:
    """The units holding a trigger line: top-level blocks, or single members (methods) of a top-level class.
    ``spans``: the file's ``string_spans`` when the caller has them."""
    spans = string_spans(data) if spans is None else spans
    tops = _blocks(data, _COL0, 0, len(data), 0, 1, spans)
    top_lines = [u[0] for u in tops]
    chosen: dict[int, Unit] = {}
    split: dict[int, tuple[list[Unit], list[int]]] = {}
    for h in hits:
        i = bisect.bisect_right(top_lines, h) - 1
        if i < 0:
            continue
        ln, start, end, _ = tops[i]
        head = start
        while data.startswith(b"@", head):  # skip decorators to see whether this is a class
            nl = data.find(b"\n", head)
            head = nl + 1 if nl != -1 else end
        # A dispatcher decorator gives the whole body its context (``PyVisitor.v_class``): such a class is parsed whole
        if not data.startswith(b"class ", head) or end - start < 2000 or _DISPATCHER.search(data, start, head):
            chosen[start] = tops[i]
            continue
        if i not in split:
            body = data.find(b"\n", head) + 1
            members = _blocks(data, _COL4, body, end, 4, ln + data.count(b"\n", start, body), spans)
            # "class X(...):" plus its first statement (a class body is never empty: a header alone cannot parse),
            # then the rest one member each
            first = members[0][2] if members else end
            header = (ln, start, first, False)
            units = [header, *members[1:]]
            split[i] = (units, [u[0] for u in units])
        units, lines = split[i]
        j = bisect.bisect_right(lines, h) - 1
        if j >= 0:
            chosen[units[j][1]] = units[j]
    return [chosen[k] for k in sorted(chosen)]


def top_units(data: bytes, lines: list[int], spans: list[tuple[int, int]]) -> list[Unit]:
    """The top-level blocks (whole classes, defs, statements) holding any of ``lines``, in file order."""
    tops = _blocks(data, _COL0, 0, len(data), 0, 1, spans)
    starts = [u[0] for u in tops]
    chosen = {i for i in (bisect.bisect_right(starts, ln) - 1 for ln in lines) if i >= 0}
    return [tops[i] for i in sorted(chosen)]


def parse_unit(data: bytes, unit: Unit) -> ast.Module:
    ln, start, end, member = unit
    if member:  # keep the indentation valid: a dummy class around one method, at the same line numbers
        return ast.parse(b"\n" * (ln - 2) + _CLASS_WRAPPER + data[start:end])
    return ast.parse(b"\n" * (ln - 1) + data[start:end])
