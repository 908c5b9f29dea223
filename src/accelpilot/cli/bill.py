"""`accelpilot bill`: filled in by its issue."""

from __future__ import annotations
