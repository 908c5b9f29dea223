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
