"""Read a JSON file into a pydantic model; every failure is one ``InputFileError`` line naming file, field, fix.

The one reader behind pilot results, portability logs and the other JSON files accelpilot reads back, so a
missing file, bad JSON and a wrong field all read the same way wherever they happen. Imports no torch.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from accelpilot.errors import InputFileError

M = TypeVar("M", bound=BaseModel)


def read_text(path: Path | str, what: str, fix: str | None = None, field: str | None = None) -> str:
    """The file's text; a missing or unreadable file is one line naming it."""
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputFileError(f"no such {what}", file=str(p), field=field, fix=fix or "check the path") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(f"cannot read {what} ({exc.__class__.__name__})", file=str(p), field=field) from None


def read_json(path: Path | str, what: str, fix: str | None = None, field: str | None = None) -> Any:
    """The file's JSON value; bad JSON names the line."""
    text = read_text(path, what, fix, field)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(
            f"not valid JSON (line {exc.lineno}: {exc.msg})", file=str(path), field=field, fix=fix
        ) from None


def read_model(
    path: Path | str,
    model: type[M],
    what: str,
    fix: str,
    check: Callable[[dict[str, Any]], None] | None = None,
) -> M:
    """Read ``path`` as ``model``. ``what`` names the file kind ("pilot result"); ``fix`` says how to get a good one.

    ``check`` sees the raw object before validation (a schema-version check that must win over field errors).
    """
    data = read_json(path, what, fix)
    if not isinstance(data, dict):
        raise InputFileError(f"not a {what} (expected a JSON object)", file=str(path), fix=fix)
    if check is not None:
        check(data)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise InputFileError(f"not a {what}: {err['msg']}", file=str(path), field=loc or None, fix=fix) from None
