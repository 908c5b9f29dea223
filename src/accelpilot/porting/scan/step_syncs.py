"""Device-to-host reads every training step (rule ``host-sync-in-loop``, issue 27).

``loss_value = loss.item()`` in the loop of a training function waits for the device to finish the step and copies
the value to the host, every step. The existing ``item-in-forward`` rule reads only a model's ``forward``; a
training loop is elsewhere (``engine.train_one_epoch``, ``Trainer.train``). Read here from a whole file:

- a function that trains: it calls ``.backward(...)``, ``.zero_grad()`` or ``<opt>.step()`` (a receiver named for
  an optimizer: ``optimizer``, ``self.opt``);
- a read in a loop of it: ``.item()``, ``.cpu()`` or ``.tolist()`` with no argument, whose innermost loop itself
  holds a training call outside any loop nested in it, a ``.zero_grad()`` before an inner loop that trains not
  counted (an evaluation loop nested in the epoch loop, or a validation after the batch loop, reads no training
  step);
- not under an ``if`` that reads every N steps (a test with ``%``, or a call named ``divisible``, ``*freq*`` or
  ``*interval*``: taming's image logger's ``check_frequency(batch_idx)``; or ``step < 3``, the first steps only;
  nanoGPT's
  ``if iter_num % log_interval == 0``), which is the fix already, unless N is a module constant 1 (lit-llama's
  ``log_interval = 1``: every step), and not in a nested def or lambda;
- a script's module-level loop trains like a function's (llama2.c's ``while True:``, cleanrl's loop under ``if
  __name__ == "__main__":``); where the script ``exec``s a configurator (nanoGPT's), its ``N = 1`` may be rebound
  from the command line and is not read as every step;
- one call deep: a read anywhere in a function of the same file (``log_loss_dict(...)``, ``self._log(...)``) that
  such a loop calls by name every step, and that trains nothing itself (guided-diffusion's per-microbatch
  ``values.mean().item()`` logging);
- a function that is one step: it trains, and none of its training calls is in a loop (pygcn's ``train(epoch)``,
  EfficientViT's ``after_step(loss)``), or a framework's per-step hook (Lightning's ``training_step`` and
  ``on_train_batch_end``, the Hugging Face ``Trainer.training_step``): a read anywhere in it is a read every step;
  in a hook, so is a value computed by a call and logged with ``prog_bar=True`` (or returned under
  ``'progress_bar'``, Lightning before 1.0): the progress bar turns it into a Python number at every refresh.

A cheap byte check decides whether the file is parsed at all."""

from __future__ import annotations

import ast
import functools
import re
import shlex
from collections.abc import Callable, Iterable, Mapping

from accelpilot.porting.log import Finding
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan.families import _module_names, _resolve
from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.post_host import _callee
from accelpilot.porting.scan.post_kit import _tree, unit_trees

RULE = "host-sync-in-loop"
_EXEC_CONFIG = re.compile(rb"^\s*exec\(", re.M)  # nanoGPT's ``exec(open('configurator.py').read())``
_READS = frozenset({"item", "cpu", "tolist"})
_HOST_DRAWS = frozenset({"rand", "randn", "randint", "randperm"})  # torch's random factories (no ``_like``)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FUNC = (ast.FunctionDef, ast.AsyncFunctionDef)
_OPTIMIZER = re.compile(r"opt", re.I)
_TRAINS = (b".backward(", b".zero_grad(", b".step()")
# Methods a training framework calls once per step (Lightning's module and callback hooks, the Hugging Face
# ``Trainer.training_step`` and ``TrainerCallback.on_step_end``).
_HOOKS = frozenset(
    {
        "training_step",
        "training_step_end",
        "on_train_batch_start",
        "on_train_batch_end",
        "on_before_backward",
        "on_after_backward",
        "on_before_optimizer_step",
        "on_step_end",
    }
)
_HOOK_BYTES = re.compile(rb"def (?:" + b"|".join(h.encode() for h in sorted(_HOOKS)) + rb")\(")
# Python numbers, not tensors: a value these build is no device read when logged.
_PERIOD = re.compile(r"divisible|freq|interval", re.I)
_PY_NUMBER = frozenset({"float", "int", "round", "len", "str", "min", "max", "sum"})


