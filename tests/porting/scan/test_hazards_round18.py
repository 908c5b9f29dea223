"""Hazards read on round 18's repositories (audiocraft): a per-codebook mask named ``mask_k`` indexing the loss's
targets, and a streaming KV cache read from the module's state, concatenated and written back."""

from __future__ import annotations

from accelpilot.porting.scan import scan_python

LOSS = """\
import torch
import torch.nn.functional as F


def compute_ce(logits, targets, mask, K):
    ce = 0
    for k in range(K):
        logits_k = logits[:, k].reshape(-1, logits.size(-1))
        targets_k = targets[:, k].reshape(-1)
        mask_k = mask[:, k].reshape(-1)
        ce = ce + F.cross_entropy(logits_k[mask_k], targets_k[mask_k])
        masked_tokens = targets_k[mask_tokens_count]
    return ce
"""


def test_a_mask_named_for_one_codebook_indexes_by_a_boolean() -> None:
    """``logits_k[mask_k]``: a boolean mask per codebook (a data-dependent count). Near miss: a name that only
    starts with ``mask`` and goes on (``mask_tokens_count``) is no mask."""
    assert [ln for r, ln, *_ in scan_python(LOSS) if r == "boolean-mask-index"] == [11]


STREAMING = """\
import torch
from torch import nn


class StreamingAttention(nn.Module):
    def _complete_kv(self, k, v):
        if self._streaming_state:
            pk = self._streaming_state["past_keys"]
            nk = torch.cat([pk, k], dim=1)
            pv = self._streaming_state["past_values"]
            nv = torch.cat([pv, v], dim=1)
        else:
            nk, nv = k, v
        self._streaming_state["past_keys"] = nk
        self._streaming_state["past_values"] = nv
        return nk, nv

    def _pad(self, k):
        prev = self._streaming_state["past_keys"]
        out = torch.cat([prev, k], dim=1)
        return out
"""


def test_a_cache_read_from_the_modules_state_concatenated_and_written_back_grows_each_step() -> None:
    """audiocraft's ``_complete_kv``: ``pk = state['past_keys']``, ``nk = torch.cat([pk, k])``, then
    ``state['past_keys'] = nk``: the keys grow a step at a time (lines 9 and 11), the same with or without the
    pruned scan. Near miss: a concat of the cache that is never written back (line 20) grows nothing kept."""
    for prune in (True, False):
        assert [ln for r, ln, *_ in scan_python(STREAMING, prune=prune) if r == "growing-sequence"] == [9, 11]


FA3 = """\
import torch


def _load_flash_attention_3():
    if not torch.cuda.is_available():
        return None
    major, _ = torch.cuda.get_device_capability()
    from kernels import get_kernel
    name = "varunneal/flash-attention-3" if major == 9 else "kernels-community/flash-attn3"
    return get_kernel(name).flash_attn_interface


def _load_always():
    from kernels import get_kernel
    return get_kernel("kernels-community/flash-attn3")
"""


def test_a_hub_kernel_loaded_after_a_cuda_early_return_is_a_performance_item() -> None:
    """nanochat's ``_load_flash_attention_3``: off CUDA it returns None and the caller runs SDPA, so the hub kernel
    (line 10) is a performance item naming that fallback, not a probe left out of the log. Near miss: a load with
    no such return (line 15) stays the kernel item's plain line."""
    found = {ln: ctx for r, ln, _, _, _, ctx in scan_python(FA3) if r == "hub-kernel"}
    assert found == {10: "fallback:_load_flash_attention_3() returns None off CUDA", 15: None}


PRECISION = """\
import torch


def detect_compute_dtype():
    if torch.cuda.is_available():
        if torch.cuda.get_device_capability() >= (8, 0):
            return torch.bfloat16, "bf16 supported"
        return torch.float32, "pre-Ampere"
    return torch.float32, "no CUDA"


precision = "bf16-true" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "32-true"
device = "cuda" if torch.cuda.is_available() else "cpu"


def get_default_precision(training):
    if not torch.cuda.is_available() or torch.cuda.is_bf16_supported():
        return "bf16-mixed" if training else "bf16-true"
    return "16-mixed"


dtype = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"
"""


def test_a_16_bit_precision_chosen_only_when_cuda_answers_is_fp32_on_trainium() -> None:
    """nanochat's detect function (line 7, fp32 after the ``if``) and lit-llama's conditional expression (line 12):
    off CUDA the run takes fp32. Near misses: a device choice (line 13), a test that sends the non-CUDA host to
    bf16 (TinyLlama's, line 18), and an fp16 fallback (nanoGPT's, line 22: no fp32) are none."""
    assert [ln for r, ln, *_ in scan_python(PRECISION) if r == "precision-keyed-on-cuda"] == [7, 12]


GRADS = """\
import torch


class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_function, length, *args):
        ctx.run_function = run_function
        with torch.no_grad():
            return ctx.run_function(*args)

    @staticmethod
    def backward(ctx, *output_grads):
        with torch.enable_grad():
            outs = ctx.run_function(*ctx.inputs)
        return torch.autograd.grad(outs, ctx.inputs, output_grads, allow_unused=True)


def adaptive_weight(nll_loss, g_loss, last_layer):
    nll_grads = torch.autograd.grad(nll_loss, last_layer, retain_graph=True)[0]
    g_grads = torch.autograd.grad(g_loss, last_layer, retain_graph=True)[0]
    return torch.norm(nll_grads) / (torch.norm(g_grads) + 1e-4)


def r1_penalty(real_pred, real_img):
    (grad,) = torch.autograd.grad(outputs=real_pred.sum(), inputs=real_img, create_graph=True)
    return grad.pow(2).sum()
"""


def test_gradients_taken_by_hand_in_a_step_and_in_a_checkpoint_functions_backward() -> None:
    """latent-diffusion's ``CheckpointFunction`` (line 15: ``autograd.grad`` in a Function's backward) and its GAN
    loss's adaptive weight (lines 19-20). Near miss: ``create_graph=True`` (StyleGAN's R1, line 25) is the
    ``double-backward`` rule's, not these."""
    found = sorted((r, ln) for r, ln, *_ in scan_python(GRADS) if r in ("grad-in-step", "custom-checkpoint"))
    assert found == [("custom-checkpoint", 15), ("grad-in-step", 19), ("grad-in-step", 20)]
    assert [ln for r, ln, *_ in scan_python(GRADS) if r == "double-backward"] == [25]


RNN = """\
import torch
from torch import nn
from torch.nn import GRU
from mylib import LSTM


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(32, 32, bidirectional=True)
        self.cell = torch.nn.LSTMCell(32, 32)
        self.gru = GRU(32, 32)
        self.other = LSTM(32)
"""


def test_recurrent_layers_of_torch_are_one_item_and_a_namesake_is_not() -> None:
    """demucs's BLSTM, Tacotron 2's LSTMCell, a GRU imported from ``torch.nn`` (lines 10-12). Near miss: an
    ``LSTM`` class of another library (line 13)."""
    assert [ln for r, ln, *_ in scan_python(RNN) if r == "recurrent-layer"] == [10, 11, 12]
