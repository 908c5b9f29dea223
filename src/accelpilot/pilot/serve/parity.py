"""Output parity across platforms: do two serving results answer the same requests alike?

Requests are paired by position and checked by a hash of the request (same file or synthetic set, same seed);
answers were produced at temperature 0. Three measures, FMBench-style: exact match, agreement of the first N
tokens, and semantic similarity (cosine of all-MiniLM-L6-v2 embeddings, the model accelpilot ships). An answer
is accepted when it matches exactly or its cosine reaches the threshold; the accepted share is what the bill may
multiply into cost per accepted output.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from accelpilot.errors import InputFileError
from accelpilot.pilot.result import PilotResult

Embed = Callable[[Sequence[str]], np.ndarray]
Tokenize = Callable[[str], list[str] | list[int]]


def outputs_of(result: PilotResult, path: str) -> list[dict[str, Any]]:
    """The stored answers of a serving result, or one clear line saying why there are none."""
    outs = result.details.get("outputs") if result.kind == "serving" else None
    if not isinstance(outs, list) or not outs:
        raise InputFileError(
            "holds no stored answers to compare with",
            file=path,
            field="details.outputs",
            fix="re-run that endpoint pilot with --store-outputs (the default) and the same requests and seed",
        )
    return outs


def compare_outputs(
    mine: list[dict[str, Any]],
    theirs: list[dict[str, Any]],
    *,
    first_n: int,
    threshold: float,
    embed: Embed | None,
    tokenize: Tokenize | None = None,
) -> dict[str, Any]:
    """Parity figures for the pairs both runs answered; ``embed=None`` leaves the semantic part unmeasured."""
    split: Tokenize = tokenize or (lambda s: s.split())
    by_i = {o.get("i"): o for o in theirs if isinstance(o, dict)}
    pairs: list[tuple[int, str, str]] = []
    different_requests = 0
    unanswered = 0
    for o in mine:
        t = by_i.get(o.get("i"))
        if t is None:
            continue
        if t.get("prompt_sha") != o.get("prompt_sha"):
            different_requests += 1
            continue
        if (
            not (o.get("ok") and t.get("ok"))
            or not isinstance(o.get("text"), str)
            or not isinstance(t.get("text"), str)
        ):
            unanswered += 1
            continue
        pairs.append((int(o["i"]), o["text"], t["text"]))
    out: dict[str, Any] = {
        "pairs": len(pairs),
        "different_requests": different_requests,
        "unanswered": unanswered,
        "first_n": first_n,
        "threshold": threshold,
    }
    if not pairs:
        return out
    exact = [a.strip() == b.strip() for _, a, b in pairs]
    agree_all = []
    agree_frac = []
    for _, a, b in pairs:
        ta, tb = list(split(a))[:first_n], list(split(b))[:first_n]
        n = max(len(ta), len(tb))
        same = sum(1 for x, y in zip(ta, tb, strict=False) if x == y)
        agree_all.append(ta == tb)
        agree_frac.append(same / n if n else 1.0)
    out["exact_match_rate"] = sum(exact) / len(pairs)
    out["first_n_match_rate"] = sum(agree_all) / len(pairs)
    out["first_n_token_agreement"] = float(np.mean(agree_frac))
    if embed is not None:
        ea = embed([a for _, a, _ in pairs])
        eb = embed([b for _, _, b in pairs])
        cos = np.clip(np.sum(ea * eb, axis=1), -1.0, 1.0)  # unit vectors: the dot product is the cosine
        cos = np.where(exact, 1.0, cos)  # identical answers are identical, whatever float noise says
        out["cosine"] = {
            "min": float(cos.min()),
            "p5": float(np.percentile(cos, 5)),
            "p50": float(np.percentile(cos, 50)),
            "p95": float(np.percentile(cos, 95)),
            "mean": float(cos.mean()),
        }
        accepted = [e or c >= threshold for e, c in zip(exact, cos.tolist(), strict=True)]
        out["accepted"] = sum(accepted)
        out["accepted_share"] = sum(accepted) / len(pairs)
        worst = np.argsort(cos)[:5]
        out["least_similar"] = [{"i": pairs[k][0], "cosine": float(cos[k])} for k in worst]
    else:
        accepted = exact
        out["accepted"] = sum(accepted)
        out["accepted_share"] = sum(accepted) / len(pairs)
        out["accepted_by"] = "exact match only (no embedding model)"
    return out
