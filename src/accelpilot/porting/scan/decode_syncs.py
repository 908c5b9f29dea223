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
from accelpilot.porting.scan.post_kit import unit_trees

RULE = "decode-host-sync"
SAMPLING = "sampling-ops"
_FILTERS = frozenset({"topk", "sort", "cumsum", "top_k_logits", "top_p", "sample_top_p"})
_SAMPLERS = frozenset({"multinomial", "argmax", "sample", "sample_top_p", "sample_logits"})
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FUNC = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


# A sampling call as written on a binding line (``idx_next = torch.multinomial(...)``, ``next_token =
# logits.argmax(-1)``); the bare words are everywhere in a model library ("downsample", "samples").
_SAMPLE_CALLS = (b"multinomial(", b"argmax(", b"sample(", b"sample_top_p(", b"sample_logits(")


def _sample_lines(data: bytes) -> list[int]:
    """Lines that bind a name from a sampling call: the call's word after an ``=`` that is no comparison."""
    out: list[int] = []
    for word in _SAMPLE_CALLS:
        i = data.find(word)
        while i != -1:
            start = data.rfind(b"\n", 0, i) + 1
            head = data[start:i]
            eq = head.find(b"=")
            binds = eq > 0 and head[eq + 1 : eq + 2] != b"=" and head[eq - 1 : eq] not in (b"=", b"!", b"<", b">")
            if binds and _in_loop(data, start, len(head) - len(head.lstrip(b" \t"))):
                out.append(data.count(b"\n", 0, i) + 1)
            i = data.find(word, i + len(word))
    return sorted(set(out))


def _finds(data: bytes, word: bytes) -> list[int]:
    """Every offset of ``word`` in ``data``."""
    out: list[int] = []
    i = data.find(word)
    while i != -1:
        out.append(i)
        i = data.find(word, i + len(word))
    return out


def _in_loop(data: bytes, start: int, indent: int) -> bool:
    """Lexically: going up from the line at ``start``, a ``for``/``while`` header indented less comes before a
    ``def``/``class`` header indented less (a model head's ``logits.argmax(-1)`` is in no loop)."""
    end = start
    while end > 0:
        ls = data.rfind(b"\n", 0, end - 1) + 1
        line = data[ls : end - 1]
        body = line.lstrip(b" \t")
        if body and not body.startswith(b"#") and len(line) - len(body) < indent:
            if body.startswith((b"for ", b"while ", b"async for ")):
                return True
            if body.startswith((b"def ", b"async def ", b"class ")):
                return False
            indent = len(line) - len(body)
        end = ls
    return False


def worth_parsing(data: bytes) -> bool:
    """torch, a loop, a Python stop test (``break``, ``return``) and a name bound from a sampling call, all in the
    file's bytes."""
    return (
        b"torch" in data
        and (b"break" in data or b"return" in data)
        and (b"for " in data or b"while " in data)
        and any(w in data for w in _SAMPLE_CALLS)
        and bool(_sample_lines(data))
    )


def _loops_around(tree: ast.Module, lines: list[int]) -> list[ast.AST]:
    """The loops whose span holds a sampling line, descending only into nodes that hold one (a model library's
    files are large; the few sampling lines decide where to look)."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            lo, hi = getattr(child, "lineno", None), getattr(child, "end_lineno", None)
            if lo is None or hi is None:
                continue
            if any(lo <= ln <= hi for ln in lines):
                if isinstance(child, _LOOPS):
                    out.append(child)
                todo.append(child)
    return out


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
    sampling = _sample_lines(data)
    # the blocks holding any multinomial line too: a helper the loop calls (Llama's ``sample_top_p``) draws there
    draws = [data.count(b"\n", 0, i) + 1 for i in _finds(data, b"multinomial(")]
    trees = unit_trees(data, sorted({*sampling, *draws}))
    if not trees:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    out: list[RawFinding] = []
    seen: set[int] = set()
    drawn: set[int] = set()
    helpers = [n for tree in trees for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for loop in (loop for tree in trees for loop in _loops_around(tree, sampling)):
        nodes = _own(loop)
        if any(_callee(n) == "backward" for n in nodes):
            continue  # a training loop (step_syncs.py reads it)
        draw = next((n for n in nodes if isinstance(n, ast.Call) and _callee(n) == "multinomial"), None)
        via, nodes_filter = None, []
        if draw is None:
            # one call deep: a sampling helper of the same file the loop calls (Llama's ``sample_top_p``: sort,
            # cumsum, mask and multinomial); its draw line is the finding
            # called by its plain name (a module-level function), not a method of another object
            called = {n.func.id for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
            for helper in (h for h in helpers if h.name in called):
                draw = next((n for n in _own(helper) if isinstance(n, ast.Call) and _callee(n) == "multinomial"), None)
                if draw is not None:
                    via, nodes_filter = helper.name, _own(helper)
                    break
        if isinstance(draw, ast.Call) and draw.lineno not in drawn:
            ln = draw.lineno
            drawn.add(ln)
            filtered = any(_callee(n) in _FILTERS for n in [*nodes, *nodes_filter])
            msg = (
                "torch.multinomial draws on the device every loop step"
                + (" after a top-k/top-p filter" if filtered else "")
                + (f" (in {via}(), which the loop calls)" if via else "")
            )
            out.append((SAMPLING, ln, msg, lines[ln - 1] if 0 < ln <= len(lines) else "", None, None))
        if not any(isinstance(n, (ast.Break, ast.Return)) for n in nodes):
            continue  # no stop test
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
