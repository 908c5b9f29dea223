"""The gradient all-reduce timed where it happens: a DDP communication hook that can time each bucket.

Off (the default), the hook is DDP's own ``allreduce_hook`` (the Python form of what DDP does without a hook):
an asynchronous all-reduce that overlaps backward; it stays registered for the time-to-target runs after.
On, each bucket is all-reduced at once and timed on its own: first a barrier, so the wait for a rank still in
its backward is not counted (it is hook time, not communication), then the all-reduce with the device
synchronised around it. The communication share is then one fwd+bwd's own all-reduce time over its own busy
time (compute + all-reduce), a ratio of two parts of the same step rather than the difference of two steps
timed apart, which a shared machine's load swamped (issue 25). Buckets all-reduced one after the other are not
overlapped with backward: the share is the communication that overlap can hide at most. Run here on the CPU
(gloo) only: the CUDA (NCCL) path synchronises the device around the all-reduce but has not run on a GPU, and
whether Neuron's DDP takes a Python comm hook is unknown (a refusal is caught: the share then reads not measured).
"""

import time
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

# No ``from __future__ import annotations`` here: DDP checks the hook's annotations as objects (GradBucket).


class CommTimer:
    """``ddp.register_comm_hook(None, timer.hook)``; ``timer.on = True`` around the timed passes."""

    def __init__(self, synchronize: Callable[[], None]) -> None:
        self.sync = synchronize
        self.on = False
        self.allreduce_s = 0.0  # all-reduce alone, summed over buckets, since reset()
        self.hook_s = 0.0  # everything the hook held backward up: barrier waits and the all-reduce
        self.buckets = 0

    def reset(self) -> None:
        self.allreduce_s, self.hook_s, self.buckets = 0.0, 0.0, 0

    def hook(self, state: Any, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
        if not self.on:
            return allreduce_hook(state, bucket)
        sync = self.sync
        t_hook = time.perf_counter()
        buf = bucket.buffer()
        sync()
        dist.barrier()  # every rank has this bucket ready: what follows is the exchange alone
        sync()
        t0 = time.perf_counter()
        dist.all_reduce(buf)
        sync()
        t1 = time.perf_counter()
        buf.div_(dist.get_world_size())
        self.allreduce_s += t1 - t0
        self.hook_s += time.perf_counter() - t_hook
        self.buckets += 1
        fut: torch.futures.Future[torch.Tensor] = torch.futures.Future()
        fut.set_result(buf)
        return fut
