"""An entry point's call of the repository's own ``Trainer`` subclass is its ``hf-trainer`` line
(``scan/trainer_subclass.py``; SimCSE's ``CLTrainer(Trainer)``): blocking on a transformers pinned below the first
release that places on the neuron device, as ``Trainer(...)`` there would be. Near misses: the class line itself and
a script that does not import the subclass."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import write_tree

from accelpilot.porting.scan import scan_path

TRAINERS = "from transformers import Trainer\n\n\nclass CLTrainer(Trainer):\n    pass\n"
TRAIN = "from pkg.trainers import CLTrainer\n\ntrainer = CLTrainer(model=None)\ntrainer.train()\n"


def _lines(root: Path) -> dict[tuple[str, int], str]:
    return {(f.file or "", f.line or 0): f.severity for f in scan_path(root, jobs=1).findings if f.rule == "hf-trainer"}


def test_an_entry_points_call_of_a_trainer_subclass_is_its_trainer_line(tmp_path: Path) -> None:
    files = {
        "README.md": "Train with `python train.py`.\n",
        "requirements.txt": "transformers==4.2.1\n",
        "train.py": TRAIN,
        "other.py": "CLTrainer = dict\nx = CLTrainer(a=1)\n",  # not the subclass: no import of it
        "pkg/__init__.py": "",
        "pkg/trainers.py": TRAINERS,
    }
    lines = _lines(write_tree(tmp_path, files))
    assert lines[("train.py", 3)] == "blocking"  # transformers 4.2.1 places on CUDA or the CPU
    assert lines[("pkg/trainers.py", 4)] == "warning"  # the class line, as before
    assert ("other.py", 2) not in lines
    (tmp_path / "requirements.txt").write_text("transformers>=5.4\n")
    assert _lines(tmp_path)[("train.py", 3)] == "warning"  # a current stack: a validation item
