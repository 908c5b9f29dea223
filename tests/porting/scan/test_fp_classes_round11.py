"""Classes read on round 11's repositories after their first score: a CUDA call under ``if x.is_cuda:`` (DLRM)."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path, scan_python

SYNC = """\
import torch


def evaluate(model, x):
    z = model(x)
    if z.is_cuda:
        torch.cuda.synchronize()
    if z.is_cuda and x.is_cuda:
        torch.cuda.synchronize()
    if not z.is_cuda:
        torch.cuda.synchronize()
    return z
"""


def test_a_cuda_call_under_a_tensors_is_cuda_is_a_guarded_path(tmp_path: Path) -> None:
    """DLRM's ``if Z_test.is_cuda: torch.cuda.synchronize()``: only a tensor on a CUDA device opens the body, so the
    call is an optional path, not a stop of the entry point. Near miss: ``if not z.is_cuda:`` opens it off CUDA."""
    found = {ln: ctx for r, ln, _, _, _, ctx in scan_python(SYNC) if r == "torch-cuda-api"}
    assert found == {7: "optional", 9: "optional", 11: None}
    (tmp_path / "train.py").write_text(SYNC + "\nevaluate(torch.nn.Linear(2, 2), torch.ones(2))\n")
    (tmp_path / "README.md").write_text("Run `python train.py`.\n")
    blocking = [f.line for f in scan_path(tmp_path, jobs=1).findings if f.severity == "blocking"]
    assert blocking == [11]


def test_a_data_provider_and_a_data_loader_module_are_host_side(tmp_path: Path) -> None:
    """Time-Series-Library's ``data_provider/data_loader.py`` builds its datasets on the host (pandas
    ``all_df.index.unique()``): its compile hazards are not the model graph's, as in ``datasets/`` or
    ``dataloader.py``. Near miss: the same line in ``models/`` stays a hazard."""
    src = "import torch\n\n\ndef ids(x):\n    return x.index.unique()\n"
    for rel in ("data_provider/data_loader.py", "utils/data_loaders.py", "models/ids.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(src)
    found = {f.file: f.context for f in scan_path(tmp_path, jobs=1).findings if f.rule == "data-dependent-op"}
    assert found == {
        "data_provider/data_loader.py": "host-side",
        "utils/data_loaders.py": "host-side",
        "models/ids.py": None,
    }


TRAIN_DDP = """\
import os

import torch

device = "cuda"
ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    torch.distributed.init_process_group(backend="nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
model = torch.nn.Linear(2, 2).to(device)
device_type = "cuda" if "cuda" in device else "cpu"
"""


def test_a_ddp_branch_keyed_on_the_launchers_rank_blocks_only_under_a_launcher(tmp_path: Path) -> None:
    """llama2.c's (and nanoGPT's) ``if ddp:`` with ``ddp = int(os.environ.get('RANK', -1)) != -1``: the NCCL setup
    runs only when torchrun sets RANK, and the README trains with ``python train.py``: it blocks when launched so.
    ``device_type = 'cuda' if 'cuda' in device else 'cpu'`` follows the device and places nothing. Near misses: the
    ``.to("cuda")`` placement stays blocking, and a README that also runs the script under torchrun keeps the DDP
    lines blocking."""
    (tmp_path / "train.py").write_text(TRAIN_DDP)
    (tmp_path / "README.md").write_text("Train: `python train.py`.\n")
    got = {(f.line, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.rule in _PLACEMENT}
    assert got == {(5, "blocking"), (8, "warning"), (9, "warning"), (11, "warning")}
    (tmp_path / "README.md").write_text(
        "Train: `python train.py`.\n\nOn 8 GPUs: `torchrun --nproc_per_node=8 train.py`\n"
    )
    got = {(f.line, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.rule in _PLACEMENT}
    assert (8, "blocking") in got and (9, "blocking") in got


_PLACEMENT = {"cuda-device-literal", "torch-cuda-api", "nccl-backend", "cuda-call"}
