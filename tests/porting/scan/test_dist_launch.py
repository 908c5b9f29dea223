"""How a repository runs on several devices (``scan/dist_launch.py``): Lightning's DDP strategy and an MPI launch,
each found where the labelled repositories set it, beside the near misses."""

from __future__ import annotations

import pytest

from accelpilot.porting.scan.dist_launch import dist_launchers


@pytest.mark.parametrize(
    ("source", "found"),
    [
        # NeRF-pl (Lightning 0.7.5): the strategy under a GPU count
        (
            "from pytorch_lightning import Trainer\n"
            "trainer = Trainer(gpus=n, distributed_backend='ddp' if n > 1 else None)\n",
            [("lightning-ddp", 2)],
        ),
        # taming (Lightning 1.0): set into the trainer's config dict in the script's main block
        (
            "if __name__ == '__main__':\n    cfg = {}\n    cfg['distributed_backend'] = 'ddp'\n",
            [("lightning-ddp", 3)],
        ),
        ("trainer = L.Trainer(strategy='ddp_find_unused_parameters_false')\n", [("lightning-ddp", 1)]),
        ("from mpi4py import MPI\n", [("mpi-launch", 1)]),
        ("import mpi4py.rc\n", [("mpi-launch", 1)]),
    ],
)
def test_a_multi_device_launch_is_found(source: str, found: list[tuple[str, int]]) -> None:
    assert [(r[0], r[1]) for r in dist_launchers(source.encode())] == found


@pytest.mark.parametrize(
    "source",
    [
        "trainer = Trainer(accelerator='gpu', devices=1)\n",  # one device
        "trainer = Trainer(strategy='deepspeed_stage_2')\n",  # DeepSpeed is its own runtime item
        "model = DDP(model)  # ddp\nstrategy = 'ddp'\n",  # a name, no trainer key
        "# run with mpi4py under mpiexec\nimport torch\n",  # a comment
    ],
)
def test_near_misses_are_not_found(source: str) -> None:
    assert dist_launchers(source.encode()) == []
