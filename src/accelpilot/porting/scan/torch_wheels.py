"""The CUDA wheels a torch pin pulls in, in an exported lock (uv/pip-compile ``requirements.txt``): ``nvidia-*-cu12``
and ``triton`` lines annotated ``# via torch`` are the torch build's own dependencies. The porting work is the torch
pin (a torch build for the target, then a re-lock), so their findings join one item about that pin."""

from __future__ import annotations

import re

from accelpilot.porting.scan.patterns import RawFinding

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*((?:===?|~=|>=|<=|!=|>|<)\s*[^\s;#,]+)?")
_VIA = re.compile(r"#\s*via\b\s*(.*)$")
_MORE = re.compile(r"^\s+#\s+(\S.*)$")  # ``    #   torch``: one more parent of a ``# via`` list
# The rules a CUDA wheel of the torch build fires: its ``-cu12`` name, and triton as a kernel language.
_WHEEL_RULES = frozenset({"cuda-version-pin", "triton-kernel"})


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _parents(text: str) -> tuple[dict[str, set[str]], dict[str, list[int]], dict[str, str]]:
    """Each package's ``# via`` parents, its lines (one per environment marker: ``nvidia-nvjitlink-cu12==12.4.127 ;
    python_full_version < '3.9'`` and ``==12.6.85 ; ... >= '3.9'``) and its pin as written (``torch==2.4.1``)."""
    parents: dict[str, set[str]] = {}
    lines: dict[str, list[int]] = {}
    pins: dict[str, str] = {}
    current: str | None = None
    in_via = False
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line[:1].strip() and not line.startswith(("#", "-")):
            m = _PIN.match(line)
            current, in_via = (_norm(m.group(1)), False) if m else (None, False)
            if m and current is not None:
                lines.setdefault(current, []).append(lineno)
                pins.setdefault(current, m.group(1) + (m.group(2) or "").replace(" ", ""))
                parents.setdefault(current, set())
            if current is not None and (via := _VIA.search(line)) is not None:
                parents[current].update(p.strip() for p in via.group(1).split(",") if p.strip())
            continue
        if current is None:
            continue
        if (via := _VIA.search(line)) is not None and line[:1].isspace():
            in_via = True
            if via.group(1).strip():
                parents[current].add(via.group(1).strip())
        elif in_via and (more := _MORE.match(line)) is not None:
            parents[current].add(more.group(1).strip())
        elif line.strip():
            in_via = False
    return parents, lines, pins


def torch_followers(text: str) -> tuple[int, str, dict[int, str]] | None:
    """(the torch pin's line, the pin, line -> package of every package there only because torch needs it, directly
    or through another such package), or None when the file pins no torch. A package with any other parent (the
    project, ``-r requirements.in``, another library) is a requirement of its own."""
    parents, lines, pins = _parents(text)
    if "torch" not in lines:
        return None
    follows: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, ps in parents.items():
            if name not in follows and name != "torch" and ps and all(_norm(p) in follows | {"torch"} for p in ps):
                follows.add(name)
                grew = True
    return lines["torch"][0], pins["torch"], {ln: n for n in follows for ln in lines[n]}


def join_torch_wheels(text: str, found: list[RawFinding]) -> list[RawFinding]:
    """``found`` with the findings of torch's CUDA wheels made lines of one item about the torch pin (its subject
    ``<pin> CUDA build``); the torch line joins it too. A file without such wheels is returned as it is."""
    build = torch_followers(text)
    if build is None:
        return found
    torch_line, pin, follows = build
    if not any(ln in follows and rule in _WHEEL_RULES for rule, ln, *_ in found):
        return found  # a plain torch pin (``torch==2.3.0+cu121``) keeps its own item
    subject = f"{pin} CUDA build"
    out: list[RawFinding] = []
    for rule, ln, msg, snip, sub, ctx in found:
        if ln in follows and rule in _WHEEL_RULES:
            if rule == "cuda-version-pin" or not any(r == "cuda-version-pin" and x == ln for r, x, *_ in found):
                out.append(("cuda-version-pin", ln, f"{follows[ln]}: a CUDA wheel of {pin}", snip, subject, ctx))
        elif ln == torch_line and rule == "cuda-version-pin":
            out.append((rule, ln, msg, snip, subject, ctx))
        else:
            out.append((rule, ln, msg, snip, sub, ctx))
    if not any(ln == torch_line and rule == "cuda-version-pin" for rule, ln, *_ in out):
        snippet = text.splitlines()[torch_line - 1]
        out.append(("cuda-version-pin", torch_line, f"{pin} resolves to its CUDA build", snippet, subject, None))
    return sorted(out, key=lambda r: (r[1] or 0, r[0]))
