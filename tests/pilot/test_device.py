"""The device table: every device type defined by keyword, and timed_region synchronising around the block."""

from __future__ import annotations

import dataclasses
import time

import pytest
import torch

from accelpilot.pilot import device as dev


def test_every_device_type_has_a_full_entry() -> None:
    assert set(dev.DEVICE_OPS) == set(dev.DEVICE_TYPES)
    for kind, ops in dev.DEVICE_OPS.items():
        assert ops.autocast_type == kind
        names = {"autocast_type", "process_group"}
        assert all(callable(getattr(ops, f.name)) for f in dataclasses.fields(ops) if f.name not in names)
    assert dev.process_group_backend("cpu") == "gloo" and dev.process_group_backend("cuda") == "nccl"
    with pytest.raises(TypeError):
        dev.DeviceOps(*[None] * 8)  # type: ignore[call-arg]  # positional rows are refused


def test_timed_region_syncs_before_and_after(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    cpu_ops = dev.DEVICE_OPS["cpu"]
    monkeypatch.setitem(dev.DEVICE_OPS, "cpu", dataclasses.replace(cpu_ops, synchronize=lambda d: calls.append("sync")))
    with dev.timed_region(torch.device("cpu")) as t:
        calls.append("work")
        time.sleep(0.02)
        assert t.seconds == 0.0  # set when the region ends
    assert calls == ["sync", "work", "sync"]
    assert 0.02 <= t.seconds < 1.0
