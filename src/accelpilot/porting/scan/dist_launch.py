"""How a repository runs on several devices, read from a whole Python file (issue 27: the distributed items the
held-out labellers wrote for ldm, taming, NeRF-pl, guided-diffusion and consistency models).

- **Lightning's DDP strategy** (``lightning-ddp``): ``Trainer(distributed_backend='ddp')`` (0.7-1.0),
  ``accelerator='ddp'`` (1.x) or ``strategy='ddp...'``, as a keyword or set into the trainer's config dict
  (``trainer_config["accelerator"] = "ddp"``, latent-diffusion's and taming's ``main.py``): Lightning spawns one
  process per GPU and takes NCCL for their process group.
- **MPI** (``mpi-launch``): ``from mpi4py import MPI`` (guided-diffusion's ``dist_util.py``): rank, world size,
  data sharding and checkpoint broadcast come from an ``mpiexec -n N`` launch, not from torchrun.

Its own pass, behind a byte check, as ``runtime_calls.py`` is."""

from __future__ import annotations

import ast
import re

from accelpilot.porting.scan.patterns import RawFinding
from accelpilot.porting.scan.post_kit import LineSink

_KEYS = frozenset({"accelerator", "distributed_backend", "strategy"})
# ``strategy='ddp'``, ``distributed_backend='ddp' if n > 1 else None``, ``cfg["accelerator"] = "ddp"`` on one line
_DDP = re.compile(rb"(?:accelerator|distributed_backend|strategy)[\"']?\]?[ \t]*=[^\n]*[\"']ddp")
_SAID = "Lightning's DDP strategy (one process per GPU, NCCL)"


def _ddp(value: ast.expr) -> str | None:
    """The ``'ddp...'`` string a value is, or may be (``'ddp' if n > 1 else None``)."""
    for n in ast.walk(value):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith("ddp"):
            return n.value
    return None


def dist_launchers(data: bytes) -> list[RawFinding]:
    """The ``lightning-ddp`` and ``mpi-launch`` lines of one Python source."""
    lightning = b"ddp" in data and _DDP.search(data) is not None
    mpi = b"mpi4py" in data
    if not (lightning or mpi):
        return []
    sink = LineSink.of(data)
    if sink is None:
        return []
    tree = sink.tree
    add = sink.add

    for n in ast.walk(tree):
        if lightning and isinstance(n, ast.Call):
            for kw in n.keywords:
                if kw.arg in _KEYS and (s := _ddp(kw.value)) is not None:
                    add("lightning-ddp", n, f"{kw.arg}={s!r}: {_SAID}")
        elif lightning and isinstance(n, ast.Assign) and len(n.targets) == 1:
            t = n.targets[0]
            key = t.slice if isinstance(t, ast.Subscript) else None
            if isinstance(key, ast.Constant) and key.value in _KEYS and (s := _ddp(n.value)) is not None:
                add("lightning-ddp", n, f"[{key.value!r}] = {s!r}: {_SAID}")
        elif mpi and isinstance(n, (ast.Import, ast.ImportFrom)):
            mod = n.module if isinstance(n, ast.ImportFrom) else None
            names = [a.name for a in n.names]
            if mod == "mpi4py" or any(x == "mpi4py" or x.startswith("mpi4py.") for x in names):
                add("mpi-launch", n, "mpi4py: ranks, sharding and broadcasts from an mpiexec launch")
    return sink.out
