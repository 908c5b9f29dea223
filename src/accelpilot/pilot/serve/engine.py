"""The execution engine: a ServingWorkload's model on one device, one program per padded shape.

Paths, chosen by device (``mode="auto"``):
- ``packed`` (CPU, model with ``forward_packed``): eager fp32, dense layers on real tokens only;
- ``cuda`` (CUDA): fp16, inference mode; batches up to ``graph_max_batch`` replay a CUDA graph captured per
  (batch, bucket) shape; larger batches run a ``torch.compile``d model (one compile per shape); pinned host
  buffers and events let the next batch be prepared while the GPU works;
- ``padded`` (everything else, and user models without ``forward_packed``): the workload's ``forward`` on
  padded shapes, optionally through ``compile_model`` (Neuron, XLA: one compile per shape).
Every shape is built and run once in ``warmup``; the time each took is kept, and the compiles are counted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from accelpilot.pilot.device import compile_model, synchronize
from accelpilot.pilot.serve.buckets import PaddedBatch, batch_buckets, pack_batch, pad_batch

_DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


class Pending:
    """A launched batch; ``wait`` blocks until its outputs are on the host."""

    __slots__ = ("_event", "_n", "_out")

    def __init__(self, out: torch.Tensor | None, n: int, event: Any = None) -> None:
        self._out = out
        self._n = n
        self._event = event

    def wait(self) -> torch.Tensor | None:
        if self._event is not None:
            self._event.synchronize()
            self._event = None
            if self._out is not None:
                self._out = self._out[: self._n].clone()
        return self._out


@dataclass(slots=True)
class ShapeInfo:
    path: str  # cuda_graph, compiled, packed, eager, compiled_fallback_eager
    warmup_s: float
    compiled: bool
    note: str = ""


class _Slot:
    """Pinned host buffers and an event for one in-flight batch of one shape."""

    def __init__(self, rows: int, seq: int, out_dim: int) -> None:
        self.ids = torch.zeros(rows, seq, dtype=torch.long).pin_memory()
        self.mask = torch.zeros(rows, seq, dtype=torch.long).pin_memory()
        self.out = torch.zeros(rows, out_dim, dtype=torch.float32).pin_memory()
        self.event = torch.cuda.Event()
        self.event.record()


class _CudaShape:
    """One (rows, seq) shape on CUDA: a captured graph (small batches) or a compiled call (large batches)."""

    def __init__(self, fn: Callable[..., torch.Tensor], device: torch.device, rows: int, seq: int, graph: bool) -> None:
        self.fn = fn
        self.device = device
        self.ids = torch.zeros(rows, seq, dtype=torch.long, device=device)
        self.mask = torch.zeros(rows, seq, dtype=torch.long, device=device)
        self.mask[:, 0] = 1
        self.graph: torch.cuda.CUDAGraph | None = None
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            for _ in range(2 if graph else 1):
                out = fn(self.ids, self.mask)
        torch.cuda.current_stream(device).wait_stream(side)
        if graph:
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                out = fn(self.ids, self.mask)
        self.out = out
        self.slots = [_Slot(rows, seq, int(out.shape[-1])) for _ in range(3)]
        self.next = 0
        torch.cuda.synchronize(device)

    def launch(self, batch: PaddedBatch) -> Pending:
        slot = self.slots[self.next]
        self.next = (self.next + 1) % len(self.slots)
        slot.event.synchronize()  # the previous batch that used these host buffers has finished
        slot.ids.numpy()[:] = batch.ids
        slot.mask.numpy()[:] = batch.mask
        self.ids.copy_(slot.ids, non_blocking=True)
        self.mask.copy_(slot.mask, non_blocking=True)
        if self.graph is not None:
            self.graph.replay()
            out = self.out
        else:
            out = self.fn(self.ids, self.mask)
        slot.out.copy_(out, non_blocking=True)
        slot.event.record()
        return Pending(slot.out, batch.n, slot.event)


class Engine:
    """Runs padded batches of token ids through a workload's model on one device."""

    def __init__(
        self,
        workload: Any,
        device: torch.device,
        *,
        buckets: Sequence[int],
        max_batch: int,
        precision: str | None = None,
        mode: str = "auto",
        compile_backend: str | None = None,
        graph_max_batch: int = 64,
        batch_sizes: Sequence[int] | None = None,
        compile_large: bool = True,
        model: torch.nn.Module | None = None,
        small_batch_threads: int | None = None,
        small_batch_tokens: int = 256,
    ) -> None:
        self.workload = workload
        self.device = device
        self.buckets = tuple(sorted(buckets))
        self.max_batch = max_batch
        self.precision = precision or ("fp16" if device.type == "cuda" else "fp32")
        self.graph_max_batch = graph_max_batch
        self.compile_large = compile_large
        # Optional: a small batch on fewer intra-op threads. On a busy shared host one thread wins (the fork/join
        # of every op costs more than the op); on an idle 2-core machine torch's default (all cores) is faster
        # (batch-1 MiniLM 21-26 ms against 28 ms), so the default leaves threads alone.
        self.small_batch_threads = small_batch_threads if device.type == "cpu" else None
        self.small_batch_tokens = small_batch_tokens
        self.threads = torch.get_num_threads()
        base = model if model is not None else workload.build_model()
        base = base.to(device=device, dtype=_DTYPES[self.precision]).eval()
        for p in base.parameters():
            p.requires_grad_(False)
        self.model = base
        if mode == "auto":
            if device.type == "cpu" and hasattr(base, "forward_packed"):
                mode = "packed"
            elif device.type == "cuda":
                mode = "cuda"
            else:
                mode = "padded"
        self.mode = mode
        self.compile_backend = compile_backend or ("inductor" if mode == "cuda" else "eager")
        # Padded batch sizes only matter where a program is built per shape.
        fixed_rows = mode == "cuda" or self.compile_backend != "eager"
        self.batch_sizes: tuple[int, ...] | None = (
            (tuple(sorted(set(batch_sizes))) if batch_sizes else batch_buckets(max_batch)) if fixed_rows else None
        )
        if self.batch_sizes is not None and self.batch_sizes[-1] < max_batch:
            self.batch_sizes = (*self.batch_sizes, max_batch)
        self.shapes: dict[str, ShapeInfo] = {}
        self._cuda_shapes: dict[tuple[int, int], _CudaShape] = {}
        self._compiled: Callable[..., torch.Tensor] | None = None
        self.compile_errors: list[str] = []
        if mode == "padded" and self.compile_backend != "eager":
            self._compiled = compile_model(self._forward_padded, self.compile_backend)

    # --- forward functions ------------------------------------------------------------------------
    def _forward_padded(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.workload.forward(self.model, ids, mask)  # type: ignore[no-any-return,unused-ignore]

    @property
    def compiles(self) -> int:
        return sum(1 for s in self.shapes.values() if s.compiled)

    def rows_for(self, n: int) -> int:
        """Rows a batch of ``n`` requests is padded to (``n`` itself where shapes need not be fixed)."""
        if self.batch_sizes is None:
            return n
        for b in self.batch_sizes:
            if b >= n:
                return b
        return self.batch_sizes[-1]

    # --- warm-up: build every shape once, timed -----------------------------------------------------
    def warmup(self, progress: Callable[[str], None] | None = None) -> dict[str, ShapeInfo]:
        for i, seq in enumerate(self.buckets):
            if self.batch_sizes is not None:
                rows_list = list(self.batch_sizes)
            else:  # no program per shape: warm each bucket once, and the allocator with one full batch
                rows_list = sorted({1, self.max_batch}) if i == 0 else [1]
            for rows in rows_list:
                key = f"{rows}x{seq}"
                if progress:
                    progress(key)
                t0 = time.perf_counter()
                path, compiled, note = self._build_shape(rows, seq)
                self.shapes[key] = ShapeInfo(path, time.perf_counter() - t0, compiled, note)
        return self.shapes

    def _dummy(self, rows: int, seq: int) -> list[np.ndarray]:
        return [np.full(seq, 1000 + (i % 7), dtype=np.int64) for i in range(rows)]

    def _build_shape(self, rows: int, seq: int) -> tuple[str, bool, str]:
        if self.mode == "cuda":
            graph = rows <= self.graph_max_batch or not self.compile_large
            if graph:
                fn = self._forward_padded
            else:
                if self._compiled is None and self.compile_large:
                    self._compiled = torch.compile(self._forward_padded, dynamic=False)
                fn = self._compiled or self._forward_padded
            try:
                with torch.inference_mode():
                    self._cuda_shapes[(rows, seq)] = _CudaShape(fn, self.device, rows, seq, graph)
                path = "cuda_graph" if graph else ("compiled" if self._compiled else "eager")
                return path, path != "eager", ""
            except Exception as exc:  # a failed compile or capture falls back to eager, and says so
                msg = f"{rows}x{seq}: {exc.__class__.__name__}: {str(exc)[:200]}"
                self.compile_errors.append(msg)
                with torch.inference_mode():
                    self._cuda_shapes[(rows, seq)] = _CudaShape(self._forward_padded, self.device, rows, seq, False)
                return "eager_fallback", False, msg
        pending = self.launch(self._dummy(rows, seq), seq)
        pending.wait()
        if self.mode == "packed":
            return "packed", False, ""
        return ("compiled" if self._compiled is not None else "eager"), self._compiled is not None, ""

    # --- run ----------------------------------------------------------------------------------------
    def launch(self, tokens: Sequence[np.ndarray], seq: int) -> Pending:
        """Start one batch (all requests fit ``seq``; at most ``max_batch``); returns a handle to wait on."""
        n = len(tokens)
        with torch.inference_mode():
            if self.mode == "packed":
                pb = pack_batch(tokens, seq)
                small = self.small_batch_threads is not None and pb.real_tokens <= self.small_batch_tokens
                want = self.small_batch_threads if small else self.threads
                if want is not None and torch.get_num_threads() != want:
                    torch.set_num_threads(want)
                out = self.model.forward_packed(  # type: ignore[operator]
                    torch.from_numpy(pb.ids),
                    torch.from_numpy(pb.positions),
                    torch.from_numpy(pb.flat_index),
                    torch.from_numpy(pb.row_index),
                    torch.from_numpy(pb.lengths),
                    torch.from_numpy(pb.mask),
                )
                return Pending(out, n)
            batch = pad_batch(tokens, seq, self.rows_for(n))
            if self.mode == "cuda":
                shape = self._cuda_shapes.get((batch.rows, seq))
                if shape is None:  # a shape not warmed (should not happen): build it now, timed
                    t0 = time.perf_counter()
                    path, compiled, note = self._build_shape(batch.rows, seq)
                    self.shapes[f"{batch.rows}x{seq}"] = ShapeInfo(path, time.perf_counter() - t0, compiled, note)
                    shape = self._cuda_shapes[(batch.rows, seq)]
                return shape.launch(batch)
            ids = torch.from_numpy(batch.ids).to(self.device)
            mask = torch.from_numpy(batch.mask).to(self.device)
            fn = self._compiled or self._forward_padded
            out = fn(ids, mask)
            synchronize(self.device)
            host = out.detach().to("cpu") if isinstance(out, torch.Tensor) else None
            return Pending(host[:n] if host is not None and host.dim() > 0 else host, n)

    def run(self, tokens: Sequence[np.ndarray], seq: int) -> torch.Tensor | None:
        return self.launch(tokens, seq).wait()

    def describe(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "precision": self.precision,
            "compile_backend": self.compile_backend,
            "buckets": list(self.buckets),
            "batch_sizes": list(self.batch_sizes) if self.batch_sizes else None,
            "graph_max_batch": self.graph_max_batch if self.mode == "cuda" else None,
            "compiles": self.compiles,
            "shapes": {
                k: {"path": v.path, "warmup_s": v.warmup_s, "compiled": v.compiled} for k, v in self.shapes.items()
            },
            "compile_errors": self.compile_errors,
            "cpu_threads": {
                "small_batch": self.small_batch_threads,
                "large_batch": self.threads,
                "small_batch_tokens": self.small_batch_tokens,
            }
            if self.device.type == "cpu"
            else None,
        }
