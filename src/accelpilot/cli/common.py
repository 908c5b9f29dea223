"""Helpers shared by command modules: consoles and JSON output."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

# Piped output is not a terminal: rich would wrap at 80 columns and cut names; use a wide page instead.
console = Console(width=None if sys.stdout.isatty() else 180)
err_console = Console(stderr=True)


def print_json(data: Any) -> None:
    """Machine output on stdout, nothing else mixed in."""
    sys.stdout.write(json.dumps(data, indent=2, default=str))
    sys.stdout.write("\n")
