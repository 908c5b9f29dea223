"""`accelpilot run_train`: filled in by its issue."""

from __future__ import annotations
