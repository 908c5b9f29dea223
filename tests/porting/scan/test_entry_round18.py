"""Entry points read on round 18's repositories: a ``setup.py`` build command is an install step (SAM 2), a README
example with ``<placeholders>`` still names what it calls (SAM 2), ``python train.py`` finds the one script of that
name in the installed package (pygcn), and a line under ``if args.cuda:`` bound to ``is_available()`` falls back."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.entry import default_entries


def _write(root: Path, files: dict[str, str]) -> set[str]:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return set(files)


BUILD = 'def build_model(cfg, device="cuda"):\n    return Model(cfg).to(device)\n\n\nclass Model:\n    pass\n'
EXAMPLE = (
    "Install with `python setup.py build_ext --inplace`.\n\n## Use\n\n```python\n"
    "from pkg.build import build_model\n\nmodel = build_model('cfg.yaml')\nmodel.predict(<your_image>)\n```\n"
)


def test_a_setup_py_build_is_no_entry_and_an_example_with_placeholders_is_the_default_path(tmp_path: Path) -> None:
    """SAM 2: the README's ``python setup.py build_ext --inplace`` builds; its Python example (with
    ``<your_image>`` to fill in) calls ``build_sam2(cfg, ckpt)``, whose ``device="cuda"`` default then blocks.
    Near miss: a README command (``python run.py``) makes its script the entry, and the example is not read."""
    present = _write(tmp_path, {"README.md": EXAMPLE, "setup.py": "", "pkg/__init__.py": "", "pkg/build.py": BUILD})
    entries = default_entries(tmp_path, present)
    assert dict(entries.how) == {"pkg/build.py": "README example under 'Use': build_model(...)"}
    [line] = [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "cuda-device-literal"]
    assert line.severity == "blocking" and "README example" in (line.reason or "")
    (tmp_path / "README.md").write_text(EXAMPLE.replace("<your_image>", "img") + "\nRun `python run.py`.\n")
    (tmp_path / "run.py").write_text("print('hi')\n")
    assert set(default_entries(tmp_path, present | {"run.py"}).how) == {"run.py"}


TRAIN = """\
import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument('--no-cuda', action='store_true')
args = parser.parse_args()
args.cuda = not args.no_cuda and torch.cuda.is_available()
model = torch.nn.Linear(2, 2)
if args.cuda:
    model.cuda()
x = torch.zeros(2).cuda()
"""


def test_a_bare_script_name_finds_the_installed_packages_script_and_a_probed_flag_falls_back(tmp_path: Path) -> None:
    """pygcn: ``python setup.py install`` then ``python train.py``, the script in ``pygcn/``. Its ``model.cuda()``
    under ``if args.cuda:`` (bound to ``torch.cuda.is_available()``) is skipped off CUDA: a performance item. Near
    miss: the unguarded ``.cuda()`` (line 11) blocks; two scripts of that name one folder down are no entry."""
    present = _write(
        tmp_path,
        {
            "README.md": "```python setup.py install```\n\n```python train.py```\n",
            "setup.py": "",
            "pkg/train.py": TRAIN,
        },
    )
    assert set(default_entries(tmp_path, present).how) == {"pkg/train.py"}
    found = {(f.line, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.rule == "cuda-call"}
    assert found == {(10, "warning"), (11, "blocking")}
    present |= _write(tmp_path, {"other/train.py": TRAIN})
    assert default_entries(tmp_path, present).how == {}


FOLD = """\
import argparse
import torch


def enable_cpu_offloading(model):
    torch.distributed.init_process_group(backend="nccl", world_size=1, rank=0)
    return model


def init_with_offloading(model):
    return enable_cpu_offloading(model)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu-offload", action="store_true")
    args = parser.parse_args()
    model = torch.nn.Linear(2, 2)
    if args.cpu_offload:
        model = init_with_offloading(model)
    else:
        model.cuda()