def worth_parsing(data: bytes) -> bool:
    """A training call (whose step may read, or call a helper elsewhere that reads), or a per-step hook with a read
    or a progress-bar log, in the file's bytes."""
    if any(w in data for w in _TRAINS):
        return True
    if b"def on_" not in data and b"def training_step" not in data:
        return False  # no hook (the regex below is the slow part of this check on a large tree)
    reads = b".item()" in data or b".cpu()" in data or b".tolist()" in data
    return (reads or b"prog_bar" in data or b"progress_bar" in data) and _HOOK_BYTES.search(data) is not None


def _receiver(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _trains(node: ast.AST) -> bool:
    """A training call: ``x.backward(...)``, ``opt.zero_grad()``, ``optimizer.step()``, or a grad scaler's
    ``scaler.step(optimizer)`` (the step of a loop whose backward sits in a gradient-accumulation loop: llama2.c)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    attr = node.func.attr
    if attr in ("backward", "zero_grad"):
        return True
    named = [node.func.value, *node.args]
    return attr == "step" and any(_OPTIMIZER.search(_receiver(x)) is not None for x in named)


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
    a call named for a period (``divisible``, ``check_frequency``, ``log_interval``)."""
    for n in ast.walk(test):
        if (
            isinstance(n, ast.Compare)
            and len(n.ops) == 1
            and isinstance(n.ops[0], (ast.Lt, ast.LtE))
            and isinstance(n.comparators[0], ast.Constant)
            and type(n.comparators[0].value) is int
        ):
            return True  # ``if ni < 3``: the first few steps only (YOLOv5's plotted batches)
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod):
            return not (isinstance(n.right, ast.Name) and n.right.id in ones)
        if isinstance(n, ast.Call) and _PERIOD.search(_receiver(n.func)) is not None:
            return True
    return False


def _called(call: ast.Call) -> str | None:
    """``h`` of ``h(...)`` or ``self.h(...)``; ``mod.h`` of ``mod.h(...)`` (a module's function, maybe)."""
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id != "self":
        return f"{f.value.id}.{f.attr}"
    return _callee(call)


def _bound_by_call(fn: ast.AST) -> frozenset[str]:
    """Names a function binds to a call's result (``loss, loss_dict = self.shared_step(batch)``) other than a
    Python number's constructor: tensors, as a step computes them."""
    out: set[str] = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
            f = n.value.func
            if isinstance(f, ast.Name) and f.id in _PY_NUMBER:
                continue
            for t in n.targets:
                for e in t.elts if isinstance(t, ast.Tuple) else [t]:
                    if isinstance(e, ast.Name):
                        out.add(e.id)
    return frozenset(out)


def _bar_log(node: ast.AST, tensors: frozenset[str]) -> str | None:
    """``self.log(name, v, prog_bar=True)`` / ``self.log_dict(d, prog_bar=True)`` of a value bound to a call's
    result, or ``return {..., 'progress_bar': {...}}``: what is logged."""
    if isinstance(node, ast.Return) and isinstance(node.value, ast.Dict):
        for k, v in zip(node.value.keys, node.value.values, strict=True):
            empty = isinstance(v, ast.Dict) and not v.keys
            if isinstance(k, ast.Constant) and k.value == "progress_bar" and not empty:
                return "'progress_bar'"
        return None
    if isinstance(node, ast.Return) and isinstance(node.value, ast.Call) and ast.unparse(node.value.func) == "dict":
        # ``return dict(loss=loss, log=log, progress_bar=dict(train_acc=acc))`` (Pointnet2_PyTorch): the same keys
        for given in node.value.keywords:
            empty = isinstance(given.value, ast.Call) and not given.value.keywords and not given.value.args
            if given.arg == "progress_bar" and not empty:
                return "'progress_bar'"
        return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    kw = {k.arg: k.value for k in node.keywords if k.arg}
    bar = kw.get("prog_bar")
    if node.func.attr not in ("log", "log_dict") or not (isinstance(bar, ast.Constant) and bar.value is True):
        return None
    step = kw.get("on_step")
    if isinstance(step, ast.Constant) and step.value is False:
        return None
    value = node.args[0 if node.func.attr == "log_dict" else 1] if len(node.args) > (node.func.attr == "log") else None
    return value.id if isinstance(value, ast.Name) and value.id in tensors else None


