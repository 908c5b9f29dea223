"""Distributed setup that a README's launch reaches (issue 27: "blocking means it stops the default
path").

``entry.py`` makes CUDA placement on an entry point's own lines blocking. When the README's command for that entry
point starts several processes (``python -m torch.distributed.launch --nproc_per_node=8 main.py``, ``torchrun
--nproc_per_node=N train.py``), the process group is part of the default path wherever the entry point's imports
set it up:

    def init_distributed_mode(args):          # util/misc.py, imported and called by main.py
        ...
        torch.cuda.set_device(args.gpu)
        torch.distributed.init_process_group(backend="nccl", ...)

and a collective run on a tensor placed on ``"cuda"`` (a metric synchronised across ranks every epoch) stops the
same way. Such lines, in a function of a module the entry point imports (module level, transitively) that sets up
the process group or runs a collective and that some reached file calls, become blocking with the command as their
reason. One process under a launcher counts (torchrun still sets ``RANK``/``WORLD_SIZE``, so a setup gated on them
runs, and Llama's ``Llama.build`` sets up NCCL whatever the count); a plain ``python`` command, or a helper no
reached file calls, changes nothing.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from accelpilot.porting.findings import Finding
from accelpilot.porting.scan.default_path import reached
from accelpilot.porting.scan.families import _module_names, imports_of

_LAUNCHER = re.compile(r"\b(?:torchrun|torch\.distributed\.(?:launch|run))\b")
_NPROC = re.compile(r"--nproc[_-]per[_-]node(?:=|\s+)(\S+)")
# Calls that need the process group: its setup and the collectives that move tensors between ranks.
_GROUP_CALLS = frozenset(
    {"init_process_group", "all_reduce", "all_gather", "all_gather_object", "broadcast", "reduce", "reduce_scatter"}
)
# Placement lines such a function may hold: what stops it on a host without CUDA.
_PLACEMENT = frozenset({"nccl-backend", "cuda-device-literal"})
_SET_DEVICE = "torch.cuda.set_device"


def processes(command: str) -> str | None:
    """How many processes a README command's launcher starts (``8``, ``N``, ``$GPUS``, ``1``: torchrun's default);
    None without a launcher. One process under torchrun still gets ``RANK``/``WORLD_SIZE``, so code that sets up the
    process group when they are set (or always: Llama's ``Llama.build``) does so."""
    if not _LAUNCHER.search(command):
        return None
    m = _NPROC.search(command)
    n = m.group(1).strip("`'\"\\") if m is not None else ""
    return n or "1"


def _group_functions(tree: ast.Module) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of each def that sets up the process group or runs a collective."""
    return [
        (node.name, node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and sets_up_group(node)
    ]


def sets_up_group(fn: ast.AST) -> bool:
    """``fn`` (a def) sets up the process group or runs a collective somewhere in its body."""
    for call in ast.walk(fn):
        if isinstance(call, ast.Call):
            f = call.func
            if (f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else "") in _GROUP_CALLS:
                return True
    return False


def _innermost(defs: list[tuple[str, int, int]], line: int) -> str | None:
    spans = [(last - first, name) for name, first, last in defs if first <= line <= last]
    return min(spans)[1] if spans else None


def mark_launched_setup(
    findings: list[Finding], entries: dict[str, str], sources: Iterable[tuple[str, bytes]], rels: list[str]
) -> None:
    """Lines of the distributed setup and collectives a README launch (torchrun, one process or more) reaches become
    blocking."""
    launched = {rel: n for rel, how in entries.items() if (n := processes(how)) is not None}
    if not launched or not any(f.rule in _PLACEMENT or f.message == _SET_DEVICE for f in findings):
        return
    mods = _module_names(rels, entries)
    data = dict(sources)
    top = {rel: imports_of(rel, src, mods, top_level=True) for rel, src in data.items()}
    for entry, n in sorted(launched.items()):
        default = reached({entry}, top, set()) - set(entries)
        wanted = {f.file for f in findings if f.file in default and f.context is None and f.porting}
        calls = b"\n".join(data.get(rel, b"") for rel in default | {entry})
        for rel in sorted(wanted):
            try:
                defs = _group_functions(ast.parse(data[rel]))
            except (KeyError, SyntaxError, ValueError):
                continue
            called = {name for name, _, _ in defs if re.search(rb"(?<!def )\b%s\(" % name.encode(), calls)}
            for f in findings:
                if f.file != rel or f.context is not None or not f.porting or f.severity == "blocking":
                    continue
                if f.rule not in _PLACEMENT and f.message != _SET_DEVICE:
                    continue
                fn = _innermost(defs, f.line or 0)
                if fn is None or fn not in called:
                    continue
                f.severity = "blocking"
                f.reason = (
                    f"the README launches entry point {entry} as {n} process{'' if n == '1' else 'es'} "
                    f"({entries[entry]}), so {fn}() in "
                    f"{rel}, which it imports, runs the process group on CUDA: {f.message} at {rel}:{f.line}"
                )
