"""Framework runtimes on the default training path (issue 27): a model loaded through bitsandbytes
(``load_in_8bit=True``) on an entry point blocks, with the line that reaches it; the opt-in flag does not."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


FINETUNE = """\
from transformers import AutoModelForCausalLM
from peft import prepare_model_for_int8_training
model = AutoModelForCausalLM.from_pretrained(
    "base",
    load_in_8bit=True,
)
model = prepare_model_for_int8_training(model)
"""

GENERATE = """\
from transformers import AutoModelForCausalLM
def main(load_8bit: bool = False):
    return AutoModelForCausalLM.from_pretrained("base", load_in_8bit=load_8bit)
if __name__ == "__main__":
    main()
"""

README = "Train: `python finetune.py`. Serve: `python generate.py`.\n"


def test_a_hard_coded_8bit_load_on_an_entry_point_blocks(tmp_path: Path) -> None:
    """``load_in_8bit=True`` and ``prepare_model_for_int8_training`` in ``finetune.py`` (a README command) are one
    bitsandbytes item, blocking with its line named. Stays out: ``load_in_8bit=load_8bit`` (opt-in, default
    False)."""
    _write(tmp_path, {"finetune.py": FINETUNE, "generate.py": GENERATE, "README.md": README})
    log = scan_path(tmp_path, jobs=1)
    (item,) = [i for i in log.items if i.rule == "bitsandbytes"]
    assert [(ln.file, ln.line) for ln in item.lines] == [("finetune.py", 5), ("finetune.py", 7)]
    assert item.severity == "blocking"
    assert item.reason is not None and "load_in_8bit=True at finetune.py:5" in item.reason
    assert not [f for f in log.findings if f.file == "generate.py" and f.rule == "bitsandbytes"]


TRAIN = """\
import torch
import transformers
from mylib import Trainer as OwnTrainer
args = transformers.TrainingArguments(
    output_dir="out",
    fp16=True,
)
trainer = transformers.Trainer(model=None, args=args)
scaler = torch.cuda.amp.GradScaler(enabled=False)
OwnTrainer()
"""


def test_an_hf_trainer_with_fp16_on_an_entry_point_blocks_with_its_reason(tmp_path: Path) -> None:
    """``transformers.Trainer(...)`` on a README entry point is one ``hf-trainer`` item sized in days (1-4, the
    effort table's row): a validation item on a stack the requirements leave current (transformers >= 5.4 places on
    the neuron device), blocking with its reason on one pinned below it; ``TrainingArguments(fp16=True)`` is CUDA
    AMP, blocking there. Stays a warning: ``torch.cuda.amp.GradScaler`` (disabled off CUDA). No item: a
    repository's own ``Trainer``."""
    _write(tmp_path, {"train.py": TRAIN, "README.md": "Run `python train.py`.\n"})
    items = {i.rule: i for i in scan_path(tmp_path, jobs=1).items}
    trainer = items["hf-trainer"]
    assert [(ln.line, ln.severity) for ln in trainer.lines] == [(8, "warning")]
    assert (trainer.days_low, trainer.days_high) == (1, 4)
    _write(tmp_path, {"requirements.txt": "transformers==4.28.1\n"})
    items = {i.rule: i for i in scan_path(tmp_path, jobs=1).items}
    trainer = items["hf-trainer"]
    assert [(ln.line, ln.severity) for ln in trainer.lines] == [(8, "blocking")]
    assert trainer.reason is not None and "not the neuron device: Trainer(...) at train.py:8" in trainer.reason
    assert "transformers==4.28.1 (requirements.txt:1)" in trainer.reason
    amp = {ln.line: ln.severity for ln in items["amp-cuda"].lines}
    assert amp == {6: "blocking", 9: "warning"}


SPEED = """\
import torch
import torch.nn.functional as F
def attend(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)
def scaled_dot_product_attention(q, k, v):
    return q
use_fused = torch.cuda.is_available()
extra = dict(fused=True) if use_fused else dict()
opt = torch.optim.AdamW([], fused=False)
flops_promised = 312e12
n_flops = 6
"""


def test_speed_notes_fused_optimizer_sdpa_and_a_gpu_peak(tmp_path: Path) -> None:
    """``dict(fused=True)`` for AdamW, ``F.scaled_dot_product_attention`` and ``flops_promised = 312e12`` are one
    info item each (hours). Stay out: ``fused=False``, a local function named like SDPA, a small FLOPs count."""
    _write(tmp_path, {"model.py": SPEED})
    log = scan_path(tmp_path, jobs=1)
    got = sorted(
        (f.rule, f.line)
        for f in log.findings
        if f.rule in ("fused-optimizer", "sdpa-attention", "hardcoded-peak-flops")
    )
    assert got == [("fused-optimizer", 8), ("hardcoded-peak-flops", 10), ("sdpa-attention", 4)]
    assert {i.rule: i.severity for i in log.items if i.rule in dict(got)} == {
        "fused-optimizer": "info",
        "hardcoded-peak-flops": "info",
        "sdpa-attention": "info",
    }


COLLATE = """\
import transformers
a = transformers.DataCollatorForSeq2Seq(None, pad_to_multiple_of=8, padding=True)
b = transformers.DataCollatorWithPadding(None)
c = transformers.DataCollatorWithPadding(None, padding="max_length", max_length=512)
d = transformers.DataCollatorForLanguageModeling(None)
"""


def test_a_collator_padding_each_batch_to_its_longest_is_a_shape_hazard(tmp_path: Path) -> None:
    """``padding=True`` (and ``DataCollatorWithPadding``'s default) gives a new length per batch: one XLA-era
    ``dynamic-padding`` item. Stay out: ``padding="max_length"`` and a collator that does not pad."""
    _write(tmp_path, {"train.py": COLLATE})
    log = scan_path(tmp_path, jobs=1)
    (item,) = [i for i in log.items if i.rule == "dynamic-padding"]
    assert [ln.line for ln in item.lines] == [2, 3]
    assert (item.severity, item.era) == ("warning", "xla")
