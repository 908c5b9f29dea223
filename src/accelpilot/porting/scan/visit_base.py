"""State and plumbing of the Python visitor (reach context, trigger lines, dotted names)."""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.dataflow import SETUP_DEFS, host_setup_float64
from accelpilot.porting.scan.patterns import (
    DEFAULT_ALIASES,
    KERNEL_RULES,
    RawFinding,
)

# Compile-hazard rules grouped per file: their subject is the innermost enclosing def (``name:line``), so that the
# log can make the hazards one rewrite of one function fixes one item (``build_items``).
FUNCTION_RULES = frozenset(r.id for r in RULES.values() if r.category == "compile_hazard" and r.item == "file")


# Device rules whose line, when it is only a parameter's default, is set apart if every call overrides it.
DEFAULT_RULES = frozenset({"cuda-device-literal", "torch-cuda-api"})


def default_subject(func: str, param: str) -> str:
    """The subject of a finding in the default of ``func``'s parameter ``param`` (read back by ``defaults.py``)."""
    return f"default {func}({param})"


# Handlers per node type, filled in by visitor.py once PyVisitor is defined.
_HANDLERS: dict[type, Callable[[Any, Any], None]] = {}


class VisitorBase:
    """State and plumbing of the Python visitor (reach context, trigger lines, dotted names)."""

    if TYPE_CHECKING:  # defined by later layers of PyVisitor

        def _cond(self, test: ast.expr, keyword_line: int) -> None: ...

    def __init__(self, hits: list[int] | None, torch_file: bool) -> None:
        self.hits = hits  # sorted trigger lines, or None for "visit everything"
        self.torch_file = torch_file
        self.selectors: frozenset[str] = frozenset()  # names holding a kernel implementation choice (``literals``)
        self.aliases: dict[str, str] = dict(DEFAULT_ALIASES)
        self.found: list[RawFinding] = []
        self._seen: set[tuple[str, int]] = set()
        self._consumed: set[int] = set()
        self.forward_depth = 0
        # Reach: "probe"/"skip-guard"/"benchmark-tool" (not porting work) or "optional" (a guarded path), set by
        # the enclosing call, ``if`` or ``try``; the innermost def names the kernel a decorator belongs to.
        self.context: str | None = None
        self.def_name: str | None = None
        self.def_node: ast.FunctionDef | ast.AsyncFunctionDef | None = None  # the innermost def, for data flow
        self.loop_depth = 0
        self.if_depth = 0
        # The backend whose branch of a per-backend dispatch is being visited, and every chain link read so far.
        self.backend_branch: str | None = None
        self._dispatch: dict[int, tuple[ast.If, str | None]] = {}
        self._given_ok: set[int] = set()  # placement calls that select a device already chosen (see _places)
        self._apple: set[int] = set()  # chain links whose body runs only on MPS, beside a generic branch
        self._loop_vars: list[frozenset[str]] = []  # names bound by each enclosing ``for``, innermost last
        # per enclosing loop (pushed with ``_loop_vars``): its trip count is fixed by the module (``_module_trips``)
        self._unrolled: list[bool] = []
        # per enclosing loop: its body and its own target names (read by ``_fresh_names`` only for a candidate)
        self._fresh: list[tuple[list[ast.stmt], dict[str, int]]] = []
        self._once_at = -1  # loop depth whose body we are in only once (``if i == k:``), else -1
        self._default_of: tuple[str, str] | None = None  # (def, parameter) whose default is being visited
        # statements after an early-return CUDA guard, with the context they run in (the node kept: its id stays its)
        self._guarded: dict[int, tuple[ast.AST, str]] = {}
        self._init_owner: dict[int, str] = {}  # id(``__init__``) -> its class: the name its calls use
        self._target_links: set[int] = set()  # links of chains read by ``_visit_target_chain``
        self._tables: set[int] = set()  # literal containers already read as a whole (device or dtype tables)
        # classes of this file handed to a default dispatcher by a call (python.py sets their bodies apart)
        self.dispatched: set[str] = set()
        # (first, last line) of each undecorated def visited inside another def (``post_kit.unused_nested``)
        self.nested_defs: list[tuple[int, int]] = []
        # per def read by ``_not_a_mask_read``: its bindings, and (every parameter, the host-typed ones)
        self._def_names: dict[int, tuple[dict[str, list[ast.expr] | None], tuple[frozenset[str], frozenset[str]]]] = {}
        self._binds: dict[int, dict[str, list[ast.expr] | None]] = {}  # id(def) -> its ``_bindings``
        self._varlen_defs: dict[int, tuple[frozenset[int], bool]] = {}  # per def: ``_add_varlen``'s reading of it
        self._nccl_of: dict[int, frozenset[str]] = {}  # per def: ``_library_nccl_vars``
        self._setup_lines: dict[int, frozenset[int]] = {}  # per def: ``host_setup_float64``
        self._message_depth = 0  # inside a raise or a message call's arguments (``MESSAGE_CALLS``)

    # -- plumbing --
    def add(self, rule: str, line: int, message: str, subject: str | None = None, context: str | None = None) -> None:
        key = (rule, line)
        if key not in self._seen:
            self._seen.add(key)
            if subject is None and rule in KERNEL_RULES:
                subject = self.def_name
            elif subject is None and rule in FUNCTION_RULES and self.def_node is not None:
                subject = f"{self.def_name}:{self.def_node.lineno}"  # the function one rewrite changes (log.py)
            elif subject is None and rule in DEFAULT_RULES and self._default_of is not None:
                subject = default_subject(*self._default_of)
            self.found.append((rule, line, message, "", subject, context or self.context))

    def _setup_only(self, line: int) -> str | None:
        """``host-setup`` for float64 on ``line`` that only builds the module (``host_setup_float64``), else None."""
        fn = self.def_node
        if fn is None or fn.name not in SETUP_DEFS:
            return None
        lines = self._setup_lines.get(id(fn))
        if lines is None:
            lines = self._setup_lines[id(fn)] = host_setup_float64(fn)
        return "host-setup" if line in lines else None

    def _nested(self, context: str) -> str | None:
        """The context inside ``context`` here: the outer one unless it is None or a weaker ``optional``. A guard
        inside a ``__main__`` block is kept after it (``main-block>optional``): run.py reads the block as the run
        in an entry script, where the guard still holds (LoRA's ``if args.fp16: try: from apex import amp``)."""
        saved = self.context
        if saved is None or (saved == "optional" and context != "optional"):
            return context
        if saved.startswith("main-block") and context != "main-block":
            inner = saved.partition(">")[2]
            if not inner or (inner == "optional" and context != "optional"):
                return f"main-block>{context}"
        return saved

    def _within(self, context: str, node: ast.AST) -> None:
        """Visit ``node``'s children with ``context`` unless an outer, stronger context already holds."""
        saved = self.context
        self.context = self._nested(context)
        try:
            self.generic(node)
        finally:
            self.context = saved

    def _hit(self, start: int, end: int) -> bool:
        hits = self.hits
        if hits is None:
            return True
        i = bisect.bisect_left(hits, start)
        return i < len(hits) and hits[i] <= end

    def visit(self, node: ast.AST) -> None:
        ln = getattr(node, "lineno", None)
        if ln is not None and self.hits is not None:
            end = getattr(node, "end_lineno", None) or ln
            decorators = getattr(node, "decorator_list", None)
            if decorators:
                ln = min(ln, decorators[0].lineno)
            if not self._hit(ln, end):
                return
        if self._guarded and (held := self._guarded.pop(id(node), None)) is not None:
            saved = self.context  # a statement after an early-return CUDA guard (``BranchRules.v_if``)
            if saved is None or (saved == "optional" and held[1] != "optional"):
                self.context = held[1]
            try:
                self.visit(node)
            finally:
                self.context = saved
            return
        handler = _HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node)
        else:
            self.generic(node)

    def generic(self, node: ast.AST) -> None:
        visit = self.visit
        for name in node._fields:
            v = getattr(node, name, None)
            if v.__class__ is list:
                for x in v:
                    if isinstance(x, ast.AST):
                        visit(x)
            elif isinstance(v, ast.AST):
                visit(v)

    def dotted(self, node: ast.AST) -> str | None:
        """``a.b.c`` with the root name resolved through import aliases; None if the root is not a name."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))
