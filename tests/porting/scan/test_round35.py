"""Round 35's tuning fixes (issue 27): SadTalker's entry script picks its device in its ``__main__`` block with
``if torch.cuda.is_available() and not args.cpu: args.device = "cuda"``, a choice with a CPU fallback."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path


def test_a_cuda_probes_body_in_an_entry_scripts_main_block_keeps_its_guard(tmp_path: Path) -> None:
    """In the ``__main__`` block of the script the README runs, the body of ``if torch.cuda.is_available() and not
    args.cpu:`` is an optional path (a warning), as it is outside the block; an unguarded ``torch.cuda.synchronize()``
    there still blocks."""
    (tmp_path / "README.md").write_text("```\npython inference.py\n```\n")
    (tmp_path / "inference.py").write_text(
        "import argparse\nimport torch\n\n"
        "if __name__ == '__main__':\n"
        "    args = argparse.ArgumentParser().parse_args()\n"
        "    if torch.cuda.is_available() and not args.cpu:\n"
        "        args.device = 'cuda'\n"
        "    else:\n"
        "        args.device = 'cpu'\n"
        "    torch.cuda.synchronize()\n"
    )
    found = {(f.rule, f.line): f.severity for f in scan_path(tmp_path, jobs=1).findings}
    assert found[("cuda-device-literal", 7)] == "warning"
    assert found[("torch-cuda-api", 10)] == "blocking"


def test_a_trainer_splatting_a_plain_yaml_section_that_asks_for_gpus_blocks(tmp_path: Path) -> None:
    """PyTorch-VAE's ``Trainer(**config['trainer_params'])`` over ``yaml.safe_load`` of its ``-c`` config, whose
    ``trainer_params`` holds ``gpus: [1]``: Lightning's device parser raises without CUDA (blocking, the config
    named). Near miss: ``gpus: []``."""
    (tmp_path / "README.md").write_text("```\npython run.py -c configs/vae.yaml\n```\n")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "vae.yaml").write_text("trainer_params:\n  gpus: [1]\n  max_epochs: 100\n")
    (tmp_path / "run.py").write_text(
        "import argparse\nimport yaml\nfrom pytorch_lightning import Trainer\n\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('--config', '-c', dest='filename', default='configs/vae.yaml')\n"
        "args = parser.parse_args()\n"
        "config = yaml.safe_load(open(args.filename))\n"
        "runner = Trainer(max_steps=10,\n                 **config['trainer_params'])\n"
    )

    def lightning() -> list[tuple[str, int | None, str]]:
        return [
            (f.rule, f.line, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.rule == "lightning-cuda"
        ]

    assert lightning() == [("lightning-cuda", 9, "blocking")]
    (tmp_path / "configs" / "vae.yaml").write_text("trainer_params:\n  gpus: []\n")
    assert lightning() == []
