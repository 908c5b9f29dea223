"""The Hugging Face stack read against the releases TorchNeuron needs (``scan/hf_stack.py``), the removed HF/openai
APIs as ``stack-upgrade`` sites, and a Trainer script's README flags, end to end through ``scan_path``: the
stanford_alpaca shape (a ``torchrun`` command continued over lines that passes ``--tf32 True``, a removed field and
``--fsdp``) and the qlora shape (a pinned ``transformers==4.31.0``, removed keywords in the entry point)."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelpilot.porting.items import build_items
from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.hf_stack import Pin, below_neuron, stack_pins
from accelpilot.porting.scan.stack_upgrade import CALL_TIME, IMPORT_TIME, stack_sites

TRAIN = """\
import transformers
from transformers import Trainer
import utils

def train():
    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))
    (training_args,) = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained("m")
    trainer = Trainer(model=model, tokenizer=None, args=training_args)
    trainer.train()

if __name__ == "__main__":
    train()
"""
UTILS = "from openai import openai_object\n"
README = """\
# Fine-tuning

```bash
torchrun --nproc_per_node=4 --master_port=<your_random_port> train.py \\
    --bf16 True \\
    --evaluation_strategy "no" \\
    --fsdp "full_shard auto_wrap" \\
    --tf32 True
```
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize(
    ("spec", "blocks"),
    [
        ("==4.31.0", True),
        ("<5", True),
        ("~=4.40", True),
        (">=4.28.1", False),  # a fresh install gets a release that places on neuron
        ("", False),
        ("==5.4.0", False),
        ("==5.17.0", False),
        ("==4.57.*", True),
        (">=5.0,!=5.4.0", False),
        ("git+https://github.com/huggingface/transformers@abc123", False),  # version unknown: not claimed
    ],
)
def test_a_pin_below_the_first_neuron_release_is_found(spec: str, blocks: bool) -> None:
    pin = Pin("transformers", spec, "requirements.txt", 1)
    assert (below_neuron([pin]) is not None) is blocks


def test_pins_are_read_from_requirements_setup_and_pyproject(tmp_path: Path) -> None:
    files = {
        "requirements.txt": "torch\ntransformers==4.31.0  # pinned\n",
        "setup.py": "setup(install_requires=['accelerate>=0.20', 'numpy'])\n",
        "pyproject.toml": '[project]\ndependencies = ["transformers[torch]>=4.40"]\n',
        "sub/requirements.txt": "accelerate==0.1\n",  # not a root requirement file
    }
    text = {rel: body for rel, body in files.items()}
    pins = stack_pins(text.get, list(files))
    assert [(p.library, p.spec, p.file, p.line) for p in pins] == [
        ("transformers", ">=4.40", "pyproject.toml", 2),
        ("transformers", "==4.31.0", "requirements.txt", 2),
        ("accelerate", ">=0.20", "setup.py", 1),
    ]


@pytest.mark.parametrize(
    ("source", "sites"),
    [
        ("from openai import openai_object\n", [(1, IMPORT_TIME)]),
        # Medusa's vendored Llama: gone from transformers 4.39.0's utils (in 4.38.2's)
        ("from transformers.utils import (\n    logging,\n    is_flash_attn_available,\n)\n", [(1, IMPORT_TIME)]),
        ("from transformers.utils import is_flash_attn_2_available\n", []),
        ("import transformers\nm = transformers.AutoModel.from_pretrained('x', load_in_8bit=True)\n", [(2, CALL_TIME)]),
        ("def f(t):\n    return Trainer(model=None, tokenizer=t)\n", [(2, CALL_TIME)]),
        ("args = TrainingArguments(evaluation_strategy='no')\n", [(1, CALL_TIME)]),
        # torchvision 0.17 dropped ``range`` (the 0.17.0 wheel's make_grid has no **kwargs); value_range stays
        ("utils.save_image(x, 'a.png', normalize=True, range=(-1, 1))\n", [(1, CALL_TIME)]),
        ("grid = make_grid(x, value_range=(-1, 1))\n", []),
        # near misses: the current names
        ("from openai import OpenAI\n", []),
        ("def f(t):\n    return Trainer(model=None, processing_class=t)\n", []),
        ("m = AutoModel.from_pretrained('x', quantization_config=q, token=None)\n", []),
        ("enc = tokenizer(text, padding=True)\n", []),
    ],
)
def test_each_removed_hf_api_is_a_site(source: str, sites: list[tuple[int, str | None]]) -> None:
    assert [(ln, sub) for _, ln, _, _, sub, _ in stack_sites(source.encode())] == sites


