"""A README command continued over lines (TinyLlama's PRETRAIN.md shape): its script is an entry point though named on
a later line, Lightning's launcher is a command, and ``--accelerator=cuda`` blocks (``scan/launch_flags.py``)."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.entry import readme_entry_points

PRETRAIN = """\
# Pretrain

```bash
lightning run model \\
    --node-rank=0  \\
    --accelerator=cuda \\
    --devices=8 \\
    pretrain/tinyllama.py --devices 8 --train_data_dir data/slim
```
"""
SCRIPT = """\
import torch

def main():
    if torch.cuda.is_available():
        print(torch.cuda.max_memory_allocated())
    print(torch.cuda.max_memory_allocated())

if __name__ == "__main__":
    main()
"""


def test_a_continued_lightning_command_names_its_script() -> None:
    entries, _ = readme_entry_points(PRETRAIN, {"pretrain/tinyllama.py"})
    assert list(entries) == ["pretrain/tinyllama.py"]
    assert entries["pretrain/tinyllama.py"].startswith("lightning run model")


def test_lightning_on_cuda_blocks_and_a_memory_read_does_not(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("See [PRETRAIN.md](PRETRAIN.md).\n")
    (tmp_path / "PRETRAIN.md").write_text(PRETRAIN)
    (tmp_path / "pretrain").mkdir()
    (tmp_path / "pretrain" / "tinyllama.py").write_text(SCRIPT)
    by = {(f.rule, f.file, f.line): f for f in scan_path(tmp_path, jobs=1).findings}
    acc = by[("lightning-cuda", "PRETRAIN.md", 6)]
    assert acc.severity == "blocking" and "can not run on your system" in (acc.reason or "")
    # torch.cuda.max_memory_allocated returns 0 without CUDA: no stop, even unguarded on the entry point
    assert by[("torch-cuda-api", "pretrain/tinyllama.py", 6)].severity != "blocking"


def test_shell_scripts_in_a_folder_the_readme_links_are_commands(tmp_path: Path) -> None:
    """``[finetuning](sft)`` in the README: ``sft/script.sh``'s ``accelerate launch ... finetune.py`` runs
    ``sft/finetune.py`` (TinyLlama's shape); its flags are read there, and findings name ``sft/script.sh``."""
    from accelpilot.porting.scan.entry import default_entries

    (tmp_path / "README.md").write_text("A simple [finetuning](sft) script.\n")
    (tmp_path / "sft").mkdir()
    (tmp_path / "sft" / "script.sh").write_text(
        "accelerate launch --num_processes 4 finetune.py \\\n    --evaluation_strategy epoch\n"
    )
    (tmp_path / "sft" / "finetune.py").write_text(
        "import transformers\nparser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
        "args = parser.parse_args_into_dataclasses()\n"
    )
    how = default_entries(tmp_path, {"sft/finetune.py", "README.md"}).how
    assert how == {
        "sft/finetune.py": "sft/script.sh: `accelerate launch --num_processes 4 finetune.py --evaluation_strategy epoch`"
    }
    (f,) = [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "stack-upgrade"]
    assert (f.file, f.line, f.severity) == ("sft/script.sh", 2, "blocking")


def test_gpus_passed_to_a_lightning_trainer_script_blocks(tmp_path: Path) -> None:
    """latent-diffusion's ``python main.py --base cfg.yaml -t --gpus 0,`` with ``main.py`` building a PyTorch
    Lightning Trainer: Lightning's device parser raises without CUDA (1.4.2's wheel). Near misses: ``--gpus 0`` asks
    for none; a script with no Lightning Trainer reads ``--gpus`` itself."""
    (tmp_path / "main.py").write_text("from pytorch_lightning.trainer import Trainer\nTrainer.from_argparse_args(a)\n")
    (tmp_path / "other.py").write_text("import argparse\n")
    (tmp_path / "README.md").write_text(
        "```\npython main.py --base cfg.yaml -t --gpus 0,\npython other.py --gpus 2\n```\n"
    )
    found = [
        (f.file, f.line, f.severity, f.message)
        for f in scan_path(tmp_path, jobs=1).findings
        if f.rule == "lightning-cuda"
    ]
    assert found == [("README.md", 2, "blocking", "--gpus 0, (Lightning's Trainer asks for CUDA GPUs)")]
    (tmp_path / "README.md").write_text("```\npython main.py --base cfg.yaml -t --gpus 0\n```\n")
    assert [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "lightning-cuda"] == []


def test_local_rank_parsed_for_torch_distributed_launch_blocks(tmp_path: Path) -> None:
    """rosinality's ``python -m torch.distributed.launch ... train.py`` with ``parser.add_argument("--local_rank",
    ...)``: torch 2.x's launcher passes ``--local-rank=<rank>`` and argparse exits. Near misses: the dashed spelling
    declared too; ``--use_env``; torchrun (it sets LOCAL_RANK and passes nothing)."""
    parser = (
        'import argparse\np = argparse.ArgumentParser()\np.add_argument(\n    "--local_rank", type=int, default=0\n)\n'
    )
    (tmp_path / "train.py").write_text(parser)
    readme = tmp_path / "README.md"

    def found() -> list[tuple[str, int, str]]:
        log = scan_path(tmp_path, jobs=1)
        return [(f.file or "", f.line or 0, f.severity) for f in log.findings if f.rule == "launcher-local-rank"]

    readme.write_text("```\npython -m torch.distributed.launch --nproc_per_node=8 train.py --batch 16\n```\n")
    assert found() == [("train.py", 4, "blocking")]
    readme.write_text("```\npython -m torch.distributed.launch --use_env --nproc_per_node=8 train.py\n```\n")
    assert found() == []
    readme.write_text("```\ntorchrun --nproc_per_node=8 train.py\n```\n")
    assert found() == []
    readme.write_text("```\npython -m torch.distributed.launch --nproc_per_node=8 train.py\n```\n")
    (tmp_path / "train.py").write_text(parser.replace('"--local_rank"', '"--local-rank", "--local_rank"'))
    assert found() == []


def test_a_lightning_trainers_gpus_default_the_command_leaves_blocks(tmp_path: Path) -> None:
    """NeRF-pl: ``Trainer(gpus=hparams.num_gpus)`` where ``opt.py`` declares ``--num_gpus`` with ``default=1`` and
    the README command does not pass it: Lightning asks CUDA for a GPU. Near misses: the command passing
    ``--num_gpus 0``, and a default of 0."""
    files = {
        "README.md": "# nerf\n\n```\npython train.py --dataset_name blender --num_epochs 16\n```\n",
        "opt.py": "import argparse\n\ndef get_opts():\n    p = argparse.ArgumentParser()\n"
        "    p.add_argument('--num_gpus', type=int, default=1,\n                   help='number of gpus')\n"
        "    return p.parse_args()\n",
        "train.py": "from opt import get_opts\nfrom pytorch_lightning import Trainer\n\n"
        "hparams = get_opts()\ntrainer = Trainer(max_epochs=hparams.num_epochs,\n"
        "                  gpus=hparams.num_gpus)\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).write_text(text)
    found = [
        (f.file, f.line, f.severity, f.message)
        for f in scan_path(tmp_path, jobs=1).findings
        if f.rule == "lightning-cuda"
    ]
    assert found == [
        (
            "train.py",
            6,
            "blocking",
            "Trainer(gpus=hparams.num_gpus) with --num_gpus 1 (Lightning's Trainer asks for CUDA GPUs)",
        )
    ]
    (tmp_path / "README.md").write_text(files["README.md"].replace("--num_epochs 16", "--num_epochs 16 --num_gpus 0"))
    assert not [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "lightning-cuda"]
    (tmp_path / "README.md").write_text(files["README.md"])
    (tmp_path / "opt.py").write_text(files["opt.py"].replace("default=1", "default=0"))
    assert not [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "lightning-cuda"]


# a script that builds its Lightning Trainer from the command line (RWKV-LM's ``Trainer.from_argparse_args``)
FROM_ARGS_TRAINER = (
    "from pytorch_lightning import Trainer\nimport argparse\n\np = argparse.ArgumentParser()\n"
    "p = Trainer.add_argparse_args(p)\ntrainer = Trainer.from_argparse_args(p.parse_args())\n"
)


def test_accelerator_gpu_passed_to_a_lightning_trainer_script_blocks(tmp_path: Path) -> None:
    """RWKV-LM's run script passes ``--accelerator gpu`` to a script that builds its Trainer with
    ``Trainer.from_argparse_args``: Lightning asks for CUDA. Near miss: ``--accelerator cpu``."""
    readme = "# rwkv\n\n```\npython train.py --accelerator gpu \\\n  --devices 8 --precision bf16\n```\n"
    (tmp_path / "README.md").write_text(readme)
    (tmp_path / "train.py").write_text(FROM_ARGS_TRAINER)
    found = [(f.file, f.line, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.rule == "lightning-cuda"]
    assert found == [("README.md", 4, "blocking")]
    (tmp_path / "README.md").write_text(readme.replace("--accelerator gpu", "--accelerator cpu"))
    assert not [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "lightning-cuda"]


def test_every_command_that_runs_a_trainer_script_is_read_and_shell_comments_are_no_headings(tmp_path: Path) -> None:
    """RWKV-LM: the README runs ``sh ./prepare.sh`` (``--accelerator cpu``) then ``sh ./run.sh`` (``--accelerator
    gpu``) in ``train/``; the run script's comments and a ``---`` line are no Markdown headings (its ``--wandb
    "Test"`` line read as a "test" section made it an evaluation run). Near miss: the prepare script alone asks for
    no GPU."""
    (tmp_path / "train").mkdir()
    (tmp_path / "README.md").write_text("# rwkv\n\n```\ncd train/\nsh ./prepare.sh\nsh ./run.sh\n```\n")
    (tmp_path / "train/prepare.sh").write_text("#!/bin/bash\npython train.py --accelerator cpu --devices 1\n")
    run = '#!/bin/bash\n# Test the run\n#\npython train.py --wandb "Test" --my_testing x \\\n --accelerator gpu --devices 8\n---\n'
    (tmp_path / "train/run.sh").write_text(run)
    (tmp_path / "train/train.py").write_text(FROM_ARGS_TRAINER)
    found = [(f.file, f.line, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.rule == "lightning-cuda"]
    assert found == [("train/run.sh", 5, "blocking")]
    (tmp_path / "README.md").write_text("# rwkv\n\n```\ncd train/\nsh ./prepare.sh\n```\n")
    assert not [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "lightning-cuda"]
