"""Buckets, padding, rejection of too-long requests, and the dynamic batcher's grouping."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import torch

from accelpilot.errors import ConfigError
from accelpilot.pilot.serve.base import ServeConfig, parse_buckets, parse_scenarios
from accelpilot.pilot.serve.batcher import DynamicBatcher
from accelpilot.pilot.serve.buckets import batch_buckets, bucket_for, pack_batch, pad_batch
from accelpilot.pilot.serve.engine import Engine
from accelpilot.pilot.serve.fake import NullWorkload


def test_bucket_choice_and_rejection() -> None:
    b = (32, 64, 128)
    assert bucket_for(1, b) == 32
    assert bucket_for(32, b) == 32
    assert bucket_for(33, b) == 64
    assert bucket_for(128, b) == 128
    assert bucket_for(129, b) is None


def test_batch_buckets() -> None:
    assert batch_buckets(1) == (1,)
    assert batch_buckets(32) == (1, 2, 4, 8, 16, 32)
    assert batch_buckets(48) == (1, 2, 4, 8, 16, 32, 48)


def test_pad_batch_shapes_mask_and_filler_rows() -> None:
    toks = [np.array([5, 6, 7]), np.array([8])]
    pb = pad_batch(toks, 4, rows=4)
    assert pb.ids.shape == (4, 4)
    assert pb.ids[0].tolist() == [5, 6, 7, 0]
    assert pb.mask[1].tolist() == [1, 0, 0, 0]
    assert pb.mask[2].tolist() == [1, 0, 0, 0]  # filler row attends to one token: no all-masked rows
    assert pb.real_tokens == 4
    with pytest.raises(ValueError):
        pad_batch([np.arange(5)], 4)


def test_pack_batch_indices() -> None:
    pk = pack_batch([np.array([1, 2, 3]), np.array([4, 5])], 4)
    assert pk.ids.tolist() == [1, 2, 3, 4, 5]
    assert pk.positions.tolist() == [0, 1, 2, 0, 1]
    assert pk.flat_index.tolist() == [0, 1, 2, 4, 5]
    assert pk.row_index.tolist() == [0, 0, 0, 1, 1]


def test_parse_buckets_and_scenarios() -> None:
    assert parse_buckets("128, 32,64,32") == (32, 64, 128)
    assert parse_scenarios(["singlestream,server", "offline"]) == ("singlestream", "server", "offline")
    for bad in ("0,32", "-1", "a,b", ""):
        with pytest.raises(ConfigError):
            parse_buckets(bad)
    with pytest.raises(ConfigError, match="did you mean"):
        parse_scenarios(["servr"])


@pytest.mark.parametrize(
    "kw",
    [
        {"slo_ms": 0},
        {"slo_ms": -5},
        {"target_qps": 0},
        {"target_qps": -1.0},
        {"max_batch": 0},
        {"endpoint": "ftp://x"},
        {"endpoint": "not a url"},
        {"endpoint": "http://h:1", "request_rate": 0},
        {"endpoint": "http://h:1", "request_rate": 1.0, "concurrency": 2},
        {"max_wait_ms": -1},
    ],
)
def test_config_rejects_bad_values(kw: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        ServeConfig(**kw).validate()  # type: ignore[arg-type]


class _Collect:
    def __init__(self) -> None:
        self.done: list[tuple[list[int], int]] = []
        self.rejected: list[int] = []
        self.lock = threading.Lock()
        self.event = threading.Event()
        self.expected = 0

    def on_done(self, group: list[tuple], done_ns: int, out: object) -> None:
        with self.lock:
            self.done.append(([r[0] for r in group], done_ns))
            if sum(len(t) for t, _ in self.done) + len(self.rejected) >= self.expected:
                self.event.set()

    def on_reject(self, tags: list[int]) -> None:
        with self.lock:
            self.rejected.extend(tags)


def test_batcher_groups_by_bucket_and_rejects_too_long() -> None:
    eng = Engine(NullWorkload(), torch.device("cpu"), buckets=(8, 16), max_batch=4)
    c = _Collect()
    lengths = [3, 5, 12, 20, 7, 15, 2, 30]  # 20 and 30 fit no bucket
    c.expected = len(lengths)
    b = DynamicBatcher(eng, max_batch=4, max_wait_s=0.05, on_done=c.on_done, on_reject=c.on_reject)
    with b:
        b.submit(list(range(len(lengths))), [np.ones(n, dtype=np.int64) for n in lengths])
        assert c.event.wait(10)
    assert sorted(c.rejected) == [3, 7]
    served = sorted(t for tags, _ in c.done for t in tags)
    assert served == [0, 1, 2, 4, 5, 6]
    for tags, _ in c.done:  # every group is one bucket and at most max_batch
        assert len(tags) <= 4
        assert len({bucket_for(lengths[t], (8, 16)) for t in tags}) == 1
    st = b.stats
    assert st.rejected == 2
    assert st.requests == 6
    assert st.real_tokens == 3 + 5 + 12 + 7 + 15 + 2
    assert st.padded_tokens >= st.real_tokens
    assert 0 < st.efficiency <= 1  # type: ignore[operator]


def test_batcher_waits_for_a_batch_to_fill() -> None:
    eng = Engine(NullWorkload(), torch.device("cpu"), buckets=(8,), max_batch=8)
    c = _Collect()
    c.expected = 3
    b = DynamicBatcher(eng, max_batch=8, max_wait_s=0.2, on_done=c.on_done, on_reject=c.on_reject)
    with b:
        b.submit([0], [np.ones(3, dtype=np.int64)])
        time.sleep(0.02)
        b.submit([1, 2], [np.ones(3, dtype=np.int64)] * 2)
        assert c.event.wait(10)
    assert len(c.done) == 1 and sorted(c.done[0][0]) == [0, 1, 2]


def test_batcher_counts_failed_batches() -> None:
    class Broken:
        buckets = (8,)

        def launch(self, tokens: list[np.ndarray], seq: int) -> object:
            raise RuntimeError("device fell over")

        def rows_for(self, n: int) -> int:
            return n

    failed: list[int] = []
    b = DynamicBatcher(
        Broken(),
        max_batch=4,
        max_wait_s=0,
        on_done=lambda *a: None,
        on_reject=lambda t: None,
        on_error=lambda tags, exc: failed.extend(tags),
    )
    b.run_inline([1, 2], [np.ones(3, dtype=np.int64)] * 2)
    assert failed == [1, 2]
    assert "device fell over" in b.failures[0]