def test_a_trainer_scripts_readme_flags_and_removed_apis_block_its_default_command(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {"README.md": README, "train.py": TRAIN, "utils.py": UTILS, "requirements.txt": "transformers>=4.28.1\n"},
    )
    log = scan_path(root, jobs=1)
    by = {(f.rule, f.file, f.line): f for f in log.findings}
    tf32 = by[("trainer-cuda-setting", "README.md", 8)]
    assert tf32.severity == "blocking" and "--tf32" in (tf32.reason or "") and "README.md:8" in (tf32.reason or "")
    field = by[("stack-upgrade", "README.md", 6)]
    assert field.severity == "blocking" and "HfArgumentParser raises on --evaluation_strategy" in (field.reason or "")
    assert by[("stack-upgrade", "train.py", 9)].severity == "blocking"  # Trainer(tokenizer=) in the entry point
    assert by[("stack-upgrade", "utils.py", 1)].severity == "blocking"  # imported by train.py at module level
    fsdp = by[("trainer-fsdp", "README.md", 7)]
    assert fsdp.severity == "warning" and "FSDP2" in (fsdp.reason or "")
    trainer = by[("hf-trainer", "train.py", 9)]
    assert trainer.severity == "warning" and (trainer.reason or "").startswith("validation item")
    items = {it.key: it for it in build_items(log.findings)}
    # one upgrade per library: transformers' removed field and argument, openai's removed module
    assert {k: (len(it.lines), it.severity) for k, it in items.items() if k.startswith("repo|stack-upgrade|")} == {
        "repo|stack-upgrade|transformers": (2, "blocking"),
        "repo|stack-upgrade|openai": (1, "blocking"),
    }
    assert next(it for it in items.values() if it.rule == "trainer-cuda-setting").severity == "blocking"


def test_a_lenient_parser_drops_a_removed_flag_and_a_pinned_stack_blocks_the_trainer(tmp_path: Path) -> None:
    lenient = TRAIN.replace(
        "parse_args_into_dataclasses()", "parse_args_into_dataclasses(return_remaining_strings=True)"
    )
    lenient = lenient.replace("(training_args,) =", "(training_args, _rest) =")
    root = _write(
        tmp_path,
        {"README.md": README, "train.py": lenient, "utils.py": "", "requirements.txt": "transformers==4.31.0\n"},
    )
    by = {(f.rule, f.file, f.line): f for f in scan_path(root, jobs=1).findings}
    field = by[("stack-upgrade", "README.md", 6)]
    assert field.severity == "warning" and "dropped silently" in (field.reason or "")
    trainer = by[("hf-trainer", "train.py", 9)]
    assert trainer.severity == "blocking"
    assert "transformers==4.31.0 (requirements.txt:1) is below transformers 5.4.0" in (trainer.reason or "")


def test_flags_of_another_command_for_the_script_are_not_its_default(tmp_path: Path) -> None:
    """Only the first command that runs a script is its default; a later one (an out-of-memory alternative) is
    not read."""
    readme = "# Run\n\n```\npython train.py --bf16 True\n```\n\n# Other\n\n```\npython train.py --tf32 True\n```\n"
    root = _write(tmp_path, {"README.md": readme, "train.py": TRAIN, "utils.py": ""})
    rules = {f.rule for f in scan_path(root, jobs=1).findings if f.file == "README.md"}
    assert "trainer-cuda-setting" not in rules