"""


def test_a_console_script_the_readme_runs_is_an_entry_point_and_a_helper_under_an_unset_option_is_off_path(
    tmp_path: Path,
) -> None:
    """esm's README runs ``esm-fold`` (its pasted ``usage:`` line, the bracketed options not passed), which
    setup.py's console_scripts map to ``esm.scripts.fold`` (the file ``scripts/fold.py``): its ``model.cuda()``
    blocks. The NCCL process group sits in a helper only ``--cpu-offload`` reaches (two calls up): "blocks when".
    whisper's pyproject ``scripts.whisper = "whisper.transcribe:cli"`` maps the same way."""
    present = _write(
        tmp_path,
        {
            "README.md": "```\nusage: esm-fold [-h] -i FASTA -o PDB [--cpu-offload]\n```\n",
            "setup.py": 'setup(entry_points={"console_scripts": ["esm-fold=esm.scripts.fold:main"]})\n',
            "scripts/fold.py": FOLD,
        },
    )
    assert dict(default_entries(tmp_path, present).how) == {"scripts/fold.py": "README: `esm-fold -i FASTA -o PDB`"}
    found = {
        (f.rule, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.rule in ("cuda-call", "nccl-backend")
    }
    assert found == {("cuda-call", "blocking"), ("nccl-backend", "warning")}
    nccl = next(f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "nccl-backend")
    assert "--cpu-offload is set" in (nccl.reason or "")
    (tmp_path / "pyproject.toml").write_text('[project]\nscripts.whisper = "whisper.transcribe:cli"\n')
    (tmp_path / "whisper").mkdir()
    (tmp_path / "whisper" / "transcribe.py").write_text("def cli():\n    pass\n")
    (tmp_path / "README.md").write_text("    whisper audio.flac --model turbo\n")
    how = default_entries(tmp_path, present | {"pyproject.toml", "whisper/transcribe.py"}).how
    assert dict(how) == {"whisper/transcribe.py": "README: `whisper audio.flac --model turbo`"}


def test_a_readme_that_only_links_notebooks_runs_the_first_one(tmp_path: Path) -> None:
    """Point-E's README: install, then "see the following notebooks": the first linked notebook is the default
    path (its cells are porting work, not an example), the second stays an example. Near miss: a README with a
    command does not look at its notebooks."""
    cell = '{"cell_type": "code", "metadata": {}, "outputs": [], "source": ["import torch\\n", "x = torch.zeros(1).cuda()\\n"]}'
    nb = '{"cells": [' + cell + '], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    present = _write(
        tmp_path,
        {
            "README.md": "Install with `pip install -e .`.\n\n* [first](pkg/examples/first.ipynb)\n"
            "* [second](pkg/examples/second.ipynb)\n",
            "pkg/examples/first.ipynb": nb,
            "pkg/examples/second.ipynb": nb,
        },
    )
    assert set(default_entries(tmp_path, present).how) == {"pkg/examples/first.ipynb"}
    found = {f.file: (f.context, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.rule == "cuda-call"}
    assert found == {"pkg/examples/first.ipynb": (None, "blocking"), "pkg/examples/second.ipynb": ("example", "info")}
    (tmp_path / "README.md").write_text("Run `python run.py`.\n\n* [first](pkg/examples/first.ipynb)\n")
    (tmp_path / "run.py").write_text("print(1)\n")
    assert set(default_entries(tmp_path, present | {"run.py"}).how) == {"run.py"}


def test_a_cpu_if_not_probed_else_cuda_choice_falls_back(tmp_path: Path) -> None:
    """GLIDE's notebook: ``has_cuda = th.cuda.is_available()`` then ``th.device('cpu' if not has_cuda else
    'cuda')``: the CPU arm runs off CUDA, a performance item. Near miss: a name bound from a flag blocks."""
    src = "import torch as th\n{bind}\ndevice = th.device('cpu' if not has_cuda else 'cuda')\n"
    (tmp_path / "README.md").write_text("Run `python run.py`.\n")
    (tmp_path / "run.py").write_text(src.format(bind="has_cuda = th.cuda.is_available()"))
    [line] = [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "cuda-device-literal"]
    assert line.severity == "warning" and (line.reason or "").startswith("performance item")
    (tmp_path / "run.py").write_text(src.format(bind="import sys\nhas_cuda = '--gpu' in sys.argv"))
    [line] = [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "cuda-device-literal"]
    assert line.severity == "blocking"
