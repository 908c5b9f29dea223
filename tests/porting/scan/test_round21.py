"""Round 21's tuning fixes (issue 27): a package every release of which fails to import beside TorchNeuron's
torchvision (basicsr 1.4.2, Real-ESRGAN), the pins of an install script the README runs (Graphormer's ``bash
install.sh``), and a linked folder that is a project of its own (Depth-Anything-V2's ``metric_depth/``)."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import rule_lines

from accelpilot.porting.scan import scan_path


def test_basicsr_blocks_where_the_readme_installs_it_unless_its_spec_excludes_1_4_2(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("basicsr>=1.4.2\nnumpy\n")
    (tmp_path / "setup.cfg").write_text("[isort]\nknown_third_party = PIL,basicsr,cv2\n")  # a list, no requirement
    (tmp_path / "README.md").write_text("```\npip install basicsr\npip install -r requirements.txt\n```\n")
    (tmp_path / "inference.py").write_text("import basicsr\n")
    assert rule_lines(tmp_path, "install-pin") == [("README.md", 2, "blocking"), ("requirements.txt", 1, "blocking")]
    [f] = [f for f in scan_path(tmp_path, jobs=1).findings if f.file == "requirements.txt"]
    assert "torchvision.transforms.functional_tensor" in f.message
    (tmp_path / "README.md").write_text("See requirements.txt.\n")
    assert rule_lines(tmp_path, "install-pin") == [("requirements.txt", 1, "warning")]  # not installed by the README
    (tmp_path / "requirements.txt").write_text("basicsr>1.4.2\nbasicsr-fixed\n")  # a later release; another package
    assert rule_lines(tmp_path, "install-pin") == []


def test_the_pip_lines_of_an_install_script_the_readme_runs_are_its_install(tmp_path: Path) -> None:
    (tmp_path / "install.sh").write_text(
        "#!/usr/bin/env bash\npip install torch==1.9.1+cu111 torchaudio -f https://download.pytorch.org/whl/cu111\n"
        "pip install torch-scatter==2.0.9 -f https://pytorch-geometric.com/whl/torch-1.9.1+cu111.html\n"
    )
    (tmp_path / "README.md").write_text("```\nbash install.sh\n```\n")
    (tmp_path / "train.py").write_text("import torch\n")
    # the torch pin blocks; torch-scatter's wheel index names torch but pins no torch
    assert rule_lines(tmp_path, "install-pin") == [("install.sh", 2, "blocking")]
    (tmp_path / "README.md").write_text("See install.sh.\n")  # named, not run
    assert rule_lines(tmp_path, "install-pin") == []


def _sub_project(root: Path, readme: bool) -> None:
    (root / "README.md").write_text(
        "```\npython run.py --img x.png\n```\nFor metric depth, refer to [metric depth](./metric_depth).\n"
    )
    (root / "run.py").write_text("import torch\n\nif __name__ == '__main__':\n    torch.zeros(1)\n")
    sub = root / "metric_depth"
    sub.mkdir()
    (sub / "dist_train.sh").write_text("python3 -m torch.distributed.launch --nproc_per_node=8 train.py\n")
    (sub / "train.py").write_text(
        "import torch\n\nif __name__ == '__main__':\n    model = torch.nn.Linear(2, 2).cuda()\n"
    )
    (sub / "requirements.txt").write_text("numpy\n")
    if readme:
        (sub / "README.md").write_text("```\nbash dist_train.sh\n```\n")


def test_a_linked_folder_with_its_own_readme_and_install_is_no_default_path(tmp_path: Path) -> None:
    _sub_project(tmp_path, readme=True)
    cuda = [f for f in scan_path(tmp_path, jobs=1).findings if f.file == "metric_depth/train.py" and f.porting]
    assert cuda and all(f.severity != "blocking" for f in cuda)


def test_a_linked_folder_of_scripts_is_the_readmes_own_step(tmp_path: Path) -> None:
    """TinyLlama's ``[finetuning](sft)``: scripts and no README of their own: their commands run by default."""
    _sub_project(tmp_path, readme=False)
    cuda = [f for f in scan_path(tmp_path, jobs=1).findings if f.file == "metric_depth/train.py" and f.porting]
    assert any(f.severity == "blocking" for f in cuda)


def test_a_kernel_library_imported_by_a_script_nothing_runs_blocks_when_it_is_run(tmp_path: Path) -> None:
    """GPT-NeoX's ``tools/ckpts/convert_neox_to_mamba_ssm.py`` imports mamba_ssm at its top; no README command runs
    it and no file imports it, so its imports block only when it is run."""
    (tmp_path / "README.md").write_text("```\npython train.py\n```\n")
    (tmp_path / "train.py").write_text("import torch\n\nif __name__ == '__main__':\n    torch.zeros(1)\n")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "convert.py").write_text(
        "from mamba_ssm.models.config_mamba import MambaConfig\n\nif __name__ == '__main__':\n    MambaConfig()\n"
    )
    [f] = [f for f in scan_path(tmp_path, jobs=1).findings if f.file == "tools/convert.py" and f.porting]
    assert f.severity == "warning" and (f.reason or "").startswith("blocks when tools/convert.py is run")
