"""Device-to-host reads every decode step (``scan/decode_syncs.py``): the stop tests of Llama's, bark's and
lit-llama's generation loops, each beside its near miss."""

from __future__ import annotations

from accelpilot.porting.scan.decode_syncs import decode_syncs

LLAMA = """\
import torch

def generate(model, tokens, eos_id, start, total):
    eos_reached = torch.tensor([False] * tokens.shape[0])
    for cur_pos in range(start, total):
        logits = model.forward(tokens[:, :cur_pos])
        next_token = torch.argmax(logits[:, -1], dim=-1)
        next_token = next_token.reshape(-1)
        eos_reached |= next_token == eos_id
        if all(eos_reached):
            break
    return tokens
"""

LIT = """\
import torch

def generate(model, idx, eos_id, n):
    for _ in range(n):
        probs = model(idx)
        idx_next = torch.multinomial(probs, num_samples=1).to(dtype=idx.dtype)
        if idx_next == eos_id:
            return idx
    return idx
"""

RL = """\
import torch

def rollout(envs, q_network, obs, steps):
    for step in range(steps):
        actions = torch.argmax(q_network(obs), dim=1).cpu().numpy()
        obs, rewards, done, infos = envs.step(actions)
        if done:
            break
"""

TRAIN = """\
import torch

def train(model, opt, data):
    for x in data:
        pred = torch.argmax(model(x), dim=-1)
        loss = model.loss(x)
        loss.backward()
        opt.step()
        if pred.sum() == 0:
            break
"""


def test_a_sampled_token_tested_in_python_every_step_is_found() -> None:
    assert [(r[0], r[1]) for r in decode_syncs(LLAMA.encode())] == [("decode-host-sync", 10)]
    assert [(r[0], r[1]) for r in decode_syncs(LIT.encode())] == [("sampling-ops", 6), ("decode-host-sync", 7)]


def test_near_misses_are_not_found() -> None:
    assert decode_syncs(RL.encode()) == []  # the action goes to the environment: not followed
    assert decode_syncs(TRAIN.encode()) == []  # a training loop: step_syncs.py reads it
    assert decode_syncs(LIT.replace("import torch\n", "import jax\n").replace("torch.", "jax.").encode()) == []
    head = "import torch\n\ndef classify(logits):\n    pred = logits.argmax(-1)\n    if pred == 0:\n        return 0\n"
    assert decode_syncs(head.encode()) == []  # a model head's argmax in no loop


def test_a_token_drawn_with_multinomial_in_a_decode_loop_is_a_sampling_ops_line() -> None:
    """minGPT's and llama2.c's ``generate`` draw each token with ``torch.multinomial`` after a top-k filter: one
    ``sampling-ops`` line, whether or not the loop tests the token. Near misses: greedy ``argmax`` decoding and a
    multinomial in a training loop (``.backward()``)."""
    src = (
        "import torch\n\n\ndef generate(model, idx, n):\n    for _ in range(n):\n        logits = model(idx)\n"
        "        v, _ = torch.topk(logits, 5)\n        nxt = torch.multinomial(torch.softmax(logits, -1), 1)\n"
        "        idx = torch.cat((idx, nxt), 1)\n    return idx\n\n\n"
        "def greedy(model, idx, n):\n    for _ in range(n):\n        nxt = model(idx).argmax(-1)\n"
        "        idx = torch.cat((idx, nxt), 1)\n    return idx\n\n\n"
        "def train(model, opt, x, n):\n    for _ in range(n):\n        s = torch.multinomial(x, 1)\n"
        "        model(s).sum().backward()\n        opt.step()\n    return s\n"
    )
    found = [(ln, msg) for r, ln, msg, *_ in decode_syncs(src.encode()) if r == "sampling-ops"]
    assert found == [(8, "torch.multinomial draws on the device every loop step after a top-k/top-p filter")]


LLAMA_TOP_P = """\
import torch


def generate(model, tokens, total_len, top_p):
    for cur_pos in range(1, total_len):
        probs = torch.softmax(model(tokens), dim=-1)
        next_token = sample_top_p(probs, top_p)
        tokens[:, cur_pos] = next_token
        idx = self.scheduler.sample_idx(probs)
    return tokens


def sample_top_p(probs, p):
    probs_sort, probs_idx = torch.sort(probs, dim=-1, descending=True)
    next_token = torch.multinomial(probs_sort, num_samples=1)
    return torch.gather(probs_idx, -1, next_token)
"""


def test_a_sampling_helper_the_decode_loop_calls_by_name_draws_there() -> None:
    """Llama's ``next_token = sample_top_p(probs, top_p)`` in the decode loop, whose helper sorts and draws with
    ``torch.multinomial``: the draw line is the sampling-ops line. Near miss: a method of another object with a
    draw (open_clip's ``self.scheduler.sample_patch_idx``, a data-pipeline draw on a host tensor) is not followed."""
    found = [(r, ln, msg) for r, ln, msg, *_ in decode_syncs(LLAMA_TOP_P.encode()) if r == "sampling-ops"]
    assert found == [
        (
            "sampling-ops",
            15,
            "torch.multinomial draws on the device every loop step after a top-k/top-p filter (in sample_top_p(), "
            "which the loop calls)",
        )
    ]
    method = LLAMA_TOP_P.replace("next_token = sample_top_p(probs, top_p)", "next_token = probs.argmax(-1)").replace(
        "self.scheduler.sample_idx", "self.scheduler.sample_top_p"
    )
    assert [ln for r, ln, *_ in decode_syncs(method.encode()) if r == "sampling-ops"] == []
