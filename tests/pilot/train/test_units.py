"""Fast unit tests of the training pilot's parts: workload, checkpoints, parity maths, olympic mean."""

from __future__ import annotations

import math
from pathlib import Path
from typing import cast

import numpy as np
import pytest
import torch

from accelpilot.errors import ConfigError, InputFileError
from accelpilot.pilot.stats import olympic_mean
from accelpilot.pilot.train import checkpoint as ckpt
from accelpilot.pilot.train.config import TrainConfig, parse_shapes
from accelpilot.pilot.train.loop import Trainer, timed_steps
from accelpilot.pilot.train.parity import compare_outputs, reference_outputs
from accelpilot.pilot.workloads.base import TrainingWorkload, load_factory
from accelpilot.pilot.workloads.gpt import SIZES, GPTWorkload, phrase_stream

CPU = torch.device("cpu")


def test_factory_gives_a_training_workload() -> None:
    w = load_factory("accelpilot.pilot.workloads.gpt:factory", size="tiny")
    assert isinstance(w, TrainingWorkload)
    (x,) = w.example_inputs()
    logits = w.build_model()(x)
    assert logits.shape == (*x.shape, cast(GPTWorkload, w).cfg.vocab_size)


def test_gpt2_124m_matches_the_reference_shape() -> None:
    c = SIZES["gpt2-124m"]
    assert (c.n_layer, c.n_head, c.n_embd, c.vocab_size, c.block_size) == (12, 12, 768, 50304, 1024)


def test_unknown_size_and_option_are_user_errors() -> None:
    with pytest.raises(ConfigError, match="did you mean 'tiny'"):
        GPTWorkload(size="tine")
    with pytest.raises(ConfigError, match="unknown GPT option"):
        GPTWorkload(size="tiny", n_layers=3)


def test_batches_are_seeded_and_shifted() -> None:
    w = GPTWorkload(size="tiny")
    a = next(w.batches("train", 4, 16, seed=3))
    b = next(w.batches("train", 4, 16, seed=3))
    c = next(w.batches("train", 4, 16, seed=4))
    assert torch.equal(a[0], b[0]) and not torch.equal(a[0], c[0])
    assert a[0].shape == (4, 16) and a[0].dtype == torch.int64
    assert torch.equal(a[0][:, 1:], a[1][:, :-1])  # targets are the inputs shifted by one
    e = next(w.batches("eval", 4, 16, seed=3))
    assert not torch.equal(a[0], e[0])
    with pytest.raises(ConfigError, match="exceeds the model context"):
        next(w.batches("train", 1, w.cfg.block_size + 1, seed=0))


def test_phrase_stream_is_learnable_not_uniform() -> None:
    s = phrase_stream(256, 50_000, seed=0)
    counts = np.bincount(s, minlength=256) / s.size
    entropy = -(counts[counts > 0] * np.log(counts[counts > 0])).sum()
    assert entropy < math.log(256)  # skewed unigram
    # bigram predictability: most tokens have a dominant successor
    pairs = s[:-1].astype(np.int64) * 256 + s[1:]
    bigram = np.bincount(pairs, minlength=256 * 256).reshape(256, 256)
    top = bigram.max(1)[bigram.sum(1) > 0] / bigram.sum(1)[bigram.sum(1) > 0]
    assert np.median(top) > 0.1


def test_token_files_npy_and_bin(tmp_path: Path) -> None:
    arr = (np.arange(5000) % 300).astype(np.uint16)
    np.save(tmp_path / "t.npy", arr)
    arr.tofile(tmp_path / "t.bin")
    for name in ("t.npy", "t.bin"):
        w = GPTWorkload(size="tiny", tokens=str(tmp_path / name))
        assert w.cfg.vocab_size >= 300 and w.cfg.vocab_size % 64 == 0  # grown to fit the file's ids
        x, _ = next(w.batches("train", 2, 8, seed=0))
        assert int(x.max()) < 300
    with pytest.raises(InputFileError, match="no such token file"):
        GPTWorkload(size="tiny", tokens=str(tmp_path / "missing.bin"))


