"""The bring-up item (``scan/bringup.py``): the torch modules the default path builds, found by following the entry
points' imports (a lazy import inside ``main`` too), each file one line of one repository item with its effort row;
a Hugging Face model a script loads; nothing for a library without commands, nothing for a module only a test or an
unreached file defines. And ``torch.load`` without ``map_location`` (``checkpoint-map-location``)."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.effort import ROWS
from accelpilot.porting.scan import scan_path

MODEL = (
    "import torch.nn as nn\n"
    "from torch import nn as tnn\n\n"
    "class LayerNorm(nn.LayerNorm):\n    pass\n\n"
    "class Block(nn.Module):\n    pass\n\n"
    "class GPT(Block):\n    pass\n\n"
    "class Config:\n    pass\n"
)
TRAIN = "def main():\n    from model import GPT\n    GPT()\n\nif __name__ == '__main__':\n    main()\n"


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _bringup(root: Path) -> list[tuple[str, int, str]]:
    log = scan_path(root, jobs=1)
    return [(f.file or "", f.line or 0, f.message) for f in log.findings if f.rule == "model-bringup"]


def test_the_default_paths_modules_are_one_item(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "train.py": TRAIN,
            "model.py": MODEL,
            "unused.py": "import torch.nn as nn\nclass Other(nn.Module):\n    pass\n",
            "tests/test_model.py": "import torch.nn as nn\nclass Fake(nn.Module):\n    pass\n",
            "README.md": "Train with `python train.py`.\n",
        },
    )
    assert _bringup(root) == [("model.py", 4, "3 torch modules the default path builds: LayerNorm, Block, GPT")]
    items = [i for i in scan_path(root, jobs=1).items if i.rule == "model-bringup"]
    assert len(items) == 1 and items[0].severity == "warning"
    row = ROWS["model-bringup"]
    assert (items[0].days_low, items[0].days_high) == (0.5, 2.0) == (row.low, row.high)
    (root / "README.md").write_text("A library of models.\n")
    assert _bringup(root) == []  # nothing says what runs


def test_a_hugging_face_model_and_its_subclass(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "train.py": "from transformers import AutoModelForCausalLM\nimport llava\n\n"
            "m = AutoModelForCausalLM.from_pretrained(name)\n",
            "llava.py": "from transformers import LlamaForCausalLM, PretrainedConfig\n\n"
            "class Llava(LlamaForCausalLM):\n    pass\n\nclass Cfg(PretrainedConfig):\n    pass\n",
            "README.md": "```\npython train.py --model x\n```\n",
        },
    )
    assert _bringup(root) == [
        ("llava.py", 3, "1 torch module the default path builds: Llava"),
        ("train.py", 4, "the Hugging Face model AutoModelForCausalLM.from_pretrained loads"),
    ]


def test_torch_load_without_map_location(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "load.py": "import torch\n\n"
            "a = torch.load(path)\n"
            "b = torch.load(path, map_location='cpu')\n"
            "c = torch.load(path, 'cpu')\n"
            "d = torch.load(path, **kw)\n"
            "e = torch.load(path, weights_only=True)\n",
        },
    )
    lines = [f.line for f in scan_path(root, jobs=1).findings if f.rule == "checkpoint-map-location"]
    assert lines == [3, 7]
