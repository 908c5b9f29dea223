"""`accelpilot run_serve`: filled in by its issue."""

from __future__ import annotations
