"""Classes read on round 18's repositories after their first score: a submitit job asking for no GPU (SAM 2), a data
loader mixing datasets with ``multinomial`` (SAM 2), a tokenizer's ``encode`` in a loop (nanochat), host-made random
draws read back (audiocraft), and a concat over a dict's conditions (audiocraft)."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path, scan_python


def _lines(src: str, rule: str) -> list[int | None]:
    return [ln for r, ln, *_ in scan_python(src) if r == rule]


def test_a_submitit_request_of_zero_gpus_asks_for_none() -> None:
    """SAM 2's frame-extraction job: ``update_parameters(gpus_per_node=0, ...)`` runs on CPUs. Near miss: one GPU."""
    src = (
        "import submitit\nex = submitit.AutoExecutor(folder='logs')\n"
        "ex.update_parameters(gpus_per_node=0, tasks_per_node=1, cpus_per_task=8)\n"
        "ex.update_parameters(gpus_per_node=1, tasks_per_node=1)\n"
    )
    assert _lines(src, "slurm-gpu-gres") == [4]


MIXER = """\
import torch


class MixedDataLoader:
    def __next__(self):
        while self._probs.any():
            idx = self._probs.multinomial(1, generator=self.rng).item()
            return next(self._iters[idx])
"""


def test_a_loader_drawing_which_dataset_to_read_with_multinomial_is_host_work(tmp_path: Path) -> None:
    """SAM 2's ``training/dataset/sam2_datasets.py``: a data file's ``multinomial`` picks a dataset on the CPU, no
    token sampled on the device: host-side. Near miss: the same loop in a model file stays a sampling line."""
    (tmp_path / "dataset").mkdir()
    (tmp_path / "dataset" / "mix.py").write_text(MIXER)
    (tmp_path / "model.py").write_text(MIXER)
    found = {(f.file, f.context) for f in scan_path(tmp_path, jobs=1).findings if f.rule == "sampling-ops"}
    assert found == {("dataset/mix.py", "host-side"), ("model.py", None)}


def test_a_tokenizers_encode_in_a_loop_is_no_pretrained_encoder_on_the_device() -> None:
    """nanochat's tok_eval.py: ``tokenizer = RustBPETokenizer.from_pretrained("gpt2")`` then ``tokenizer.encode``
    per text (host tokenisation). Near miss: a pretrained text encoder's ``encode`` in the loop stays."""
    src = (
        "from transformers import AutoModel\nfrom tok import RustBPETokenizer\n"
        "tokenizer = RustBPETokenizer.from_pretrained('gpt2')\n"
        "enc = AutoModel.from_pretrained('t5-base')\n"
        "for text in texts:\n    ids = tokenizer.encode(text)\n    z = enc.encode(ids)\n"
    )
    assert _lines(src, "pretrained-encoder-in-loop") == [7]


DROPOUT = """\
import torch
from torch import nn


class ConditionDropout(nn.Module):
    def forward(self, samples, x):
        if torch.rand(1, generator=self.rng).item() < self.p:
            samples = None
        n_q = int(torch.randint(1, self.n_q + 1, (1,)).item())
        if torch.rand(1, device=x.device).item() < self.p:
            samples = None
        return samples, n_q, x.sum().item()


def train(model, loader, opt):
    for batch in loader:
        loss = model(batch)
        loss.backward()
        opt.step()
        if torch.rand(1, generator=rng).item() < 0.5:
            print("coin")
        print(loss.item())
"""


def test_a_random_draw_made_on_the_host_read_back_is_no_device_sync() -> None:
    """audiocraft's condition dropout and quantizer dropout: ``torch.rand(1, generator=self.rng).item()`` and
    ``torch.randint(...).item()`` with no ``device=`` are CPU tensors, nothing waits on the device. Near misses: the
    same draw on ``x.device`` (line 10), a model value (line 12) and the loss read each step (line 22) stay."""
    assert _lines(DROPOUT, "item-in-forward") == [10, 12]
    assert _lines(DROPOUT, "tensor-control-flow") == [10]
    assert _lines(DROPOUT, "host-sync-in-loop") == [22]


FUSER = """\
import torch
from torch import nn


class ConditionFuser(nn.Module):
    def forward(self, input, conditions):
        cross = None
        for cond_type, (cond, mask) in conditions.items():
            if cond_type == "prepend":
                input = torch.cat([cond, input], dim=1)
            else:
                cross = torch.cat([cross, cond], dim=1)
        return input, cross


def generate(model, tokens, steps):
    for _ in range(steps):
        nxt = model(tokens)
        tokens = torch.cat([tokens, nxt], dim=1)
    return tokens
"""


def test_a_concat_over_a_dicts_conditions_grows_no_sequence() -> None:
    """audiocraft's ConditionFuser joins each condition type once per forward (a dict's keys, a count fixed by its
    structure). Near miss: a decode loop over ``range(steps)`` grows the tokens every step."""
    assert _lines(FUSER, "growing-sequence") == [19]


VOC = """\
import numpy as np
import torch


def evaluate(data_dict, num_classes):
    boxes = {}
    for j in range(num_classes):
        bboxes, cls, scores = data_dict[j]
        mask_c = cls == j
        c_dets = torch.cat((bboxes, scores.unsqueeze(1)), dim=1)
        boxes[j] = c_dets[mask_c].numpy()
        kept = c_dets[mask_c]
    return boxes, kept
"""


def test_a_masked_read_turned_into_numpy_is_the_hosts() -> None:
    """YOLOX's VOC evaluator: ``c_dets[mask_c].numpy()`` — ``.numpy()`` raises on a device tensor, so the masked
    read is of host data. Near miss: the same read kept as a tensor (line 12) stays."""
    assert _lines(VOC, "boolean-mask-index") == [12]
