"""How a repository's run is found when it is not a ``python x.py`` line (RAFT, round 17): a shell script a README
block runs at the root, and the folders an entry script puts on ``sys.path``."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.entry import cd_commands
from accelpilot.porting.scan.families import Entries, _module_names, imports_of

RAFT_README = """\
# RAFT

## Demos
```Shell
python demo.py --model=models/raft-things.pth
```

## Evaluation
```Shell
./evaluate_all.sh
```

## Training
We used the following training schedule in our paper (2 GPUs).
```Shell
./train_standard.sh
```
"""


def test_a_shell_script_a_readme_block_runs_at_the_root_is_read_unless_it_evaluates() -> None:
    present = {"demo.py", "train.py", "train_standard.sh", "evaluate_all.sh"}
    entries, scripts = cd_commands(RAFT_README, present)
    assert scripts == ["train_standard.sh"]  # the evaluation section's script is not a default path
    assert entries == {}  # a root ``python x.py`` line is the plain README reader's (``readme_entry_points``)
    # prose that names a script outside a code block is not a command
    assert cd_commands("# T\n\nRun ./train_standard.sh to train.\n", present) == ({}, [])


def test_a_folder_an_entry_script_puts_on_sys_path_resolves_bare_imports_from_every_module() -> None:
    rels = ["train.py", "core/raft.py", "core/corr.py", "core/utils/utils.py"]
    entries = Entries({"train.py": "README"})
    entries.path_dirs = frozenset({"core"})
    mods = _module_names(rels, entries)
    assert imports_of("train.py", b"import sys\nsys.path.append('core')\nfrom raft import RAFT\n", mods) == {
        "core/raft.py"
    }
    # core/corr.py's ``from utils.utils import ...`` is found through the same search path
    assert imports_of("core/corr.py", b"from utils.utils import bilinear_sampler\n", mods) == {"core/utils/utils.py"}
    assert imports_of("core/corr.py", b"from utils.utils import bilinear_sampler\n", _module_names(rels)) == set()


RAFT_TREE = {
    "README.md": "# RAFT\n\n## Training\n```Shell\n./train_standard.sh\n```\n",
    "train_standard.sh": "#!/bin/bash\npython -u train.py --name raft-chairs --stage chairs\n",
    "train.py": "import sys\nsys.path.append('core')\nimport torch\nfrom raft import RAFT\n\n"
    "def main():\n    model = RAFT()\n    model.cuda()\n\nif __name__ == '__main__':\n    main()\n",
    "core/raft.py": "import torch\nfrom corr import CorrBlock\n\nclass RAFT(torch.nn.Module):\n    pass\n",
    "core/corr.py": "import torch\n\ntry:\n    import alt_cuda_corr\nexcept:\n    pass\n\n"
    "class CorrBlock:\n    def __call__(self, x):\n        return alt_cuda_corr.forward(x)\n\n"
    "def coords(n):\n    return torch.arange(n).cuda()\n",
    "alt_cuda_corr/setup.py": "from setuptools import setup\n"
    "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
    "setup(name='correlation', ext_modules=[CUDAExtension('alt_cuda_corr', "
    "sources=['correlation.cpp', 'correlation_kernel.cu'])], cmdclass={'build_ext': BuildExtension})\n",
    "alt_cuda_corr/correlation.cpp": "#include <torch/extension.h>\n",
    "alt_cuda_corr/correlation_kernel.cu": "__global__ void corr_forward_kernel() {}\n",
}


def _raft(root: Path) -> Path:
    for rel, text in RAFT_TREE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_raft_shaped_tree_reaches_core_through_its_shell_script_and_sys_path(tmp_path: Path) -> None:
    log = scan_path(_raft(tmp_path), jobs=1)
    train = {(f.line, f.severity) for f in log.findings if f.file == "train.py" and f.rule == "cuda-call"}
    assert train == {(8, "blocking")}  # train.py is an entry point through ./train_standard.sh
    corr = [f for f in log.findings if f.file == "core/corr.py" and f.line == 13]
    assert corr and all(f.context != "unreached-module" for f in corr)  # reached through sys.path.append('core')


def test_an_extension_every_import_of_which_is_guarded_is_not_blocking(tmp_path: Path) -> None:
    """RAFT's alt_cuda_corr: ``try: import alt_cuda_corr`` / ``except: pass``: the code runs unbuilt (the
    all-pairs correlation), so the CUDA sources are a warning that says why. Near miss: an unguarded import in an
    entry script keeps them blocking."""
    log = scan_path(_raft(tmp_path), jobs=1)
    sources = [f for f in log.findings if f.rule == "cuda-source-file"]
    assert sources and {f.severity for f in sources} == {"warning"}
    assert all("every import of the extension is guarded (core/corr.py:4)" in (f.reason or "") for f in sources)
    (tmp_path / "train.py").write_text(
        RAFT_TREE["train.py"].replace("import torch\n", "import torch\nimport alt_cuda_corr\n", 1)
    )
    sources = [f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "cuda-source-file"]
    assert "blocking" in {f.severity for f in sources}


def test_an_import_under_a_monorepo_prefix_names_the_trees_module_and_a_libraries_does_not() -> None:
    """MoCo's ``import deeplearning.cross_image_ssl.moco.builder`` is the tree's ``moco/builder.py`` (the export
    kept its monorepo path). Near miss: ``transformers.models.llama.modeling_llama`` beside a vendored
    ``llama/modeling_llama.py`` is the library's module, not the tree's."""
    mods = _module_names(["main_moco.py", "moco/__init__.py", "moco/builder.py", "llama/modeling_llama.py"])
    assert imports_of("main_moco.py", b"import deeplearning.cross_image_ssl.moco.builder\n", mods) == {
        "moco/builder.py"
    }
    assert imports_of("main_moco.py", b"import transformers.models.llama.modeling_llama\n", mods) == set()


def test_an_entry_points_import_under_a_missing_prefix_blocks(tmp_path: Path) -> None:
    """MoCo's ``main_moco.py`` imports ``deeplearning.cross_image_ssl.moco.builder``: ModuleNotFoundError on any
    host, blocking at the import. Near misses: the same module imported by its path here, and a library's
    ``transformers.models.llama.modeling_llama``."""
    (tmp_path / "README.md").write_text("# MoCo\n\n```\npython main_moco.py -a resnet50\n```\n")
    (tmp_path / "moco").mkdir()
    (tmp_path / "moco/__init__.py").write_text("")
    (tmp_path / "moco/builder.py").write_text("import torch\n")
    (tmp_path / "llama").mkdir()
    (tmp_path / "llama/modeling_llama.py").write_text("import torch\n")
    (tmp_path / "main_moco.py").write_text(
        "import torch\nimport deeplearning.cross_image_ssl.moco.builder\nimport moco.builder\n"
        "from transformers.models.llama.modeling_llama import LlamaModel\n"
    )
    found = [(f.file, f.line, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.rule == "prefixed-import"]
    assert found == [("main_moco.py", 2, "blocking")]
