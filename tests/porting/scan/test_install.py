"""The ``install-pin`` item (``scan/install.py``): a torch pin (exact, upper-bound, a CUDA build) or a TensorFlow 1.x
pin blocks where the README's install installs its file or names it on its pip line; an nvcc-built package (flash-attn)
in an installed file blocks the install. Near misses: a lower bound (``torch>=2.0``), a pinned file the README does
not install (a warning), a comment."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path


def _pins(root: Path) -> list[tuple[str, int, str]]:
    return [
        (f.file or "", f.line or 0, f.severity) for f in scan_path(root, jobs=1).findings if f.rule == "install-pin"
    ]


def test_a_torch_pin_the_readme_installs_blocks(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("numpy\ntorch==2.0.1\n# torch==1.0 (old)\ntensorflow==1.15.2\n")
    (tmp_path / "README.md").write_text("Install with `pip install -r requirements.txt`, then `python train.py`.\n")
    (tmp_path / "train.py").write_text("import torch\n")
    assert _pins(tmp_path) == [("requirements.txt", 2, "blocking"), ("requirements.txt", 4, "blocking")]
    items = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "install-pin"]
    assert [(i.severity, i.days_low, i.days_high) for i in items] == [("blocking", 0.5, 2)]
    (tmp_path / "README.md").write_text("See requirements.txt, then `python train.py`.\n")
    assert _pins(tmp_path) == [("requirements.txt", 2, "warning"), ("requirements.txt", 4, "warning")]
    (tmp_path / "requirements.txt").write_text("torch>=2.0\ntorch<3\n")
    assert _pins(tmp_path) == []  # a lower bound, and an upper bound above the Neuron torch
    (tmp_path / "requirements.txt").write_text("torch>=1.13.1,<=2.0.1\n")  # nanoT5: an upper bound below it
    assert _pins(tmp_path) == [("requirements.txt", 1, "warning")]


def test_a_pip_line_of_the_readme_and_an_nvcc_build_in_setup_py(tmp_path: Path) -> None:
    """Time-Series-Library's README installs ``torch==2.5.1`` from the cu121 index on its own pip line;
    consistency_models' ``pip install -e .`` builds flash-attn from ``setup.py``."""
    (tmp_path / "README.md").write_text(
        "```\npip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu121\npip install -e .\n```\n"
    )
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n\nsetup(name='cm', install_requires=['numpy', 'flash-attn==0.2.8'])\n"
    )
    assert _pins(tmp_path) == [("README.md", 2, "blocking")]
    flash = [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "flash-attn"]
    assert [(f.file, f.severity) for f in flash] == [("setup.py", "blocking")]
    assert "compiles CUDA kernels at install" in (flash[0].reason or "")
    [item] = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "flash-attn"]
    assert item.severity == "blocking"  # a declared dependency the install cannot build stops the setup itself


