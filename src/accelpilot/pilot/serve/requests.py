"""Representative requests for the endpoint pilot: the team's own prompts, synthetic lengths, a replayed trace.

Torch-free. Everything here runs before the first request is sent (gather once, then drive): a bad file is one
line naming the file, the line and the field (exit 2), never a half-run.
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from accelpilot.errors import ConfigError, InputFileError

# Prompts are drawn from this shipped text (plain English, written for accelpilot) so synthetic requests read
# like language and tokenise like it, unlike random words.
PROMPT_TEXT = "prompt_text.txt"


@dataclass(slots=True)
class RequestSpec:
    """One request to send: a prompt or chat messages, and the output length asked for."""

    prompt: str | None = None
    messages: list[dict[str, Any]] | None = None
    max_tokens: int = 32
    input_len: int | None = None  # asked length (synthetic/trace), in ``length_unit`` of the run
    at_s: float | None = None  # trace replay: send time after the start

    def chars(self) -> int:
        if self.prompt is not None:
            return len(self.prompt)
        return sum(len(str(m.get("content", ""))) for m in self.messages or [])


@dataclass(slots=True, frozen=True)
class LengthDist:
    """A length distribution: fixed, uniform in [lo, hi], or a weighted histogram of values."""

    values: tuple[int, ...]
    weights: tuple[float, ...] = ()
    uniform: bool = False
    spec: str = ""

    def sample(self, rng: random.Random) -> int:
        if self.uniform:
            return rng.randint(self.values[0], self.values[1])
        if len(self.values) == 1:
            return self.values[0]
        return rng.choices(self.values, weights=self.weights or None)[0]


def parse_length(spec: str, option: str) -> LengthDist:
    """``128`` (fixed), ``64-256`` (uniform), or a CSV file of ``length,weight`` rows (a histogram)."""
    s = spec.strip()
    fix = f"e.g. {option} 128, {option} 64-256 or {option} lengths.csv (rows: length,weight)"
    if s.isdigit():
        n = int(s)
        if n < 1:
            raise ConfigError(f"length must be at least 1, got {n}", field=option, fix=fix)
        return LengthDist((n,), spec=s)
    lo, dash, hi = s.partition("-")
    if dash and lo.strip().isdigit() and hi.strip().isdigit():
        a, b = int(lo), int(hi)
        if a < 1 or b < a:
            raise ConfigError(f"bad range {s!r}", field=option, fix=fix)
        return LengthDist((a, b), uniform=True, spec=s)
    path = Path(s)
    if not path.is_file():
        raise ConfigError(f"{s!r} is neither a length, a range nor a file", field=option, fix=fix)
    values: list[int] = []
    weights: list[float] = []
    for lineno, row in _csv_rows(path):
        try:
            n = int(row[0])
            w = float(row[1]) if len(row) > 1 and row[1].strip() else 1.0
        except (ValueError, IndexError):
            raise InputFileError(
                f"line {lineno}: expected length,weight", file=str(path), field="length", fix=fix
            ) from None
        if n < 1 or not (w >= 0) or w == float("inf"):
            raise InputFileError(f"line {lineno}: length must be >= 1 and weight >= 0", file=str(path), fix=fix)
        values.append(n)
        weights.append(w)
    if not values or sum(weights) <= 0:
        raise InputFileError("no lengths with a positive weight", file=str(path), fix=fix)
    return LengthDist(tuple(values), tuple(weights), spec=s)


def _csv_rows(path: Path) -> list[tuple[int, list[str]]]:
    """Rows of a small CSV, skipping blanks, comments and a header row."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(f"cannot read ({exc.__class__.__name__})", file=str(path)) from None
    out: list[tuple[int, list[str]]] = []
    for i, row in enumerate(csv.reader(text.splitlines()), start=1):
        if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
            continue
        if not out and not row[0].strip().lstrip("-").replace(".", "").isdigit():
            continue  # header
        out.append((i, row))
    return out


def shipped_words() -> list[str]:
    text = resources.files("accelpilot.pilot.serve").joinpath("data").joinpath(PROMPT_TEXT).read_text(encoding="utf-8")
    return text.split()


