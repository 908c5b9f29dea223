"""An entry point's CUDA line that runs only when a command-line option says so (issue 27: "blocks when FLAG is set").

``entry.py`` makes CUDA placement on an entry point's own lines blocking. A line under a test of one of the script's
options is on the default path only if the default command makes that test true:

    @click.option('--gpus', type=int, default=1)          # or parser.add_argument('--gpus', default=1)
    ...
    args.num_gpus = gpus
    if args.num_gpus > 1:
        torch.distributed.init_process_group(backend='nccl', ...)

With the README's ``python train.py ... --gpus=1`` (or no ``--gpus``, and the default 1) the test is false: the line
blocks only when ``--gpus > 1``, which the item says instead of blocking. The option's value is the command's
(``--gpus=1``, ``--gpus 1``, continuation lines joined), else its literal default; a test on a value the scan cannot
tell (no default, an expression) keeps the line blocking.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from accelpilot.porting.findings import Finding

_OPS: dict[type, tuple[str, Callable[[Any, Any], bool]]] = {
    ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge),
    ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le),
    ast.Eq: ("==", operator.eq),
    ast.NotEq: ("!=", operator.ne),
}
_QUOTED = re.compile(r"'([^']*)'")


def _literal(node: ast.AST | None) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node) if node is not None else None
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return False, None


def options(tree: ast.AST) -> dict[str, tuple[str, Any, bool]]:
    """Destination name -> (option as written, default, whether the default is known) for ``click.option`` and
    ``add_argument`` calls; names bound from one (``args.num_gpus = gpus``, ``EasyDict(num_gpus=gpus)``) too."""
    out: dict[str, tuple[str, Any, bool]] = {}
    binds: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            longs = [a for a in flags if a.startswith("--")]
            if name in ("option", "add_argument") and longs:
                default = next((k.value for k in node.keywords if k.arg == "default"), None)
                known, value = _literal(default)
                action = next((k.value for k in node.keywords if k.arg == "action"), None)
                switch = action.value if isinstance(action, ast.Constant) else None
                if default is None and switch in ("store_true", "store_false"):
                    value = switch == "store_false"  # argparse's default for a switch
                dest = next((k.value for k in node.keywords if k.arg == "dest"), None)
                d = dest.value if isinstance(dest, ast.Constant) and isinstance(dest.value, str) else None
                # argparse names the attribute after the first long option (``--use-fused``, ``--fused``: use_fused)
                out[d or longs[0][2:].replace("-", "_")] = (longs[0], value, known)
            binds += [(k.arg, k.value.id) for k in node.keywords if k.arg and isinstance(k.value, ast.Name)]
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
            for t in node.targets:
                target = t.attr if isinstance(t, ast.Attribute) else t.id if isinstance(t, ast.Name) else None
                if target is not None:
                    binds.append((target, node.value.id))
    for target, source in binds:
        if source in out and target not in out:
            out[target] = out[source]
    return out


def command_value(command: str, option: str) -> tuple[bool, str | None]:
    """(whether ``command`` sets ``option``, the value it gives: ``--gpus=1`` / ``--gpus 1``; None for a switch)."""
    m = re.search(rf"(?:^|\s){re.escape(option)}(?:[= ]([^\s\\`]+))?(?=\s|$|`)", command)
    if m is None:
        return False, None
    value = m.group(1)
    return True, None if value is not None and value.startswith("-") else value


def _value(raw: str | None, default: Any) -> Any:
    """The option's value as Python reads it: a number when the text is one, else the text (a switch: True)."""
    if raw is None:
        return True
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            continue
    return type(default)(raw) if isinstance(default, str) else raw


def _name(node: ast.AST) -> str | None:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None


