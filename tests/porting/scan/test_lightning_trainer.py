"""A Lightning ``Trainer`` or ``Fabric`` driving the default path is one ``lightning-trainer`` item (issue 27's
round 31: Chemprop's ``pl.Trainer(accelerator="auto")``, labelled as the framework runtime to teach the neuron device;
OpenFold's Trainer), unless a ``lightning-cuda`` or ``lightning-legacy`` item already holds that work."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import write_tree

from accelpilot.porting.findings import Finding
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.launch_flags import drop_held_lightning

TRAIN = """\
import torch
from lightning import pytorch as pl
import lightning as L
import transformers
from mylib import Trainer


def main(model, data):
    pl.Trainer(accelerator="auto", devices=1).fit(model, data)
    L.Fabric(accelerator="auto").launch()
    transformers.Trainer(model=model).train()
    Trainer(model).run()
"""


def test_lightning_trainer_and_fabric_are_one_item_and_other_trainers_are_not(tmp_path: Path) -> None:
    """Lines 9 and 10 (``pl.Trainer``, ``L.Fabric``) are the item; transformers' Trainer is ``hf-trainer``, a
    ``Trainer`` of the repository's own package nothing."""
    write_tree(tmp_path, {"train.py": TRAIN, "mylib.py": "class Trainer:\n    pass\n"})
    log = scan_path(tmp_path, jobs=1)
    lines = sorted((f.rule, f.line) for f in log.findings if f.rule in ("lightning-trainer", "hf-trainer"))
    assert lines == [("hf-trainer", 11), ("lightning-trainer", 9), ("lightning-trainer", 10)]
    items = [it for it in log.items if it.rule == "lightning-trainer"]
    assert len(items) == 1 and (items[0].days_low, items[0].days_high) == (1, 4)


def test_a_lightning_cuda_or_legacy_finding_holds_the_lightning_loop() -> None:
    """Where the README launches Lightning on CUDA (``lightning-cuda``) or pins a 0.x Lightning (``lightning-legacy``),
    that item is the move of the loop: the ``lightning-trainer`` lines are dropped. Without one they stay."""

    def f(rule: str) -> Finding:
        return Finding.from_rule(RULES[rule], file="train.py", line=1, message=rule)

    kept = drop_held_lightning([f("lightning-trainer"), f("cuda-call")])
    assert [x.rule for x in kept] == ["lightning-trainer", "cuda-call"]
    for holder in ("lightning-cuda", "lightning-legacy"):
        assert [x.rule for x in drop_held_lightning([f("lightning-trainer"), f(holder)])] == [holder]