def test_a_cuda_build_of_torch_the_readme_installs_blocks_on_its_cuda_pin_line(tmp_path: Path) -> None:
    """``torch==2.3.0+cu121`` is the ``cuda-version-pin`` item's line already: installed by the README it blocks
    there, with no second item for the same line."""
    (tmp_path / "requirements.txt").write_text("torch==2.3.0+cu121\n")
    (tmp_path / "README.md").write_text("`pip install -r requirements.txt`\n")
    found = [(f.rule, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.file == "requirements.txt"]
    assert found == [("cuda-version-pin", "blocking")]


def test_an_optional_extra_is_not_installed_by_a_plain_install(tmp_path: Path) -> None:
    """mamba's ``[project.optional-dependencies] causal-conv1d = [...]``: ``pip install .`` leaves the extra out, so
    its nvcc build stops nothing; the same package in ``dependencies`` would. Likewise a torch pin in ``extras_require``."""
    (tmp_path / "README.md").write_text("`pip install . --no-build-isolation`\n")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "m"\ndependencies = ["torch", "einops"]\n\n[project.optional-dependencies]\n'
        'conv = [\n    "causal-conv1d>=1.2.0"\n]\n'
    )
    found = [(f.rule, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.file == "pyproject.toml"]
    assert found == [("cuda-kernel-library", "warning")]
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "m"\ndependencies = ["causal-conv1d>=1.2.0"]\n')
    found = [(f.rule, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.file == "pyproject.toml"]
    assert found == [("cuda-kernel-library", "blocking")]
    (tmp_path / "pyproject.toml").unlink()
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n\nsetup(\n    name='m',\n    extras_require={\n        'old': ['torch==1.6.0'],\n"
        "    },\n    install_requires=['torch==1.13.1'],\n)\n"
    )
    assert _pins(tmp_path) == [("setup.py", 8, "blocking")]


def test_a_readme_conda_install_that_pins_pytorch_blocks_unless_it_asks_for_or_later(tmp_path: Path) -> None:
    """RAFT's README: ``conda install pytorch=1.6.0 torchvision=0.7.0 cudatoolkit=10.1 -c pytorch``: the install
    replaces the Neuron torch. Near misses: CLIP's "install PyTorch 1.7.1 (or later)" above the same line makes the
    pin a floor (a warning), and ``conda install pytorch>=2.9`` pins nothing."""
    raft = "# RAFT\n\n## Requirements\n```Shell\nconda create --name raft\nconda install pytorch=1.6.0 torchvision=0.7.0 cudatoolkit=10.1 -c pytorch\n```\n"
    (tmp_path / "README.md").write_text(raft)
    (tmp_path / "train.py").write_text("import torch\n")
    [f] = [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "install-pin"]
    assert (f.file, f.line, f.severity) == ("README.md", 6, "blocking")
    assert f.message == "pytorch=1.6.0 (conda): the install replaces the torch build TorchNeuron ships"
    clip = "# CLIP\n\nFirst, install PyTorch 1.7.1 (or later) and torchvision.\n\n```bash\n$ conda install --yes -c pytorch pytorch=1.7.1 torchvision cudatoolkit=11.0\n```\n"
    (tmp_path / "README.md").write_text(clip)
    assert [f.severity for f in scan_path(tmp_path, jobs=1).findings if f.rule == "install-pin"] == ["warning"]
    (tmp_path / "README.md").write_text(raft.replace("pytorch=1.6.0", "pytorch>=2.9"))
    assert not [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "install-pin"]


def test_an_old_timm_pinned_by_a_root_documents_pip_line_blocks(tmp_path: Path) -> None:
    """DeiT's README_deit.md (whose commands are the default path) runs ``pip install timm==0.3.2``: timm 0.3.2
    imports ``torch._six`` (read in its wheel), gone since torch 2.0, so importing timm fails: blocking at that line.
    Near misses: ``timm==0.4.12`` (no torch._six), and the same pin in a requirements file the README does not install
    (a warning)."""
    (tmp_path / "README.md").write_text("# DeiT\n\nSee [README_deit.md](README_deit.md).\n")
    doc = "# DeiT\n\n```\npip install timm==0.3.2\n```\n\n```\npython main.py --model deit_small\n```\n"
    (tmp_path / "README_deit.md").write_text(doc)
    (tmp_path / "main.py").write_text("import torch\nimport timm\n")
    (tmp_path / "requirements.txt").write_text("timm==0.3.2\n")
    found = sorted(
        (f.file, f.line, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.rule == "install-pin"
    )
    assert found == [("README_deit.md", 4, "blocking"), ("requirements.txt", 1, "warning")]
    (tmp_path / "README_deit.md").write_text(doc.replace("0.3.2", "0.4.12"))
    (tmp_path / "requirements.txt").write_text("timm==0.4.12\n")
    assert not [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "install-pin"]


ENV = "name: ldm\nchannels:\n  - pytorch\ndependencies:\n  - python=3.8.5\n  - cudatoolkit=11.0\n  - pytorch=1.7.0\n"


def test_a_conda_environment_file_the_readme_creates_pins_pytorch_unless_it_asks_for_or_later(tmp_path: Path) -> None:
    """latent-diffusion's ``conda env create -f environment.yaml`` installs its ``- pytorch=1.7.0``: blocking, with
    the conda command named. Near misses: EDM's "PyTorch 1.12.0 (or later)" just above its command (a warning), and
    an environment file no command creates (a warning)."""
    (tmp_path / "environment.yaml").write_text(ENV)
    (tmp_path / "train.py").write_text("import torch\n")
    (tmp_path / "README.md").write_text("```\nconda env create -f environment.yaml\npython train.py\n```\n")
    py, pin = [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "install-pin"]
    assert (pin.file, pin.line, pin.severity) == ("environment.yaml", 7, "blocking")
    assert "pytorch=1.7.0 (conda)" in pin.message and "(`conda env create`)" in (pin.reason or "")
    # its ``- python=3.8.5`` too: no torch TorchNeuron pairs with has a Python 3.8 wheel
    assert (py.line, py.severity) == (5, "blocking") and py.message.startswith("python=3.8 (conda)")
    (tmp_path / "README.md").write_text(
        "* PyTorch 1.7.0 (or later).\n* Create the environment:\n  - `conda env create -f environment.yaml -n x`\n"
        "Then `python train.py`.\n"
    )
    assert _pins(tmp_path) == [("environment.yaml", 5, "warning"), ("environment.yaml", 7, "warning")]
    (tmp_path / "README.md").write_text("Run `python train.py`.\n")
    assert _pins(tmp_path) == [("environment.yaml", 5, "warning"), ("environment.yaml", 7, "warning")]


def test_a_torch_pin_after_the_quick_starts_own_package_install_blocks_only_when_that_environment_is_built(
    tmp_path: Path,
) -> None:
    """CLAP: the quick start runs ``pip install laion-clap`` (the repository's own distribution); a later section
    pins ``torch==1.11.0+cu113`` for those who reuse the repository's code. Near miss: with the pin first, or with no
    install of the own distribution, the pin is the README's install and blocks."""
    setup = "from setuptools import setup\nsetup(name='laion_clap', install_requires=['numpy'])\n"
    pin = "pip install torch==1.11.0+cu113 -f https://download.pytorch.org/whl/torch_stable.html"
    (tmp_path / "setup.py").write_text(setup)
    (tmp_path / "demo.py").write_text("import torch\n")
    (tmp_path / "README.md").write_text(f"```\npip install laion-clap\n```\n\n## Environment\n```\n{pin}\n```\n")
    findings = [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "install-pin" and f.file == "README.md"]
    assert [(f.line, f.severity) for f in findings] == [(7, "warning")]
    assert (findings[0].reason or "").startswith("blocks when this environment is built")
    (tmp_path / "README.md").write_text(f"```\n{pin}\npip install laion-clap\n```\n")
    findings = [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "install-pin" and f.file == "README.md"]
    assert [(f.line, f.severity) for f in findings] == [(2, "blocking")]


def test_a_readme_pip_line_in_a_folded_per_device_choice_is_no_install_of_the_target(tmp_path: Path) -> None:
    """F5-TTS folds one PyTorch install per device into ``<details>`` blocks (``<summary>NVIDIA GPU</summary>``:
    ``pip install torch==2.8.0+cu128 ...``): the user opens the one for their hardware, and a Neuron host opens none.
    Stays: the same pin in a folded block whose summary names no device (a "Reproduce the paper" environment)."""
    (tmp_path / "README.md").write_text(
        "## Install\n\n<details>\n<summary>NVIDIA GPU</summary>\n\n> ```bash\n"
        "> pip install torch==2.0.1+cu118 --extra-index-url https://download.pytorch.org/whl/cu118\n> ```\n\n"
        "</details>\n\n<details>\n<summary>Reproduce the paper</summary>\n\n```bash\npip install torch==2.0.1\n```\n"
        "</details>\n"
    )
    assert _pins(tmp_path) == [("README.md", 16, "blocking")]


def test_a_numpy_or_scipy_pin_with_no_wheel_for_a_current_python_blocks_where_installed(tmp_path: Path) -> None:
    """SimCSE's ``setup.py`` pins ``numpy>=1.19.5,<1.20`` and ``scipy>=1.5.4,<1.6``, U-2-Net's requirements
    ``numpy==1.15.2`` (round 40): no release either admits has a Python 3.10 wheel (numpy's first is 1.21.3, SciPy's
    1.7.2), so pip builds a source release on a Python it predates. Near misses: a pin of a later release, an upper
    bound that admits one, a compatible-release pin that reaches one, and a floor."""
    (tmp_path / "requirements.txt").write_text(
        "numpy==1.15.2\nscipy>=1.5.4,<1.6\nnumpy==1.26.4\nnumpy<=1.23.5\nnumpy~=1.19\nscipy>=1.2\n"
    )
    (tmp_path / "README.md").write_text("Install with `pip install -r requirements.txt`, then `python train.py`.\n")
    (tmp_path / "train.py").write_text("import torch\n")
    assert _pins(tmp_path) == [("requirements.txt", 1, "blocking"), ("requirements.txt", 2, "blocking")]
    (tmp_path / "README.md").write_text("Required libraries: numpy 1.15.2. Run `python train.py`.\n")
    assert _pins(tmp_path) == [("requirements.txt", 1, "warning"), ("requirements.txt", 2, "warning")]


def test_a_conda_environment_pin_with_its_channel_prefix_is_read(tmp_path: Path) -> None:
    """ESMFold's environment.yml writes ``- conda-forge::python=3.7`` and ``- pytorch::pytorch=1.12.*``: a channel
    prefix before the package is the same pin."""
    (tmp_path / "environment.yml").write_text(
        "name: esmfold\ndependencies:\n  - conda-forge::python=3.7\n  - pytorch::pytorch=1.12.*\n  - conda-forge::pip\n"
    )
    (tmp_path / "README.md").write_text("```\nconda env create -f environment.yml\npython train.py\n```\n")
    (tmp_path / "train.py").write_text("import torch\n")
    assert _pins(tmp_path) == [("environment.yml", 3, "blocking"), ("environment.yml", 4, "blocking")]
