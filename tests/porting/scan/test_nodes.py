"""The scan's ``walk`` yields what ``ast.walk`` yields, in the same order (passes read the first match)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from accelpilot.porting.scan.nodes import walk

FIXTURES = Path(__file__).parent.parent / "fixtures"

# None in lists (a dict's ``**`` key), lists of strings (``global``), optional fields left None, nested scopes
ODD = (
    "def f(a, *args, b=1, **kw):\n"
    "    global g, h\n"
    "    d = {**kw, 'k': [x for x in args if x]}\n"
    "    return lambda y=None: (yield_ := y)\n"
    "class C(Base, metaclass=M):\n"
    "    x: int\n"
    "    match a:\n        case [1, *rest]:\n            pass\n"
)


@pytest.mark.parametrize(
    "source",
    [ODD, *(p.read_text() for p in sorted((FIXTURES / "repo").glob("*.py")))],
    ids=lambda s: s.split("\n", 1)[0][:30],
)
def test_walk_is_ast_walk(source: str) -> None:
    tree = ast.parse(source)
    assert [id(n) for n in walk(tree)] == [id(n) for n in ast.walk(tree)]
