"""Device-to-host reads every training step (rule ``host-sync-in-loop``, issue 27).

``loss_value = loss.item()`` in the loop of a training function waits for the device to finish the step and copies
the value to the host, every step. The existing ``item-in-forward`` rule reads only a model's ``forward``; a
training loop is elsewhere (``engine.train_one_epoch``, ``Trainer.train``). Read here from a whole file:

- a function that trains: it calls ``.backward(...)``, ``.zero_grad()`` or ``<opt>.step()`` (a receiver named for
  an optimizer: ``optimizer``, ``self.opt``);
- a read in a loop of it: ``.item()``, ``.cpu()`` or ``.tolist()`` with no argument, whose innermost loop itself
  holds a training call (an evaluation loop nested in the epoch loop reads no training step);
- not under an ``if`` that reads every N steps (a test with ``%`` or a ``divisible`` call: nanoGPT's
  ``if iter_num % log_interval == 0``), which is the fix already, unless N is a module constant 1 (lit-llama's
  ``log_interval = 1``: every step), and not in a nested def or lambda;
- a script's module-level loop trains like a function's (llama2.c's ``while True:``, cleanrl's loop under ``if
  __name__ == "__main__":``); where the script ``exec``s a configurator (nanoGPT's), its ``N = 1`` may be rebound
  from the command line and is not read as every step;
- one call deep: a read anywhere in a function of the same file (``log_loss_dict(...)``, ``self._log(...)``) that
  such a loop calls by name every step, and that trains nothing itself (guided-diffusion's per-microbatch
  ``values.mean().item()`` logging).

A cheap byte check decides whether the file is parsed at all."""

from __future__ import annotations

import ast
import re

from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.post_host import _callee
from accelpilot.porting.scan.post_kit import _tree

RULE = "host-sync-in-loop"
_EXEC_CONFIG = re.compile(rb"^\s*exec\(", re.M)  # nanoGPT's ``exec(open('configurator.py').read())``
_READS = frozenset({"item", "cpu", "tolist"})
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FUNC = (ast.FunctionDef, ast.AsyncFunctionDef)
_OPTIMIZER = re.compile(r"opt", re.I)
_TRAINS = (b".backward(", b".zero_grad(", b".step()")


def worth_parsing(data: bytes) -> bool:
    """A read and a training call both in the file's bytes."""
    return (b".item()" in data or b".cpu()" in data or b".tolist()" in data) and any(w in data for w in _TRAINS)


def _receiver(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _trains(node: ast.AST) -> bool:
    """A training call: ``x.backward(...)``, ``opt.zero_grad()``, ``optimizer.step()``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    attr = node.func.attr
    if attr in ("backward", "zero_grad"):
        return True
    return attr == "step" and _OPTIMIZER.search(_receiver(node.func.value)) is not None


def _ones(tree: ast.Module) -> frozenset[str]:
    """Module-level names bound once, to the constant 1 (lit-llama's ``log_interval = 1``)."""
    bound: dict[str, list[ast.expr]] = {}
    for st in tree.body:
        if isinstance(st, ast.Assign):
            for t in st.targets:
                if isinstance(t, ast.Name):
                    bound.setdefault(t.id, []).append(st.value)
    return frozenset(
        k for k, vs in bound.items() if len(vs) == 1 and isinstance(vs[0], ast.Constant) and vs[0].value == 1
    )


def _periodic(test: ast.expr, ones: frozenset[str] = frozenset()) -> bool:
    """A test that holds every N steps: a ``%`` in it (not ``% N`` with a module constant ``N = 1``: every step), or
    a ``divisible``-named call."""
    for n in ast.walk(test):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod):
            return not (isinstance(n.right, ast.Name) and n.right.id in ones)
        if isinstance(n, ast.Call) and "divisible" in _receiver(n.func).lower():
            return True
    return False


def _read(node: ast.AST) -> str | None:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _READS
        and not node.args
        and not node.keywords
    ):
        return node.func.attr
    return None