def _holds(test: ast.expr, opts: dict[str, tuple[str, Any, bool]], command: str) -> tuple[bool, str] | None:
    """(whether ``test`` holds on the default command, the condition as an option: ``--gpus > 1``), or None when it
    tests no option the scan can value."""
    negate = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    inner = test.operand if isinstance(test, ast.UnaryOp) and negate else test
    op: tuple[str, Callable[[Any, Any], bool]] | None = None
    right: Any = None
    if isinstance(inner, ast.Compare) and len(inner.ops) == 1 and type(inner.ops[0]) in _OPS:
        known, right = _literal(inner.comparators[0])
        if not known:
            return None
        op, left = _OPS[type(inner.ops[0])], inner.left
    else:
        left = inner
    name = _name(left)
    if name is None or name not in opts:
        return None
    flag, default, known = opts[name]
    given, raw = command_value(command, flag)
    if not given and not known:
        return None
    value = _value(raw, default) if given else default
    try:
        holds = op[1](value, right) if op is not None else bool(value)
    except TypeError:
        return None
    cond = f"{flag} {op[0]} {right!r}" if op is not None else f"{flag} is set"
    if negate:
        holds, cond = not holds, f"{flag} is not set" if op is None else f"not ({cond})"
    return holds, cond


def _off_path(tree: ast.AST, f: Finding, opts: dict[str, tuple[str, Any, bool]], command: str) -> str | None:
    """The option condition (``--gpus > 1``) under which ``f``'s line runs when the default command does not meet
    it, with the test's line; None when the line is on the default path (or the scan cannot tell)."""
    return _branch_off_path(tree, f.file, f.line or 0, f.message, opts, command) or _called_off_path(
        tree, f.line or 0, f.file, opts, command, 3
    )


def _branch_off_path(
    tree: ast.AST, file: str | None, line: int, message: str, opts: dict[str, tuple[str, Any, bool]], command: str
) -> str | None:
    """``_off_path`` for a line in an ``if`` (or a conditional expression) on an option."""
    quoted = set(_QUOTED.findall(message))
    for node in ast.walk(tree):
        branch: list[ast.stmt] | list[ast.expr] = []
        if isinstance(node, ast.If):
            branch, test = node.body, node.test
        elif isinstance(node, ast.IfExp) and quoted:
            body, other = ast.unparse(node.body), ast.unparse(node.orelse)
            if any(q in body for q in quoted) and not any(q in other for q in quoted):  # the CUDA literal's side
                branch, test = [node.body], node.test
        if not branch or not (branch[0].lineno <= line <= (branch[-1].end_lineno or line)):
            continue
        judged = _holds(test, opts, command)
        if judged is not None and not judged[0]:
            return f"{judged[1]} (`{ast.unparse(test)}` at {file}:{test.lineno})"
    return None


def _called_off_path(
    tree: ast.AST, line: int, file: str | None, opts: dict[str, tuple[str, Any, bool]], command: str, depth: int
) -> str | None:
    """``line`` is in a module-level function of the entry point whose every call in the file runs only under an
    option the default command does not meet (esm-fold's ``enable_cpu_offloading``, called from the helper that
    ``elif args.cpu_offload:`` calls), up to ``depth`` calls up; None otherwise."""
    body = getattr(tree, "body", [])
    fn = next(
        (
            d
            for d in body
            if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and d.lineno <= line <= (d.end_lineno or 0)
        ),
        None,
    )
    if fn is None or depth == 0 or fn.name == "main":
        return None
    calls = [
        c for c in ast.walk(tree) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == fn.name
    ]
    if not calls:
        return None
    found: str | None = None
    for call in calls:
        why = _branch_off_path(tree, file, call.lineno, "", opts, command)
        why = why or _called_off_path(tree, call.lineno, file, opts, command, depth - 1)
        if why is None:
            return None
        found = found or why
    return found


# Environment variables a distributed launcher (torchrun, torch.distributed.launch, mpirun, srun) sets.
_LAUNCH_ENV = frozenset({"RANK", "WORLD_SIZE", "LOCAL_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"})
_LAUNCHER = re.compile(
    r"\b(?:torchrun|torch\.distributed\.(?:launch|run)|mpirun|mpiexec|srun|deepspeed|accelerate\s+launch)\b"
)


