"""Pruning: find the lines where some Python detector could fire, and the smallest blocks that hold them.

Speed comes from not parsing what cannot match: the trigger pass finds the lines where some rule's token appears;
only the top-level blocks (``def``/``class``/statement) holding such a line are parsed, and the visitor skips every
subtree whose line span holds no trigger. Every detector's evidence contains one of the trigger tokens, which is
what makes the pruning exact; ``tests/porting/scan/test_prune.py`` checks pruned and full scans agree.
"""

from __future__ import annotations

import ast
import bisect
import functools
import re
from collections.abc import Callable, Iterator

from accelpilot.porting.scan.patterns import DISPATCHED_BY_DEFAULT, QUOTED_WORDS, import_root
from accelpilot.porting.scan.reach import word_positions


def _not_code(data: bytes, i: int) -> bool:
    """The position is on a comment line or a doctest line (``>>>``/``...``), which never holds code paths."""
    ls = data.rfind(b"\n", 0, i) + 1
    head = data[ls:i].lstrip()
    return head.startswith((b"#", b">>>", b"... "))


def _in_forward(data: bytes, i: int) -> bool:
    """Lexically: the nearest ``def``/``class`` header indented less than this line is ``def forward``."""
    ls = data.rfind(b"\n", 0, i) + 1
    line = data[ls:i]
    ci = len(line) - len(line.lstrip(b" \t"))
    k = i
    while k > 0:
        k = max(data.rfind(b"def ", 0, k), data.rfind(b"class ", 0, k))
        if k < 0:
            return False
        hs = data.rfind(b"\n", 0, k) + 1
        head = data[hs:k]
        pad = head.lstrip(b" \t")
        if pad in (b"", b"async ") and len(head) - len(pad) < ci:
            return data.startswith(b"def forward", k) and not data[k + 11 : k + 12].isalnum()
    return False


def _one_argument(data: bytes, j: int) -> bool:
    """``torch.where(`` at ``j`` (just past "where"): True unless a top-level comma shows two or more arguments."""
    depth = 0
    for k in range(j, min(len(data), j + 400)):
        c = data[k]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
            if depth == 0:
                return True
        elif c == 44 and depth == 1:  # ","
            return False
    return True


def _inside_brackets(data: bytes, i: int) -> bool:
    ls = data.rfind(b"\n", 0, i) + 1
    head = data[ls:i]
    return head.count(b"[") > head.count(b"]")


def _lexed(data: bytes, k: int, end: int) -> Iterator[tuple[int, int, int]]:
    """(offset, byte, the quote of the one-line string literal open after it, else 0) for the bytes from ``k`` to
    ``end``: a quote opens or closes a literal, and a backslash inside one escapes the next byte (not yielded). The
    three lexical checks below read code bytes as those with 0."""
    quote = 0
    while k < end:
        c = data[k]
        if quote:
            if c == 92:
                k += 1
            elif c == quote:
                quote = 0
        elif c in b"\"'":
            quote = c
        yield k, c, quote
        k += 1


def _compares_in_index(data: bytes, i: int) -> bool:
    """The bracket opening at ``i`` holds, on its line and outside string literals, a comparison at its own depth
    (what ``_BRACKET_COMPARE`` looks for, with strings read: ``["<unk>", "<pad>"]`` holds none)."""
    end = data.find(b"\n", i)
    depth = 0
    for k, c, quote in _lexed(data, i, len(data) if end == -1 else end):
        if quote:
            continue
        if c == 91:  # "["
            depth += 1
        elif c == 93:  # "]"
            depth -= 1
            if depth == 0:
                return False
        elif depth == 1 and (c in b"<>" or (c in b"=!" and data[k + 1 : k + 2] == b"=")):
            return True
    return False


def _on_condition_line(data: bytes, i: int) -> bool:
    """The token sits on a line with an if/elif/while/assert (a branch on a tensor value)."""
    ls = data.rfind(b"\n", 0, i) + 1
    head = data[ls:i]
    return b"if " in head or b"while " in head or b"assert " in head


