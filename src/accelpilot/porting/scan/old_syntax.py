"""Sources written for an older Python (rule ``stack-upgrade``, library python; issue 27).

DARTS moves its batches with ``.cuda(async=True)``: ``async`` is a keyword since Python 3.7, so ``python
train_search.py`` raises ``SyntaxError`` on the Python a TorchNeuron environment runs (3.10 or later; tried on
3.11) before it runs anything. Such a file is not skipped: ``repair`` rewrites each line that fails for one of the
forms below (``async=`` as ``non_blocking=``, the form's modern spelling where it has one, else ``pass``), the
repaired text is scanned as the file (its other lines keep their numbers and findings), and each repaired line
becomes an ``import-time`` ``stack-upgrade`` line: the module cannot be imported, so the item blocks where the
default path runs or imports it (``stack_blocking.mark_stack_blocking``). The forms, each a ``SyntaxError`` on
Python 3.11 (tried):

- ``async`` or ``await`` as a name or keyword argument (keywords since Python 3.7);
- Python 2's ``print x`` and ``exec "..."`` statements, ``except E, e:``, backquotes, ``<>``, ``0777`` octal
  literals and ``ur"..."`` strings.

A syntax error of any other kind (a newer Python's syntax, a template, a merge conflict) stays a skip.
"""

from __future__ import annotations

import ast
import re

from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.stack_upgrade import IMPORT_TIME, RULE

MARK = "SyntaxError on Python 3"  # the end of a repaired line's message
_MAX_REPAIRS = 64
_ASYNC = re.compile(r"\b(async|await)(\s*=)(?!=)")
_EXCEPT_COMMA = re.compile(r"^(\s*except\s+[\w.]+)\s*,\s*(\w+\s*:)")
_FORMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"\b(?:async|await)\s*=(?!=)|\.(?:async|await)\b"),
        "`async`/`await` as a name (keywords since Python 3.7)",
    ),
    (re.compile(r"^\s*print\s+[^\s(=.,)\]]"), "a Python 2 `print` statement"),
    (re.compile(r"^\s*exec\s+[\"'\w]"), "a Python 2 `exec` statement"),
    (_EXCEPT_COMMA, "Python 2's `except E, e:`"),
    (re.compile(r"`[^`]+`"), "Python 2 backquotes"),
    (re.compile(r"<>"), "Python 2's `<>`"),
    (re.compile(r"(?<![\w.])0\d+\b"), "a Python 2 octal literal"),
    (re.compile(r"\b[uU][rR][\"']"), "a Python 2 `ur` string"),
)

Repair = tuple[int, str, str]  # (line, the form, the line as written)


def repair(text: str) -> tuple[str, list[Repair]] | None:
    """The text with each line that fails for an old form rewritten, and those lines; None when it parses as it is,
    or fails for anything else."""
    lines = text.split("\n")
    fixes: list[Repair] = []
    for _ in range(_MAX_REPAIRS):
        try:
            ast.parse("\n".join(lines))
        except SyntaxError as exc:
            at = (exc.lineno or 0) - 1
            if not 0 <= at < len(lines) or any(ln == at + 1 for ln, _, _ in fixes):
                return None
            line = lines[at]
            form = next((what for pattern, what in _FORMS if pattern.search(line)), None)
            if form is None:
                return None
            fixes.append((at + 1, form, line))
            lines[at] = _rewritten(line)
            continue
        except (ValueError, RecursionError, MemoryError):
            return None
        return ("\n".join(lines), fixes) if fixes else None
    return None


def _rewritten(line: str) -> str:
    """The line in today's Python where the form has a spelling (``non_blocking=``, ``except E as e:``), else
    ``pass`` at its indentation (a statement that kept its line, so every other line keeps its number)."""
    fixed = _ASYNC.sub(lambda m: ("non_blocking" if m.group(1) == "async" else "await_") + m.group(2), line)
    fixed = re.sub(r"\.(async|await)\b", r".\1_", fixed)
    fixed = _EXCEPT_COMMA.sub(r"\1 as \2", fixed)
    if fixed != line:
        return fixed
    indent = line[: len(line) - len(line.lstrip())]
    return f"{indent}if True:" if line.rstrip().endswith(":") else f"{indent}pass"


def repaired_lines(fixes: list[Repair]) -> list[RawFinding]:
    """The ``stack-upgrade`` lines of a repaired file."""
    return [(RULE, ln, f"{form}: {MARK}", source, IMPORT_TIME, None) for ln, form, source in fixes]


def repaired_source(data: bytes) -> bytes:
    """A file's bytes as the scan read them: repaired where ``repair`` applies, else as they are."""
    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    fixed = repair(text)
    return fixed[0].encode() if fixed is not None else data