def test_per_step_logging_and_a_deepspeed_alternative_are_read_from_the_readme(tmp_path: Path) -> None:
    """``--logging_steps 1`` in the default command is a per-step host read; ``--deepspeed`` in another command
    for the same script (the README's out-of-memory option) blocks only when that command is used."""
    readme = (
        "# Train\n\n```\npython train.py --logging_steps 1\n```\n\n## OOM\n\n```\ntorchrun --nproc_per_node=4 "
        "train.py \\\n    --deepspeed configs/offload.json\n```\n"
    )
    root = _write(tmp_path, {"README.md": readme, "train.py": TRAIN, "utils.py": ""})
    by = {(f.rule, f.line): f for f in scan_path(root, jobs=1).findings if f.file == "README.md"}
    assert by[("host-sync-in-loop", 4)].severity == "warning"
    ds = by[("deepspeed", 11)]
    assert ds.severity == "warning" and (ds.reason or "").startswith("blocks when used: another command")
    (item,) = [i for i in build_items(scan_path(root, jobs=1).findings) if i.rule == "deepspeed"]
    assert (item.days_low, item.days_high) == (0.25, 1)  # an alternative command, not a runtime the code stands on
    (root / "README.md").write_text("# Train\n\n```\npython train.py --deepspeed ds.json\n```\n")
    ds = next(f for f in scan_path(root, jobs=1).findings if f.rule == "deepspeed" and f.file == "README.md")
    assert ds.severity == "blocking" and "DeepSpeed has no Neuron accelerator" in (ds.reason or "")


def test_a_resized_vocabulary_without_padding_is_noted() -> None:
    from accelpilot.porting.scan import scan_python

    src = (
        "import transformers\n"
        "model.resize_token_embeddings(len(tokenizer))\n"
        "model.resize_token_embeddings(len(tokenizer), pad_to_multiple_of=128)\n"
    )
    assert [ln for r, ln, *_ in scan_python(src) if r == "vocab-resize"] == [2]


def test_a_bitsandbytes_optimizer_for_the_trainer_blocks_its_entry_point(tmp_path: Path) -> None:
    """``optim='paged_adamw_32bit'`` as a dataclass default of the entry script (qlora's shape) blocks it; the same
    name passed in the README command blocks too; ``adamw_torch`` is no finding."""
    script = TRAIN.replace(
        "import utils\n",
        "import utils\nfrom dataclasses import dataclass, field\n\n@dataclass\nclass Args:\n"
        "    optim: str = field(default='paged_adamw_32bit')\n    other: str = 'adamw_torch'\n",
    )
    root = _write(tmp_path, {"README.md": "Run `python train.py`.\n", "train.py": script, "utils.py": ""})
    (f,) = [f for f in scan_path(root, jobs=1).findings if f.rule == "bnb-optimizer"]
    assert (f.file, f.line, f.severity) == ("train.py", 8, "blocking")
    (root / "README.md").write_text("```\npython train.py --optim paged_lion_8bit\n```\n")
    (root / "train.py").write_text(TRAIN)
    (f,) = [f for f in scan_path(root, jobs=1).findings if f.rule == "bnb-optimizer"]
    assert (f.file, f.severity) == ("README.md", "blocking")