# Each detector's evidence contains one of these tokens (or a match of PY_REGEXES below); a token with a check
# counts only where the check holds. Few passes matter more than few hits: each pass reads every byte.
_Check = Callable[[bytes, int, int], bool] | None
_SCHEMES = (b"s3", b"gs", b"az", b"abfss", b"wasbs")


# ``name = `` or ``obj.attr = `` and nothing else before the token: the only torch.cat the visitor reports.
_ASSIGNED = re.compile(rb"[ \t]*[\w.]+(?:\[[^\]\n=]*\])?[ \t]*=[ \t]*")  # ``seq =``, ``cache[module] =``


def _called(data: bytes, i: int, n: int) -> bool:
    j = i + n
    while j < len(data) and data[j] in b" \t\r\n":
        j += 1
    return data[j : j + 1] == b"("


def _grows_in_loop(data: bytes, i: int, n: int) -> bool:
    """``name = torch.cat(`` naming ``name`` in its arguments, on a line inside a ``for``/``while`` of the same
    function (read lexically: the enclosing headers, each indented less than the last, up to the first
    ``def``/``class``)."""
    ls = data.rfind(b"\n", 0, i) + 1
    if _ASSIGNED.fullmatch(data, ls, i) is None:
        return False
    if not _names_target(data, ls, i + n):
        # the cheap tests first: most concats join other names, and need no walk back; but a name read from a
        # state entry of past keys (``pk = self._streaming_state['past_keys']``) may be a cache grown in two steps
        return _joins_state_read(data, ls, i + n)
    target = data[ls:i].split(b"=", 1)[0].strip().split(b"[", 1)[0].rpartition(b".")[2].lower()
    if b"cache" in target or b"past" in target:
        return True  # a KV cache grown by concatenation, in a loop or not (``PyVisitor._grown_cache``)
    if _PAST_FIRST.match(data, i + n) is not None:
        return True  # ``torch.cat([past_key_value[0], key_states], dim=2)``: the legacy tuple cache (``dataflow``)
    line = data[ls:i]
    indent = len(line) - len(line.lstrip(b" \t"))
    end = ls - 1
    while indent > 0 and end > 0:
        start = data.rfind(b"\n", 0, end) + 1
        text = data[start:end]
        body = text.lstrip(b" \t")
        pad = len(text) - len(body)
        if body and not body.startswith(b"#") and pad < indent:
            indent = pad
            if body.startswith((b"for ", b"while ", b"async for ")):
                return True
            if body.startswith((b"def ", b"async def ", b"class ")):
                return False
        end = start - 1
    return False


_WORD = re.compile(rb"[A-Za-z_]\w*")
# the call's first element indexes a name of past states or a cache: ``([past_key_value[0], ...``, ``([layer_past[1]``
_PAST_FIRST = re.compile(rb"[ \t]*\([ \t]*[\[(][ \t]*\w*(?:past|cache)\w*[ \t]*\[", re.I)


# ``pk = self._streaming_state['past_keys']``: a line that binds a name to an attribute or a subscript, nothing
# else (anchored at the line's start, so a file's other lines are rejected at their first characters)
_STATE_READ = re.compile(rb"^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*[\w.]+(?:\[[^\]\n]*\])?[ \t]*$", re.M)


@functools.lru_cache(maxsize=4)
def _state_names(data: bytes) -> frozenset[bytes]:
    """Names the file binds to an attribute or entry naming past keys or a cache (read once per file: a bytes
    object keeps its hash)."""
    return frozenset(
        m.group(1)
        for m in _STATE_READ.finditer(data)
        if b"past" in m.group(0).lower() or b"cache" in m.group(0).lower()
    )


def _joins_state_read(data: bytes, ls: int, j: int) -> bool:
    """A name among the first arguments of the call at ``j`` is assigned in the file from an expression naming
    past keys or a cache (``dataflow._state_round_trip`` decides)."""
    names = _state_names(data)
    end = data.find(b"\n", j)  # the call's first line only: the next lines hold other statements' names
    return bool(names) and any(
        w in names for w in _WORD.findall(data, j, min(end if end != -1 else len(data), j + 120))
    )