def _read(node: ast.AST) -> str | None:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _READS
        and not node.args
        and not node.keywords
        and not _host_draw(node.func.value)
    ):
        return node.func.attr
    return None


def _host_draw(node: ast.expr) -> bool:
    """``torch.rand(1, generator=self.rng)`` with no ``device=``: a draw made on the host (audiocraft's condition
    dropout and its solver's random crops), whose ``.item()`` moves nothing from the device."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _HOST_DRAWS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "torch"
        and not any(k.arg == "device" for k in node.keywords)
    )


def _reads_in(
    fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Module,
    every: bool = False,
    ones: frozenset[str] = frozenset(),
    step: bool = False,
    hook: bool = False,
) -> tuple[list[tuple[ast.AST, str]], set[str]]:
    """The per-step reads of one function: (node, what is read), and the names of the same-file functions its
    training loops call every step. ``every``: the whole function runs every step (a helper a step calls), so a
    read needs no loop of its own. ``step``: the function is one step itself (its calls are made every step too);
    ``hook``: a framework's per-step hook, whose progress-bar logs are reads."""
    out: list[tuple[ast.AST, str]] = []
    every = every or step
    tensors = _bound_by_call(fn) if hook else frozenset()
    called: set[str] = set()
    trains: dict[int, bool] = {}

    def loop_trains(loop: ast.AST) -> bool:
        if id(loop) not in trains:
            # ``optimizer.zero_grad()`` before an inner loop that trains (YOLOv5's epoch loop) is setup; alone, with
            # the step in a helper (DeiT's ``loss_scaler(loss, optimizer)``), it marks the step
            own = [n for n in _own(loop) if _trains(n)]
            inner = any(
                _trains(n)
                for st in getattr(loop, "body", [])
                for x in ast.walk(st)
                if isinstance(x, _LOOPS)
                for n in ast.walk(x)
            )
            trains[id(loop)] = any(not _zeroes(n) for n in own) or (bool(own) and not inner)
        return trains[id(loop)]

    def walk(node: ast.AST, loop: ast.AST | None, periodic: bool) -> None:
        if isinstance(node, (*_FUNC, ast.ClassDef, ast.Lambda)):
            return
        what = _read(node)
        stepping = not periodic and (every or (loop is not None and loop_trains(loop)))
        if what is not None and stepping:
            out.append((node, what))
        if hook and stepping and (logged := _bar_log(node, tensors)) is not None:
            out.append((node, f"bar:{logged}"))
        if stepping and (step or not every) and isinstance(node, ast.Call) and (name := _called(node)) is not None:
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