def test_llavas_shape_a_wrapper_script_a_pinned_stack_and_a_trainer_subclass(tmp_path: Path) -> None:
    """LLaVA's shape: the README links its training script by GitHub address (``scripts/pretrain.sh``, read as a
    command document), which runs ``train_mem.py``, a wrapper that calls ``train()`` of the module parsing the
    ``TrainingArguments``; the loop is a ``Trainer`` subclass. The flags are read through the wrapper: ``--tf32 True``
    blocks; ``--evaluation_strategy`` under ``transformers==4.37.2`` is the upgrade's work, not a stop of the stack
    as installed. Near misses: without the pin it blocks; a link inside ``<details>`` is no command document."""
    train = TRAIN.replace(
        "from transformers import Trainer",
        "from transformers import Trainer\n\nclass LLaVATrainer(Trainer):\n    pass\n",
    )
    files = {
        "README.md": "```bash\ngit clone https://github.com/haotian-liu/LLaVA.git\n```\n"
        "Training script: [`pretrain.sh`](https://github.com/haotian-liu/LLaVA/blob/main/scripts/pretrain.sh).\n"
        "<details>\nV100: [here](https://github.com/haotian-liu/LLaVA/blob/main/scripts/xformers.sh)\n</details>\n",
        "scripts/pretrain.sh": 'deepspeed llava/train/train_mem.py \\\n    --evaluation_strategy "no" \\\n'
        "    --tf32 True\n",
        "scripts/xformers.sh": "deepspeed llava/train/train_xformers.py --tf32 True\n",
        "llava/__init__.py": "",
        "llava/train/__init__.py": "",
        "llava/train/train.py": train,
        "llava/train/train_mem.py": "from llava.train.train import train\n\nif __name__ == '__main__':\n    train()\n",
        "llava/train/train_xformers.py": "from llava.train.train import train\n\ntrain()\n",
        "pyproject.toml": '[project]\nname = "llava"\ndependencies = ["transformers==4.37.2"]\n',
    }
    root = _write(tmp_path, files)
    log = scan_path(root, jobs=1)
    by = {(f.rule, f.file, f.line): f for f in log.findings}
    assert by[("trainer-cuda-setting", "scripts/pretrain.sh", 3)].severity == "blocking"
    assert ("trainer-cuda-setting", "scripts/xformers.sh", 1) not in by  # folded away in <details>
    field = by[("stack-upgrade", "scripts/pretrain.sh", 2)]
    assert field.severity == "warning"
    assert "transformers==4.37.2 (pyproject.toml:3) installs a release that still has" in (field.reason or "")
    assert by[("hf-trainer", "llava/train/train.py", 4)].message == "class LLaVATrainer(Trainer)"
    (root / "pyproject.toml").write_text('[project]\nname = "llava"\ndependencies = ["transformers>=4.37"]\n')
    by = {(f.rule, f.file, f.line): f for f in scan_path(root, jobs=1).findings}
    assert by[("stack-upgrade", "scripts/pretrain.sh", 2)].severity == "blocking"


LEGACY_README = """\
# Heads

```bash
python -m heads.cli --model m
```

## Training (legacy)

```bash
torchrun --nproc_per_node=4 heads/train_legacy.py \\
    --evaluation_strategy "no" \\
    --tf32 True
```
"""
CLI = "import torch\n\ndef main():\n    print(torch.zeros(1))\n\nif __name__ == '__main__':\n    main()\n"


def test_a_superseded_training_script_blocks_only_when_it_is_run(tmp_path: Path) -> None:
    """Medusa's shape: the README's current command serves; its legacy section runs ``train_legacy.py``, whose
    removed Trainer field and ``--tf32`` would stop that command only, so they are warnings that say so."""
    files = {"README.md": LEGACY_README, "heads/__init__.py": "", "heads/cli.py": CLI, "heads/train_legacy.py": TRAIN}
    root = _write(tmp_path, {**files, "heads/utils.py": "", "requirements.txt": "transformers>=4.28.1\n"})
    log = scan_path(root, jobs=1)
    flags = {f.rule: f for f in log.findings if f.file == "README.md" and f.line in (11, 12)}
    assert set(flags) == {"stack-upgrade", "trainer-cuda-setting"}
    for f in flags.values():
        assert f.severity == "warning" and (f.reason or "").startswith("blocks when it is run: superseded script")
    # with no other command, the legacy script is the run, and its flags block
    (root / "README.md").write_text(LEGACY_README.replace("python -m heads.cli --model m", "pip install -e ."))
    log = scan_path(root, jobs=1)
    tf32 = next(f for f in log.findings if f.rule == "trainer-cuda-setting")
    assert tf32.severity == "blocking" and (tf32.reason or "").startswith("entry point heads/train_legacy.py")
