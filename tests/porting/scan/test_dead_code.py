"""A module of a scripts repository that nothing runs (``scan/dead_code.py``): DiT's shape, a sampler module no file
imports, with a removed numpy alias. Near misses: a module loaded by its dotted name (stylegan2-ada's
``class_name='training.loss.StyleGAN2Loss'``), one a script imports, one with a ``__main__`` block, and any module of
an installable package (its users import it)."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path

SAMPLER = "import numpy as np\n\ndef weights(n):\n    return np.zeros(n, dtype=np.int)\n"


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _contexts(root: Path) -> dict[str, str | None]:
    return {f.file or "": f.context for f in scan_path(root, jobs=1).findings if f.rule == "stack-upgrade"}


def test_a_module_nothing_runs_is_listed_apart(tmp_path: Path) -> None:
    files = {
        "train.py": "from diffusion import gaussian\n",
        "diffusion/__init__.py": "",
        "diffusion/gaussian.py": "x = 1\n",
        "diffusion/sampler.py": SAMPLER,
        "training/loss.py": SAMPLER,
        "training/run.py": SAMPLER + "if __name__ == '__main__':\n    weights(3)\n",
        "cfg.py": "spec = dict(class_name='training.loss.Loss')\n",
        "README.md": "Train with `python train.py`.\n",
    }
    root = _write(tmp_path, files)
    assert _contexts(root) == {
        "diffusion/sampler.py": "unreached-module",
        "training/loss.py": None,  # named by its dotted name: loaded at run time
        "training/run.py": None,  # a script of its own
    }
    (root / "train.py").write_text("from diffusion import gaussian, sampler\n")
    assert _contexts(root)["diffusion/sampler.py"] is None
    (root / "train.py").write_text("from diffusion import gaussian\n")
    (root / "pyproject.toml").write_text("[project]\nname = 'diffusion'\n")
    assert _contexts(root)["diffusion/sampler.py"] is None  # a package: its users import it
    (root / "pyproject.toml").unlink()
    (root / "README.md").write_text("A library.\n")
    assert _contexts(root)["diffusion/sampler.py"] is None  # no command says how the code runs


REGISTRY = """import importlib
import os


def build(name):
    models_dir = 'models'
    table = {f[:-3]: f"{models_dir}.{f[:-3]}" for f in os.listdir(models_dir)}
    return importlib.import_module(table[name]).Model()
"""


def test_a_folder_loaded_by_name_is_reached_and_its_cuda_library_blocks_when_chosen(tmp_path: Path) -> None:
    """Time-Series-Library loads ``models/<name>.py`` with ``importlib.import_module`` for ``--model TimesNet``: its
    modules are reached (not ``unreached-module``), and a CUDA-only library imported at module level by one of them,
    or by a module only they import, blocks when that model is chosen, not on every run. Near miss: the same
    import in a module the entry point imports statically still blocks."""
    files = {
        "run.py": "from exp import build\n\nbuild('TimesNet')\n",
        "exp.py": REGISTRY,
        "models/TimesNet.py": "import numpy as np\n\nclass Model:\n    dtype = np.float\n",
        "models/MambaSL.py": "from layers.block import Block\n\nclass Model(Block):\n    pass\n",
        "layers/block.py": "from mamba_ssm import selective_scan_fn\n\nclass Block:\n    pass\n",
        "README.md": "Run `python run.py --model TimesNet`.\n",
    }
    _write(tmp_path, files)
    assert _contexts(tmp_path) == {"models/TimesNet.py": None}  # reached: porting work
    found = [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "cuda-kernel-library"]
    assert [(f.file, f.severity) for f in found] == [("layers/block.py", "warning")]
    assert (found[0].reason or "").startswith("blocks when models/MambaSL.py is chosen")
    (tmp_path / "exp.py").write_text("from layers.block import Block\n" + REGISTRY)
    found = [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "cuda-kernel-library"]
    assert [(f.file, f.severity) for f in found] == [("layers/block.py", "blocking")]


def test_a_runtime_import_in_a_script_no_command_runs_blocks_when_it_is_run(tmp_path: Path) -> None:
    """YOLOX's ``tools/trt.py`` imports tensorrt at module level; no README command runs it and no file imports it,
    so it blocks when that script is run. Near miss: the same import in a module the entry point imports blocks."""
    _write(
        tmp_path,
        {
            "README.md": "Train with `python tools/train.py`.\n",
            "setup.py": "from setuptools import setup\nsetup(name='y')\n",
            "tools/train.py": "import yolox.core\n",
            "tools/trt.py": "import tensorrt\n\n\ndef main():\n    pass\n\n\nif __name__ == '__main__':\n    main()\n",
            "yolox/__init__.py": "",
            "yolox/core.py": "x = 1\n",
        },
    )
    found = [(f.file, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.rule == "cuda-only-library"]
    assert found == [("tools/trt.py", "warning")]
    (tmp_path / "yolox" / "core.py").write_text("import tensorrt\n")
    found = [(f.file, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.rule == "cuda-only-library"]
    assert sorted(found) == [("tools/trt.py", "warning"), ("yolox/core.py", "blocking")]
