"""MLPerf LoadGen drives the batcher: SingleStream, Server (Poisson arrivals) and Offline.

LoadGen decides when queries arrive and judges the run (its validity verdict is kept, parsed from
``mlperf_log_summary.txt``); the percentiles accelpilot reports come from its own per-query timestamps
(issue -> completion, host clock), so they share one definition with the rest of the tool (``Samples``).
Requests are tokenised before the test, as MLPerf's sample library does (its preprocessing step); the
tokenisation cost is measured apart and reported beside the latencies.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from accelpilot.errors import ConfigError
from accelpilot.pilot.serve.batcher import DynamicBatcher
from accelpilot.pilot.serve.buckets import bucket_for
from accelpilot.pilot.stats import Samples


def _lg() -> Any:
    try:
        import mlperf_loadgen as lg
    except ImportError:
        raise ConfigError(
            "the in-process serving pilot needs MLPerf LoadGen",
            fix="pip install mlcommons-loadgen (or pip install 'accelpilot[pilot]')",
        ) from None
    return lg


@dataclass(slots=True)
class ScenarioResult:
    """One LoadGen test: what was issued, what came back and when."""

    scenario: str
    target_qps: float | None
    duration_s: float
    latencies_s: list[float] = field(default_factory=list)
    issued: int = 0
    completed: int = 0
    rejected: int = 0
    errors: int = 0
    input_tokens: int = 0  # over completed requests
    first_issue_ns: int = 0
    last_done_ns: int = 0
    busy_s: float = 0.0
    wall_s: float = 0.0  # LoadGen's StartTest call, end to end
    padding: dict[str, Any] = field(default_factory=dict)
    loadgen: dict[str, str] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    @property
    def span_s(self) -> float:
        """First issue to last completion: the time the service was provisioned for this load."""
        if self.last_done_ns <= self.first_issue_ns:
            return self.wall_s
        return (self.last_done_ns - self.first_issue_ns) / 1e9

    @property
    def valid(self) -> bool | None:
        verdict = self.loadgen.get("Result is")
        return None if verdict is None else verdict.strip().upper() == "VALID"

    @property
    def throughput_qps(self) -> float:
        return self.completed / self.span_s if self.span_s > 0 else 0.0

    @property
    def idle_fraction(self) -> float | None:
        if self.span_s <= 0:
            return None
        return min(1.0, max(0.0, 1.0 - self.busy_s / self.span_s))

    def good(self, slo_s: float | None) -> int:
        """Requests that completed within the SLO (all completed when there is none)."""
        if slo_s is None:
            return self.completed
        return int(np.count_nonzero(np.asarray(self.latencies_s) <= slo_s)) if self.latencies_s else 0

    def goodput_share(self, slo_s: float | None) -> float | None:
        """Good / issued: a rejected or failed request is not a good one."""
        return self.good(slo_s) / self.issued if self.issued else None

    def goodput_qps(self, slo_s: float | None) -> float:
        return self.good(slo_s) / self.span_s if self.span_s > 0 else 0.0

    def percentiles_ms(self) -> dict[str, float]:
        return {k: v * 1e3 for k, v in Samples(list(self.latencies_s)).percentiles().items()}


def parse_summary(text: str) -> dict[str, str]:
    """``key : value`` lines of mlperf_log_summary.txt (the verdict is under ``Result is``)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if " : " not in line:
            continue
        key, _, value = line.partition(" : ")
        key, value = key.strip(), value.strip()
        if key and key not in out:
            out[key] = value
    return out


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """LoadGen's C++ core may print on fd 1; keep stdout clean for ``--json``."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


SCENARIO_NAMES = {"singlestream": "SingleStream", "server": "Server", "offline": "Offline"}


def run_scenario(
    engine: Any,
    tokens: Sequence[np.ndarray],
    scenario: str,
    *,
    duration_s: float,
    max_batch: int,
    max_wait_s: float,
    target_qps: float | None = None,
    slo_s: float | None = None,
    expected_qps: float | None = None,
    expected_latency_s: float | None = None,
    seed: int = 0,
    on_query: Callable[[int], None] | None = None,
) -> ScenarioResult:
    """One LoadGen test of ``scenario`` against a fresh batcher over ``engine``."""
    lg = _lg()
    res = ScenarioResult(scenario=scenario, target_qps=target_qps, duration_s=duration_s)
    lens = [len(t) for t in tokens]
    Response = lg.QuerySampleResponse
    complete = lg.QuerySamplesComplete

    def on_done(group: list[Any], done_ns: int, _out: Any) -> None:
        complete([Response(r[0], 0, 0) for r in group])
        res.latencies_s.extend([(done_ns - r[2]) * 1e-9 for r in group])
        res.completed += len(group)
        res.input_tokens += sum([r[4] for r in group])
        res.last_done_ns = max(res.last_done_ns, done_ns)
        if on_query is not None:
            on_query(res.completed)

    def on_reject(tags: list[Any]) -> None:
        res.rejected += len(tags)
        complete([Response(t, 0, 0) for t in tags])

    def on_error(tags: list[Any], _exc: BaseException) -> None:
        res.errors += len(tags)
        res.last_done_ns = max(res.last_done_ns, time.perf_counter_ns())
        complete([Response(t, 0, 0) for t in tags])

    batcher = DynamicBatcher(
        engine,
        max_batch=1 if scenario == "singlestream" else max_batch,
        max_wait_s=max_wait_s,
        on_done=on_done,
        on_reject=on_reject,
        on_error=on_error,
    )
    inline = scenario == "singlestream"

    seqs = [bucket_for(n, batcher.buckets) for n in lens]
    enqueue = batcher.enqueue

    def issue(samples: list[Any]) -> None:
        now = time.perf_counter_ns()
        if not res.first_issue_ns:
            res.first_issue_ns = now
        res.issued += len(samples)
        if inline:
            batcher.run_inline([s.id for s in samples], [tokens[s.index] for s in samples], now)
            return
        rejected = None
        for s in samples:  # Server: one sample per call; Offline: all of them at once
            i = s.index
            seq = seqs[i]
            if seq is None:
                rejected = [*(rejected or []), s.id]
            else:
                enqueue((s.id, tokens[i], now, seq, lens[i]))
        if rejected:
            batcher.stats.rejected += len(rejected)
            on_reject(rejected)

    ts = lg.TestSettings()
    ts.scenario = getattr(lg.TestScenario, SCENARIO_NAMES[scenario])
    ts.mode = lg.TestMode.PerformanceOnly
    ts.min_duration_ms = max(1, int(duration_s * 1000))
    ts.min_query_count = 1
    ts.sample_index_rng_seed = seed + 1
    ts.schedule_rng_seed = seed + 2
    ts.qsl_rng_seed = seed + 3
    if scenario == "singlestream":
        ts.single_stream_expected_latency_ns = max(1, int((expected_latency_s or 0.01) * 1e9))
    elif scenario == "server":
        if target_qps is None:
            raise ConfigError("the Server scenario needs a rate", field="--target-qps")
        ts.server_target_qps = float(target_qps)
        if slo_s is not None:
            ts.server_target_latency_ns = max(1, int(slo_s * 1e9))
    else:
        ts.offline_expected_qps = float(expected_qps or target_qps or 100.0)

    n = len(tokens)
    sut = lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(n, n, lambda _s: None, lambda _s: None)
    with tempfile.TemporaryDirectory(prefix="accelpilot-loadgen-") as tmp:
        log = lg.LogSettings()
        log.log_output.outdir = tmp
        log.log_output.copy_summary_to_stdout = False
        log.enable_trace = False
        batcher.start()
        t0 = time.perf_counter()
        stopped: list[int] = []
        try:
            # Ctrl-C must not raise inside LoadGen: a KeyboardInterrupt thrown through its C++ callbacks aborted the
            # process (std::bad_alloc / bad_function_call, exit -6). Note it, let the test end, then raise it here.
            previous = signal.signal(signal.SIGINT, lambda signum, _frame: stopped.append(signum))
        except ValueError:  # not the main thread: leave signals alone
            previous = None
        try:
            with stdout_to_stderr():
                lg.StartTestWithLogSettings(sut, qsl, ts, log)
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
            res.wall_s = time.perf_counter() - t0
            batcher.stop()
            lg.DestroyQSL(qsl)
            lg.DestroySUT(sut)
        if stopped:
            raise KeyboardInterrupt
        summary = Path(tmp) / "mlperf_log_summary.txt"
        if summary.is_file():
            res.loadgen = parse_summary(summary.read_text(encoding="utf-8", errors="replace"))
    res.busy_s = batcher.clock.busy_ns / 1e9
    res.padding = batcher.stats.as_dict()
    res.failures = list(batcher.failures)
    return res
