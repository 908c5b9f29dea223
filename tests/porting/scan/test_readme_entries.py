"""Entry points beyond the README's own commands (``scan/entry.py``, ``scan/readme_example.py``): the commands of the
root documents a README links, the script a launcher runs, and a library's README Python example; each beside its
near miss. Small synthetic trees."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.documents import linked_documents
from accelpilot.porting.scan.entry import default_entries


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _present(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


MAIN = """\
import argparse


def main(args):
    device = "cuda"
    return device


if __name__ == "__main__":
    main(argparse.Namespace())
"""

LAUNCHER = """\
import submitit

import {target} as trainer


class Job:
    def __call__(self):
        trainer.main(self.args)


def main():
    executor = submitit.AutoExecutor(folder="jobs")
    executor.update_parameters(gpus_per_node=8, tasks_per_node=8, slurm_constraint="volta32gb")
    executor.submit(Job())


if __name__ == "__main__":
    main()
"""


def test_commands_are_read_from_linked_root_documents_after_the_readme(tmp_path: Path) -> None:
    """README's own command for a script wins; a linked root document adds its scripts; a link into a folder, to a
    missing file or off the site adds nothing."""
    root = _write(
        tmp_path,
        {
            "README.md": "See [pre-training](PRETRAIN.md), [docs](docs/MORE.md), [gone](GONE.md), "
            "[web](https://x.org/A.md).\n\n```\npython main_pretrain.py --small\n```\n",
            "PRETRAIN.md": "# Pre-training\n\n```\npython main_pretrain.py --big\npython main_finetune.py --lr 1\n```\n",
            "docs/MORE.md": "```\npython main_linprobe.py\n```\n",
            "main_pretrain.py": MAIN,
            "main_finetune.py": MAIN,
            "main_linprobe.py": MAIN,
        },
    )
    assert linked_documents((root / "README.md").read_text(), root) == [root / "PRETRAIN.md"]
    assert default_entries(root, _present(root)).how == {
        "main_pretrain.py": "README: `python main_pretrain.py --small`",
        "main_finetune.py": "PRETRAIN.md: `python main_finetune.py --lr 1`",
    }


def test_a_launchers_target_is_an_entry_and_its_gpu_request_blocks_only_as_the_only_way_to_run_it(
    tmp_path: Path,
) -> None:
    """``submitit_pretrain.py`` (PRETRAIN.md's only command) runs ``main_pretrain.main``: main_pretrain.py is an
    entry point ("run by"), and the launcher's Slurm GPU request blocks. ``run_with_submitit.py`` launches
    ``main.py``, which the README also runs directly: its request is a warning saying when it blocks."""
    root = _write(
        tmp_path,
        {
            "README.md": "[Pre-training](PRETRAIN.md)\n\n## Training\n\n```\ntorchrun main.py\n```\n\n"
            "## Multinode\n\n```\npython run_with_submitit.py --nodes 4\n```\n",
            "PRETRAIN.md": "```\npython submitit_pretrain.py --nodes 8\n```\n",
            "main.py": MAIN,
            "main_pretrain.py": MAIN,
            "submitit_pretrain.py": LAUNCHER.format(target="main_pretrain"),
            "run_with_submitit.py": LAUNCHER.format(target="main"),
        },
    )
    entries = default_entries(root, _present(root))
    assert entries.wraps == {"submitit_pretrain.py": "main_pretrain.py", "run_with_submitit.py": "main.py"}
    assert (
        entries.how["main_pretrain.py"]
        == "run by submitit_pretrain.py, PRETRAIN.md: `python submitit_pretrain.py --nodes 8`"
    )
    log = scan_path(root, jobs=1)
    by = {(f.file, f.rule): f for f in log.findings}
    assert by[("main_pretrain.py", "cuda-device-literal")].severity == "blocking"  # run by the launcher
    pre = by[("submitit_pretrain.py", "slurm-gpu-gres")]
    assert pre.severity == "blocking" and "asks Slurm for NVIDIA GPUs through submitit" in (pre.reason or "")
    alt = by[("run_with_submitit.py", "slurm-gpu-gres")]
    assert alt.severity == "warning"
    assert (alt.reason or "").startswith("blocks when run_with_submitit.py is used: an alternative launcher of main.py")
    (item,) = [i for i in log.items if i.rule == "slurm-gpu-gres"]  # one request, however many launchers
    assert item.severity == "blocking" and len(item.lines) == 2


LIB_README = """\
# Diffusion

## Usage

```python
import torch
from diffusion import Unet, Trainer

model = Unet(dim=64)
# after a lot of training
trainer = Trainer(model, "images/", amp=True)
trainer.train()
```

## Optional wrapper

```python
from diffusion import Wrapper
Wrapper(model)
```
"""

INIT = "from diffusion.core import Unet, Trainer, Wrapper\n"

CORE = """\
from accelerate import Accelerator


class Unet:
    def __init__(self, dim):
        self.dim = dim


class Trainer:
    def __init__(self, model, folder, *, amp=False, mixed_precision_type="fp16", ema=False):
        self.accelerator = Accelerator(mixed_precision=mixed_precision_type if amp else "no")
        self.ema = Accelerator(mixed_precision="fp16" if ema else "no")


class Wrapper:
    def __init__(self, model):
        self.device = "cuda"
"""


def test_a_libraries_readme_example_is_its_default_path_scoped_to_the_classes_it_calls(tmp_path: Path) -> None:
    """No command: the README's Usage example calls Unet and Trainer (re-exported by the package), so their module is
    an entry for their lines. The Accelerator is a validation item (no requirement holds accelerate below 1.13, the
    first release that places on the neuron device) and blocks when a requirement does; fp16 under ``amp`` blocks
    since the example passes amp=True; fp16 under ``ema`` (not passed) says when it blocks; Wrapper (a later
    section) stays a warning."""
    root = _write(
        tmp_path,
        {"README.md": LIB_README, "diffusion/__init__.py": INIT, "diffusion/core.py": CORE},
    )
    entries = default_entries(root, _present(root))
    assert entries.how == {"diffusion/core.py": "README example under 'Usage': Unet(...), Trainer(amp=True)"}
    assert entries.scopes == {
        "diffusion/core.py": [("Unet", 4, 6, frozenset()), ("Trainer", 9, 12, frozenset({"amp"}))]
    }
    log = scan_path(root, jobs=1)
    by = {(f.rule, f.line): f for f in log.findings}
    trainer = by[("hf-trainer", 11)]
    assert trainer.severity == "warning" and (trainer.reason or "").startswith("validation item")
    assert by[("amp-cuda", 11)].severity == "blocking"
    assert "(the example passes amp=True)" in (by[("amp-cuda", 11)].reason or "")
    ema = by[("amp-cuda", 12)]
    assert ema.severity == "warning" and (ema.reason or "").startswith("blocks when `ema` is true")
    assert by[("cuda-device-literal", 17)].severity == "warning"  # Wrapper: not the example's
    (root / "requirements.txt").write_text("torch\naccelerate==0.21.0  # the release the code was written for\n")
    trainer = next(f for f in scan_path(root, jobs=1).findings if (f.rule, f.line) == ("hf-trainer", 11))
    assert trainer.severity == "blocking"
    assert "accelerate==0.21.0 (requirements.txt:2) is below accelerate 1.13.0" in (trainer.reason or "")


def test_a_readme_with_a_command_or_an_example_of_no_own_code_adds_no_example_entry(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "README.md": LIB_README.replace("from diffusion import", "from torchvision import"),
            "diffusion/__init__.py": INIT,
            "diffusion/core.py": CORE,
        },
    )
    assert default_entries(root, _present(root)).how == {}
    (root / "README.md").write_text(LIB_README + "\n```\npython train.py\n```\n")
    (root / "train.py").write_text("print(1)\n")
    entries = default_entries(root, _present(root))
    assert (entries.how, entries.scopes) == ({"train.py": "README: `python train.py`"}, {})


def test_a_module_run_with_python_m_is_an_entry_and_an_except_clause_of_a_cuda_error_stops_nothing(
    tmp_path: Path,
) -> None:
    """``python -m llava.serve.model_worker`` runs ``llava/serve/model_worker.py``: an entry point, whose default
    ``--device cuda`` blocks with that line as the reason, while ``except torch.cuda.CudaError:`` (a class a CPU build
    defines) is no stop. Near miss: ``python -m torch.distributed.run`` names no file of the tree. ``deepspeed --module`` (OpenRLHF's
    ``deepspeed --module openrlhf.cli.train_sft``) runs a module as ``python -m`` does."""
    worker = (
        "import argparse\nimport torch\n\n"
        "def run():\n    try:\n        pass\n    except torch.cuda.CudaError:\n        pass\n\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('--device', default='cuda')\n"
    )
    root = _write(
        tmp_path,
        {
            "README.md": "```\npython -m llava.serve.model_worker --port 40000\n"
            "python -m torch.distributed.run --nproc_per_node 2 other.py\n"
            "deepspeed --num_gpus 8 --module llava.train.sft \\\n   --lr 1e-5\n```\n",
            "llava/__init__.py": "",
            "llava/serve/__init__.py": "",
            "llava/serve/model_worker.py": worker,
            "llava/train/__init__.py": "",
            "llava/train/sft.py": "",
            "other.py": "",
        },
    )
    how = default_entries(root, _present(root)).how
    assert how == {
        "llava/serve/model_worker.py": "README: `python -m llava.serve.model_worker --port 40000`",
        "other.py": "README: `python -m torch.distributed.run --nproc_per_node 2 other.py`",
        "llava/train/sft.py": "README: `deepspeed --num_gpus 8 --module llava.train.sft --lr 1e-5`",
    }
    by = {(f.rule, f.line): f for f in scan_path(root, jobs=1).findings if f.file == "llava/serve/model_worker.py"}
    assert by[("torch-cuda-api", 7)].severity == "warning"
    assert by[("cuda-device-literal", 11)].severity == "blocking"


def test_a_launcher_of_a_packages_main_makes_its_defining_module_an_entry(tmp_path: Path) -> None:
    """dinov2's README runs ``dinov2/run/train/train.py``, a submitit launcher whose job calls ``main`` imported from
    the ``dinov2.train`` package, which re-exports it from ``dinov2/train/train.py``: that module is the entry point
    ("run by"), and its CUDA line blocks. Near miss: a package that re-exports nothing named ``main``."""
    files = {
        "README.md": "```\npython dinov2/run/train/train.py --nodes 4\n```\n",
        "dinov2/__init__.py": "",
        "dinov2/run/__init__.py": "",
        "dinov2/run/train/__init__.py": "",
        "dinov2/run/train/train.py": "class Trainer:\n    def __call__(self):\n"
        "        from dinov2.train import main as train_main\n        train_main(self.args)\n",
        "dinov2/train/__init__.py": "from .train import get_args_parser, main\n",
        "dinov2/train/train.py": "import torch\n\ndef main(args):\n    model = torch.nn.Linear(1, 1).cuda()\n\n"
        "if __name__ == '__main__':\n    main(None)\n",
    }
    root = _write(tmp_path, files)
    entries = default_entries(root, _present(root))
    assert entries.wraps == {"dinov2/run/train/train.py": "dinov2/train/train.py"}
    by = {(f.file, f.rule): f for f in scan_path(root, jobs=1).findings}
    assert by[("dinov2/train/train.py", "cuda-call")].severity == "blocking"
    (root / "dinov2/train/__init__.py").write_text("from .train import get_args_parser\n")
    assert default_entries(root, _present(root)).wraps == {}


def test_a_command_document_linked_with_html_is_read(tmp_path: Path) -> None:
    """deit's README links README_deit.md (its commands) with ``<a href="README_deit.md">``."""
    (tmp_path / "README_deit.md").write_text("python main.py\n")
    (tmp_path / "OTHER.md").write_text("x\n")
    text = '<a href="README_deit.md">DeiT</a> and [other](OTHER.md) and <a href="https://x.org/a.md">ext</a>'
    assert linked_documents(text, tmp_path) == [tmp_path / "README_deit.md", tmp_path / "OTHER.md"]


def test_a_command_inside_html_pre_tags_is_read_without_its_tags(tmp_path: Path) -> None:
    """BLIP's README writes ``<pre>python -m torch.distributed.run --nproc_per_node=8 train_retrieval.py</pre>``:
    the command is the entry point's (its tags left out of the reason). Near miss: ``<pre>pip install ...</pre>``."""
    _write(
        tmp_path,
        {
            "README.md": "Install <pre>pip install -r requirements.txt</pre>\n"
            "<pre>python -m torch.distributed.run --nproc_per_node=8 train_retrieval.py \\\n--evaluate</pre>\n",
            "train_retrieval.py": MAIN,
            "requirements.txt": "torch\n",
        },
    )
    how = default_entries(tmp_path, _present(tmp_path)).how
    cmd = "python -m torch.distributed.run --nproc_per_node=8 train_retrieval.py --evaluate"
    assert how == {"train_retrieval.py": f"README: `{cmd}`"}


def test_a_shell_script_the_readme_links_directly_is_read_for_commands(tmp_path: Path) -> None:
    """consistency_models: "examples ... in [scripts/launch.sh](scripts/launch.sh)", whose lines run
    ``mpiexec -n 8 python edm_train.py`` from ``scripts/``. Near miss: a script the README does not link."""
    _write(
        tmp_path,
        {
            "README.md": "Examples are in [scripts/launch.sh](scripts/launch.sh).\n",
            "scripts/launch.sh": "mpiexec -n 8 python edm_train.py --lr 1e-4\n",
            "scripts/other.sh": "python sample.py\n",
            "scripts/edm_train.py": MAIN,
            "scripts/sample.py": MAIN,
        },
    )
    assert set(default_entries(tmp_path, _present(tmp_path)).how) == {"scripts/edm_train.py"}


def test_a_module_that_launches_an_entry_point_the_readme_also_runs_is_an_alternative(tmp_path: Path) -> None:
    """Tacotron 2's README trains with ``python train.py`` and, for several GPUs, ``python -m multiproc train.py``:
    multiproc.py's ``torch.cuda.device_count()`` blocks only when that launcher is used. Near miss: the script's own
    CUDA line still blocks."""
    _write(
        tmp_path,
        {
            "README.md": "1. `python train.py --out o`\n2. `python -m multiproc train.py --out o`\n",
            "train.py": "import torch\n\nmodel = torch.nn.Linear(2, 2).cuda()\n",
            "multiproc.py": "import torch\n\nn = torch.cuda.device_count()\ntorch.cuda.set_device(0)\n",
        },
    )
    found = {
        (f.file, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.rule in ("torch-cuda-api", "cuda-call")
    }
    assert found == {("train.py", "blocking"), ("multiproc.py", "warning")}


def test_a_function_of_an_imported_submodule_is_the_examples_entry(tmp_path: Path) -> None:
    """ImageBind's README: ``from imagebind.models import imagebind_model`` then
    ``imagebind_model.imagebind_huge(pretrained=True)``: the submodule's function is what the example runs."""
    readme = (
        "# Lib\n\n## Usage\n\n```python\nfrom lib.models import model_a\n\n"
        "model = model_a.build_huge(pretrained=True)\nmodel.eval()\n```\n"
    )
    code = "import torch\n\n\ndef build_huge(pretrained=False):\n    return torch.nn.Linear(2, 2)\n"
    root = _write(
        tmp_path,
        {"README.md": readme, "lib/__init__.py": "", "lib/models/__init__.py": "", "lib/models/model_a.py": code},
    )
    entries = default_entries(root, _present(root))
    assert entries.how == {"lib/models/model_a.py": "README example under 'Usage': build_huge(pretrained=True)"}
    assert entries.scopes == {"lib/models/model_a.py": [("build_huge", 4, 5, frozenset({"pretrained"}))]}