class Lengths:
    """Counts and cuts text in tokens (a user's ``tokenizers`` file) or, without one, in words."""

    def __init__(self, tokenizer_file: str | None = None) -> None:
        self.tokenizer: Any = None
        self.unit = "words"
        if tokenizer_file:
            try:
                from tokenizers import Tokenizer
            except ImportError:  # pragma: no cover - tokenizers is in the pilot extra
                raise ConfigError(
                    "needs the tokenizers package", field="--tokenizer", fix="pip install tokenizers"
                ) from None
            try:
                self.tokenizer = Tokenizer.from_file(tokenizer_file)
            except Exception as exc:  # tokenizers raises its own Exception type for any bad file
                raise InputFileError(
                    f"not a tokenizers file ({str(exc)[:80]})",
                    file=tokenizer_file,
                    fix="give the model's tokenizer.json",
                ) from None
            self.tokenizer.no_truncation()
            self.tokenizer.no_padding()  # a tokenizer.json may pad every text to a fixed width
            self.unit = f"tokens ({Path(tokenizer_file).name})"

    def count(self, text: str) -> int:
        if self.tokenizer is None:
            return len(text.split())
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def cut(self, words: list[str], start: int, n: int) -> str:
        """Text of exactly ``n`` units, read from the shipped words from ``start`` (wrapping)."""
        take = [words[(start + i) % len(words)] for i in range(n)]
        text = " ".join(take)
        if self.tokenizer is None:
            return text
        ids = self.tokenizer.encode(text, add_special_tokens=False).ids[:n]
        out: str = self.tokenizer.decode(ids)
        return out


def synthetic_requests(
    n: int, seed: int, input_len: LengthDist, output_len: LengthDist | None, default_max_tokens: int, lengths: Lengths
) -> list[RequestSpec]:
    """``n`` prompts of sampled lengths cut from the shipped text at seeded offsets."""
    rng = random.Random(seed)
    words = shipped_words()
    out = []
    for _ in range(n):
        k = input_len.sample(rng)
        start = rng.randrange(len(words))
        m = output_len.sample(rng) if output_len else default_max_tokens
        out.append(RequestSpec(prompt=lengths.cut(words, start, k), max_tokens=m, input_len=k))
    return out


def _bad(path: str, line: int, fix: str) -> Callable[[str], InputFileError]:
    return lambda f: InputFileError(f"line {line}: missing or bad {f}", file=path, field=f, fix=fix)


def _row_spec(row: dict[str, Any], where: Callable[[str], InputFileError], default_max_tokens: int) -> RequestSpec:
    prompt = row.get("prompt")
    messages = row.get("messages")
    if isinstance(messages, str) and messages.strip().startswith("["):
        try:
            messages = json.loads(messages)
        except (json.JSONDecodeError, RecursionError):
            raise where("messages") from None
    if messages is not None:
        if (
            not isinstance(messages, list)
            or not messages
            or not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages)
        ):
            raise where("messages")
        spec = RequestSpec(messages=messages)
    elif isinstance(prompt, str) and prompt:
        spec = RequestSpec(prompt=prompt)
    else:
        raise where("prompt")
    for key in ("output_len", "max_tokens", "expected_output_len"):
        v = row.get(key)
        if v is None or v == "":
            continue
        try:
            n = int(v)
        except (TypeError, ValueError, OverflowError):
            raise where(key) from None
        if n < 1:
            raise where(key)
        spec.max_tokens = n
        break
    else:
        spec.max_tokens = default_max_tokens
    return spec


def read_request_file(path: str, default_max_tokens: int) -> list[RequestSpec]:
    """JSONL (``prompt`` or ``messages``, optional ``output_len``) or CSV with a ``prompt`` column."""
    p = Path(path)
    fix = 'one JSON object per line: {"prompt": "..."} or {"messages": [...]}, optional "output_len"'
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputFileError("no such request file", file=path, field="--requests") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(f"cannot read ({exc.__class__.__name__})", file=path, field="--requests") from None
    specs: list[RequestSpec] = []
    if p.suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines())
        if not reader.fieldnames or not ({"prompt", "messages"} & set(reader.fieldnames)):
            raise InputFileError("needs a prompt or messages column", file=path, field="header", fix=fix)
        for i, row in enumerate(reader, start=2):
            specs.append(_row_spec(row, _bad(path, i, fix), default_max_tokens))
    else:
        for i, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                raise InputFileError(f"line {i}: not JSON", file=path, fix=fix) from None
            if not isinstance(row, dict):
                raise InputFileError(f"line {i}: not a JSON object", file=path, fix=fix)
            specs.append(_row_spec(row, _bad(path, i, fix), default_max_tokens))
    if not specs:
        raise InputFileError("no requests in the file", file=path, field="--requests", fix=fix)
    return specs