_CALL_SCAN = 4000  # bytes of a call's arguments read for the target; a longer call is kept unread


def _names_target(data: bytes, ls: int, j: int) -> bool:
    """The call opening at ``j`` (just past ``torch.cat``) names, as a word in its arguments, the last part of the
    name assigned on the line at ``ls``: ``seq = torch.cat([seq, tok])`` grows ``seq``; ``out = torch.cat([a, b])``
    is a one-off join the visitor never reports (``v_assign`` wants the target among the list's elements)."""
    target = data[ls:j].split(b"=", 1)[0].strip().split(b"[", 1)[0].rpartition(b".")[2]
    opening = j
    while opening < len(data) and data[opening] in b" \t":
        opening += 1
    if data[opening : opening + 1] != b"(":
        return True  # not read as a call here: kept
    depth = 0
    for k, c, quote in _lexed(data, opening, min(len(data), opening + _CALL_SCAN)):
        if quote:
            if c == 10:
                return True  # a string running past its line (triple-quoted): not read here, kept
        elif c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
            if depth == 0:
                return any(True for _ in word_positions(data[j : k + 1], target))
    return True  # no end found within the bound: kept


def _uri(data: bytes, i: int, n: int) -> bool:
    return data[max(0, i - 5) : i].endswith(_SCHEMES)


PY_TOKENS: tuple[tuple[bytes, _Check], ...] = (
    *(
        (t, None)
        for t in (
            b"cuda",
            b"CUDA",
            b"NCCL",
            b"nvidia",
            b"neuron",
            b"dcgm",
            b"DCGM",
            b"load_inline",
            b"download",
            b"from_url",
            b"--g",
            b"nvme",
            b"/scratch",
            b"/raid",
            b"/local_disk",
            b"loudwatch",
            b"loudWatch",
            b"mask]",
        )
    ),
    (b"://", _uri),
    # issue 12's rules; a call name counts only when called, so mentions in docstrings cost no parse
    (b"cu_seqlens", None),
    (b"requests.", None),
    (b"urllib", None),
    (b"GPUS_PER_NODE", None),
    (b"nproc", None),
    (b"LD_PRELOAD", None),
    (b"get_kernel", _called),
    (b"torch.compile", _called),
    (b"torch.load", _called),
    (b"load_dataset", _called),
    (b"cached_file", _called),
    (b"torch.cat", _grows_in_loop),
    (b"use_experts_implementation", None),
    # issue 27's hazards
    (b"fused=", None),
    (b"scaled_dot_product_attention", None),
    (b"flops", None),
    (b"DataCollator", None),
    (b"Trainer(", None),
    (b"Fabric(", None),
    (b"fp16=True", None),
    (b"tf32=True", None),
    (b"fsdp=", None),
    (b"resize_token_embeddings", None),
    (b"trust_remote_code", None),
    (b"load_in_8bit", None),
    (b"load_in_4bit", None),
    (b"_for_int8_training", None),
    (b"_for_kbit_training", None),
    (b"torch.fft", None),
    (b"stft", None),
    (b"torch.nested", None),
    *(
        (w, None)
        for w in (b"nms(", b"roi_align", b"roi_pool", b"RoIAlign", b"RoIPool", b"eform_conv2d", b"eformConv2d")
    ),
    (b"DataParallel(", None),
    (b"SyncBatchNorm", None),
    (b"convert_sync_batchnorm(", None),
    (b"parallel_apply(", None),
)
_CONDITION_METHODS = frozenset({b"any", b"all", b"sum", b"max", b"min", b"mean", b"norm", b"equal", b"allclose"})
_FORWARD_ONLY = frozenset({b"item", b"tolist", b"numpy", b"long"}) | _CONDITION_METHODS
_DOT = re.compile(
    rb"\.(item|tolist|numpy|long(?=\()|double|float64|any|all|sum|max|min|mean|norm|equal|allclose|nonzero|unique"
    rb"|unique_consecutive|masked_select|argwhere|bincount|where|complex\w*|cfloat|cdouble|chalf|polar"
    rb"|view_as_complex|backends|hub|from_pretrained|jit|autotune|mps|neuron|cuda)\b|\.bool\(\)"
)
# "[" then a comparison later on the line, or "[name_mask," / "[name_mask]": boolean-mask indexing candidates.
_BRACKET_COMPARE = re.compile(rb"\[(?:(?:[^\[\]\n]|\[[^\[\]\n]*\])*?(?:[<>]|[=!]=)|[\w.\s]*mask\w*\s*[\],])")
# After ``int(``/``float(``, on the same line, a reduction call: a size read back from the data.
_READ_BACK = re.compile(rb"[^\n]*?\.(?:max|min|sum|amax|amin|argmax|argmin|count_nonzero|prod)\(")
_IMPORT_LINE = re.compile(rb"[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import|import[ \t]+([\w.]+))")
# Short quoted words, then a set lookup: far faster than one regex alternation of every name.
_QUOTED = re.compile(rb"[\"']([a-z_][\w:.{}%-]{1,30})[\"']")
_DEVICE_BYTES = re.compile(rb"(?:cuda|neuron|xla|mps)(?::(?:\d+|\{[^}]*\}|%[ds]))?$")  # patterns.DEVICE


