"""An entry point that imports its own modules under a package prefix the repository does not have (rule
``prefixed-import``): MoCo's ``main_moco.py`` imports ``deeplearning.cross_image_ssl.moco.builder``, the path of its
``moco/builder.py`` in the monorepo it was exported from. The README's command stops with ``ModuleNotFoundError`` on
any host, a Trainium one included, before anything else runs: the first edit of the port (blocking).

``families.prefixed_module`` reads the import as the tree's module (so the reach still follows it); this pass says
that the import itself fails. Only module-level imports of the entry points are read (an import inside a function
fails only when it is called).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from accelpilot.porting.findings import Finding
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.families import _module_names, prefixed_module

RULE = "prefixed-import"
_TOP_IMPORT = re.compile(r"^(?:import[ \t]+([\w.]+)|from[ \t]+([\w.]+)[ \t]+import\b)", re.M)


def prefixed_imports(entries: Mapping[str, str], rels: list[str], read: Callable[[str], str | None]) -> list[Finding]:
    """One blocking finding per module-level import of an entry point that names a tree module only under a prefix
    the tree lacks."""
    mods = _module_names(rels, entries)
    out: list[Finding] = []
    for entry in sorted(e for e in entries if e.endswith(".py")):
        body = read(entry) or ""
        for m in _TOP_IMPORT.finditer(body):
            module = m.group(1) or m.group(2)
            if module in mods or (target := prefixed_module(module, mods)) is None:
                continue
            line = body.count("\n", 0, m.start()) + 1
            f = Finding.from_rule(
                RULES[RULE],
                file=entry,
                line=line,
                message=f"import {module}: the tree has it as {target}, not under that package",
                snippet=body.splitlines()[line - 1].strip()[:200],
                subject=module.split(".")[0],
            )
            f.severity = "blocking"
            f.reason = (
                f"entry point {entry} ({entries[entry][:160]}) imports {module} at module level, a package the "
                f"repository does not have (its module is {target}): ModuleNotFoundError on any host before anything "
                f"runs ({entry}:{line})"
            )
            out.append(f)
    return out
