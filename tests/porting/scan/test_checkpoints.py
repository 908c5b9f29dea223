"""The ``checkpoint-weights-only`` item (``scan/checkpoints.py``): a ``torch.load`` with torch's ``weights_only=True``
default (torch >= 2.6) of a checkpoint that holds pickled objects, read from the repository's own save dicts or its
Lightning training; blocking on an entry point's own lines, "blocks when" under a CLI option's branch; near misses:
a plain dict config (nanoGPT), ``vars(args)``, ``weights_only=False``, a load read by no saved key."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path

_TRAIN = """import argparse
import torch

args = argparse.ArgumentParser().parse_args()
model = torch.nn.Linear(2, 2)
torch.save({"g_ema": model.state_dict(), "args": args}, "last.pt")
"""

_GENERATE = """import argparse
import torch

p = argparse.ArgumentParser()
p.add_argument("--ckpt")
p.add_argument("--resume")
args = p.parse_args()
model = torch.nn.Linear(2, 2)
checkpoint = torch.load(args.ckpt, map_location="cpu")
model.load_state_dict(checkpoint["g_ema"])
if args.resume:
    state = torch.load(args.resume, map_location="cpu")
    model.load_state_dict(state["g_ema"])
"""


def _loads(root: Path) -> list[tuple[str, int, str, str]]:
    return [
        (f.file or "", f.line or 0, f.severity, f.reason or "")
        for f in scan_path(root, jobs=1).findings
        if f.rule == "checkpoint-weights-only"
    ]


def _tree(root: Path, train: str = _TRAIN, generate: str = _GENERATE) -> Path:
    (root / "train.py").write_text(train)
    (root / "generate.py").write_text(generate)
    (root / "README.md").write_text("# Run\n\n```\npython train.py\npython generate.py --ckpt last.pt\n```\n")
    return root


def test_a_namespace_saved_in_the_checkpoint_blocks_the_entry_points_load(tmp_path: Path) -> None:
    got = _loads(_tree(tmp_path))
    assert [(f, ln, sev) for f, ln, sev, _ in got] == [("generate.py", 9, "blocking"), ("generate.py", 12, "warning")]
    assert got[0][3].startswith("entry point generate.py (README: `python generate.py --ckpt last.pt`) loads it")
    assert got[1][3].startswith("blocks when `--resume` is given (generate.py:12)")
    items = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "checkpoint-weights-only"]
    assert [(i.severity, i.days_low, i.days_high) for i in items] == [("blocking", 0.1, 0.5)]


def test_plain_data_beside_the_weights_and_explicit_weights_only_are_no_item(tmp_path: Path) -> None:
    plain = _TRAIN.replace('"args": args', '"args": vars(args)')
    assert _loads(_tree(tmp_path, train=plain)) == []
    # nanoGPT: ``config`` is a dict of the run's settings, bound in the file
    config = _TRAIN.replace('"args": args', '"config": config').replace("model =", "config = {'lr': 1}\nmodel =")
    assert _loads(_tree(tmp_path, train=config)) == []
    # BLIP: the config read from YAML is dicts and lists
    yaml_config = _TRAIN.replace('"args": args', '"config": config').replace(
        "model =", "import yaml\nconfig = yaml.load(open('c.yaml'), Loader=yaml.Loader)\nmodel ="
    )
    assert _loads(_tree(tmp_path, train=yaml_config)) == []
    omega = yaml_config.replace("yaml.load(open('c.yaml'), Loader=yaml.Loader)", "OmegaConf.load('c.yaml')")
    assert [ln for _, ln, _, _ in _loads(_tree(tmp_path, train=omega))] == [9, 12]  # a DictConfig is an object
    # k-diffusion: a config read by a loader function is a dict; a yacs CfgNode (swin's get_config) is an object
    loaded = _TRAIN.replace('"args": args', '"config": config').replace(
        "model =", "config = load_config('c.json')\nmodel ="
    )
    assert _loads(_tree(tmp_path, train=loaded)) == []
    yacs = loaded.replace("load_config('c.json')", "get_config(args)")
    assert [ln for _, ln, _, _ in _loads(_tree(tmp_path, train=yacs))] == [9, 12]
    explicit = _GENERATE.replace('map_location="cpu")', 'map_location="cpu", weights_only=False)')
    assert _loads(_tree(tmp_path, generate=explicit)) == []
    # diffusion_policy: a load that passes a pickle_module keeps weights_only=False in torch
    dill = _GENERATE.replace('map_location="cpu")', 'map_location="cpu", pickle_module=dill)')
    assert _loads(_tree(tmp_path, generate=dill)) == []
    other_key = _GENERATE.replace('["g_ema"]', '["state"]')
    assert _loads(_tree(tmp_path, generate=other_key)) == []  # not read as the checkpoint train.py saves


def test_a_lightning_checkpoint_read_by_its_state_dict(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text("import pytorch_lightning as pl\n\ntrainer = pl.Trainer()\n")
    (tmp_path / "sample.py").write_text(
        "import torch\n\n\ndef load(path, model):\n    sd = torch.load(path, map_location='cpu')['state_dict']\n"
        "    model.load_state_dict(sd)\n"
    )
    assert [(f, ln, sev) for f, ln, sev, _ in _loads(tmp_path)] == [("sample.py", 5, "warning")]
    (tmp_path / "main.py").write_text("import torch\n")
    assert _loads(tmp_path) == []  # no Lightning training: a plain state dict under that key


def test_a_pickled_module_and_a_load_whose_every_call_is_guarded(tmp_path: Path) -> None:
    """WaveGlow saves ``{'model': model_for_saving, ...}``, the whole module: inference.py's load blocks; train.py's
    ``load_checkpoint`` runs only under ``if checkpoint_path != "":``, so it blocks when that holds. Near miss:
    ``{'model': model.state_dict()}`` is tensors."""
    (tmp_path / "train.py").write_text(
        "import torch\n\n\ndef load_checkpoint(path, model):\n    d = torch.load(path, map_location='cpu')\n"
        "    return d['model']\n\n\ndef save(model, path):\n    model_for_saving = type(model)()\n"
        "    torch.save({'model': model_for_saving, 'iteration': 1}, path)\n\n\n"
        "checkpoint_path = ''\nmodel = None\nif checkpoint_path != '':\n    model = load_checkpoint(checkpoint_path, model)\n"
    )
    (tmp_path / "inference.py").write_text(
        "import torch\n\nwaveglow = torch.load('w.pt', map_location='cpu')['model']\n"
    )
    (tmp_path / "README.md").write_text("`python train.py`\n`python inference.py`\n")
    got = _loads(tmp_path)
    assert [(f, ln, sev) for f, ln, sev, _ in got] == [("inference.py", 3, "blocking"), ("train.py", 5, "warning")]
    assert got[1][3].startswith("blocks when `checkpoint_path != ''` holds")
    (tmp_path / "train.py").write_text(
        (tmp_path / "train.py").read_text().replace("type(model)()", "model.state_dict()")
    )
    assert _loads(tmp_path) == []
