"""Parameter defaults that no call of the repository uses.

``def replace_with_sinq_linear(model, ..., device="cuda:0")`` whose only caller passes ``device=device_str``: the
CUDA default never runs; the device the code runs with is the caller's, itself scanned where it is made. A device
finding in such a default (``PyVisitor`` names it ``default <def>(<param>)`` in its subject) is set apart as
``overridden-default`` when the repository has at least one call of the def and every call passes the parameter by
keyword. Kept (not shown to be overridden): a call that leaves it out, passes it positionally or through ``**kwargs``
(which may not hold it), and any other mention of the def's name as code (``fn = replace_with_sinq_linear``, handed on
and called elsewhere). Imports and strings (``__all__``) are not mentions. Read by name across the repository, so a
name many files mention (``to``, ``forward``) is not followed: it is kept.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from accelpilot.porting.scan.nodes import walk

_SUBJECT = re.compile(r"^default (\w+)\((\w+)\)$")
# A def named in more files than this is a common method name, not followed (kept; and the pass stays cheap).
MAX_FILES = 20


def parse_subject(subject: str | None) -> tuple[str, str] | None:
    """(def, parameter) of a default's subject (``visitor.default_subject``), or None."""
    m = _SUBJECT.match(subject or "")
    return (m.group(1), m.group(2)) if m else None


class Mentions:
    """The sources that name each wanted def, gathered while another pass reads the tree (``see``), so that the
    tree is read once."""

    def __init__(self, names: set[str]) -> None:
        self.holders: dict[str, list[bytes]] = {n: [] for n in names}
        self._patterns = {n: (n.encode(), re.compile(rb"\b" + re.escape(n.encode()) + rb"\b")) for n in names}
        self.seen = 0  # sources seen

    def see(self, _rel: str, data: bytes) -> None:
        self.seen += 1
        for n in self.names_in(data):
            self.holders[n].append(data)

    def names_in(self, data: bytes) -> list[str]:
        """The wanted names ``data`` mentions as a word."""
        return [n for n, (raw, pattern) in self._patterns.items() if raw in data and pattern.search(data)]


def overridden(sources: Iterable[tuple[str, bytes]], wanted: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The (def, parameter) pairs of ``wanted`` that at least one call passes, every call by keyword, and that no
    other code mention of the name could call without it."""
    mentions = Mentions({f for f, _ in wanted})
    for rel, data in sources:
        mentions.see(rel, data)
    return overridden_in(mentions, wanted)


def overridden_in(mentions: Mentions, wanted: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """``overridden`` over sources already gathered."""
    holders = mentions.holders
    calls: dict[str, list[ast.Call]] = {}
    loose: set[str] = set()  # names also mentioned as code other than the callee of a call
    for n, datas in holders.items():
        if len(datas) > MAX_FILES:
            loose.add(n)
            continue
        for data in datas:
            try:
                tree = ast.parse(data)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                loose.add(n)  # a file that names it and cannot be read: not shown
                continue
            callees: set[int] = set()
            nodes = list(walk(tree))  # walked once, read twice (the walk costs more than the two reads)
            for node in nodes:
                if isinstance(node, ast.Call) and _callee(node.func) == n:
                    calls.setdefault(n, []).append(node)
                    callees.add(id(node.func))
            for node in nodes:
                if _callee(node) == n and id(node) not in callees and isinstance(getattr(node, "ctx", None), ast.Load):
                    loose.add(n)
    out: set[tuple[str, str]] = set()
    for func, param in wanted:
        cs = calls.get(func, [])
        if func in loose or not cs:
            continue
        if all(any(k.arg == param for k in c.keywords) for c in cs):
            out.add((func, param))
    return out


def init_owners(cls: ast.ClassDef) -> dict[int, str]:
    """The class of each ``__init__`` defined in ``cls``'s body, keyed by the def's id: a constructor's calls name the
    class (``FIDEvaluation(device=self.device)``), so its defaults are named ``default <class>(<param>)``. A subclass
    (``class Sub(FIDEvaluation)``) mentions the name as code other than a call, which keeps them."""
    return {
        id(d): cls.name
        for d in cls.body
        if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and d.name == "__init__"
    }


def _callee(node: ast.AST) -> str | None:
    """The name a call's function (or any expression) names: ``f`` or ``x.f``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def forwarded_to_base(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> bool:
    """``fn`` is an ``__init__`` that hands its device parameter ``param`` unchanged to ``super().__init__(...)``
    (positionally or as ``param=param``): the base class places with that device, so the subclass's default repeats
    the base's choice, scanned where the base makes it (its own default, its callers' values). nnU-Net's 21 trainer
    variants each pass ``device=torch.device('cuda')`` on to ``nnUNetTrainer``. Only a device parameter: another
    value (torchdiffeq's ``dtype=torch.float64``, which its base takes without a default) stays the subclass's."""
    if fn.name != "__init__" or "device" not in param.lower():
        return False
    for node in walk(fn):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "__init__"
            and isinstance(node.func.value, ast.Call)
            and isinstance(node.func.value.func, ast.Name)
            and node.func.value.func.id == "super"
        ):
            continue
        given = [*node.args, *(k.value for k in node.keywords if k.arg == param)]
        if any(isinstance(a, ast.Name) and a.id == param for a in given):
            return True
    return False