def sample_requests(specs: list[RequestSpec], n: int, seed: int) -> list[RequestSpec]:
    """``n`` requests drawn with a seed: without replacement while the file has enough, then with."""
    rng = random.Random(seed)
    if n <= len(specs):
        return rng.sample(specs, n)
    return [specs[rng.randrange(len(specs))] for _ in range(n)]


def read_trace(path: str, default_max_tokens: int, lengths: Lengths) -> list[RequestSpec]:
    """A production log to replay: rows with ``timestamp`` (s) and ``input_len``/``output_len`` (or ``prompt``).

    Times are made relative to the first row; rows are sent in time order at their offsets.
    """
    p = Path(path)
    fix = 'rows with "timestamp" and "input_len" (or "prompt"), optional "output_len"'
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(f"cannot read ({exc.__class__.__name__})", file=path, field="--trace") from None
    rows: list[tuple[int, dict[str, Any]]]
    if p.suffix.lower() == ".csv":
        rows = list(enumerate(csv.DictReader(text.splitlines()), start=2))
    else:
        rows = []
        for i, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    obj = json.loads(line)
                except (json.JSONDecodeError, RecursionError):
                    raise InputFileError(f"line {i}: not JSON", file=path, fix=fix) from None
                if not isinstance(obj, dict):
                    raise InputFileError(f"line {i}: not a JSON object", file=path, fix=fix)
                rows.append((i, obj))
    words = shipped_words()
    rng = random.Random(0)
    out: list[RequestSpec] = []
    for i, row in rows:
        try:
            ts = float(row["timestamp"])
        except (KeyError, TypeError, ValueError):
            raise InputFileError(f"line {i}: missing or bad timestamp", file=path, field="timestamp", fix=fix) from None
        if ts != ts or ts in (float("inf"), float("-inf")):
            raise InputFileError(f"line {i}: timestamp is not finite", file=path, field="timestamp", fix=fix)
        out_len = row.get("output_len")
        if row.get("prompt"):
            spec = RequestSpec(prompt=str(row["prompt"]))
        else:
            try:
                k = int(row["input_len"])
            except (KeyError, TypeError, ValueError):
                raise InputFileError(
                    f"line {i}: missing or bad input_len", file=path, field="input_len", fix=fix
                ) from None
            if k < 1:
                raise InputFileError(f"line {i}: input_len must be >= 1", file=path, field="input_len", fix=fix)
            spec = RequestSpec(prompt=lengths.cut(words, rng.randrange(len(words)), k), input_len=k)
        try:
            spec.max_tokens = int(out_len) if out_len not in (None, "") else default_max_tokens
        except (TypeError, ValueError):
            raise InputFileError(f"line {i}: bad output_len", file=path, field="output_len", fix=fix) from None
        if spec.max_tokens < 1:
            raise InputFileError(f"line {i}: output_len must be >= 1", file=path, field="output_len", fix=fix)
        spec.at_s = ts
        out.append(spec)
    if not out:
        raise InputFileError("no rows in the trace", file=path, field="--trace", fix=fix)
    out.sort(key=lambda s: s.at_s or 0.0)
    t0 = out[0].at_s or 0.0
    for s in out:
        s.at_s = (s.at_s or 0.0) - t0
    return out


@dataclass(slots=True)
class RequestSet:
    """The requests of a run and how they were made (recorded in the result)."""

    specs: list[RequestSpec]
    source: str  # "built-in sentences", "file x.jsonl", "synthetic", "trace t.csv"
    length_unit: str = "words"
    info: dict[str, Any] = field(default_factory=dict)
    # a request file with enough distinct rows: each measured point's own sample (``specs`` is the first's)
    per_point: list[list[RequestSpec]] = field(default_factory=list)

    def for_point(self, k: int) -> list[RequestSpec]:
        return self.per_point[k] if self.per_point else self.specs
