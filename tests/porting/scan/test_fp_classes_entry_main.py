"""The ``__main__`` block of an entry point (a script a README command runs) is its default path, not a demo; a
library module's ``__main__`` block stays a demo listed apart (issue 27, held-out repositories)."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import findings_in

from accelpilot.porting.scan import scan_path

SCRIPT = """\
import torch


class Agent(torch.nn.Module):
    def forward(self, x):
        return x * 2


if __name__ == "__main__":
    args = parse()
    device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")
    agent = Agent().to(device)
    buf = torch.zeros(4, device="cuda")
"""


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "README.md").write_text("Run it:\n\n```bash\npython agents/ppo.py --seed 1\n```\n")
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "ppo.py").write_text(SCRIPT)  # an entry point by the README, not by its name
    (tmp_path / "agents" / "net.py").write_text(SCRIPT)  # the same block in a module no command runs
    return tmp_path


def test_the_main_block_of_a_readme_entry_point_is_its_run_and_a_modules_stays_a_demo(tmp_path: Path) -> None:
    """``python agents/ppo.py`` in the README: its ``__main__`` block is what runs, porting work. Near miss: the
    same block in ``agents/net.py``, which no command runs, stays ``main-block``."""
    _tree(tmp_path)
    assert findings_in(tmp_path, "agents/ppo.py") == [
        ("cuda-device-literal", 11, None),
        ("cuda-device-literal", 13, None),
        ("torch-cuda-api", 11, "probe"),  # the availability question stays a probe inside the run, as outside it
    ]
    assert findings_in(tmp_path, "agents/net.py") == [
        ("cuda-device-literal", 11, "main-block"),
        ("cuda-device-literal", 13, "main-block"),
        ("torch-cuda-api", 11, "main-block"),
    ]


def test_an_entry_points_cuda_or_cpu_choice_with_a_further_condition_falls_back(tmp_path: Path) -> None:
    """``"cuda" if torch.cuda.is_available() and args.cuda else "cpu"`` runs on the CPU off CUDA: a performance
    item, not a stop. Near miss: ``device="cuda"`` on the same entry point's path blocks."""
    _tree(tmp_path)
    fs = {(f.rule, f.line): f for f in scan_path(tmp_path, jobs=1).findings if f.file == "agents/ppo.py"}
    choice = fs[("cuda-device-literal", 11)]
    assert choice.severity != "blocking"
    assert (choice.reason or "").startswith("performance item: off CUDA it falls back to the CPU")
    assert fs[("cuda-device-literal", 13)].severity == "blocking"
