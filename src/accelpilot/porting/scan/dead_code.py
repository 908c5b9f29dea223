"""A module of a scripts repository that nothing runs (issue 27: an item must stop or serve a path).

In a repository that is not an installable package (no ``setup.py``, ``setup.cfg`` or ``pyproject.toml`` at its
root) and whose README says how it is run (its commands name entry points), code is run by those scripts: a module
inside a folder that no file of the tree imports (at any level, lazily or not), that is no entry point and has no
``if __name__ == "__main__":`` block, runs on no path. DiT's
``diffusion/timestep_sampler.py`` (its ``LossSecondMomentResampler`` with a removed numpy alias) is such a module.
Its lines are listed apart (``unreached-module``), never porting work. A module named in any source by its dotted
name or path (``class_name='training.loss.StyleGAN2Loss'``, loaded by name at run time) is reached. In a package, a
module nothing in the tree imports is still public API its users import, so nothing is judged there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from accelpilot.porting.findings import NOT_PORTING, Finding
from accelpilot.porting.scan.families import _module_names, imports_of

UNREACHED = "unreached-module"
_PACKAGING = ("setup.py", "setup.cfg", "pyproject.toml")


def mark_unreached_modules(
    findings: list[Finding], sources: Iterable[tuple[str, bytes]], rels: list[str], entries: Mapping[str, str]
) -> None:
    """Lines in a module nothing runs become ``unreached-module`` (not porting work). ``entries``: entry point -> how
    it is known; only a README (or linked document) command, ``README: `python train.py```, says how code runs."""
    if not any(": `" in how for how in entries.values()) or any(r in rels for r in _PACKAGING):
        return  # no command says how the code runs, or a package whose users import its modules
    candidates = {f.file for f in findings if f.file and f.file.endswith(".py") and "/" in f.file and f.porting}
    if not candidates:
        return
    mods = _module_names(rels)
    names = {rel: (rel[:-3].replace("/", ".").encode(), rel.encode()) for rel in candidates}
    imported: set[str] = set()
    mains: set[str] = set()
    named: set[str] = set()
    for rel, data in sources:
        imported |= imports_of(rel, data, mods) - {rel}
        if b"__main__" in data:
            mains.add(rel)
        named |= {c for c, (dotted, path) in names.items() if c != rel and (dotted in data or path in data)}
    dead = {r for r in candidates if r not in imported | mains | named and r not in entries}
    for f in findings:
        if f.file in dead and f.porting:
            f.context, f.porting, f.reason = UNREACHED, False, NOT_PORTING[UNREACHED]
            if f.severity == "blocking":
                f.severity = "warning"
