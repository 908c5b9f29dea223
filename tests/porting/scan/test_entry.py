"""Blocking from the default entry points (issue 27): CUDA placement with no fallback on the lines of a script the
README runs stops a host without CUDA; an evaluation script, a fallback to the CPU and library code do not block."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.porting.scan.scan_kit import write_tree

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.entry import default_entries, readme_entry_points
from accelpilot.porting.scan.entry_blocking import variant_of

README = """\
# Thing

## Training

```
torchrun --nproc_per_node=8 train.py --model big
python sample.py --seed 1
```

## Evaluation (FID)

```
torchrun --nproc_per_node=8 sample_ddp.py --num-samples 50000
python train.py --eval-only
```
"""

TRAIN = """\
import torch
import torch.distributed as dist


def main():
    assert torch.cuda.is_available(), "needs a GPU"
    dist.init_process_group("nccl")
    torch.cuda.set_device(0)


if __name__ == "__main__":
    main()
"""

SAMPLE = """\
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
"""

SAMPLE_DDP = """\
import torch
import torch.distributed as dist

assert torch.cuda.is_available()
dist.init_process_group("nccl")
torch.cuda.set_device(0)
"""

LIB = """\
import torch


def to_gpu(x):
    return x.to("cuda")
"""


def _tree(root: Path, readme: str | None = README) -> Path:
    files = {"train.py": TRAIN, "sample.py": SAMPLE, "sample_ddp.py": SAMPLE_DDP, "lib/ops.py": LIB}
    if readme is not None:
        files["README.md"] = readme
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _how(root: Path, files: dict[str, str]) -> dict[str, str]:
    """The entry points of a tree written from ``files``, each with how it is known."""
    return dict(default_entries(write_tree(root, files), set(files)).how)


def test_readme_commands_name_the_entry_points_and_evaluation_runs_apart() -> None:
    entries, evaluation = readme_entry_points(README, {"train.py", "sample.py", "sample_ddp.py"})
    assert entries == {
        "train.py": "torchrun --nproc_per_node=8 train.py --model big",
        "sample.py": "python sample.py --seed 1",
    }
    assert evaluation == {"sample_ddp.py"}  # train.py is also run by the training section: an entry point


def test_cuda_placement_on_an_entry_points_path_blocks_with_its_reason(tmp_path: Path) -> None:
    log = scan_path(_tree(tmp_path), jobs=1)
    lines = {(f.file, f.line): (f.severity, f.context) for f in log.findings if f.file in ("train.py", "sample_ddp.py")}
    assert lines[("train.py", 6)] == ("blocking", None)  # assert torch.cuda.is_available(): a requirement, no probe
    assert lines[("train.py", 7)] == ("blocking", None)  # the NCCL process group
    assert lines[("train.py", 8)] == ("blocking", None)  # torch.cuda.set_device
    assert lines[("sample_ddp.py", 4)][1] == "probe"  # an evaluation script: as before
    assert {lines[("sample_ddp.py", n)][0] for n in (5, 6)} == {"warning"}
    items = {i.key: i for i in log.items}
    train = items["file|device-placement|train.py"]
    assert train.severity == "blocking" and train.reason is not None
    assert train.reason.startswith("entry point train.py (README: `torchrun --nproc_per_node=8 train.py --model big`)")
    assert train.reason.endswith("at train.py:6")
    sample = items["file|device-placement|sample.py"]
    assert (sample.severity, sample.reason) == (
        "warning",
        "performance item: off CUDA it falls back to the CPU (the device should be a setting)",
    )
    # library code no file imports, in a repository its README commands run: on no path (``dead_code.py``)
    assert {f.context for f in log.findings if f.file == "lib/ops.py"} == {"unreached-module"}


def test_without_a_readme_command_root_scripts_named_as_entry_points_are_entries(tmp_path: Path) -> None:
    log = scan_path(_tree(tmp_path, readme="# Thing\n\nNo commands here.\n"), jobs=1)
    blocking = sorted({f.file or "" for f in log.findings if f.severity == "blocking"})
    assert blocking == ["sample_ddp.py", "train.py"]  # both named as entry points (sample*.py, train*.py)


@pytest.mark.parametrize(
    ("entry", "base"),
    [
        ("main_moe.py", "main.py"),  # Swin-MoE beside Swin's main.py
        ("main_simmim_pt.py", "main.py"),
        ("segment/train.py", "train.py"),  # yolov5's segmentation task beside its detection train.py
        ("main.py", None),
        ("train.py", None),
        ("mainline.py", None),  # a longer stem without the separator is another script
        ("tools/run.py", None),  # another script in another folder
    ],
)
def test_a_variant_of_an_entry_point_is_found_by_its_name(entry: str, base: str | None) -> None:
    how = {
        e: "README: `python x`"
        for e in (
            "main.py",
            "main_moe.py",
            "main_simmim_pt.py",
            "mainline.py",
            "tools/run.py",
            "train.py",
            "segment/train.py",
        )
    }
    assert variant_of(entry, how) == base


def test_a_variants_cuda_lines_block_only_when_it_is_run(tmp_path: Path) -> None:
    """Swin's README runs ``main.py`` and ``main_moe.py``: ``main.py``'s ``.cuda()`` blocks the default path, the MoE
    variant's says when it blocks."""
    (tmp_path / "README.md").write_text("```\npython main.py --cfg a\npython main_moe.py --cfg b\n```\n")
    (tmp_path / "main.py").write_text("import torch\nmodel = torch.nn.Linear(1, 1).cuda()\n")
    (tmp_path / "main_moe.py").write_text("import torch\nmodel = torch.nn.Linear(1, 1).cuda()\n")
    by = {f.file: f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "cuda-call"}
    assert by["main.py"].severity == "blocking"
    assert by["main_moe.py"].severity == "warning"
    assert (by["main_moe.py"].reason or "").startswith(
        "blocks when main_moe.py is run, a variant of the entry point main.py"
    )


