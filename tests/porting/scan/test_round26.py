"""Round 26's tuning fixes (issue 27): mdlm's conda environment installs PyTorch's CUDA build through
``pytorch-cuda=12.1``; OpenFlamingo's README installs its own distribution from the index (``pip install
open-flamingo``), whose ``setup.py`` pins ``torch==2.0.1``; DeepSDF defines ``empirical_stat`` inside ``main`` and
never calls it."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import rule_lines

from accelpilot.porting.scan.python import scan_python


def test_a_conda_environment_with_pytorch_cuda_installs_a_cuda_build_of_torch(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("```\nconda env create -f requirements.yaml\npython main.py\n```\n")
    (tmp_path / "main.py").write_text("import torch\n")
    (tmp_path / "requirements.yaml").write_text(
        "name: mdlm\nchannels:\n  - pytorch\n  - nvidia\ndependencies:\n  - python=3.9\n  - pytorch\n"
        "  - pytorch-cuda=12.1\n"
    )
    assert rule_lines(tmp_path, "cuda-version-pin") == [("requirements.yaml", 8, "blocking")]
    # near miss: the same file that the README does not install
    (tmp_path / "README.md").write_text("```\npython main.py\n```\n")
    assert rule_lines(tmp_path, "cuda-version-pin") == [("requirements.yaml", 8, "warning")]


def test_pip_installing_the_repositorys_own_distribution_installs_its_pins(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("```\npip install open-flamingo\n```\n\n```\npython demo.py\n```\n")
    (tmp_path / "demo.py").write_text("import torch\n")
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nsetup(\n    name='open_flamingo',\n    install_requires=['torch==2.0.1'],\n)\n"
    )
    assert rule_lines(tmp_path, "install-pin") == [("setup.py", 4, "blocking")]
    # near miss: another distribution's name installs another package
    (tmp_path / "README.md").write_text("```\npip install open-clip-torch\n```\n\n```\npython demo.py\n```\n")
    assert rule_lines(tmp_path, "install-pin") == [("setup.py", 4, "warning")]


def test_a_def_nested_in_a_def_that_nothing_names_runs_on_no_path() -> None:
    source = (
        "import torch\n\n\ndef main(latents, indices):\n    def empirical_stat(latent_vecs, indices):\n"
        "        lat_mat = torch.zeros(0).cuda()\n        for ind in indices:\n"
        "            lat_mat = torch.cat([lat_mat, latent_vecs[ind]], 0)\n        return lat_mat\n"
        "    return latents\n"
    )
    found = {(r, ln): ctx for r, ln, _, _, _, ctx in scan_python(source)}
    assert found[("growing-sequence", 8)] == "unused-def" and found[("cuda-call", 6)] == "unused-def"
    # near miss: the outer def calls it
    used = source.replace("    return latents\n", "    return empirical_stat(latents, indices)\n")
    found = {(r, ln): ctx for r, ln, _, _, _, ctx in scan_python(used)}
    assert found[("growing-sequence", 8)] is None


def test_a_method_of_a_class_defined_in_a_def_is_no_unused_nested_def() -> None:
    """QLoRA defines ``MMLUEvalCallback`` inside ``train``; the Trainer calls its ``on_evaluate``."""
    source = (
        "import torch\n\n\ndef train(trainer):\n    class Callback:\n        def on_evaluate(self, labels):\n"
        "            return labels[labels != -100]\n    trainer.add_callback(Callback)\n"
    )
    assert {ctx for r, _, _, _, _, ctx in scan_python(source) if r == "boolean-mask-index"} == {None}


def test_an_environment_pinned_to_a_python_before_3_10_blocks_where_the_readme_builds_it(tmp_path: Path) -> None:
    """StreamingLLM's README builds ``conda create -yn streaming python=3.8``: no torch TorchNeuron pairs with (2.9
    and later) has a Python 3.8 or 3.9 wheel. Near miss: ``python=3.10``, and a floor (``python >= 3.8``)."""
    (tmp_path / "main.py").write_text("import torch\n")
    (tmp_path / "README.md").write_text("```bash\nconda create -yn streaming python=3.8\npython main.py\n```\n")
    assert rule_lines(tmp_path, "install-pin") == [("README.md", 2, "blocking")]
    (tmp_path / "README.md").write_text("```bash\nconda create -yn streaming python=3.10\npython main.py\n```\n")
    assert rule_lines(tmp_path, "install-pin") == []
    (tmp_path / "environment.yml").write_text("dependencies:\n  - python >= 3.8\n  - pytorch\n")
    assert rule_lines(tmp_path, "install-pin") == []
    (tmp_path / "environment.yml").write_text("dependencies:\n  - python=3.9\n  - pytorch\n")
    (tmp_path / "README.md").write_text("```bash\nconda env create -f environment.yml\npython main.py\n```\n")
    assert rule_lines(tmp_path, "install-pin") == [("environment.yml", 2, "blocking")]
