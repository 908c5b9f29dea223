"""Serving pilot settings, validated once at the entry point (no torch import here).

One ``ServeConfig`` drives both modes: in-process (a ServingWorkload on a local torch device, driven by MLPerf
LoadGen) and endpoint (an OpenAI-compatible HTTP server, driven the way vLLM's ``bench serve`` does).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from accelpilot.errors import ConfigError, did_you_mean

SCENARIOS = ("singlestream", "server", "offline")
DEFAULT_SCENARIOS = ("singlestream", "server")
DEFAULT_BUCKETS = (32, 64, 128)
# MLPerf Inference's Server bound for BERT (p99 130 ms): a sourced default, not a recommendation.
DEFAULT_SLO_MS = 130.0

_PHRASE = "the quick brown fox jumps over the lazy dog while accelerators compile graphs for fixed shapes"
WORDS = _PHRASE.split(" ")


def sample_sentences(n: int, seed: int = 0, min_words: int = 8, max_words: int = 40) -> list[str]:
    """Seeded request texts: random words from one phrase (the CPU reference's generator)."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(min_words, max_words))) for _ in range(n)]


def parse_scenarios(values: Sequence[str] | str | None) -> tuple[str, ...]:
    """``["server", "offline"]`` or ``"singlestream,server"`` -> canonical names, order kept, duplicates dropped."""
    if values is None:
        return DEFAULT_SCENARIOS
    items = [values] if isinstance(values, str) else list(values)
    out: list[str] = []
    for item in items:
        for raw in item.split(","):
            name = raw.strip().lower().replace("-", "").replace("_", "")
            if not name:
                continue
            if name not in SCENARIOS:
                raise ConfigError(
                    f"unknown scenario {raw.strip()!r}; {did_you_mean(name, SCENARIOS)}", field="--scenario"
                )
            if name not in out:
                out.append(name)
    if not out:
        raise ConfigError("no scenario given", field="--scenario", fix="use singlestream, server or offline")
    return tuple(out)


def parse_buckets(value: str | Sequence[int] | None) -> tuple[int, ...]:
    """``"32,64,128"`` -> ``(32, 64, 128)``; positive, sorted, unique."""
    if value is None:
        return DEFAULT_BUCKETS
    parts: list[str | int] = list(value.split(",")) if isinstance(value, str) else list(value)
    out: set[int] = set()
    for p in parts:
        s = str(p).strip()
        if not s:
            continue
        try:
            n = int(s)
        except ValueError:
            raise ConfigError(
                f"bucket {s!r} is not an integer", field="--buckets", fix="e.g. --buckets 32,64,128"
            ) from None
        if n <= 0:
            raise ConfigError(f"bucket {n} must be positive", field="--buckets", fix="e.g. --buckets 32,64,128")
        out.add(n)
    if not out:
        raise ConfigError("no buckets given", field="--buckets", fix="e.g. --buckets 32,64,128")
    return tuple(sorted(out))


def parse_points(value: str | None, option: str, kind: type[int] | type[float]) -> Any:
    """``"4"`` -> 4, ``"1,2,4"`` -> (1, 2, 4) (a sweep), None -> None."""
    if value is None:
        return None
    out = []
    for raw in str(value).split(","):
        if not raw.strip():
            continue
        try:
            v = kind(raw.strip())
        except ValueError:
            raise ConfigError(f"{raw.strip()!r} is not a number", field=option, fix=f"e.g. {option} 1,2,4,8") from None
        out.append(v)
    if not out:
        raise ConfigError("no value given", field=option, fix=f"e.g. {option} 1,2,4,8")
    uniq = tuple(sorted(set(out)))
    return uniq[0] if len(uniq) == 1 else uniq


def _positive(value: float | None, name: str, fix: str) -> None:
    if value is None:
        return
    if not isinstance(value, (int, float)) or math.isnan(value) or value <= 0:
        raise ConfigError(f"must be a positive number, got {value}", field=name, fix=fix)


def check_endpoint_url(url: str) -> str:
    """An http(s) URL with a host; anything else is a configuration error (exit 2)."""
    parsed = urlparse(url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ConfigError(
            f"bad endpoint URL {url!r}",
            field="--endpoint",
            fix="give an http(s) URL, e.g. http://127.0.0.1:8000/v1/completions",
        )
    try:
        _ = parsed.port
    except ValueError:
        raise ConfigError(f"bad port in endpoint URL {url!r}", field="--endpoint") from None
    return url.strip()


@dataclass(slots=True, kw_only=True)
class ServeConfig:
    """Everything one serving pilot needs; ``validate`` raises ConfigError and has no side effects."""

    device: str = "cpu"
    workload: str = "minilm"  # "minilm" or module:factory
    scenarios: tuple[str, ...] = DEFAULT_SCENARIOS
    target_qps: float | None = None  # Server rate; None: half the calibrated capacity
    slo_ms: float | None = None  # None: DEFAULT_SLO_MS in-process, no end-to-end bound for an endpoint
    find_peak: bool = False
    buckets: tuple[int, ...] = DEFAULT_BUCKETS
    max_batch: int = 32
    max_wait_ms: float = 2.0
    duration_s: float = 6.0
    precision: str | None = None  # None: fp16 on CUDA, fp32 elsewhere
    num_samples: int = 512  # distinct requests in LoadGen's sample library
    seed: int = 0
    peak_steps: int = 6
    peak_duration_s: float = 2.0
    # endpoint mode
    endpoint: str | None = None
    model_name: str | None = None
    request_rate: float | tuple[float, ...] | None = None  # a tuple is a sweep
    concurrency: int | tuple[int, ...] | None = None  # a tuple is a sweep
    arrival: str = "poisson"  # poisson or fixed, for --request-rate
    num_requests: int = 100
    max_tokens: int = 32
    slo_ttft_ms: float | None = None
    slo_tpot_ms: float | None = None
    request_timeout_s: float = 30.0
    api_key: str | None = field(default=None, repr=False)  # sent as a bearer token, never recorded
    requests_file: str | None = None  # JSONL/CSV prompts or chat messages
    input_len: str | None = None  # synthetic prompt lengths: 128, 64-256 or a length,weight CSV
    output_len: str | None = None  # asked output lengths, same forms
    tokenizer: str | None = None  # a tokenizers JSON file: lengths in tokens, and counts when usage is missing
    output_control: str = "ignore_eos"  # ignore_eos, min_tokens or none: how max_tokens is enforced
    trace: str | None = None  # replay timestamps and lengths
    min_goodput_share: float = 0.99  # the operating point: highest load with at least this share of good requests
    compare_to: str | None = None  # another serving result whose answers are compared with this run's
    parity_tokens: int = 16  # first-N token agreement
    parity_threshold: float = 0.9  # MiniLM cosine at or above which an answer is accepted
    platform_note: str | None = None  # what the user says the remote platform is
    store_outputs: bool = True  # keep the answers in the result (needed for --compare-to)
    command: str = ""
    extra: dict[str, object] = field(default_factory=dict)

    def validate(self) -> ServeConfig:
        _positive(self.slo_ms, "--slo-ms", "give a latency bound in milliseconds, e.g. --slo-ms 100")
        _positive(self.slo_ttft_ms, "--slo-ttft-ms", "e.g. --slo-ttft-ms 200")
        _positive(self.slo_tpot_ms, "--slo-tpot-ms", "e.g. --slo-tpot-ms 50")
        _positive(self.target_qps, "--target-qps", "give queries per second, e.g. --target-qps 20")
        rates = self.request_rate if isinstance(self.request_rate, tuple) else (self.request_rate,)
        for r in rates:
            _positive(r, "--request-rate", "give requests per second, e.g. --request-rate 5 or 1,2,4")
        _positive(self.duration_s, "--duration-s", "e.g. --duration-s 6")
        if math.isnan(self.max_wait_ms) or self.max_wait_ms < 0:
            raise ConfigError(f"must be zero or positive, got {self.max_wait_ms}", field="--max-wait-ms", fix="e.g. 2")
        _positive(self.request_timeout_s, "--request-timeout-s", "e.g. 30")
        if self.max_batch < 1:
            raise ConfigError(f"must be at least 1, got {self.max_batch}", field="--max-batch")
        cons = self.concurrency if isinstance(self.concurrency, tuple) else (self.concurrency,)
        for c in cons:
            if c is not None and c < 1:
                raise ConfigError(f"must be at least 1, got {c}", field="--concurrency")
        if self.arrival not in ("poisson", "fixed"):
            raise ConfigError(f"unknown arrival {self.arrival!r}", field="--arrival", fix="poisson or fixed")
        if self.output_control not in ("ignore_eos", "min_tokens", "none"):
            raise ConfigError(
                f"unknown output control {self.output_control!r}",
                field="--output-control",
                fix="ignore_eos, min_tokens or none",
            )
        if not (0.0 < self.min_goodput_share <= 1.0):
            raise ConfigError(
                f"must be in (0, 1], got {self.min_goodput_share}", field="--min-goodput-share", fix="e.g. 0.99"
            )
        if not (0.0 <= self.parity_threshold <= 1.0):
            raise ConfigError(
                f"must be in [0, 1], got {self.parity_threshold}", field="--parity-threshold", fix="e.g. 0.9"
            )
        if self.parity_tokens < 1:
            raise ConfigError(f"must be at least 1, got {self.parity_tokens}", field="--parity-tokens")
        if self.trace and (self.requests_file or self.request_rate is not None or self.concurrency is not None):
            raise ConfigError(
                "a trace sets its own arrival times and lengths",
                field="--trace",
                fix="drop --requests, --request-rate and --concurrency",
            )
        if self.requests_file and self.input_len:
            raise ConfigError(
                "--input-len makes synthetic prompts; a request file brings its own",
                field="--input-len",
                fix="drop one of --requests and --input-len",
            )
        if self.num_requests < 1:
            raise ConfigError(f"must be at least 1, got {self.num_requests}", field="--num-requests")
        if self.max_tokens < 1:
            raise ConfigError(f"must be at least 1, got {self.max_tokens}", field="--max-tokens")
        if self.num_samples < 1:
            raise ConfigError(f"must be at least 1, got {self.num_samples}", field="--num-samples")
        if self.precision is not None and self.precision not in ("fp32", "fp16", "bf16"):
            raise ConfigError(
                f"unknown precision {self.precision!r}; {did_you_mean(self.precision, ('fp32', 'fp16', 'bf16'))}",
                field="--precision",
            )
        if self.endpoint is None and self.slo_ms is None:
            self.slo_ms = DEFAULT_SLO_MS
        if self.endpoint is not None and self.find_peak:
            raise ConfigError(
                "--find-peak runs in-process only", field="--find-peak", fix="drop --endpoint or --find-peak"
            )
        if self.endpoint is not None:
            self.endpoint = check_endpoint_url(self.endpoint)
            if self.request_rate is not None and self.concurrency is not None:
                raise ConfigError(
                    "give either --request-rate (Poisson) or --concurrency (closed loop), not both",
                    field="--request-rate",
                )
        self.buckets = parse_buckets(self.buckets)
        self.scenarios = parse_scenarios(self.scenarios)
        return self
