"""Harness overhead of the training pilot: its timed loop vs a bare PyTorch loop of the same model.

Same process, same workload (tiny GPT), same data source, same optimizer settings; repeats are interleaved
(pilot, bare, bare, pilot, ...) so machine noise hits both alike. Prints the throughput ratio pilot/bare;
the target is >= 0.98.

    PYTHONPATH=src python3 benchmarks/train_overhead.py [--device cpu] [--repeats 10] [--steps 30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch

from accelpilot.pilot import device as dev
from accelpilot.pilot.train.loop import Trainer, build_model, fused_optimizer_supported, timed_steps
from accelpilot.pilot.workloads.gpt import GPTWorkload


def bare_loop(model: torch.nn.Module, opt: torch.optim.Optimizer, batches, n: int, device: torch.device) -> float:
    """A plain training loop: tokens/s over ``n`` steps, one sync at the end."""
    tokens = 0
    dev.synchronize(device)
    t0 = time.perf_counter()
    for _ in range(n):
        x, y = next(batches)
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        loss = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        tokens += x.numel()
    dev.synchronize(device)
    return tokens / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--size", default="tiny")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--steps", type=int, default=30)
    args = ap.parse_args()
    device = dev.resolve_device(args.device)
    w = GPTWorkload(size=args.size)
    bs, sl, lr = w.cfg.batch_size, w.cfg.seq_len, w.cfg.learning_rate

    trainer = Trainer(w, device, "fp32", "eager", lr, seed=0)
    model = build_model(w, 0).to(device)
    fused = fused_optimizer_supported(device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, **({"fused": True} if fused else {}))
    pilot_batches = iter(w.batches("train", bs, sl, 1))
    bare_batches = iter(w.batches("train", bs, sl, 1))

    # warm both paths
    timed_steps(trainer, pilot_batches, 3)
    bare_loop(model, opt, bare_batches, 3, device)

    pilot_tps: list[float] = []
    bare_tps: list[float] = []
    for r in range(args.repeats):
        order = ("pilot", "bare") if r % 2 == 0 else ("bare", "pilot")
        for which in order:
            if which == "pilot":
                t = timed_steps(trainer, pilot_batches, args.steps)
                pilot_tps.append(t.tokens / t.wall_s)
            else:
                bare_tps.append(bare_loop(model, opt, bare_batches, args.steps, device))
    pairs = [p / b for p, b in zip(pilot_tps, bare_tps, strict=True)]
    out = {
        "device": str(device),
        "workload": w.name,
        "steps_per_repeat": args.steps,
        "repeats": args.repeats,
        "pilot_tokens_per_s_median": statistics.median(pilot_tps),
        "bare_tokens_per_s_median": statistics.median(bare_tps),
        "ratio_of_medians": statistics.median(pilot_tps) / statistics.median(bare_tps),
        "ratio_of_totals": sum(pilot_tps) / sum(bare_tps),
        "median_pair_ratio": statistics.median(pairs),
        "target": 0.98,
    }
    print(json.dumps(out, indent=1))
    # Headline: the median of back-to-back pair ratios (each pair shares the machine's state at that moment);
    # the ratio of medians and of totals are printed above for comparison.
    print(f"pilot/bare throughput ratio (median of interleaved pairs): {out['median_pair_ratio']:.3f} (target >= 0.98)")


if __name__ == "__main__":
    main()
