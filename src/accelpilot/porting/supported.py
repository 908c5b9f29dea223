"""Supported-operator lists: a plain list of ``aten::`` names, or the dict ``torch_neuronx.analyze`` returns.

Accepted files:

- text, one operator per line (``aten::addmm``, ``aten.addmm.default`` or ``addmm``; ``#`` comments);
- a JSON list of such names;
- the analyze dict: ``{"support_percentage": ..., "supported_operators": {op: count},
  "unsupported_operators": [{"kind": op, "failureAt": ..., "call": ...}]}``; the operator maps/lists may also be
  nested one level under ``"aten"``, as some Neuron releases print them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelpilot.errors import InputFileError
from accelpilot.jsonfile import read_text

_OVERLOAD = re.compile(r"^(?:aten|prims)[.:]+")


def normalise_op(name: str) -> str:
    """``aten.addmm.default`` / ``aten::addmm.out`` / ``addmm`` -> ``aten::addmm``."""
    n = name.strip()
    ns = "prims" if n.startswith("prims") else "aten"
    base = _OVERLOAD.sub("", n)
    base = base.split(".", 1)[0]
    return f"{ns}::{base}"


@dataclass
class UnsupportedEntry:
    op: str
    failure_at: str | None = None
    call: str | None = None


@dataclass
class SupportedOps:
    """What a target supports. ``unsupported`` comes only from an analyze dict (with its call sites)."""

    source: str
    supported: set[str] = field(default_factory=set)
    unsupported: list[UnsupportedEntry] = field(default_factory=list)
    support_percentage: float | None = None
    from_analyze: bool = False

    def is_supported(self, op: str) -> bool:
        return normalise_op(op) in self.supported


def _percentage(value: Any) -> float | None:
    if value is None:
        return None
    try:
        return float(str(value).strip().rstrip("%"))
    except ValueError:
        return None


def _unnest(value: Any) -> Any:
    if isinstance(value, dict) and set(value) <= {"aten", "prim", "prims"} and value:
        merged: Any = None
        for v in value.values():
            if isinstance(v, dict):
                merged = {**(merged or {}), **v}
            elif isinstance(v, list):
                merged = [*(merged or []), *v]
        return merged
    return value


def parse_supported_ops(data: Any, source: str = "<data>") -> SupportedOps:
    """Build SupportedOps from already-loaded JSON (list or analyze dict)."""
    if isinstance(data, list):
        bad = [x for x in data if not isinstance(x, str)]
        if bad:
            raise InputFileError(f"a JSON list of operator names must hold strings, found {bad[0]!r}", file=source)
        return SupportedOps(source=source, supported={normalise_op(x) for x in data if x.strip()})
    if isinstance(data, dict) and ("supported_operators" in data or "unsupported_operators" in data):
        sup = _unnest(data.get("supported_operators") or {})
        uns = _unnest(data.get("unsupported_operators") or [])
        if not isinstance(sup, (dict, list)):
            raise InputFileError(
                "supported_operators must be a map of operator to count", file=source, field="supported_operators"
            )
        if not isinstance(uns, list):
            raise InputFileError(
                "unsupported_operators must be a list of {kind, failureAt, call}",
                file=source,
                field="unsupported_operators",
            )
        entries: list[UnsupportedEntry] = []
        for i, e in enumerate(uns):
            if isinstance(e, str):
                entries.append(UnsupportedEntry(op=normalise_op(e)))
            elif isinstance(e, dict) and isinstance(e.get("kind"), str):
                call = e.get("call")
                entries.append(
                    UnsupportedEntry(
                        op=normalise_op(e["kind"]),
                        failure_at=str(e["failureAt"]) if e.get("failureAt") is not None else None,
                        call=str(call) if call is not None else None,
                    )
                )
            else:
                raise InputFileError(
                    "each entry needs a string 'kind'", file=source, field=f"unsupported_operators[{i}]"
                )
        return SupportedOps(
            source=source,
            supported={normalise_op(k) for k in sup},
            unsupported=entries,
            support_percentage=_percentage(data.get("support_percentage")),
            from_analyze=True,
        )
    raise InputFileError(
        "expected a list of aten operator names or a torch_neuronx.analyze dict",
        file=source,
        fix="give one `aten::name` per line, a JSON list, or the analyze output",
    )


def load_supported_ops(path: str | Path) -> SupportedOps:
    """Read a supported-ops file in any accepted format."""
    p = Path(path)
    text = read_text(p, "file", field="--supported-ops")
    stripped = text.lstrip()
    if stripped.startswith(("[", "{")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputFileError(f"invalid JSON at line {exc.lineno}: {exc.msg}", file=str(p)) from None
        return parse_supported_ops(data, str(p))
    names = []
    for i, line in enumerate(text.splitlines(), start=1):
        item = line.split("#", 1)[0].strip().strip(",").strip("\"'")
        if not item:
            continue
        if not re.fullmatch(r"[\w.:]+", item):
            raise InputFileError(
                f"line {i}: {item!r} is not an operator name", file=str(p), fix="one `aten::name` per line"
            )
        names.append(item)
    return SupportedOps(source=str(p), supported={normalise_op(n) for n in names})
