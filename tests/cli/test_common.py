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