def test_an_install_only_readme_runs_the_commands_of_the_folder_it_links(tmp_path: Path) -> None:
    """torchdiffeq: the README installs (``pip install thing``, "running python setup.py install") and sends the user
    to ``[examples](./examples)``, whose README runs ``python demo.py --viz``: that is the default path, its folder
    promoted. Near miss: a README command of its own keeps the folder an example."""
    files = {
        "README.md": "Install with `pip install thing` or by running python setup.py install.\n\n"
        "Examples are in the [`examples`](./examples) directory.\n",
        "setup.py": "from setuptools import setup\nsetup(name='thing')\n",
        "thing/__init__.py": "",
        "examples/README.md": "Run\n```\npython demo.py --viz\n```\n",
        "examples/demo.py": "import torch\n\nx = torch.ones(1).cuda()\n",
    }
    found = default_entries(write_tree(tmp_path, files), set(files))
    assert dict(found.how) == {"examples/demo.py": "examples/README.md: `python demo.py --viz`"}
    contexts = {f.context for f in scan_path(tmp_path, jobs=1).findings if f.file == "examples/demo.py"}
    assert contexts == {None}
    (tmp_path / "README.md").write_text(files["README.md"] + "\nTrain with `python train.py`.\n")
    (tmp_path / "train.py").write_text("print(1)\n")
    assert "examples/demo.py" not in default_entries(tmp_path, {*files, "train.py"}).how


def test_a_shell_script_the_readme_names_in_backticks_runs_its_commands(tmp_path: Path) -> None:
    """SimCSE: "In `run_unsup_example.sh`, we provide a single-GPU example" and that script runs ``python
    train.py``: train.py is an entry point. Near miss: a backticked script the tree lacks names nothing."""
    files = {
        "README.md": "In `run_example.sh`, we provide an example; `missing.sh` is not shipped.\n",
        "run_example.sh": "#!/bin/bash\npython train.py --lr 1e-3\n",
        "train.py": "print(1)\n",
    }
    how = _how(tmp_path, files)
    assert how == {"train.py": "run_example.sh: `python train.py --lr 1e-3`"}


