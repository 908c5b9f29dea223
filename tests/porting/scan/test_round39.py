"""Round 39's fixes: a README that trains also runs demo, test and speed scripts (Ultra-Fast-Lane-Detection), which
block only when they are run; a script the README's prose says to run is its default path (CSRNet)."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import write_tree

from accelpilot.porting.scan import scan_path

README = """# Lanes

```
python train.py configs/culane.py
python demo.py configs/culane.py --test_model culane_18.pth
python speed_simple.py
```
"""

TRAIN = """import os
import torch

distributed = False
if 'WORLD_SIZE' in os.environ:
    distributed = int(os.environ['WORLD_SIZE']) > 1
if distributed:
    torch.distributed.init_process_group(backend='nccl', init_method='env://')
net = torch.nn.Linear(2, 2).cuda()
"""

DEMO = "import torch\n\nnet = torch.nn.Linear(2, 2).cuda()\n"


def _lines(root: Path) -> dict[tuple[str, int], tuple[str, str, str]]:
    return {(f.file or "", f.line or 0): (f.rule, f.severity, f.reason or "") for f in scan_path(root, jobs=1).findings}


def test_demo_and_speed_scripts_beside_a_training_command_do_not_block(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"README.md": README, "train.py": TRAIN, "demo.py": DEMO, "speed_simple.py": DEMO})
    lines = _lines(root)
    assert lines[("train.py", 9)][1] == "blocking"  # the training run's own .cuda()
    assert lines[("speed_simple.py", 3)][1] != "blocking"
    assert lines[("speed_simple.py", 3)][2].startswith("blocks when speed_simple.py is run (README: `python")
    assert ("demo.py", 3) not in lines or lines[("demo.py", 3)][1] != "blocking"
    # near miss: without a training command, the demo is the default path
    alone = write_tree(tmp_path / "b", {"README.md": "```\npython demo.py\n```\n", "demo.py": DEMO})
    assert _lines(alone)[("demo.py", 3)][1] == "blocking"


def test_a_script_the_readme_prose_says_to_run_is_the_default_path(tmp_path: Path) -> None:
    """CSRNet's README has no command line: "2. Run 'train.py'" under Train and "1. Run 'test.py'" under Testing.
    train.py is the default path, named as the README's; test.py is a test script beside it, listed apart. Near
    miss: a prose name of a file the tree lacks is no entry point."""
    readme = "## Train\n1. Modify config.py\n2. Run 'train.py'\n\n## Testing\n1. Run 'test.py' for MAE.\n"
    readme += "3. Run `evaluate_all.py`\n"
    root = write_tree(tmp_path, {"README.md": readme, "train.py": DEMO, "test.py": DEMO})
    log = scan_path(root, jobs=1)
    train = next(f for f in log.findings if f.file == "train.py" and f.rule == "cuda-call")
    assert train.severity == "blocking"
    assert "README: `python train.py` (its prose says to run train.py)" in (train.reason or "")
    assert all(f.severity != "blocking" for f in log.findings if f.file == "test.py")