def _reads_launch_env(node: ast.AST) -> bool:
    """``os.environ.get("RANK", -1)``, ``os.environ["WORLD_SIZE"]``, ``"RANK" in os.environ``."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value in _LAUNCH_ENV:
            return "environ" in ast.unparse(node)
    return False


def _launch_names(tree: ast.AST) -> set[str]:
    """Names bound from a launcher's environment (nanoGPT's ``ddp = int(os.environ.get('RANK', -1)) != -1``)."""
    return {
        t.id
        for a in ast.walk(tree)
        if isinstance(a, ast.Assign) and _reads_launch_env(a.value)
        for t in a.targets
        if isinstance(t, ast.Name)
    }


def _launch_guard(tree: ast.AST, f: Finding, names: set[str]) -> str | None:
    """The test (``if ddp:``) of a branch holding ``f``'s line that is true only under a distributed launcher."""
    line = f.line or 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or not node.body:
            continue
        if not (node.body[0].lineno <= line <= (node.body[-1].end_lineno or line)):
            continue
        test = node.test
        if (isinstance(test, ast.Name) and test.id in names) or _reads_launch_env(test):
            return f"`{ast.unparse(test)}` at {f.file}:{test.lineno}"
    return None


def _launched_in_readme(root: Path, rel: str) -> bool:
    """Some README line runs ``rel`` under a distributed launcher (nanoGPT's ``torchrun ... train.py``)."""
    for name in ("README.md", "README.rst", "README.txt", "README"):
        try:
            text = (root / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        return any(_LAUNCHER.search(ln) and rel in ln for ln in text.splitlines())
    return False


def readme_command(root: Path, first_line: str) -> str:
    """The README command whose first line ``entry.py`` quotes, with its continuation lines (``\\``) joined."""
    for name in ("README.md", "README.rst", "README.txt", "README"):
        try:
            lines = (root / name).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for k, text in enumerate(lines):
            if first_line and text.strip().startswith(first_line):
                out = [text.strip()]
                while out[-1].endswith("\\") and k + 1 < len(lines):
                    k += 1
                    out.append(lines[k].strip())
                return " ".join(out)
    return first_line


def option_guards(findings: list[Finding], root: Path, entries: dict[str, str]) -> None:
    """Entry-point lines made blocking that run only under an option the default command leaves off: a warning
    whose reason says ``blocks when <option condition>``."""
    targets = [
        f
        for f in findings
        if f.severity == "blocking" and f.file in entries and (f.reason or "").startswith("entry point")
    ]
    files = sorted({f.file for f in targets if f.file is not None})
    for rel in files:
        try:
            tree = ast.parse((root / rel).read_bytes())
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        opts = options(tree)
        launch = _launch_names(tree)
        if not opts and not launch:
            continue
        how = entries[rel]
        first = how.split("`", 2)[1] if how.startswith("README: `") else ""
        command = readme_command(root, first) if first else ""
        for f in targets:
            if f.file != rel:
                continue
            launched = _LAUNCHER.search(command or how) is not None or _launched_in_readme(root, rel)
            guard = _launch_guard(tree, f, launch) if launch and not launched else None
            if guard is not None:
                f.severity = "warning"
                f.reason = (
                    f"blocks when launched with torchrun or another distributed launcher: the line runs under "
                    f"{guard}, true only when the launcher sets RANK/WORLD_SIZE, and the default command ({how}) "
                    "starts one process"
                )
                continue
            cond = _off_path(tree, f, opts, command) if opts else None
            if cond is not None:
                f.severity = "warning"
                f.reason = (
                    f"blocks when {cond}: the default command ({how}) does not meet it, so this line is off the "
                    "default path"
                )
