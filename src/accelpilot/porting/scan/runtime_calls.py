"""A training runtime and a launcher read from calls in a whole Python file (issue 27: "one item per framework
runtime, sized as the work it is"; operational items from the job's own settings).

- **Hugging Face accelerate.** ``Accelerator(...)`` drives the training loop as transformers' Trainer does (it picks
  the device, wraps DDP, mixed precision and the process group): an ``hf-trainer`` line, the same unit of work.
  Its ``mixed_precision='fp16'`` is CUDA AMP with a GradScaler, which accelerate refuses off GPUs: an ``amp-cuda``
  line, as ``TrainingArguments(fp16=True)`` is. The value may be a parameter whose default is ``'fp16'``
  (``mixed_precision=mixed_precision_type``), or chosen by a flag (``mixed_precision_type if amp else 'no'``): the
  message then names the flag (``when `amp` is true``), for ``entry.py`` to judge against the default path.
- **submitit.** ``executor.update_parameters(gpus_per_node=..., slurm_constraint='volta32gb', ...)`` asks Slurm for
  NVIDIA GPUs from Python, as ``#SBATCH --gres=gpu:8`` does from a job script: a ``slurm-gpu-gres`` line (GPUs per
  node, tasks per GPU, the GPU constraint names), one item per repository (``subject``).

Its own pass (not ``PyVisitor``): a parameter's default and a constraint set into a kwargs dict need the whole def,
which the pruned visitor does not parse. A byte check decides whether the file is parsed at all.
"""

from __future__ import annotations

import ast

from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.post_kit import LineSink

SUBMITIT_SUBJECT = "submitit Slurm GPU request"
# submitit's keywords that ask Slurm for GPUs (AutoExecutor's and SlurmExecutor's spellings) or name GPU hardware.
_GPU_KEYWORDS = frozenset(
    {"gpus_per_node", "slurm_gpus_per_node", "gpus_per_task", "slurm_gpus_per_task", "slurm_gres", "gres"}
)
_CONSTRAINT = frozenset({"slurm_constraint", "constraint"})
_FP16 = "fp16"
AMP_MESSAGE = " (CUDA AMP with a GradScaler)"


def runtime_calls(data: bytes) -> list[RawFinding]:
    """The ``hf-trainer``/``amp-cuda`` lines of accelerate's ``Accelerator`` and the ``slurm-gpu-gres`` lines of a
    submitit request in one Python source (none when neither library's bytes are there)."""
    accel = b"Accelerator" in data and b"accelerate" in data
    slurm = b"submitit" in data and b"update_parameters" in data
    if not (accel or slurm):
        return []
    sink = LineSink.of(data)
    if sink is None:
        return []
    tree = sink.tree
    add, out = sink.add, sink.out

    if accel:
        names, modules = _accelerator_names(tree)
        for fn, call in _calls(tree):
            f = call.func
            is_accel = (isinstance(f, ast.Name) and f.id in names) or (
                isinstance(f, ast.Attribute)
                and f.attr == "Accelerator"
                and isinstance(f.value, ast.Name)
                and f.value.id in modules
            )
            if not is_accel:
                continue
            add("hf-trainer", call, "Accelerator(...)")
            for kw in call.keywords:
                if kw.arg == "mixed_precision" and (msg := fp16_choice(kw.value, _defaults(fn))) is not None:
                    add("amp-cuda", kw.value, msg + AMP_MESSAGE)
    if slurm and _imports(tree, "submitit"):
        constraints = _constraints(tree)
        asks = False
        for _, call in _calls(tree):
            f = call.func
            if not (isinstance(f, ast.Attribute) and f.attr == "update_parameters"):
                continue
            # ``gpus_per_node=0`` (SAM 2's CPU frame-extraction job) asks for no GPU
            gpus = [k for k in call.keywords if k.arg in _GPU_KEYWORDS and not _zero(k.value)]
            if not gpus:
                continue
            asked = [f"{k.arg}={ast.unparse(k.value)}" for k in call.keywords if k.arg in _GPU_KEYWORDS | _CONSTRAINT]
            asked += [f"{k.arg}={ast.unparse(k.value)}" for k in call.keywords if k.arg == "tasks_per_node"]
            asked += [f"slurm_constraint={c!r}" for c, _ in constraints]
            add("slurm-gpu-gres", gpus[0], "submitit Slurm request " + ", ".join(asked), subject=SUBMITIT_SUBJECT)
            asks = True
        for c, node in constraints if asks else ():
            add("slurm-gpu-gres", node, f"submitit Slurm constraint {c!r} (GPU hardware)", SUBMITIT_SUBJECT)
    return out


def _zero(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value in (0, "0", None)


def fp16_choice(value: ast.expr, defaults: dict[str, object]) -> str | None:
    """How a ``mixed_precision=`` value asks for fp16: ``'fp16'``; a parameter whose default is ``'fp16'``; either
    under a flag (``x if amp else 'no'``: "... when `amp` is true"); None when it does not (``'bf16'``, ``'no'``,
    a value the scan cannot tell)."""
    if isinstance(value, ast.Constant) and value.value == _FP16:
        return f"mixed_precision={_FP16!r}"
    if isinstance(value, ast.Name) and defaults.get(value.id) == _FP16:
        return f"mixed_precision={value.id} (default {_FP16!r})"
    if isinstance(value, ast.IfExp) and isinstance(value.test, (ast.Name, ast.Attribute)):
        body = fp16_choice(value.body, defaults)
        if body is not None and fp16_choice(value.orelse, defaults) is None:
            return f"{body} when `{ast.unparse(value.test)}` is true"
    return None


def _calls(tree: ast.Module) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef | None, ast.Call]]:
    """Every call with its innermost enclosing def (None at module level)."""
    out: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef | None, ast.Call]] = []

    def walk(node: ast.AST, fn: ast.FunctionDef | ast.AsyncFunctionDef | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                walk(child, child)
                continue
            if isinstance(child, ast.Call):
                out.append((fn, child))
            walk(child, fn)

    walk(tree, None)
    return out


def _defaults(fn: ast.FunctionDef | ast.AsyncFunctionDef | None) -> dict[str, object]:
    """Parameter -> its literal default, for the parameters of ``fn`` that have one."""
    if fn is None:
        return {}
    a = fn.args
    pairs = list(zip((a.posonlyargs + a.args)[-len(a.defaults) :] if a.defaults else [], a.defaults, strict=True))
    pairs += [(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None]
    return {p.arg: d.value for p, d in pairs if isinstance(d, ast.Constant)}


def _accelerator_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Local names bound to ``accelerate.Accelerator``, and local names of the ``accelerate`` module."""
    names: set[str] = set()
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "accelerate":
            names |= {a.asname or a.name for a in node.names if a.name == "Accelerator"}
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "accelerate"}
    return names, modules


def _imports(tree: ast.Module, module: str) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == module for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == module:
            return True
    return False


def _constraints(tree: ast.Module) -> list[tuple[str, ast.expr]]:
    """GPU constraint names set into a kwargs dict (``kwargs['slurm_constraint'] = 'volta32gb'``) or as a keyword."""
    out: list[tuple[str, ast.expr]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for t in node.targets:
                key = t.slice if isinstance(t, ast.Subscript) else None
                if isinstance(key, ast.Constant) and key.value in _CONSTRAINT:
                    out.append((node.value.value, node.value))
    return out
