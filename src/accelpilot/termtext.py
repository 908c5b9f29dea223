"""Text from files, shown in a terminal: control characters as visible escapes, rich markup escaped.

A catalog source, an option or a file name holding ``\\x1b[2J`` must print as those characters, never clear
the reader's screen; one holding ``[bold]`` is text, not rich markup. Every table the CLI prints passes the
strings it did not write itself through ``cell``.
"""

from __future__ import annotations

import re

from rich.markup import escape

# C0 and C1 controls, DEL, the Unicode line separators and the bidirectional overrides that reorder a line.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def visible(text: object) -> str:
    """``text`` with every control character written as ``\\xNN`` or ``\\uNNNN``."""
    return _CONTROL.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", str(text)
    )


def cell(text: object) -> str:
    """For rich: visible controls, escaped markup."""
    return escape(visible(text))


# For HTML: the same controls but tab, newline and carriage return, which HTML shows as spaces (a <pre> keeps them).
_HTML_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def html_text(value: object) -> object:
    """Jinja ``finalize`` for HTML: strings lose their raw controls (shown as escapes); autoescape then does the
    markup. Markup objects (HTML the renderer built) and non-strings pass through."""
    if not isinstance(value, str) or hasattr(value, "__html__"):
        return value
    return _HTML_CONTROL.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", value
    )
