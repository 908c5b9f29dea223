"""``--compare-to`` for the endpoint pilot: answer parity against another platform, above a measured noise floor.

The same server does not always answer the same request alike (batching changes the order of floating-point sums:
at concurrency 1 and 4 one llama.cpp server differed on 1 of 12 answers). A threshold chosen without that floor
rejects good platforms, so parity first measures the floor: the agreement of one platform with itself, from
``--parity-baseline`` (a second run of the compared platform on the same requests) or, without one, from this run
answering its own requests a second time at its highest load. Disagreement is reported above that floor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from accelpilot.pilot.serve.base import ServeConfig
from accelpilot.pilot.serve.requests import Lengths


@dataclass(slots=True)
class Compare:
    path: str
    outputs: list[dict[str, Any]]
    platform: str
    model: str
    nonce: str | None  # the compared run's salt root: this run resends the very same prompts


def read_compare(path: str, shas: set[str]) -> Compare:
    """Read another result before any request is sent, and check it answered the same requests."""
    from accelpilot.errors import InputFileError
    from accelpilot.pilot.result import read_result
    from accelpilot.pilot.serve.parity import outputs_of

    other = read_result(path)
    outs = outputs_of(other, path)
    if not any(o.get("prompt_sha") in shas for o in outs if isinstance(o, dict)):
        raise InputFileError(
            "its answers are to different requests than this run's",
            file=path,
            field="details.outputs",
            fix="use the same --requests file (or synthetic lengths), --num-requests and --seed as that run",
        )
    cache = other.details.get("cache")
    nonce = other.config.get("cache_salt") if isinstance(other.config.get("cache_salt"), str) else None
    if nonce is None and isinstance(cache, dict) and isinstance(cache.get("nonce"), str):
        nonce = cache["nonce"]
    name = other.platform.device_name or other.platform.device
    return Compare(path, outs, name, other.workload.name, nonce)


def _tools(lengths: Lengths | None) -> tuple[Any, str | None, Callable[[str], list[int]] | None, str]:
    embed = None
    note = None
    try:
        from accelpilot.pilot.serve.minilm import embed_texts

        embed = embed_texts
    except Exception as exc:  # torch or the MiniLM weights missing: exact and token parity still measured
        note = f"semantic similarity not measured ({exc.__class__.__name__}: {str(exc)[:80]})"
    tok: Callable[[str], list[int]] | None = None
    unit = "whitespace words"
    if lengths is not None and lengths.tokenizer is not None:
        t = lengths.tokenizer
        unit = lengths.unit
        tok = lambda text: list(t.encode(text, add_special_tokens=False).ids)  # noqa: E731
    return embed, note, tok, unit


def parity(
    cfg: ServeConfig,
    outputs: list[dict[str, Any]],
    other: Compare,
    lengths: Lengths | None,
    floor_pair: tuple[list[dict[str, Any]], list[dict[str, Any]], str] | None,
) -> dict[str, Any]:
    """Parity against ``other``; ``floor_pair`` = (answers, the same platform's second answers, where from)."""
    from accelpilot.pilot.serve.parity import compare_outputs

    embed, note, tok, unit = _tools(lengths)

    def cmp(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> dict[str, Any]:
        return compare_outputs(
            a, b, first_n=cfg.parity_tokens, threshold=cfg.parity_threshold, embed=embed, tokenize=tok
        )

    par = cmp(outputs, other.outputs)
    par.update(
        {
            "compared_to": other.path,
            "other_platform": other.platform,
            "other_model": other.model,
            "tokens": unit,
            "similarity_model": "all-MiniLM-L6-v2" if embed else None,
        }
    )
    if floor_pair is not None:
        a, b, source = floor_pair
        fl = cmp(a, b)
        floor_share = fl.get("accepted_share")
        par["floor"] = {
            "source": source,
            "pairs": fl.get("pairs"),
            "accepted_share": floor_share,
            "exact_match_rate": fl.get("exact_match_rate"),
        }
        share = par.get("accepted_share")
        if isinstance(share, float) and isinstance(floor_share, float):
            excess = (1.0 - share) - (1.0 - floor_share)
            par["disagreement"] = 1.0 - share
            par["floor_disagreement"] = 1.0 - floor_share
            par["disagreement_above_floor"] = max(0.0, excess)
            par["beyond_floor"] = excess > 0
            par["threshold_note"] = (
                f"an answer is accepted when exact or cosine >= {cfg.parity_threshold:g}; the same platform "
                f"disagrees with itself on {1.0 - floor_share:.1%} of {fl.get('pairs')} answers ({source}), "
                f"so only disagreement above {1.0 - floor_share:.1%} is the other platform's"
            )
    if note:
        par["note"] = note
    return par
