"""Supported-operator lists: a plain list of core ATen names, or the dict ``torch_neuronx.analyze`` returns.

Every list is in one op set (``op_set``, see ``opset.py``). The inventory names operators in core ATen, so a plain
list is compared operator by operator only when it is in core ATen too: it may state so (a ``# op_set: core_aten``
line, or ``"op_set"`` in JSON) and every name is checked against ``torch.Tag.core`` before comparing; a list
stating another op set, or naming an operator outside core ATen, is refused with the fix (we never guess what a
target supports: a target that runs ``aten::linear`` whole says nothing certain about ``aten::permute``).

Accepted files:

- text, one operator per line (``aten::addmm``, ``aten.addmm.default`` or ``addmm``; ``#`` comments; an optional
  ``# op_set: core_aten`` line);
- a JSON list of such names, or ``{"op_set": "core_aten", "operators": [...]}``;
- the analyze dict: ``{"support_percentage": ..., "supported_operators": {op: count},
  "unsupported_operators": [{"kind": op, "failureAt": ..., "call": ...}]}``; the operator maps/lists may also be
  nested one level under ``"aten"``, as some Neuron releases print them. Its names are the ops torch-neuronx
  traced (op set ``aten``, unless the dict says ``"op_set"``): its own verdicts (unsupported operators with their
  call sites, the support percentage) are reported as given; it is not compared with the core ATen inventory.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelpilot.errors import InputFileError
from accelpilot.jsonfile import read_text
from accelpilot.porting.opset import CORE_ATEN, OP_SETS

_OP_SET_LINE = re.compile(r"^\s*#\s*op_set\s*[:=]\s*([\w.-]+)\s*$")


def split_op(name: str) -> tuple[str, str | None]:
    """``aten.addmm.default`` / ``aten::addmm.out`` / ``addmm`` -> (``aten::addmm``, overload or None); other
    namespaces (``prims::``, a custom op's ``mylib::``) are kept."""
    n = name.strip()
    if "::" in n:
        ns, _, rest = n.partition("::")
    elif n.split(".", 1)[0] in ("aten", "prims"):
        ns, _, rest = n.partition(".")
    else:
        ns, rest = "aten", n
    base, _, overload = rest.partition(".")
    return f"{ns}::{base}", overload or None


def normalise_op(name: str) -> str:
    """``aten.addmm.default`` / ``aten::addmm.out`` / ``addmm`` -> ``aten::addmm``."""
    return split_op(name)[0]


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
    op_set: str = CORE_ATEN
    op_set_stated: bool = False  # False: the list did not say; core_aten is assumed and checked name by name
    names: list[str] = field(default_factory=list)  # as written (with overloads), for the op-set check

    def is_supported(self, op: str) -> bool:
        return normalise_op(op) in self.supported


def _op_set(value: Any, source: str) -> str:
    if not isinstance(value, str) or value not in OP_SETS:
        raise InputFileError(
            f"op_set {value!r} is not one of {', '.join(OP_SETS)}",
            file=source,
            field="op_set",
            fix="state the op set the names are in, e.g. core_aten",
        )
    return value


def check_core_aten(sup: SupportedOps) -> bool:
    """Whether ``sup`` can be compared operator by operator with the core ATen inventory.

    A plain list must be in core ATen: another stated op set, or a name outside core ATen, is refused (one line:
    file, operator, fix). An analyze dict in its own op set is not compared (False): its verdicts stand as given.
    """
    from accelpilot.porting.opset import core_status

    name = Path(sup.source).name
    if sup.op_set != CORE_ATEN:
        if sup.from_analyze:
            return False
        raise InputFileError(
            f"the list is in op set {sup.op_set!r}, but operators are compared in core ATen",
            file=sup.source,
            field="op_set",
            fix=f"list the core ATen operators the target supports (what `accelpilot scan --model` names) and "
            f"state op_set core_aten in {name}",
        )
    bad: list[str] = []
    for raw in sup.names:
        op, overload = split_op(raw)
        status = core_status(op, overload)
        if status != "core":
            bad.append(f"{raw} ({'unknown operator' if status == 'unknown' else 'not core ATen'})")
    if bad:
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        raise InputFileError(
            f"{', '.join(bad[:3])}{more}: the list must name core ATen operators (torch.Tag.core), as the inventory "
            "does",
            file=sup.source,
            field="op_set",
            fix="replace each with the core ATen operators it decomposes to (e.g. aten::linear -> aten::addmm, "
            "aten::permute), as `accelpilot scan --model` names them",
        )
    return True


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
    stated = isinstance(data, dict) and "op_set" in data
    if isinstance(data, dict) and "operators" in data and isinstance(data["operators"], list):
        op_set = _op_set(data.get("op_set", CORE_ATEN), source)
        sup = parse_supported_ops(data["operators"], source)
        sup.op_set, sup.op_set_stated = op_set, stated
        return sup
    if isinstance(data, list):
        bad = [x for x in data if not isinstance(x, str)]
        if bad:
            raise InputFileError(f"a JSON list of operator names must hold strings, found {bad[0]!r}", file=source)
        names = [x.strip() for x in data if x.strip()]
        return SupportedOps(source=source, supported={normalise_op(x) for x in names}, names=names)
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
            # torch_neuronx names what it traced, before any decomposition: op set "aten" unless stated
            op_set=_op_set(data["op_set"], source) if stated else "aten",
            op_set_stated=stated,
            names=[str(k) for k in sup] + [e.op for e in entries],
        )
    raise InputFileError(
        'expected a list of aten operator names, {"op_set": ..., "operators": [...]} or a torch_neuronx.analyze dict',
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
    op_set: str | None = None
    for i, line in enumerate(text.splitlines(), start=1):
        m = _OP_SET_LINE.match(line)
        if m:
            op_set = _op_set(m.group(1), str(p))
            continue
        item = line.split("#", 1)[0].strip().strip(",").strip("\"'")
        if not item:
            continue
        if not re.fullmatch(r"[\w.:]+", item):
            raise InputFileError(
                f"line {i}: {item!r} is not an operator name", file=str(p), fix="one `aten::name` per line"
            )
        names.append(item)
    return SupportedOps(
        source=str(p),
        supported={normalise_op(n) for n in names},
        names=names,
        op_set=op_set or CORE_ATEN,
        op_set_stated=op_set is not None,
    )
