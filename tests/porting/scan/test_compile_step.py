"""The compile item (``scan/compile_step.py``): one ``compile-step`` item per repository whose default path builds a
model and compiles nothing, naming the graph breaks and per-batch shapes the scan found on that path; none where the
default path already calls ``torch.compile`` (``compile-backend`` says what to change), none for a library."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import write_tree

from accelpilot.porting.effort import ROWS
from accelpilot.porting.scan import scan_path

MODEL = (
    "import torch\nimport torch.nn as nn\n\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n"
    "    def forward(self, x):\n"
    "        if x.sum() > 0:\n            x = x * 2\n"
    "        return self.fc(x)\n"
)
TRAIN = (
    "import torch\nfrom model import Net\n\n"
    "def main():\n    net = Net()\n    opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
    "    for _ in range(3):\n        loss = net(torch.randn(2, 4)).sum()\n        loss.backward()\n        opt.step()\n\n"
    "if __name__ == '__main__':\n    main()\n"
)


def _compile_lines(root: Path) -> list[tuple[str, int, str]]:
    return [
        (f.file or "", f.line or 0, f.message) for f in scan_path(root, jobs=1).findings if f.rule == "compile-step"
    ]


def test_an_uncompiled_default_step_is_one_item_naming_its_graph_breaks(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"train.py": TRAIN, "model.py": MODEL, "README.md": "Train with `python train.py`.\n"})
    lines = _compile_lines(root)
    assert len(lines) == 1
    rel, line, msg = lines[0]
    assert (rel, line) == ("model.py", 10)  # the Python branch on a tensor in the forward
    assert msg.startswith("nothing on the default path is compiled")
    assert "1 graph-break site (tensor-control-flow model.py:10)" in msg
    items = [i for i in scan_path(root, jobs=1).items if i.rule == "compile-step"]
    assert len(items) == 1 and items[0].severity == "warning"
    row = ROWS["compile-step"]
    assert (items[0].days_low, items[0].days_high) == (1.0, 3.0) == (row.low, row.high)


def test_a_default_path_that_compiles_or_a_library_gets_none(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"train.py": TRAIN, "model.py": MODEL, "README.md": "Train with `python train.py`.\n"})
    (root / "train.py").write_text(TRAIN.replace("    net = Net()\n", "    net = torch.compile(Net())\n"))
    assert _compile_lines(root) == []
    (root / "train.py").write_text(
        TRAIN.replace("    net = Net()\n", "    # net = torch.compile(Net())\n    net = Net()\n")
    )
    assert len(_compile_lines(root)) == 1  # a comment compiles nothing
    (root / "README.md").write_text("A library of models.\n")
    assert _compile_lines(root) == []  # nothing says what runs


def test_a_break_off_the_default_path_is_not_named(tmp_path: Path) -> None:
    files = {"train.py": TRAIN, "model.py": MODEL.replace("        if x.sum() > 0:\n            x = x * 2\n", "")}
    files["extras/__init__.py"] = "from .branchy import Net\n"  # a package of its own the entry point never imports
    files["extras/branchy.py"] = MODEL
    root = write_tree(tmp_path, {**files, "README.md": "Train with `python train.py`.\n"})
    [(rel, _, msg)] = _compile_lines(root)
    assert rel == "model.py" and "no graph break the scan can see" in msg
