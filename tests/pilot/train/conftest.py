"""Shared fixtures of the training pilot's tests: a tiny run context on the CPU."""

from __future__ import annotations

import time

import pytest
import torch

from accelpilot.pilot import device as dev
from accelpilot.pilot.train.config import TrainConfig, resolve_settings
from accelpilot.pilot.train.record import Context, Reporter
from accelpilot.pilot.workloads.gpt import GPTWorkload


@pytest.fixture
def tiny_ctx() -> Context:
    cfg = TrainConfig(batch_size=2, seq_len=16, shapes=[16, 8], shape_steps=2, interrupt_at=0)
    workload = GPTWorkload(size="tiny")
    cpu = torch.device("cpu")
    settings = resolve_settings(cfg, workload, cpu)
    return Context(
        cfg=cfg,
        settings=settings,
        device=cpu,
        workload=workload,
        options={},
        platform=dev.fingerprint(cpu),
        reporter=Reporter(),
        t_start=time.perf_counter(),
    )