def trigger_lines(data: bytes) -> list[int]:
    """Sorted line numbers holding a trigger (``bytes.find`` per token and a few literal-first regexes)."""
    positions: list[int] = []
    find = data.find
    for tok, check in PY_TOKENS:
        n = len(tok)
        i = find(tok)
        while i != -1:
            if (check is None or check(data, i, n)) and not _not_code(data, i):
                positions.append(i)
            i = find(tok, i + n)
    for m in _DOT.finditer(data):
        i = m.start()
        word = m.group(1)
        if word in _FORWARD_ONLY:
            if word in _CONDITION_METHODS and not _on_condition_line(data, i):
                continue
            if not _in_forward(data, i):
                continue
        elif word == b"where" and not _one_argument(data, m.end()):
            continue
        elif word is None and not _inside_brackets(data, i):
            continue  # ".bool()" counts only inside an index
        if not _not_code(data, i):
            positions.append(i)
    for tok in (b"int(", b"float("):  # ``int(lengths.max())`` in a forward (``CallRules._read_back``)
        i = find(tok)
        while i != -1:
            word_before = i > 0 and (data[i - 1 : i].isalnum() or data[i - 1 : i] in b"_.")
            if (
                not word_before
                and _READ_BACK.match(data, i + len(tok))
                and _in_forward(data, i)
                and not _not_code(data, i)
            ):
                positions.append(i)
            i = find(tok, i + len(tok))
    for m in _BRACKET_COMPARE.finditer(data):
        text = m.group(0)
        if b" for " in text:
            continue  # a comprehension's filter, not an index
        if (b'"' in text or b"'" in text) and not _compares_in_index(data, m.start()):
            continue  # the "<" of a string ("<pad>" in a token list), not a comparison: a tenth of the parsing
        if not _not_code(data, m.end() - 1):
            positions.append(m.end() - 1)
    quoted = set(_QUOTED.findall(data))
    if not (quoted & QUOTED_WORDS or any(_DEVICE_BYTES.match(w) for w in quoted if w[:1] in b"cnxm")):
        quoted.clear()
    for m in _QUOTED.finditer(data) if quoted else ():
        w = m.group(1)
        if (w in QUOTED_WORDS or _DEVICE_BYTES.match(w)) and not _not_code(data, m.end() - 1):
            positions.append(m.end() - 1)
    i = find(b"import ")
    while i != -1:
        ls = data.rfind(b"\n", 0, i) + 1
        im = _IMPORT_LINE.match(data, ls)
        if im and import_root(im.group(1) or im.group(2)):
            positions.append(ls)
        i = find(b"import ", i + 7)
    if not positions:
        return []
    positions.sort()
    lines: list[int] = []
    pos = 0
    lineno = 1
    count = data.count
    for p in positions:
        lineno += count(b"\n", pos, p)
        pos = p
        if not lines or lines[-1] != lineno:
            lines.append(lineno)
    return lines


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
    for _, c, quote in _lexed(data, start, s):
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