def test_a_lower_case_readme_sends_the_user_to_a_document_that_runs_a_console_script(tmp_path: Path) -> None:
    """nnU-Net: ``readme.md`` (lower case) links ``documentation/how-to/train-models.md``, which runs the package's
    console script ``nnUNetv2_train DATASET CONFIGURATION FOLD`` (``[project.scripts]``): its module is the entry
    point. Near miss: the script named only in prose (`` `nnUNetv2_predict` ``, no argument) runs nothing."""
    files = {
        "readme.md": "# thing\n\n- Training workflow: [Train models](documentation/how-to/train-models.md)\n",
        "pyproject.toml": '[project.scripts]\nnnUNetv2_train = "nnunetv2.run.run_training:run_training_entry"\n'
        'nnUNetv2_predict = "nnunetv2.inference.predict:predict_entry"\n',
        "documentation/how-to/train-models.md": "Then use `nnUNetv2_predict`.\n\n```bash\n"
        "nnUNetv2_train DATASET_NAME_OR_ID CONFIGURATION FOLD\n```\n",
        "nnunetv2/__init__.py": "",
        "nnunetv2/run/run_training.py": "import torch\n\ndef run_training_entry():\n    pass\n",
        "nnunetv2/inference/predict.py": "def predict_entry():\n    pass\n",
    }
    how = _how(tmp_path, files)
    assert how == {
        "nnunetv2/run/run_training.py": "documentation/how-to/train-models.md: "
        "`nnUNetv2_train DATASET_NAME_OR_ID CONFIGURATION FOLD`"
    }


def test_a_readme_linking_its_hosted_docs_runs_the_quick_start_page_of_the_docs_sources(tmp_path: Path) -> None:
    """Chemprop: the README says "Documentation can be found [here](https://chemprop.readthedocs.io/en/main/)" and
    gives no command; ``docs/source/quickstart.rst`` runs ``chemprop train --data-path ...`` (a console script), so
    its module is the entry point. Near miss: without the link to the hosted documentation the page is not read."""
    files = {
        "README.md": "# thing\n\nDocumentation can be found [here](https://thing.readthedocs.io/en/main/).\n",
        "pyproject.toml": '[project.scripts]\nthing = "thing.cli.main:main"\n',
        "docs/source/quickstart.rst": "Quickstart\n==========\n\n.. code-block:: bash\n\n"
        "    thing train --data-path tests/data/regression.csv --output-dir out\n",
        "thing/__init__.py": "",
        "thing/cli/main.py": "def main():\n    pass\n",
    }
    how = _how(tmp_path, files)
    assert how == {
        "thing/cli/main.py": "docs/source/quickstart.rst: "
        "`thing train --data-path tests/data/regression.csv --output-dir out`"
    }
    (tmp_path / "README.md").write_text("# thing\n\nSee the documentation.\n")
    assert "thing/cli/main.py" not in default_entries(tmp_path, set(files)).how


def test_an_executable_script_run_by_its_path_is_a_readme_command(tmp_path: Path) -> None:
    """RFdiffusion: ``./scripts/run_inference.py 'contigmap.contigs=[150-150]' ...`` runs the script by its path (it is
    executable): an entry point. Near miss: a Markdown link to the same file (``[the script](./scripts/x.py)``) runs
    nothing."""
    files = {
        "README.md": "```\n./scripts/run_inference.py 'contigmap.contigs=[150-150]' inference.num_designs=10\n```\n"
        "See [the helper](./scripts/helper.py).\n",
        "scripts/run_inference.py": "print(1)\n",
        "scripts/helper.py": "print(2)\n",
    }
    how = _how(tmp_path, files)
    assert how == {
        "scripts/run_inference.py": "README: `./scripts/run_inference.py 'contigmap.contigs=[150-150]' "
        "inference.num_designs=10`"
    }
