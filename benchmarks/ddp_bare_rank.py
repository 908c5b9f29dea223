"""A bare torchrun DDP loop (one rank): the reference `train_ddp_overhead.py` compares the pilot's rank loop with.

torchrun --standalone --nproc-per-node 2 benchmarks/ddp_bare_rank.py OUT.json BATCH SEQ WARMUP STEPS
"""

from __future__ import annotations

import json
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from accelpilot.pilot.workloads.gpt import GPTWorkload


def main() -> None:
    out, bs, sl, warmup, steps = sys.argv[1], *map(int, sys.argv[2:6])
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    w = GPTWorkload(size="tiny")
    torch.manual_seed(0)
    model = DDP(w.build_model())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batches = w.batches("train", bs, sl, rank)
    for i in range(warmup + steps):
        if i == warmup:
            dist.barrier()
            t0 = time.perf_counter()
        x, y = next(batches)
        loss = w.loss(model, (x, y))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    wall = time.perf_counter() - t0
    walls = [0.0] * dist.get_world_size()
    dist.all_gather_object(walls, wall)
    if rank == 0:
        tokens = bs * sl * steps * dist.get_world_size()
        with open(out, "w", encoding="utf-8") as fh:
            json.dump({"tokens_per_s": tokens / max(walls), "world": dist.get_world_size(), "pid": os.getpid()}, fh)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
