"""A README's launch (torchrun, torch.distributed.launch/run, one process or more) makes the distributed setup and
collectives it reaches blocking (``scan/launch_reach.py``). Small synthetic trees; each beside the near miss that must stay a warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelpilot.porting.scan import scan_path, scan_python
from accelpilot.porting.scan.launch_reach import processes

MAIN = """\
import util.misc as utils


def main(args):
    utils.init_distributed_mode(args)
    logger = utils.Logger()
    logger.sync()
"""

MISC = """\
import torch
import torch.distributed as dist


def init_distributed_mode(args):
    if "RANK" not in __import__("os").environ:
        return
    torch.cuda.set_device(args.gpu)
    dist.init_process_group(backend="nccl")


class Logger:
    def sync(self):
        t = torch.tensor([1.0], device="cuda")
        dist.all_reduce(t)

    def never_called_helper(self):
        t = torch.tensor([1.0], device="cuda")
        dist.all_reduce(t)


def place():
    return torch.zeros(1, device="cuda")
"""


def _tree(tmp_path: Path, command: str) -> dict[int, tuple[str, str, str | None]]:
    (tmp_path / "util").mkdir()
    (tmp_path / "util" / "__init__.py").write_text("")
    (tmp_path / "util" / "misc.py").write_text(MISC)
    (tmp_path / "main.py").write_text(MAIN)
    (tmp_path / "README.md").write_text(f"# Training\n\n```\n{command}\n```\n")
    log = scan_path(tmp_path, jobs=1)
    return {f.line or 0: (f.rule, f.severity, f.reason) for f in log.findings if f.file == "util/misc.py"}


def test_an_eight_process_launch_makes_the_setup_and_a_called_collective_blocking(tmp_path: Path) -> None:
    by_line = _tree(tmp_path, "python -m torch.distributed.launch --nproc_per_node=8 --use_env main.py --coco x")
    for line in (8, 9, 14):  # set_device, the 'nccl' backend, the tensor the called collective moves
        rule, severity, reason = by_line[line]
        assert severity == "blocking", (line, rule)
        assert reason is not None and "as 8 processes" in reason and f"util/misc.py:{line}" in reason
    assert "init_distributed_mode()" in (by_line[9][2] or "") and "sync()" in (by_line[14][2] or "")
    assert by_line[18][1] == "warning"  # a collective helper nobody calls
    assert by_line[23][1] == "warning"  # placement outside any process-group function


def test_a_command_without_a_launcher_leaves_the_setup_a_warning(tmp_path: Path) -> None:
    """The process-group setup stays a warning; the CUDA tensor ``logger.sync()`` builds still blocks, as CUDA
    placement in a method the entry point calls on the instance it builds (not as a collective of N processes)."""
    by_line = _tree(tmp_path, "python main.py --coco x")
    assert {by_line[line][1] for line in (8, 9)} == {"warning"}
    _rule, severity, reason = by_line[14]
    assert severity == "blocking" and "in Logger.sync, which the entry point's instance runs" in (reason or "")
    assert "processes" not in (reason or "")


@pytest.mark.parametrize("command", ["torchrun --nproc_per_node=1 main.py", "torchrun main.py --coco x"])
def test_one_process_under_a_launcher_still_sets_up_the_group(tmp_path: Path, command: str) -> None:
    """torchrun sets ``RANK``/``WORLD_SIZE`` for one process too (its default), so ``if "RANK" not in os.environ:
    return`` does not return and the NCCL group is set up: Llama's README launches ``torchrun --nproc_per_node 1``
    and ``Llama.build`` stops at ``init_process_group("nccl")``."""
    by_line = _tree(tmp_path, command)
    assert {by_line[line][1] for line in (8, 9, 14)} == {"blocking"}
    assert "as 1 process (" in (by_line[9][2] or "")


@pytest.mark.parametrize(
    ("command", "n"),
    [
        ("python -m torch.distributed.launch --nproc_per_node=8 --use_env main.py", "8"),
        ("torchrun --nnodes=1 --nproc_per_node=N train.py --model DiT-XL/2", "N"),
        ("torchrun --nproc-per-node 4 train.py", "4"),
        ("python -m torch.distributed.run --nproc_per_node=1 train.py", "1"),
        ("torchrun --standalone train.py", "1"),
        ("python train.py --nproc_per_node=8", None),
    ],
)
def test_processes_reads_the_launchers_count(command: str, n: str | None) -> None:
    assert processes(command) == n


def test_the_per_device_backend_string_names_nccl() -> None:
    """modded-nanogpt: ``dist.init_process_group(backend="cuda:nccl,cpu:gloo")`` is NCCL for CUDA tensors. Near
    miss: ``"cpu:gloo"`` alone is no NCCL."""
    src = (
        "import torch.distributed as dist\n"
        'dist.init_process_group(backend="cuda:nccl,cpu:gloo")\n'
        'dist.init_process_group(backend="cpu:gloo")\n'
    )
    assert [ln for r, ln, *_ in scan_python(src) if r == "nccl-backend"] == [2]
