"""False-positive classes found on public vision repositories (issue 27, second round), each beside the near miss
that must stay a finding. Small synthetic trees; no repository's names."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import findings_in

CLI = """\
import click


@click.command()
@click.option("--gpus", type=int, default=1)
@click.pass_context
def main(ctx, gpus):
    if gpus < 1:
        ctx.fail("--gpus must be at least 1")
    launch(["srun", "--gpus=4", "train.py"])
"""


def test_a_gpus_option_named_in_prose_is_not_a_slurm_request(tmp_path: Path) -> None:
    """``"--gpus must be at least 1"`` (a CLI's error message through any call, not only raise/log/print) names the
    option in prose. Stays: ``--gpus=4`` handed to ``srun``."""
    (tmp_path / "cli.py").write_text(CLI)
    assert findings_in(tmp_path, "cli.py") == [("slurm-gpu-gres", 10, None)]


DOCKER_RUN = """\
#!/bin/bash
docker run --gpus all -it --rm -v `pwd`:/scratch \\
    --workdir=/scratch -e HOME=/scratch $IMAGE "$@"
docker run -v /raid/datasets:/data $IMAGE
"""


def test_a_container_mount_target_is_not_a_local_scratch_dependency(tmp_path: Path) -> None:
    """``-v `pwd`:/scratch`` then ``--workdir=/scratch``: /scratch is a path inside the container, the same on any
    host. Stays: ``/raid/datasets`` on the host side of a mount (the host must have that storage)."""
    (tmp_path / "run.sh").write_text(DOCKER_RUN)
    assert [f for f in findings_in(tmp_path, "run.sh") if f[0] == "local-nvme-path"] == [("local-nvme-path", 4, None)]


COMPOSE = """\
services:
  train:
    volumes:
      - ./data:/scratch
      - /mnt/nvme0/cache:/cache
"""


def test_a_compose_volume_target_is_not_a_local_scratch_dependency(tmp_path: Path) -> None:
    """A compose file's ``- ./data:/scratch``: the container side. Stays: ``/mnt/nvme0`` on the host side."""
    (tmp_path / "docker-compose.yml").write_text(COMPOSE)
    found = [f for f in findings_in(tmp_path, "docker-compose.yml") if f[0] == "local-nvme-path"]
    assert found == [("local-nvme-path", 5, None)]


PINNED_ON_CUDA = """\
import torch
def get_batch(x, device_type):
    if device_type == "cuda":
        x = x.pin_memory().to("cuda", non_blocking=True)
    else:
        x = x.to(device_type)
    if x.is_cuda:
        y = x.pin_memory()
    return x.pin_memory()
"""


def test_a_pin_memory_call_under_a_cuda_test_is_the_cuda_branch_not_the_targets(tmp_path: Path) -> None:
    """``if device_type == "cuda": x.pin_memory()`` (nanoGPT's get_batch) and ``if x.is_cuda:`` run only on CUDA: the
    target takes the other branch. Stays: the unguarded call after them."""
    (tmp_path / "train.py").write_text(PINNED_ON_CUDA)
    assert [f for f in findings_in(tmp_path, "train.py") if f[0] == "pin-memory-call"] == [("pin-memory-call", 9, None)]
