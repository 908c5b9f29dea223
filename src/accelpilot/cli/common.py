"""Helpers shared by command modules: consoles and JSON output."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

import pydantic_core

if TYPE_CHECKING:
    from rich.console import Console


class _LazyConsole:
    """A rich Console made on first use, standing in for it: every attribute, and ``with``, go to that Console.

    Every command module imports the consoles, but JSON output (``bill --json`` at catalog scale) never prints
    through rich: importing ``rich.console`` and making two consoles was ~25 ms of each start (issue 10's speed).
    """

    __slots__ = ("_console", "_make")

    def __init__(self, make: Callable[[], Console]) -> None:
        object.__setattr__(self, "_make", make)
        object.__setattr__(self, "_console", None)

    def _get(self) -> Console:
        c: Console | None = self._console
        if c is None:
            c = self._make()
            object.__setattr__(self, "_console", c)
        return c

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._get(), name, value)

    def __enter__(self) -> Console:
        return self._get().__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._get().__exit__(*exc)


def _stdout_console() -> Console:
    from rich.console import Console

    # Piped output is not a terminal: rich would wrap at 80 columns and cut names; use a wide page instead.
    return Console(width=None if sys.stdout.isatty() else 180)


def _stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


console = cast("Console", _LazyConsole(_stdout_console))
err_console = cast("Console", _LazyConsole(_stderr_console))


def print_json(data: Any, *, plain: bool = False) -> None:
    """Machine output on stdout, nothing else mixed in: UTF-8 JSON, indented on a terminal, compact otherwise.

    Indented for a person reading a terminal; compact when piped or redirected, where a script reads it (as
    ``gh api`` does): at 1,000 bill options the indentation was 44% of the 20 MB written and half the encoding
    time (issue 10). pydantic-core's encoder, not ``json.dumps``: with ``indent`` the standard library falls back
    to its pure-Python encoder, which took most of ``bill --json``'s time and memory.

    ``plain``: ``data`` holds only JSON's own types (str-keyed dicts, lists, str, int, float, bool, None), as
    ``bill_to_json`` makes. Compact, it is then encoded by orjson: the same bytes as pydantic-core's for such data,
    about 3x faster (16 against 46 ms for a 1,000-option bill). Anything it refuses (an int over 64 bits) goes
    to pydantic-core; other data always does (orjson writes datetimes, sets and non-str keys differently).
    """
    out = getattr(sys.stdout, "buffer", None)
    tty = sys.stdout.isatty()
    text = _orjson_bytes(data) if plain and not tty else None
    if text is None:
        text = pydantic_core.to_json(data, indent=2 if tty else None, fallback=str)
    if out is None:  # a text-only stream (some test harnesses)
        sys.stdout.write(text.decode("utf-8") + "\n")
        return
    sys.stdout.flush()
    out.write(text)
    out.write(b"\n")  # apart: ``text + b"\n"`` would copy the text (11 MB for a 1,000-option bill)
    out.flush()


def _orjson_bytes(data: Any) -> bytes | None:
    """Compact JSON of plain data by orjson, or None where orjson is missing or refuses it."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - a declared dependency; pydantic-core writes the same bytes
        return None
    try:
        return orjson.dumps(data)
    except TypeError:  # orjson.JSONEncodeError: an int over 64 bits, a non-str key
        return None


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off for one bounded, allocation-heavy step.

    A bill at catalog scale builds ~150,000 small figure objects that form no reference cycles; the collector's
    full passes over them were about a quarter of ``bill --json``'s time at 1,000 options and freed nothing
    (issue 10, benchmarks/bill_scale.py). Reference counting still frees everything as usual.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # Everything made meanwhile is still young: the first collection after enabling would walk it all. Move
        # it straight to the oldest generation instead (freeze, then unfreeze into it), where a later full pass
        # still finds any cycle.
        gc.freeze()
        gc.unfreeze()
        if was:
            gc.enable()
