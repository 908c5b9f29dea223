"""Code the scan could not read: a git submodule the tree declares but does not hold (rule ``submodule-unscanned``).

A clone without ``--recursive``, or an archive of the repository, leaves each submodule's folder empty: NeRF-pl's
``torchsearchsorted`` (``.gitmodules``: aliutkus/torchsearchsorted, a CUDA and C++ extension its README builds with
``pip install .``) is imported on the default path (``models/rendering.py``: ``from torchsearchsorted import
searchsorted``), yet none of its code is in the log. A log that says nothing about it reads as "nothing to port".
Where a Python file of the tree imports the submodule (by its folder's name, or after putting its folder on
``sys.path``) and the folder holds no file, one item per submodule says so, at the importing line; what it holds is
work this log cannot size until the submodule is checked out and scanned again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from accelpilot.porting.findings import Finding, context_of_path
from accelpilot.porting.rules import RULES

RULE = "submodule-unscanned"
_SECTION = re.compile(r"^\s*\[submodule\s+\"([^\"]+)\"\]\s*$")
_KEY = re.compile(r"^\s*(path|url)\s*=\s*(\S+)\s*$")


def declared(text: str) -> list[tuple[str, str]]:
    """(path, url) of each submodule a ``.gitmodules`` declares."""
    out: list[tuple[str, str]] = []
    path = url = ""
    for line in [*text.splitlines(), '[submodule "end"]']:
        if _SECTION.match(line):
            if path:
                out.append((path.strip("/"), url))
            path = url = ""
        elif (m := _KEY.match(line)) is not None:
            if m.group(1) == "path":
                path = m.group(2)
            else:
                url = m.group(2)
    return out


def unscanned_submodules(
    root: Path, rels: Iterable[str], read: Callable[[str], str | None], promoted: Iterable[str] = ()
) -> list[Finding]:
    """One ``submodule-unscanned`` finding per submodule ``root/.gitmodules`` declares whose folder holds no file of
    the scan and that a Python file imports, at its first importing line (files sorted)."""
    present = list(rels)
    try:
        text = (root / ".gitmodules").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out: list[Finding] = []
    for path, url in declared(text):
        if any(r.startswith(path + "/") for r in present):
            continue  # checked out: its files are scanned like any other
        name = path.rpartition("/")[2]
        uses = re.compile(
            rf"^[ \t]*(?:from[ \t]+{re.escape(name)}(?:\.[\w.]+)?[ \t]+import\b|import[ \t]+{re.escape(name)}\b)"
            rf"|sys\.path\.(?:append|insert)\([^)\n]*['\"](?:\./)?{re.escape(path)}/?['\"]",
            re.M,
        )
        for rel in sorted(r for r in present if r.endswith(".py")):
            body = read(rel) or ""
            m = uses.search(body)
            if m is None:
                continue
            line = body.count("\n", 0, m.start()) + 1
            f = Finding.from_rule(
                RULES[RULE],
                file=rel,
                line=line,
                message=f"imports the git submodule {path} ({url or 'no url'}), which is not checked out: its code is "
                "not in this log",
                snippet=body.splitlines()[line - 1].strip()[:200],
                subject=path,
                context=context_of_path(rel, present, list(promoted)),
            )
            out.append(f)
            break
    return out
