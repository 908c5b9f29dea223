"""PyTorch Lightning as Pointnet2_PyTorch runs it (round 18): ``Trainer(gpus=list(cfg.gpus))`` with ``gpus: [0]``
in the Hydra config blocks; a step returning ``dict(..., progress_bar=dict(acc=acc))`` reads a device value every
step; ``drop_last=mode == "train"`` keeps the evaluation loader's smaller last batch; a Lightning 0.x pin is the
training runtime, its own item."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path, scan_python

TRAIN = """\
import hydra
import pytorch_lightning as pl


@hydra.main("config/config.yaml")
def main(cfg):
    model = hydra.utils.instantiate(cfg.task_model)
    trainer = pl.Trainer(gpus=list(cfg.gpus), max_epochs=cfg.epochs)
    trainer.fit(model)


if __name__ == "__main__":
    main()
"""


def _tree(root: Path, gpus: str, command: str = "python pkg/train.py task=cls") -> list[tuple[str, str, str]]:
    files = {
        "README.md": f"Train with `{command}`.\n",
        "pkg/train.py": TRAIN,
        "pkg/config/config.yaml": f"gpus:\n{gpus}\nepochs: 200\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return [
        (f.file or "", f.severity, f.message) for f in scan_path(root, jobs=1).findings if f.rule == "lightning-cuda"
    ]


def test_a_trainers_gpus_read_from_the_hydra_config_blocks_and_an_override_decides(tmp_path: Path) -> None:
    """``gpus: [0]`` in ``config/config.yaml`` (next to the script, as ``@hydra.main`` names it): Lightning's
    device parser raises without CUDA. Near misses: an empty list, and a command overriding ``gpus=[]``."""
    [(file, severity, message)] = _tree(tmp_path / "a", "  - 0")
    assert (file, severity) == ("pkg/train.py", "blocking")
    assert "gpus=[0] (its Hydra config)" in message
    assert _tree(tmp_path / "b", "  []") == []
    assert _tree(tmp_path / "c", "  - 0", "python pkg/train.py task=cls gpus=[]") == []


STEP = """\
import torch
import torch.nn.functional as F
import pytorch_lightning as pl


class Classifier(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        pc, labels = batch
        logits = self.forward(pc)
        loss = F.cross_entropy(logits, labels)
        acc = (torch.argmax(logits, dim=1) == labels).float().mean()
        return dict(loss=loss, log=dict(train_loss=loss), progress_bar=dict(train_acc=acc))

    def validation_step(self, batch, batch_idx):
        return dict(val_loss=self.forward(batch[0]).sum(), progress_bar=dict())

    def _build_dataloader(self, dset, mode):
        return torch.utils.data.DataLoader(
            dset, batch_size=32, shuffle=mode == "train", num_workers=4, drop_last=mode == "train"
        )

    def train_dataloader(self):
        return torch.utils.data.DataLoader(self.train_dset, batch_size=32, shuffle=True, drop_last=self.is_train)
"""


def test_a_progress_bar_dict_built_with_dict_and_a_compared_drop_last_are_read() -> None:
    """The step's ``progress_bar=dict(train_acc=acc)`` is shown every step (line 12); an empty one (line 15) shows
    nothing. ``drop_last=mode == "train"`` is false for the validation loader (line 18); ``drop_last=self.is_train``
    stays the caller's decision."""
    found = sorted((r, ln) for r, ln, *_ in scan_python(STEP) if r in ("host-sync-in-loop", "partial-last-batch"))
    assert found == [("host-sync-in-loop", 12), ("partial-last-batch", 18)]


def test_a_lightning_0x_pin_is_the_training_runtime_and_blocks_where_the_readme_installs_it(tmp_path: Path) -> None:
    """NeRF-pl's ``pytorch-lightning==0.7.5`` in requirements.txt, installed by the README: a ``lightning-legacy``
    item of its own (2-6 days), blocking. Near misses: ``pytorch-lightning>=1.4`` is no such pin; the same pin in
    a requirements file the README does not install is a warning."""
    (tmp_path / "README.md").write_text("```\npip install -r requirements.txt\npython train.py\n```\n")
    (tmp_path / "requirements.txt").write_text("torch>=2.1\npytorch-lightning==0.7.5\n")
    (tmp_path / "train.py").write_text("import pytorch_lightning as pl\n")
    [item] = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "lightning-legacy"]
    assert (item.severity, item.days_low, item.days_high) == ("blocking", 2, 6)
    assert "pytorch-lightning==0.7.5: the 0.x Trainer API, removed in 1.0" in (item.reason or "")
    (tmp_path / "requirements.txt").write_text("pytorch-lightning>=1.4\n")
    assert not [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "lightning-legacy"]
    (tmp_path / "README.md").write_text("Run `python train.py`.\n")
    (tmp_path / "requirements.txt").write_text("pytorch-lightning==0.7.5\n")
    [item] = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "lightning-legacy"]
    assert item.severity == "warning"


S4_TRAIN = """\
import hydra
import pytorch_lightning as pl


def create_trainer(config):
    return pl.Trainer(logger=None, **config.trainer)


@hydra.main(config_path="configs", config_name="config.yaml")
def main(config):
    create_trainer(config).fit(None)


if __name__ == "__main__":
    main()
"""


def test_a_trainer_built_from_a_hydra_group_whose_default_asks_for_a_gpu_blocks(tmp_path: Path) -> None:
    """S4: ``pl.Trainer(**config.trainer)`` with ``configs/trainer/default.yaml`` saying ``accelerator: gpu``.
    Near misses: ``accelerator: cpu``, and a command overriding ``trainer.accelerator=cpu``."""
    files = {
        "README.md": "Run `python -m train`.\n",
        "train.py": S4_TRAIN,
        "configs/config.yaml": "defaults:\n  - trainer: default\n",
        "configs/trainer/default.yaml": "accelerator: gpu\ndevices: 1\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)

    def lines() -> list[tuple[str, str]]:
        return [(f.severity, f.message) for f in scan_path(tmp_path, jobs=1).findings if f.rule == "lightning-cuda"]

    [(severity, message)] = lines()
    assert severity == "blocking" and "accelerator: gpu in configs/trainer/default.yaml" in message
    (tmp_path / "README.md").write_text("Run `python -m train trainer.accelerator=cpu`.\n")
    assert lines() == []
    (tmp_path / "README.md").write_text("Run `python -m train`.\n")
    (tmp_path / "configs/trainer/default.yaml").write_text("accelerator: cpu\n")
    assert lines() == []
