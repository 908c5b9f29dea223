"""Device-to-host reads every decode step (rule ``decode-host-sync``, issue 27's held-out labels: Llama's
``if all(eos_reached): break``, bark's ``if item_next == SEMANTIC_VOCAB_SIZE``, lit-llama's ``if idx_next == eos_id``).

An autoregressive loop samples a token on the device (``torch.multinomial``, ``argmax``, a ``sample`` helper) and
then tests it in Python to stop: the test turns a device tensor into a Python bool, so the host waits for the device
to finish the step, every token. Read here from a whole file: in a loop with no training call (``.backward(``) and a
``break`` or ``return``, a
name bound in that loop from such a call and then tested by an ``if``/``while`` (a comparison, ``all()``/``any()``,
or the name itself) or read with ``.item()``/``.tolist()``. It runs, slower; the fix keeps the stop test on the
device (a mask of finished rows, read every N tokens). A cheap byte check decides whether the file is parsed."""

from __future__ import annotations

import ast

from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.post_kit import _tree

RULE = "decode-host-sync"
_SAMPLERS = frozenset({"multinomial", "argmax", "sample", "sample_top_p", "sample_logits"})
_GATE = (b"multinomial(", b"argmax(", b"sample")
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FUNC = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def worth_parsing(data: bytes) -> bool:
    """torch, a sampling call and a Python stop test (``break``, ``return``) all in the file's bytes."""
    return b"torch" in data and (b"break" in data or b"return" in data) and any(w in data for w in _GATE)


def _callee(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _own(loop: ast.AST) -> list[ast.AST]:
    """The nodes of a loop's body, not entering nested defs, classes or lambdas."""
    out: list[ast.AST] = []
    todo = [c for st in getattr(loop, "body", []) for c in [st]]
    while todo:
        n = todo.pop()
        if isinstance(n, _FUNC):
            continue
        out.append(n)
        todo.extend(ast.iter_child_nodes(n))
    return out


def _sampled(nodes: list[ast.AST]) -> dict[str, int]:
    """Names bound in the loop from a sampling call, or from an expression of such names (``eos_reached |= next_token
    == eos_id``): name -> line. In source order, to a fixed point (a name bound before the one it reads)."""
    out: dict[str, int] = {}
    binds: list[ast.Assign | ast.AugAssign] = [n for n in nodes if isinstance(n, (ast.Assign, ast.AugAssign))]
    binds.sort(key=lambda n: n.lineno)
    size = -1
    while size != len(out):
        size = len(out)
        _bind(binds, out)
    return out


def _bind(binds: list[ast.Assign | ast.AugAssign], out: dict[str, int]) -> None:
    """One pass over the loop's bindings, adding the names bound from a sampling call or from sampled names."""
    for n in binds:
        value = n.value
        if any(_callee(c) in _SAMPLERS for c in ast.walk(value)) or _derived(value, out):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                for name in ast.walk(t):
                    if isinstance(name, ast.Name):
                        out.setdefault(name.id, n.lineno)


# Calls that keep a sampled tensor a tensor on the device (``next_token.reshape(-1)``, ``torch.where(m, a, t)``); any
# other call (``envs.step(actions)``) hands it to code that may read it anyway, and is not followed.
_KEEPS = frozenset({"reshape", "view", "to", "where", "squeeze", "unsqueeze", "long", "int", "flatten"})


def _derived(value: ast.expr, names: dict[str, int]) -> bool:
    """``value`` computes on a sampled name on the device: arithmetic, a comparison or a boolean operation of it,
    or a shape/dtype call on it."""
    if not any(isinstance(c, ast.Name) and c.id in names for c in ast.walk(value)):
        return False
    calls = [c for c in ast.walk(value) if isinstance(c, ast.Call)]
    return all(_callee(c) in _KEEPS for c in calls)


def _reads(test: ast.expr, names: dict[str, int]) -> str | None:
    """The sampled name a Python test turns into a bool, or None."""
    for n in ast.walk(test):
        if isinstance(n, ast.Name) and n.id in names:
            return n.id
    return None


def decode_syncs(data: bytes) -> list[RawFinding]:
    """The findings of ``decode-host-sync`` in one Python source."""
    if not worth_parsing(data):
        return []
    try:
        tree = _tree(data)
    except SyntaxError:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    out: list[RawFinding] = []
    seen: set[int] = set()
    for loop in (n for n in ast.walk(tree) if isinstance(n, _LOOPS)):
        nodes = _own(loop)
        if any(_callee(n) == "backward" for n in nodes) or not any(
            isinstance(n, (ast.Break, ast.Return)) for n in nodes
        ):
            continue  # a training loop (step_syncs.py reads it), or no stop test
        names = _sampled(nodes)
        if not names:
            continue
        for n in nodes:
            name = None
            if isinstance(n, (ast.If, ast.While)):
                name = _reads(n.test, names)
            elif _callee(n) in ("item", "tolist") and isinstance(n, ast.Call):
                f = n.func
                name = _reads(f.value, names) if isinstance(f, ast.Attribute) else None
            ln = getattr(n, "lineno", 0)
            if name is None or ln in seen or ln <= names[name]:
                continue
            seen.add(ln)
            text = lines[ln - 1] if 0 < ln <= len(lines) else ""
            msg = f"`{name}` (sampled on the device) read back by the host every decode step"
            out.append((RULE, ln, msg, text, None, None))
    out.sort(key=lambda r: r[1] or 0)
    return out
