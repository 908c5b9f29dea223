"""Integer values whose range the code states, so that int64 computed as int32 (Trn1) cannot overflow them.

``torch.randint(0, self.num_timesteps, (b,), device=device).long()`` draws diffusion timesteps: every value is below
the count of steps, and ``randint`` already returns int64, so the ``.long()`` adds no int64 either. A draw whose upper
bound is a literal at or above 2**31 (``torch.randint(0, 2**62, (b,))``, a seed or a hash) or an expression the scan
cannot read as a count stays a finding (``visit_calls._fits_int32``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

INT32_LIMIT = 2**31
# The name of a count of things the code enumerates (steps of a schedule, classes, a vocabulary): far below 2**31.
_COUNT = re.compile(
    r"^_?(n|num|number)_\w+$|^\w*_(size|len|length|count|steps|timesteps|classes|tokens|experts|heads)$"
    r"|^(steps|timesteps|vocab_size|num_classes)$"
)
_DRAWS = frozenset({"torch.randint"})


def _count_bound(node: ast.expr) -> bool:
    """``node`` is a count: an int literal below 2**31, a name or attribute named as a count, ``len(x)``, a size
    (``x.shape[0]``, ``x.size(0)``), or such a count plus or minus another."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int and 0 <= node.value < INT32_LIMIT
    if isinstance(node, ast.Name):
        return _COUNT.match(node.id) is not None
    if isinstance(node, ast.Attribute):
        return _COUNT.match(node.attr) is not None
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Name):
            return f.id == "len"
        return isinstance(f, ast.Attribute) and f.attr == "size" and len(node.args) == 1
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Attribute) and node.value.attr == "shape"
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return _count_bound(node.left) and _count_bound(node.right)
    return False


def bounded_draw(value: ast.expr, dotted: Callable[[ast.AST], str | None]) -> bool:
    """``value`` is a ``torch.randint`` draw whose upper bound is a count (``_count_bound``): ``randint(high, size)``,
    ``randint(low, high, size)`` or ``high=``."""
    if not (isinstance(value, ast.Call) and dotted(value.func) in _DRAWS):
        return False
    high = next((k.value for k in value.keywords if k.arg == "high"), None)
    if high is None and value.args:
        high = value.args[1] if len(value.args) >= 3 else value.args[0]
    return high is not None and _count_bound(high)