def _reads_in(
    fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Module, every: bool = False, ones: frozenset[str] = frozenset()
) -> tuple[list[tuple[ast.Call, str]], set[str]]:
    """The per-step reads of one function: (call, what is read), and the names of the same-file functions its
    training loops call every step. ``every``: the whole function runs every step (a helper a step calls), so a
    read needs no loop of its own."""
    out: list[tuple[ast.Call, str]] = []
    called: set[str] = set()
    trains: dict[int, bool] = {}

    def loop_trains(loop: ast.AST) -> bool:
        if id(loop) not in trains:
            trains[id(loop)] = any(_trains(n) for n in ast.walk(loop))
        return trains[id(loop)]

    def walk(node: ast.AST, loop: ast.AST | None, periodic: bool) -> None:
        if isinstance(node, (*_FUNC, ast.ClassDef, ast.Lambda)):
            return
        what = _read(node)
        stepping = not periodic and (every or (loop is not None and loop_trains(loop)))
        if what is not None and stepping:
            assert isinstance(node, ast.Call)
            out.append((node, what))
        if stepping and not every and isinstance(node, ast.Call) and (name := _callee(node)) is not None:
            called.add(name)
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            if isinstance(node, ast.While):
                walk(node.test, node, periodic)  # evaluated every iteration
            else:
                walk(node.iter, loop, periodic)  # evaluated once, before the loop
            body(node.body, node, periodic)
            for st in node.orelse:
                walk(st, loop, periodic)
            return
        if isinstance(node, ast.If) and _periodic(node.test, ones):
            walk(node.test, loop, periodic)
            for st in node.body:
                walk(st, loop, True)
            for st in node.orelse:
                walk(st, loop, periodic)
            return
        for child in ast.iter_child_nodes(node):
            walk(child, loop, periodic)

    def body(stmts: list[ast.stmt], loop: ast.AST, periodic: bool) -> None:
        """A loop's body: after ``if ...: continue`` with no training call left below it, the rest runs only when
        the step skips the ``continue`` (stylegan2-ada's once-per-tick maintenance after the phases' steps)."""
        for i, st in enumerate(stmts):
            walk(st, loop, periodic)
            if (
                isinstance(st, ast.If)
                and not st.orelse
                and isinstance(st.body[-1], ast.Continue)
                and not any(_trains(n) for rest in stmts[i + 1 :] for n in ast.walk(rest))
            ):
                periodic = True

    for st in fn.body:
        walk(st, None, False)
    return out, called


def host_syncs(data: bytes) -> list[RawFinding]:
    """The findings of ``host-sync-in-loop`` in one Python source."""
    if not worth_parsing(data):
        return []
    try:
        tree = _tree(data)
    except SyntaxError:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    out: list[RawFinding] = []
    defs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for n in ast.walk(tree):
        if isinstance(n, _FUNC):
            defs.setdefault(n.name, []).append(n)
    seen: set[int] = set()
    ones = _ones(tree)

    def report(call: ast.Call, what: str, where: str) -> None:
        if call.lineno in seen:
            return
        seen.add(call.lineno)
        ln = call.lineno
        subject = ast.unparse(call.func.value) if isinstance(call.func, ast.Attribute) else ""
        out.append(
            (RULE, ln, f"{subject[:40]}.{what}() {where}", lines[ln - 1] if 0 < ln <= len(lines) else "", None, None)
        )

    top = [st for st in tree.body if not isinstance(st, (*_FUNC, ast.ClassDef))]
    # a script's module-level loop (llama2.c's ``while True:`` in train.py) trains like a function's; a script that
    # ``exec``s a configurator may rebind its constants from the command line, so ``log_interval = 1`` is not read
    # as every step there
    script = [tree] if any(_trains(n) for st in top for n in ast.walk(st)) else []
    script_ones = frozenset() if _EXEC_CONFIG.search(data) else ones
    for fn in [*script, *(fn for fns in defs.values() for fn in fns)]:
        if fn is not tree and not any(_trains(n) for n in ast.walk(fn)):
            continue
        reads, called = _reads_in(fn, ones=script_ones if fn is tree else ones)
        name = "the script's loop" if isinstance(fn, ast.Module) else f"{fn.name}()"
        for call, what in reads:
            report(call, what, f"every training step in {name}")
        for callee in sorted(called):
            for helper in defs.get(callee, ()):
                if helper is fn or any(_trains(n) for n in ast.walk(helper)):
                    continue  # a training function has its own reads
                for call, what in _reads_in(helper, every=True, ones=ones)[0]:
                    report(call, what, f"in {helper.name}(), which {name} calls every training step")
    out.sort(key=lambda r: r[1] or 0)
    return out