def _zeroes(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "zero_grad"


def _own(loop: ast.AST) -> Iterable[ast.AST]:
    """The nodes of a loop's body that are not in a loop (or def) nested in it: what runs once per iteration."""
    todo = [c for st in getattr(loop, "body", []) for c in [st]]
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, (*_LOOPS, *_FUNC, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(n))


def _one_step(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A function that trains, none of whose training calls is in a loop of its own: a call of it is one step."""
    trains = looped = False

    def walk(node: ast.AST, in_loop: bool) -> None:
        nonlocal trains, looped
        if isinstance(node, (*_FUNC, ast.ClassDef, ast.Lambda)):
            return
        if _trains(node):
            trains = True
            looped = looped or in_loop
        for child in ast.iter_child_nodes(node):
            walk(child, in_loop or isinstance(node, _LOOPS))

    for st in fn.body:
        walk(st, False)
    return trains and not looped


# The subject of a read every step only if the command that runs the script rebinds none of these names (a script
# that ``exec``s a configurator: nanoGPT's and llama2.c's ``log_interval = 1``): ``configured_syncs`` decides.
CONFIGURED = "configured:"
StepCalls = list[tuple[str, str, str]]  # (module as imported, function, the step that calls it every step)


def host_syncs(data: bytes) -> list[RawFinding]:
    """The findings of ``host-sync-in-loop`` in one Python source."""
    return _analyse(data)[0]


def step_calls(data: bytes) -> StepCalls:
    """The functions of other modules (``from models import discriminator_loss``, ``commons.clip_grad_value_``)
    that a training step of this source calls every step: the worker's fact for ``cross_file_syncs``."""
    return _analyse(data)[1]


def _imported(
    tree: ast.Module, fns: Iterable[ast.FunctionDef | ast.AsyncFunctionDef]
) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """``name -> (module, name)`` of ``from module import name [as alias]``, and ``alias -> module`` of ``import
    module [as alias]``, at module level (or under a module-level ``try``/``if``) and in the top statements of the
    functions ``fns`` (relative modules keep their dots); not a walk of every node of a large file."""
    names: dict[str, tuple[str, str]] = {}
    modules: dict[str, str] = {}
    stmts: list[ast.stmt] = [*tree.body, *(st for fn in fns for st in fn.body)]
    for st in list(stmts):
        if isinstance(st, (ast.Try, ast.If)):
            stmts.extend([*st.body, *st.orelse, *(x for h in getattr(st, "handlers", []) for x in h.body)])
    for n in stmts:
        if isinstance(n, ast.ImportFrom):
            module = "." * n.level + (n.module or "")
            for a in n.names:
                if a.name != "*":
                    names[a.asname or a.name] = (module, a.name)
        elif isinstance(n, ast.Import):
            for a in n.names:
                modules[a.asname or a.name] = a.name
    return names, modules


# The lines a file with no read needs: its training calls, its hooks and its imports (for ``step_calls``).
_UNIT_LINES = re.compile(
    rb"\.backward\(|\.zero_grad\(|\.step\(\)|^(?:from|import)[ \t]|def (?:"
    + b"|".join(h.encode() for h in sorted(_HOOKS))
    + rb")\(",
    re.M,
)


def _tree_of(data: bytes) -> ast.Module:
    """The whole file when it reads a value back; else only the top-level blocks holding a training call, a hook or
    an import, parsed alone: such a file has no read to report, only the calls its steps make into other modules
    (Trainer-sized files train and read nothing, and a whole parse of each was most of this pass's time)."""
    if b".item()" in data or b".cpu()" in data or b".tolist()" in data:
        return _tree(data)
    at: list[int] = []
    line, last = 1, 0
    for m in _UNIT_LINES.finditer(data):
        line += data.count(b"\n", last, m.start())
        last = m.start()
        at.append(line)
    trees = unit_trees(data, at)
    return ast.Module(body=[st for t in trees for st in t.body], type_ignores=[])


@functools.lru_cache(maxsize=1)
def _analyse(data: bytes) -> tuple[list[RawFinding], StepCalls]:
    """The per-step reads of one source, and the calls its steps make into other modules (parsed once for both:
    the worker asks for each)."""
    if not worth_parsing(data):
        return [], []
    try:
        tree = _tree_of(data)
    except SyntaxError:
        return [], []
    lines = data.decode("utf-8", "replace").splitlines()
    out: list[RawFinding] = []
    defs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for n in ast.walk(tree):
        if isinstance(n, _FUNC):
            defs.setdefault(n.name, []).append(n)
    seen: set[int] = set()
    ones = _ones(tree)
    imported: tuple[dict[str, tuple[str, str]], dict[str, str]] | None = None  # read when a step calls a name
    elsewhere: StepCalls = []

    def report(node: ast.AST, what: str, where: str, subject: str | None = None) -> None:
        ln = getattr(node, "lineno", 0)
        if ln in seen:
            return
        seen.add(ln)
        out.append((RULE, ln, _said(node, what, where), lines[ln - 1] if 0 < ln <= len(lines) else "", subject, None))

    top = [st for st in tree.body if not isinstance(st, (*_FUNC, ast.ClassDef))]
    # a script's module-level loop (llama2.c's ``while True:`` in train.py) trains like a function's; a script that
    # ``exec``s a configurator may rebind its constants from the command line, so ``log_interval = 1`` is not read
    # as every step there
    script = [tree] if any(_trains(n) for st in top for n in ast.walk(st)) else []
    script_ones = frozenset() if _EXEC_CONFIG.search(data) else ones
    for fn in [*script, *(fn for fns in defs.values() for fn in fns)]:
        hook = isinstance(fn, _FUNC) and fn.name in _HOOKS
        if fn is not tree and not hook and not any(_trains(n) for n in ast.walk(fn)):
            continue
        # a test function (pytest's ``test_*``) that calls ``.backward()`` once checks gradients: no step
        step = hook or (isinstance(fn, _FUNC) and not fn.name.startswith("test") and _one_step(fn))
        reads, called = _reads_in(fn, ones=script_ones if fn is tree else ones, step=step, hook=hook)
        name = "the script's loop" if isinstance(fn, ast.Module) else f"{fn.name}()"
        if hook:
            name += ", a per-step hook"
        elif step:
            name += ", one step (it trains outside any loop)"
        for call, what in reads:
            report(call, what, f"every training step in {name}")
        for callee in sorted(called):
            alias, _, attr = callee.partition(".")
            if imported is None and (attr or callee not in defs):
                imported = _imported(tree, (f for fs in defs.values() for f in fs))
            names, modules = imported or ({}, {})
            if attr and alias in modules:
                elsewhere.append((modules[alias], attr, name))
            elif not attr and callee in names and callee not in defs:
                elsewhere.append((*names[callee], name))
            for helper in defs.get(callee, ()):
                if helper is fn or any(_trains(n) for n in ast.walk(helper)):
                    continue  # a training function has its own reads
                for call, what in _reads_in(helper, every=True, ones=ones)[0]:
                    report(call, what, f"in {helper.name}(), which {name} calls every training step")
    # every step only while the command rebinds no ``N = 1`` of a ``% N`` test (``configured_syncs`` reads the
    # README's command)
    periods = (
        {
            n.right.id
            for n in ast.walk(tree)
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) and isinstance(n.right, ast.Name)
        }
        & ones
        if script and script_ones != ones
        else set()
    )
    if periods:
        bound = ",".join(sorted(periods))
        for call, what in _reads_in(tree, ones=frozenset(periods))[0]:
            report(call, what, f"every training step in the script's loop ({bound} = 1)", f"{CONFIGURED}{bound}")
    out.sort(key=lambda r: r[1] or 0)
    return out, sorted(set(elsewhere))


def _said(node: ast.AST, what: str, where: str) -> str:
    if what == "bar:'progress_bar'":
        return f"a 'progress_bar' dict returned (read as Python numbers at each refresh) {where}"
    if what.startswith("bar:"):
        return f"{what[4:]} logged to the progress bar (read as a Python number at each refresh) {where}"
    f = node.func if isinstance(node, ast.Call) else None
    subject = ast.unparse(f.value) if isinstance(f, ast.Attribute) else ""
    return f"{subject[:40]}.{what}() {where}"


def cross_file_syncs(
    steps: Mapping[str, StepCalls],
    rels: list[str],
    entries: Iterable[str],
    read: Callable[[str], bytes | None],
    findings: list[Finding],
    context: Callable[[str], str | None],
) -> list[Finding]:
    """Reads in a function of another module of the tree that a training step calls every step (HiFi-GAN's
    ``discriminator_loss`` in ``models.py``, called from ``train.py``'s loop; VITS's ``commons.clip_grad_value_``),
    as the same-file helpers are read: the callee trains nothing itself, and a read anywhere in it counts. Only the
    few modules named are read again. A line takes its file's context, else its caller's (an example's loop)."""
    if not steps:
        return []
    mods = _module_names(rels, entries)
    have = {(f.file, f.line) for f in findings if f.rule == RULE}
    out: list[Finding] = []
    for rel, calls in sorted(steps.items()):
        for module, name, caller in calls:
            for target in sorted(_resolve(rel, module, [name], mods)):
                data = read(target)
                try:
                    tree = ast.parse(data) if data is not None else None
                except SyntaxError:
                    tree = None
                if tree is None:
                    continue
                lines = data.decode("utf-8", "replace").splitlines() if data is not None else []
                for fn in tree.body:
                    if not isinstance(fn, _FUNC) or fn.name != name or any(_trains(n) for n in ast.walk(fn)):
                        continue
                    for node, what in _reads_in(fn, every=True, ones=_ones(tree))[0]:
                        ln = getattr(node, "lineno", 0)
                        if (target, ln) in have:
                            continue
                        have.add((target, ln))
                        where = f"in {name}(), which {caller} in {rel} calls every training step"
                        out.append(
                            Finding.from_rule(
                                RULES[RULE],
                                file=target,
                                line=ln,
                                message=_said(node, what, where),
                                snippet=lines[ln - 1].strip() if 0 < ln <= len(lines) else "",
                                context=context(target) or context(rel),
                            )
                        )
    return out


_COMMAND = re.compile(r"`([^`]+)`")


def configured_syncs(
    findings: list[Finding], entries: Mapping[str, str], read: Callable[[str], str | None]
) -> list[Finding]:
    """The findings with each configured read (``CONFIGURED``) kept where the README command that runs its script
    leaves the names at 1 (llama2.c's ``python train.py``: ``log_interval = 1``, a read every step) and dropped where
    it rebinds one: a config file it passes that assigns the name (nanoGPT's ``config/train_shakespeare_char.py``:
    ``log_interval = 10``), a ``--name=value`` other than 1, or no command at all (the script's values are anyone's)."""
    out: list[Finding] = []
    for f in findings:
        if f.rule != RULE or not (f.subject or "").startswith(CONFIGURED):
            out.append(f)
            continue
        names = set((f.subject or "")[len(CONFIGURED) :].split(","))
        m = _COMMAND.search(entries.get(f.file or "", ""))
        if m is not None and not _rebinds(m.group(1), names, f.file or "", read):
            f.subject = None
            out.append(f)
    return out


def _rebinds(command: str, names: set[str], script: str, read: Callable[[str], str | None]) -> bool:
    """Whether ``command`` rebinds any of ``names``: a ``--name=value`` (or ``--name value``) other than 1, or a
    ``.py`` config file after the script that assigns one (looked up from the root, then beside the script)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return True  # a command the scan cannot read: nothing is claimed
    folder = script.rpartition("/")[0]
    for i, w in enumerate(words):
        key, eq, value = w.removeprefix("--").partition("=")
        if w.startswith("--") and key in names:
            value = value if eq else (words[i + 1] if i + 1 < len(words) else "")
            if value.strip() not in ("1", "1.0"):
                return True
        if w.endswith(".py") and not w.endswith(script.rpartition("/")[2]):
            text = read(w) or (read(f"{folder}/{w}") if folder else None) or ""
            if any(re.search(rf"^\s*{re.escape(n)}\s*=", text, re.M) for n in names):
                return True
    return False
