"""Serving pilot settings, validated once at the entry point (no torch import here).

One ``ServeConfig`` drives both modes: in-process (a ServingWorkload on a local torch device, driven by MLPerf
LoadGen) and endpoint (an OpenAI-compatible HTTP server, driven the way vLLM's ``bench serve`` does).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
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
    from accelpilot.redact import redact_url_text

    shown = redact_url_text(url.strip())  # a malformed URL's password never reaches the error line
    try:
        parsed = urlparse(url.strip())
        host = parsed.hostname
    except ValueError:
        raise ConfigError(f"bad endpoint URL {shown!r}", field="--endpoint") from None
    if parsed.scheme not in ("http", "https") or not host:
        raise ConfigError(
            f"bad endpoint URL {shown!r}",
            field="--endpoint",
            fix="give an http(s) URL, e.g. http://127.0.0.1:8000/v1/completions",
        )
    try:
        _ = parsed.port
    except ValueError:
        raise ConfigError(f"bad port in endpoint URL {shown!r}", field="--endpoint") from None
    return url.strip()


@dataclass(frozen=True, slots=True)
class CliOption:
    """How one ServeConfig field is a `run serve` option: flag(s), help, and the conversions between the two."""

    flags: tuple[str, ...]
    help: str
    cli_type: Any = None  # the option's type when it differs from the field's (a list given as "1,2,4")
    to_cli: Callable[[Any], Any] | None = None  # field default -> option default
    parse: Callable[[Any], Any] | None = None  # option value -> field value
    envvar: str | None = None
    show_default: bool = True


def option(*flags: str, help: str, default: Any = None, factory: Any = None, **kw: Any) -> Any:
    """A ServeConfig field that is also a `run serve` option: one declaration, so help and defaults cannot drift."""
    meta = {"cli": CliOption(flags=flags, help=help, **kw)}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def _csv(v: Sequence[object]) -> str:
    return ",".join(str(x) for x in v)


_EP = "Endpoint: "


@dataclass(slots=True, kw_only=True)
class ServeConfig:
    """Everything one serving pilot needs; ``validate`` raises ConfigError and has no side effects.

    Fields declared with ``option`` are the `run serve` options (cli/run_serve.py builds the command from them).
    """

    device: str = option("--device", help="torch device: cpu, cuda, cuda:1, neuron, xla, mps.", default="cpu")
    workload: str = option("--workload", help="minilm (built in) or a user's module:factory.", default="minilm")
    scenarios: tuple[str, ...] = option(
        "--scenario",
        help="singlestream, server, offline (repeat or comma list).",
        default=DEFAULT_SCENARIOS,
        cli_type=list[str],
        to_cli=lambda d: [_csv(d)],
        parse=lambda v: parse_scenarios(v),
    )
    target_qps: float | None = option("--target-qps", help="Server rate (default: half the capacity).")
    # None: DEFAULT_SLO_MS in-process, no end-to-end bound for an endpoint
    slo_ms: float | None = option("--slo-ms", help=f"Latency bound (default {DEFAULT_SLO_MS:g} ms in-process).")
    find_peak: bool = option(
        "--find-peak", help="Search the highest Server rate whose p99 meets the SLO.", default=False
    )
    buckets: tuple[int, ...] = option(
        "--buckets",
        help="Sequence-length buckets requests are padded to.",
        default=DEFAULT_BUCKETS,
        cli_type=str,
        to_cli=_csv,
        parse=lambda v: parse_buckets(v),
    )
    max_batch: int = option("--max-batch", help="Largest batch the dynamic batcher forms.", default=32)
    max_wait_ms: float = option("--max-wait-ms", help="Longest a request waits for its batch to fill.", default=2.0)
    duration_s: float = option("--duration-s", help="Minimum duration of each LoadGen scenario.", default=6.0)
    precision: str | None = option("--precision", help="fp32, fp16, bf16 (default fp16 on CUDA).")
    num_samples: int = option("--num-samples", help="Distinct requests in the sample library.", default=512)
    peak_steps: int = 6
    peak_duration_s: float = 2.0
    # endpoint mode
    endpoint: str | None = option("--endpoint", help="OpenAI-compatible URL to drive instead.")
    model_name: str | None = option("--model-name", help="Model name sent to the endpoint.")
    request_rate: float | tuple[float, ...] | None = option(  # a tuple is a sweep
        "--request-rate",
        help=_EP + "arrivals per second; a list (1,2,4) is a sweep.",
        cli_type=str | None,
        parse=lambda v: parse_points(v, "--request-rate", float),
    )
    concurrency: int | tuple[int, ...] | None = option(  # a tuple is a sweep
        "--concurrency",
        help=_EP + "closed-loop clients (default 1); 1,2,4,8 is a sweep.",
        cli_type=str | None,
        parse=lambda v: parse_points(v, "--concurrency", int),
    )
    arrival: str = option("--arrival", help=_EP + "poisson or fixed (for --request-rate).", default="poisson")
    requests_file: str | None = option(
        "--requests", help=_EP + "JSONL/CSV of prompts or chat messages, sampled by --seed."
    )
    input_len: str | None = option(
        "--input-len", help=_EP + "synthetic prompt length: 128, 64-256 or a length,weight CSV."
    )
    output_len: str | None = option(
        "--output-len", help=_EP + "asked output length: 128, 64-256 or a length,weight CSV."
    )
    tokenizer: str | None = option("--tokenizer", help=_EP + "tokenizer.json: lengths in tokens; counts without usage.")
    output_control: str = option(
        "--output-control", help=_EP + "enforce max_tokens with ignore_eos, min_tokens, none.", default="ignore_eos"
    )
    trace: str | None = option("--trace", help=_EP + "replay a JSONL/CSV trace of timestamp, input_len, output_len.")
    cache: str = option(
        "--cache",
        help=_EP + "cold: every measured point sends requests no cache has seen (a salt line per point); "
        "warm: resend the same requests to measure the warm prefix cache on purpose.",
        default="cold",
    )
    warmup_requests: int | None = option(
        "--warmup-requests",
        help=_EP + "unmeasured requests before each point (default: one per concurrent stream).",
    )
    cache_salt: str | None = option(
        "--cache-salt", help=_EP + "root of the per-point salts (default: random, or the --compare-to run's)."
    )
    http: str = option(
        "--http", help=_EP + "auto (HTTP/2 where TLS offers it), 1.1, or 2 (prior knowledge, h2c).", default="auto"
    )
    min_goodput_share: float = option(
        "--min-goodput-share", help="Operating point: least share of requests meeting SLOs.", default=0.99
    )
    compare_to: str | None = option("--compare-to", help=_EP + "another serving result to compare answers with.")
    parity_baseline: str | None = option(
        "--parity-baseline",
        help=_EP + "a second run of the --compare-to platform: its self-agreement is the parity floor "
        "(default: this run answers its requests twice).",
    )
    parity_tokens: int = option("--parity-tokens", help="Parity: first N tokens compared word by word.", default=16)
    parity_threshold: float = option(
        "--parity-threshold", help="Parity: MiniLM cosine at which an answer is accepted.", default=0.9
    )
    platform_note: str | None = option(
        "--platform", help=_EP + 'what serves it, e.g. "inf2.48xlarge, vLLM-neuron 0.x".'
    )
    store_outputs: bool = option(
        "--store-outputs/--no-store-outputs", help=_EP + "keep answers (for --compare-to).", default=True
    )
    num_requests: int = option("--num-requests", help=_EP + "requests to send.", default=100)
    max_tokens: int = option("--max-tokens", help=_EP + "output tokens per request.", default=32)
    slo_ttft_ms: float | None = option("--slo-ttft-ms", help=_EP + "TTFT bound for goodput.")
    slo_tpot_ms: float | None = option("--slo-tpot-ms", help=_EP + "TPOT bound for goodput.")
    request_timeout_s: float = option(
        "--request-timeout-s", help=_EP + "deadline for each whole request.", default=30.0
    )
    api_key: str | None = field(  # sent as a bearer token, never recorded
        default=None,
        repr=False,
        metadata={
            "cli": CliOption(
                flags=("--api-key",),
                help=_EP + "bearer token for the server (or ACCELPILOT_API_KEY); recorded as ***.",
                envvar="ACCELPILOT_API_KEY",
                show_default=False,
            )
        },
    )
    seed: int = option("--seed", help="Seed for requests and arrival schedules.", default=0)
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
        if self.cache not in ("cold", "warm"):
            raise ConfigError(f"unknown cache mode {self.cache!r}", field="--cache", fix="cold or warm")
        if self.http not in ("auto", "1.1", "2"):
            raise ConfigError(f"unknown HTTP version {self.http!r}", field="--http", fix="auto, 1.1 or 2")
        if self.warmup_requests is not None and self.warmup_requests < 0:
            raise ConfigError(f"must be 0 or more, got {self.warmup_requests}", field="--warmup-requests")
        if self.parity_baseline and not self.compare_to:
            raise ConfigError(
                "a parity baseline is the floor of a comparison", field="--parity-baseline", fix="add --compare-to"
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