def test_checkpoint_round_trip(tmp_path: Path) -> None:
    w = GPTWorkload(size="tiny")
    tr = Trainer(w, CPU, lr=1e-2)
    batches = iter(w.batches("train", 4, 16, seed=0))
    for _ in range(2):
        tr.step(next(batches))
    saved = ckpt.save_checkpoint(tmp_path, 2, tr.model, tr.optimizer, CPU, extra={"k": 1})
    assert saved.bytes == saved.path.stat().st_size > 0 and saved.seconds >= 0
    ckpt.save_checkpoint(tmp_path, 1, tr.model, tr.optimizer, CPU)
    assert ckpt.latest_checkpoint(tmp_path) == saved.path
    state = {k: v.clone() for k, v in tr.model.state_dict().items()}
    # a different trainer restores to the same weights and optimizer state, so the next step agrees bitwise
    tr2 = Trainer(w, CPU, lr=1e-2, seed=99)
    step, extra, seconds = ckpt.load_checkpoint(saved.path, tr2.model, tr2.optimizer, CPU)
    assert step == 2 and extra == {"k": 1} and seconds >= 0
    assert all(torch.equal(state[k], v) for k, v in tr2.model.state_dict().items())
    b = next(batches)
    assert torch.equal(tr.step(b), tr2.step(b))
    assert all(torch.equal(a, c) for a, c in zip(tr.model.parameters(), tr2.model.parameters(), strict=True))
    assert not list(tmp_path.glob("*.tmp"))  # atomic: no temp files left


def test_checkpoint_dir_not_writable(tmp_path: Path) -> None:
    f = tmp_path / "a-file"
    f.write_text("x")
    with pytest.raises(InputFileError, match="--checkpoint-dir"):
        ckpt.check_writable(f / "sub")


def test_timed_loop_trains_and_keeps_samples() -> None:
    w = GPTWorkload(size="tiny")
    tr = Trainer(w, CPU, lr=w.cfg.learning_rate)
    t = timed_steps(tr, iter(w.batches("train", 8, 32, seed=0)), 20)
    assert len(t.step_s) == 20 and all(s > 0 for s in t.step_s)
    assert t.tokens == 20 * 8 * 32 and t.samples == 20 * 8
    losses = torch.stack(t.losses).tolist()
    assert sum(losses[-3:]) / 3 < sum(losses[:3]) / 3 - 0.3  # a visible drop


def test_reset_restores_initial_weights_in_place() -> None:
    w = GPTWorkload(size="tiny")
    tr = Trainer(w, CPU)
    ids = [id(p) for p in tr.model.parameters()]
    tr.step(next(w.batches("train", 2, 8, seed=0)))
    tr.reset()
    assert [id(p) for p in tr.model.parameters()] == ids
    assert all(torch.equal(tr.init_state[k], v) for k, v in tr.model.state_dict().items())


def test_olympic_mean_drops_fastest_and_slowest() -> None:
    assert olympic_mean([10.0, 1.0, 2.0, 3.0]) == 2.5
    assert olympic_mean([4.0, 6.0]) == 5.0  # fewer than 3: plain mean
    with pytest.raises(ValueError):
        olympic_mean([])


def test_parity_outputs_and_comparison() -> None:
    w = GPTWorkload(size="tiny")
    model = w.build_model()
    inputs = w.example_inputs()
    a = reference_outputs(model, inputs, CPU, "fp32", k=64)
    assert len(a["values"]) == 64 and len(a["argmax"]) == inputs[0].numel()
    same = compare_outputs(a, a)
    assert same["max_abs_diff"] == 0 and same["argmax_agreement"] == 1.0
    shifted = {**a, "values": [v + 0.25 for v in a["values"]]}
    d = compare_outputs(shifted, a)
    assert d["max_abs_diff"] == pytest.approx(0.25, abs=1e-6) and d["mean_abs_diff"] == pytest.approx(0.25, abs=1e-6)
    flipped = {**a, "argmax": [v + 1 for v in a["argmax"][:8]] + a["argmax"][8:]}
    assert compare_outputs(flipped, a)["argmax_agreement"] == pytest.approx(1 - 8 / len(a["argmax"]))
    with pytest.raises(ConfigError, match="same workload"):
        compare_outputs({**a, "shape": [1, 2, 3]}, a)


def test_config_validation() -> None:
    assert parse_shapes("128, 256,512") == [128, 256, 512]
    with pytest.raises(ConfigError, match="--shapes"):
        parse_shapes("128,abc")
    for bad in (TrainConfig(steps=0), TrainConfig(runs=0), TrainConfig(shapes=[0]), TrainConfig(precision="fp8")):
        with pytest.raises(ConfigError):
            bad.validate()


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_mixed_precision_steps_run_on_cpu(precision: str) -> None:
    """bf16 autocast and fp16 with a grad scaler take finite steps (the same code runs on accelerators)."""
    w = GPTWorkload(size="tiny")
    tr = Trainer(w, CPU, precision=precision, lr=1e-3)
    assert (tr.scaler is not None) == (precision == "fp16")
    batches = iter(w.batches("train", 2, 16, seed=0))
    loss = tr.forward_backward(next(batches))
    assert math.isfinite(float(loss.detach())) and tr.grads_finite()
    tr.optimizer_step()
    assert math.isfinite(float(tr.step(next(batches))))
    assert math.isfinite(tr.eval_loss([next(batches)]))
