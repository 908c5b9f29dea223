"""Pruning: find the lines where some Python detector could fire, and the smallest blocks that hold them.

Speed comes from not parsing what cannot match: the trigger pass finds the lines where some rule's token appears;
only the top-level blocks (``def``/``class``/statement) holding such a line are parsed, and the visitor skips every
subtree whose line span holds no trigger. Every detector's evidence contains one of the trigger tokens, which is
what makes the pruning exact; ``tests/porting/scan/test_prune.py`` checks pruned and full scans agree.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator

from accelpilot.porting.scan.patterns import QUOTED_WORDS, import_root
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


def lexed(data: bytes, k: int, end: int) -> Iterator[tuple[int, int, int]]:
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
    for k, c, quote in lexed(data, i, len(data) if end == -1 else end):
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
    for k, c, quote in lexed(data, opening, min(len(data), opening + _CALL_SCAN)):
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
    # torchaudio's spectral transforms (``patterns.TORCHAUDIO_STFT``) compute a torch.stft inside
    *(
        (w, None)
        for w in (b"stft", b"pectrogram", b"MFCC", b"LFCC", b"riffin", b"pectralCentroid", b"pectral_centroid")
    ),
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
