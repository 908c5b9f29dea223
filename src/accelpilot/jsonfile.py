"""Read a JSON file into a pydantic model; every failure is one ``InputFileError`` line naming file, field, fix.

The one reader behind pilot results, portability logs and the other JSON files accelpilot reads back, so a
missing file, bad JSON and a wrong field all read the same way wherever they happen. Imports no torch.
"""

from __future__ import annotations

import json
import math
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


MAX_DEPTH = 64  # no file accelpilot writes nests deeper than about 8; deeper is hostile or broken


def read_json(path: Path | str, what: str, fix: str | None = None, field: str | None = None) -> Any:
    """The file's JSON value; bad JSON names the line, NaN or a too-deep nesting names the field."""
    text = read_text(path, what, fix, field)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(
            f"not valid JSON (line {exc.lineno}: {exc.msg})", file=str(path), field=field, fix=fix
        ) from None
    except RecursionError:  # json's decoder recurses per level: 200,000 "[" exhaust the stack
        raise InputFileError(
            f"nested too deeply to be a {what}", file=str(path), field=field, fix=fix or "check the file"
        ) from None
    _check_values(data, path, what, fix)
    return data


def _check_values(data: Any, path: Path | str, what: str, fix: str | None) -> None:
    """Refuse NaN/Infinity (json accepts them; accelpilot never writes them) and nesting over MAX_DEPTH.

    Iterative, so a deep value cannot exhaust the stack here either; the first offender is named by its field.
    """
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(data, ())]
    while stack:
        value, loc = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise InputFileError(
                f"{value} is not a number a {what} can hold",
                file=str(path),
                field=_loc(loc),
                fix=fix or "write a finite number or null",
            )
        if isinstance(value, (dict, list)):
            if len(loc) >= MAX_DEPTH:
                raise InputFileError(
                    f"nested more than {MAX_DEPTH} levels deep: not a {what}",
                    file=str(path),
                    field=_loc(loc[:3]) + ".…",
                    fix=fix or "check the file",
                )
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend((v, (*loc, k)) for k, v in items)


def _loc(loc: tuple[str | int, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out or "(top level)"


def check_header(
    data: dict[str, Any], path: Path | str, what: str, newest: int, kinds: tuple[str, ...] = (), fix: str = ""
) -> None:
    """The checks every versioned file gets before its fields are read: kind, then schema version.

    ``kinds`` are the ``kind`` values this file may carry (a pilot result where a log is expected says so).
    The version must be a whole JSON number: ``2.0`` or ``"2"`` would slip past a newer-version check through
    pydantic's coercion, so they are refused, and a newer version is refused before any field error.
    """
    if kinds:
        kind = data.get("kind")
        if kind not in kinds:
            found = f"a {kind!r} file" if isinstance(kind, str) else "no kind" if kind is None else f"kind {kind!r}"
            raise InputFileError(
                f"not a {what}: it has {found}, expected kind {' or '.join(repr(k) for k in kinds)}",
                file=str(path),
                field="kind",
                fix=fix or None,
            )
    version = data.get("schema_version", 1)
    if isinstance(version, bool) or not isinstance(version, int):
        raise InputFileError(
            f"schema_version must be a whole number, got {version!r}",
            file=str(path),
            field="schema_version",
            fix=fix or None,
        )
    if version > newest:
        raise InputFileError(
            f"written by a newer accelpilot (schema {version}, this one reads {newest})",
            file=str(path),
            field="schema_version",
            fix="upgrade accelpilot",
        )
    if version < 1:
        raise InputFileError(
            f"schema_version {version} was never written by accelpilot",
            file=str(path),
            field="schema_version",
            fix=fix or None,
        )


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
