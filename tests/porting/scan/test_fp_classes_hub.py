"""False-positive classes of branch issue 27a: Hub downloads (an environment note, not porting work) and a CUDA
device count compared with a count (0 without CUDA: the branch is skipped, nothing stops), each beside its near
miss."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import findings_in

from accelpilot.porting.scan import scan_path


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


HUB = """\
from transformers import AutoModel
from datasets import load_dataset
model = AutoModel.from_pretrained("gpt2")
data = load_dataset("yahma/alpaca-cleaned")
"""


def test_hub_downloads_are_an_environment_note_not_porting_work(tmp_path: Path) -> None:
    """``from_pretrained``/``load_dataset`` of a Hub id download the same bytes on any accelerator: not porting work,
    counted apart, no item. Stays ``install-time``: the same call in ``setup.py``."""
    _write(tmp_path, {"train.py": HUB, "setup.py": HUB})
    assert findings_in(tmp_path, "train.py") == [
        ("hub-download", 3, "any-host-download"),
        ("hub-download", 4, "any-host-download"),
    ]
    assert findings_in(tmp_path, "setup.py") == [
        ("hub-download", 3, "install-time"),
        ("hub-download", 4, "install-time"),
    ]
    log = scan_path(tmp_path, jobs=1)
    assert [i.rule for i in log.items] == []
    assert log.summary.not_porting == {"any-host-download": 2, "install-time": 2}


COUNT = """\
import torch
model = torch.nn.Linear(2, 2)
if torch.cuda.device_count() > 1:
    model.model_parallel = True
torch.cuda.set_device(0)
"""

README = "Run `python finetune.py --epochs 3`.\n"


def test_a_gpu_count_branch_is_skipped_without_cuda_not_a_stop(tmp_path: Path) -> None:
    """``torch.cuda.device_count() > 1`` in an entry script returns 0 without CUDA and skips its branch: a warning
    with that reason, not blocking. Stays blocking: ``torch.cuda.set_device(0)`` on the same entry point."""
    _write(tmp_path, {"finetune.py": COUNT, "README.md": README})
    log = scan_path(tmp_path, jobs=1)
    by_line = {f.line: f for f in log.findings if f.file == "finetune.py"}
    assert (by_line[3].rule, by_line[3].context, by_line[3].severity) == ("torch-cuda-api", "count-query", "warning")
    assert by_line[3].reason is not None and "returns 0 without CUDA" in by_line[3].reason
    assert (by_line[5].rule, by_line[5].severity) == ("torch-cuda-api", "blocking")
