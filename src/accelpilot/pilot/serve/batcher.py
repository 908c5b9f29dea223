"""Dynamic batcher: groups queued requests (max batch size, max wait), pads them to shape buckets, runs them.

One worker thread. It waits for the first request, then up to ``max_wait_s`` for the batch to fill, takes at
most ``max_batch`` requests (oldest first), groups them by sequence bucket and launches each group. On devices
that run asynchronously (CUDA) the next group is prepared while the previous one runs; completion is reported
per group with one callback, so that the load path stays cheap at tens of thousands of requests per second.
Requests longer than the largest bucket are rejected at submission and reported at once, never truncated.
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from accelpilot.pilot.serve.buckets import PaddingStats

# on_done(tags, issue_times_ns, done_ns, outputs) is called once per completed group, from the worker thread.
DoneFn = Callable[[list[Any], int, Any], None]  # on_done(requests, done_ns, outputs), once per group
RejectFn = Callable[[list[Any]], None]
ErrorFn = Callable[[list[Any], BaseException], None]


# A queued request is a plain tuple (cheapest to build at tens of thousands per second):
# (tag: what the caller needs to complete it, tokens, issued_ns, seq bucket, real tokens)
Request = tuple[Any, np.ndarray, int, int, int]
TAG: Final = 0
TOKENS: Final = 1
ISSUED: Final = 2
SEQ: Final = 3
LEN: Final = 4


class BusyClock:
    """Union of the intervals during which at least one batch is in flight: busy time, for the idle fraction."""

    def __init__(self) -> None:
        self.busy_ns = 0
        self._inflight = 0
        self._since = 0

    def start(self, now: int) -> None:
        if self._inflight == 0:
            self._since = now
        self._inflight += 1

    def stop(self, now: int) -> None:
        self._inflight -= 1
        if self._inflight == 0:
            self.busy_ns += now - self._since


class DynamicBatcher:
    def __init__(
        self,
        engine: Any,
        *,
        max_batch: int,
        max_wait_s: float,
        on_done: DoneFn,
        on_reject: RejectFn,
        on_error: ErrorFn | None = None,
        pipeline_depth: int = 2,
    ) -> None:
        self.engine = engine
        self.buckets: tuple[int, ...] = tuple(engine.buckets)
        self.max_batch = max_batch
        self.max_wait_ns = int(max_wait_s * 1e9)
        self.on_done = on_done
        self.on_reject = on_reject
        self.on_error = on_error
        self.failures: list[str] = []
        self.depth = max(1, pipeline_depth)
        self.stats = PaddingStats()
        self.clock = BusyClock()
        self._q: deque[Request] = deque()
        self._cv = threading.Condition()
        self._running = False
        self._idle = False  # worker waits for a first request
        self._filling = False  # worker waits for its batch to fill
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None

    # --- submission (any thread) ---------------------------------------------------------------------
    def split(self, tags: Sequence[Any], tokens: Sequence[np.ndarray], issued_ns: int) -> list[Request]:
        """Bucket requests; the ones no bucket holds are rejected (callback) and counted."""
        out: list[Request] = []
        rejected: list[Any] = []
        buckets = self.buckets
        nb = len(buckets)
        for tag, tok in zip(tags, tokens, strict=True):
            n = len(tok)
            i = bisect_left(buckets, n)
            if i < nb:
                out.append((tag, tok, issued_ns, buckets[i], n))
            else:
                rejected.append(tag)
        if rejected:
            self.stats.rejected += len(rejected)
            self.on_reject(rejected)
        return out

    def submit(self, tags: Sequence[Any], tokens: Sequence[np.ndarray], issued_ns: int | None = None) -> None:
        reqs = self.split(tags, tokens, issued_ns if issued_ns is not None else time.perf_counter_ns())
        if not reqs:
            return
        q = self._q
        q.extend(reqs)  # deque appends are atomic; wake the worker only when it waits for exactly this
        if self._idle or (self._filling and len(q) >= self.max_batch):
            with self._cv:
                self._cv.notify()

    def enqueue(self, req: Request) -> None:
        """Queue one request already bucketed by the caller (the load generator's fast path)."""
        q = self._q
        q.append(req)
        if self._idle or (self._filling and len(q) >= self.max_batch):
            with self._cv:
                self._cv.notify()

    def run_inline(self, tags: Sequence[Any], tokens: Sequence[np.ndarray], issued_ns: int | None = None) -> None:
        """Serve now in the caller's thread (SingleStream: one query in flight, nothing to batch with)."""
        reqs = self.split(tags, tokens, issued_ns if issued_ns is not None else time.perf_counter_ns())
        for group in self._groups(reqs):
            self._finish(self._launch(group))

    # --- worker -----------------------------------------------------------------------------------------
    def start(self) -> DynamicBatcher:
        self._running = True
        self._thread = threading.Thread(target=self._loop, name="accelpilot-batcher", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._cv:
            self._running = False
            self._cv.notify()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> DynamicBatcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _take(self) -> list[Request]:
        """Block for the first request, then until the batch is full or the oldest has waited max_wait."""
        q = self._q
        if not q:
            with self._cv:
                self._idle = True
                while not q and self._running:
                    self._cv.wait(0.05)
                self._idle = False
            if not q:
                return []
        if len(q) < self.max_batch and self.max_wait_ns > 0:
            deadline = q[0][ISSUED] + self.max_wait_ns
            with self._cv:
                self._filling = True
                while len(q) < self.max_batch and self._running:
                    left = deadline - time.perf_counter_ns()
                    if left <= 0:
                        break
                    self._cv.wait(left / 1e9)
                self._filling = False
        n = min(len(q), self.max_batch)
        return [q.popleft() for _ in range(n)]

    def _groups(self, reqs: list[Request]) -> list[list[Request]]:
        by: dict[int, list[Request]] = {}
        for r in reqs:
            g = by.get(r[SEQ])
            if g is None:
                by[r[SEQ]] = [r]
            else:
                g.append(r)
        return [by[s] for s in sorted(by)]

    def _fail(self, group: list[Request], exc: BaseException) -> None:
        """A batch that raised is counted as errors, and its requests are completed so the load generator goes on."""
        self.failures.append(f"{exc.__class__.__name__}: {str(exc)[:200]}")
        if self.on_error is None:
            raise exc
        self.on_error([r[TAG] for r in group], exc)

    def _launch(self, group: list[Request]) -> tuple[list[Request], Any, int]:
        seq = group[0][SEQ]
        now = time.perf_counter_ns()
        self.clock.start(now)
        try:
            pending: Any = self.engine.launch([r[TOKENS] for r in group], seq)
        except Exception as exc:
            pending = exc
        self.stats.add(sum([r[LEN] for r in group]), self.engine.rows_for(len(group)), seq, len(group))
        return group, pending, now

    def _finish(self, item: tuple[list[Request], Any, int]) -> None:
        group, pending, _ = item
        try:
            if isinstance(pending, Exception):
                raise pending
            out = pending.wait()
        except Exception as exc:
            self.clock.stop(time.perf_counter_ns())
            self._fail(group, exc)
            return
        done = time.perf_counter_ns()
        self.clock.stop(done)
        self.on_done(group, done, out)

    def _loop(self) -> None:
        inflight: deque[tuple[list[Request], Any, int]] = deque()
        try:
            while True:
                reqs = self._take()
                if not reqs:
                    break
                for group in self._groups(reqs):
                    inflight.append(self._launch(group))
                    while len(inflight) >= self.depth:
                        self._finish(inflight.popleft())
                # nothing more queued: finish what runs rather than hold it for the next arrival
                if not self._q:
                    while inflight:
                        self._finish(inflight.popleft())
            while inflight:
                self._finish(inflight.popleft())
        except BaseException as exc:  # complete what is left as errors: a load generator would wait forever
            self.error = exc
            left = [r for g, _, _ in inflight for r in g] + list(self._q)
            self._q.clear()
            if left and self.on_error is not None:
                self.on_error([r[TAG] for r in left], exc)
            raise
