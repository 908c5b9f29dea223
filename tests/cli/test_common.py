"""The CLI's shared helpers: JSON on stdout and the collector pause around billing."""

from __future__ import annotations

import gc
import json
import weakref

import pytest

from accelpilot.cli.common import gc_paused, print_json


def test_print_json_writes_utf8_json_and_a_newline(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    print_json({"source": "USD/h × hours", "n": 1.5, "none": None})
    out = capsysbinary.readouterr().out
    assert out.endswith(b"\n")
    assert "×".encode() in out  # UTF-8 text, not \u00d7 escapes
    assert json.loads(out) == {"source": "USD/h × hours", "n": 1.5, "none": None}


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_the_collector_is_back_after_the_pause_and_still_frees_cycles_made_in_it() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        a, b = _Node(), _Node()
        a.other, b.other = b, a  # a cycle: reference counting alone never frees it
        alive = weakref.ref(a)
        del a, b
    assert gc.isenabled()
    gc.collect()
    assert alive() is None


def test_the_collector_stays_off_if_it_was_off() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


class _Tty:
    """A stdout that says it is a terminal, with a byte buffer behind it."""

    def __init__(self, tty: bool) -> None:
        import io

        self.buffer = io.BytesIO()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty

    def flush(self) -> None:
        pass

    def write(self, text: str) -> int:  # pragma: no cover - print_json writes bytes to .buffer
        return self.buffer.write(text.encode())


@pytest.mark.parametrize("tty", [True, False])
def test_print_json_indents_for_a_terminal_and_is_compact_for_a_pipe(
    monkeypatch: pytest.MonkeyPatch, tty: bool
) -> None:
    out = _Tty(tty)
    monkeypatch.setattr("sys.stdout", out)
    print_json({"a": [1, 2], "b": {"c": None}})
    text = out.buffer.getvalue()
    assert json.loads(text) == {"a": [1, 2], "b": {"c": None}}
    assert text == (
        b'{\n  "a": [\n    1,\n    2\n  ],\n  "b": {\n    "c": null\n  }\n}\n'
        if tty
        else b'{"a":[1,2],"b":{"c":null}}\n'
    )


def test_bill_json_imports_no_rich_and_the_consoles_are_made_on_first_use() -> None:
    """``bill --json`` prints through pydantic-core only: rich (its import, two consoles) is left to commands that
    print tables. The stand-in then behaves as the Console it makes: attributes, ``with``, printing."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from accelpilot.cli import main\n"
        "from accelpilot.cli.common import console, err_console\n"
        "rc = main(['bill', '--json'])\n"
        "before = sorted(m for m in sys.modules if m == 'rich' or m.startswith('rich.'))\n"
        "from rich.console import Console\n"
        "with err_console:\n"
        "    err_console.print('[bold]on stderr[/bold]')\n"
        "console.print('on stdout')\n"
        "print(rc, before, type(console._get()) is Console, console.width, file=sys.stderr)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(p.stdout.splitlines()[0])["options"]  # the bill, alone on its line
    assert p.stdout.splitlines()[1] == "on stdout"
    assert p.stderr.splitlines() == ["on stderr", "0 [] True 180"]  # piped: the wide page, as before


def test_plain_json_is_the_bytes_pydantic_core_writes(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """``plain=True`` (orjson, bill --json) writes what pydantic-core writes for plain data: the same bytes."""
    import pydantic_core

    data = {
        "source": "USD/h × hours \u2028 <b>\x00",
        "n": [0.1, 1 / 3, 1e16, 5e-05, -0.0, 123456.789, 2**53, -(2**63), 0, True, None],
        "nested": [{"leaves": [{"value": 21.5, "as_of": "2026-11-30"}]}, [], {}],
    }
    print_json(data, plain=True)
    assert capsysbinary.readouterr().out == pydantic_core.to_json(data) + b"\n"
    big = {"count": 2**64}  # orjson refuses ints over 64 bits: pydantic-core writes them
    print_json(big, plain=True)
    assert capsysbinary.readouterr().out == b'{"count":18446744073709551616}\n'
