"""The literal tables of the Python visitor (a layer of ``PyVisitor``): a dict, list, tuple or set read as a whole.
Device names it lists as a table or vocabulary of backends are not a choice of CUDA/MPS, and torch dtypes in a table of
dtypes are names, not uses (a dtype -> id map, or a list of dtypes that serialises them: nanotron's P2P
``ID_TO_DTYPE = [torch.float32, torch.float64, torch.complex64, ...]``)."""

from __future__ import annotations

import ast

from accelpilot.porting.scan.branch_tests import (
    _COLLECTIVE_BACKENDS,
    _COMPARED_DEVICE,
    _CONTAINERS,
    _TARGET_DEVICES,
    _device_keys,
    _device_kind,
    _device_type_args,
)
from accelpilot.porting.scan.dataflow import _is_dtype
from accelpilot.porting.scan.literals import _dtype_table
from accelpilot.porting.scan.visit_branches import BranchRules

# A list, tuple or set of this many torch dtypes or more lists them (a lookup table), whatever else it holds.
DTYPE_LIST_MIN = 3


class TableRules(BranchRules):
    """Literal containers read as tables."""

    def v_literal(self, node: ast.Dict | ast.List | ast.Tuple | ast.Set) -> None:
        if id(node) not in self._tables:
            self._read_table(node)
        self.generic(node)

    def _read_table(self, root: ast.Dict | ast.List | ast.Tuple | ast.Set) -> None:
        """A literal read as a whole, with the containers nested in it as elements, keys or values. Device names
        it lists as a table or vocabulary of backends (a dict keyed only by device names, or lists naming two or
        more device types) are not a choice of CUDA/MPS; torch dtypes in a table of dtypes are names, not uses."""
        listed: list[ast.Constant] = []  # device strings that are elements of a list/tuple/set
        keyed: list[ast.Constant] = []  # device strings that key a dict whose string keys are all device names
        kinds: set[str] = set()
        listed_backends: list[ast.Constant] = []  # string elements of a list/tuple/set (collective backend names)
        stack: list[ast.expr] = [root]
        while stack:
            n = stack.pop()
            self._tables.add(id(n))
            if isinstance(n, ast.Dict):
                keys = [k for k in n.keys if k is not None]
                named = _device_keys(keys)
                for k in keys:
                    if isinstance(k, ast.Constant) and _device_kind(k) is not None:
                        kinds.add(_device_kind(k) or "")
                        if named:
                            keyed.append(k)
                    elif named and isinstance(k, ast.Call):
                        keyed.extend(_device_type_args(k))
                    elif isinstance(k, _CONTAINERS):
                        stack.append(k)
                stack.extend(v for v in n.values if isinstance(v, _CONTAINERS))
                if named and any(_device_kind(k) in _TARGET_DEVICES for k in keys):
                    # a device -> backend table that already gives the target its own entry (``"neuron": "neuron"``
                    # beside ``"cuda": "nccl"``): the port picks the target's row, it edits nothing; a table with no
                    # row for the target stays a finding (adding that row is the work)
                    self._consumed.update(id(v) for v in n.values if isinstance(v, ast.Constant))
                if _dtype_table(n):
                    names = [*n.keys, *n.values]
                    self._consumed.update(id(x) for x in names if _is_dtype(x))
            elif isinstance(n, (ast.List, ast.Tuple, ast.Set)):
                if sum(1 for e in n.elts if _is_dtype(e)) >= DTYPE_LIST_MIN:
                    self._consumed.update(id(e) for e in n.elts if _is_dtype(e))
                for e in n.elts:
                    if isinstance(e, ast.Constant) and isinstance(e.value, str):
                        listed_backends.append(e)
                    if isinstance(e, ast.Constant) and _device_kind(e) is not None:
                        kinds.add(_device_kind(e) or "")
                        listed.append(e)
                    elif isinstance(e, _CONTAINERS):
                        stack.append(e)
        table = keyed + listed if len(kinds) >= 2 else keyed
        # a list naming two or more collective backends (``choices=["nccl", "gloo", "mpi"]``) is a vocabulary too
        collectives = [e for e in listed_backends if e.value in _COLLECTIVE_BACKENDS]
        if len({e.value for e in collectives}) >= 2:
            self._consumed.update(id(e) for e in collectives)
        self._consumed.update(id(c) for c in table if _COMPARED_DEVICE.match(str(c.value)))
