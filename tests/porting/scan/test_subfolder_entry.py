"""A README that sends the user to a sub-folder's document for the run (LoRA's "follow the instructions in
`examples/NLG/`", EfficientViT's linked ``applications/dc_ae/README.md``): that document's commands are the default
path, run in its folder, even under ``examples/`` (issue 27, held-out microsoft/LoRA and mit-han-lab/efficientvit)."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import findings_in

from accelpilot.porting.findings import promoted_folders
from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.entry import default_entries

ROOT_README = """\
# LoRA

```python
import loralib as lora
layer = lora.Linear(4, 4, r=2)
```

Please follow the instructions in `examples/NLU/` to reproduce the GLUE results.
Please follow the instructions in `examples/NLG/` to reproduce our result.
"""

NLG_README = """\
## Steps

```
pip install -r requirement.txt
python -m torch.distributed.launch --nproc_per_node=1 src/gpt2_ft.py --platform local
```
"""

ENTRY = """\
import torch
from gpu import add_gpu_params, parse_gpu
from model import GPT2

if __name__ == "__main__":
    args = parse()
    parse_gpu(args)
    if args.fp16:
        try:
            from apex import amp
        except Exception:
            amp = None
    net = GPT2().cuda()
"""

GPU = """\
import torch
import torch.distributed as dist


def add_gpu_params(parser):
    parser.add_argument("--local_rank", default=0, type=int)


def parse_gpu(args):
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(args.local_rank)
"""


def _tree(tmp: Path, own_command: bool = False) -> Path:
    (tmp / "README.md").write_text(ROOT_README + ("\n```\npython train.py\n```\n" if own_command else ""))
    (tmp / "train.py").write_text("import torch\nx = torch.zeros(2).cuda()\n")
    (tmp / "loralib").mkdir()
    (tmp / "loralib" / "__init__.py").write_text("import torch\n")
    nlg = tmp / "examples" / "NLG"
    (nlg / "src").mkdir(parents=True)
    (nlg / "README.md").write_text(NLG_README)
    (nlg / "requirement.txt").write_text("torch==1.7.1\n")
    (nlg / "src" / "gpt2_ft.py").write_text(ENTRY)
    (nlg / "src" / "gpu.py").write_text(GPU)
    (nlg / "src" / "model.py").write_text("import torch\n\n\nclass GPT2(torch.nn.Module):\n    pass\n")
    nlu = tmp / "examples" / "NLU"
    nlu.mkdir(parents=True)
    (nlu / "README.md").write_text("Run `bash roberta.sh`.\n")
    (nlu / "roberta.sh").write_text("python -m torch.distributed.launch run_glue.py\n")
    (nlu / "run_glue.py").write_text("import torch\nx = torch.zeros(2).cuda()\n")
    return tmp


def _present(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_the_folder_document_with_a_command_gives_the_default_path(tmp_path: Path) -> None:
    """No command in the root README: the first sub-folder document that has one (``examples/NLG/README.md``; the
    NLU folder's document runs nothing itself) gives the entry points, resolved in its folder. Near miss: with a
    command of its own, the root README's entry points stand and the examples stay examples."""
    root = _tree(tmp_path)
    how = default_entries(root, _present(root)).how
    assert list(how) == ["examples/NLG/src/gpt2_ft.py"]
    assert how["examples/NLG/src/gpt2_ft.py"].startswith("examples/NLG/README.md: `python -m torch.distributed")
    assert promoted_folders(how) == {"examples/NLG/"}
    other = tmp_path / "own"
    other.mkdir()
    assert list(default_entries(_tree(other, own_command=True), _present(other)).how) == ["train.py"]


def test_the_promoted_folder_is_porting_work_and_a_sibling_example_stays_apart(tmp_path: Path) -> None:
    """``.cuda()`` in the NLG entry blocks (the run); the NLU example's identical line stays ``example``."""
    root = _tree(tmp_path)
    fs = {(f.file, f.rule, f.line): f for f in scan_path(root, jobs=1).findings}
    run = fs[("examples/NLG/src/gpt2_ft.py", "cuda-call", 13)]
    assert (run.context, run.severity) == (None, "blocking")
    assert fs[("examples/NLU/run_glue.py", "cuda-call", 2)].context == "example"


def test_a_guard_inside_the_entry_points_main_block_still_holds(tmp_path: Path) -> None:
    """``if args.fp16: try: from apex import amp / except Exception`` in the run's ``__main__`` block: an optional
    import, not a runtime the path stands on (it was ``main-block``, then nothing, after the block became the run)."""
    root = _tree(tmp_path)
    lines = findings_in(root, "examples/NLG/src/gpt2_ft.py")
    assert ("apex", 10, "optional") in lines
    apex = [i for i in scan_path(root, jobs=1).items if i.rule == "apex"]
    assert [i.severity for i in apex] == ["warning"]


def test_a_module_beside_the_entry_script_is_reached_by_its_bare_name(tmp_path: Path) -> None:
    """``from gpu import parse_gpu`` beside the entry: gpu.py's ``torch.cuda.set_device`` and nccl, called from the
    run, block; its ``--local_rank``-only parser blocks the ``torch.distributed.launch`` command; the README's
    ``requirement.txt`` (singular) pins torch and blocks the install."""
    root = _tree(tmp_path)
    items = {i.rule: i for i in scan_path(root, jobs=1).items}
    assert items["torch-cuda-api"].severity == "blocking"
    assert items["launcher-local-rank"].severity == "blocking"
    assert [ln.file for ln in items["launcher-local-rank"].lines] == ["examples/NLG/src/gpu.py"]
    assert items["install-pin"].severity == "blocking"
    assert items["install-pin"].lines[0].file == "examples/NLG/requirement.txt"


def test_a_torchrun_module_command_names_its_module(tmp_path: Path) -> None:
    """``torchrun --nnodes=1 --nproc_per_node=8 -m applications.dc_ae.train`` runs ``applications/dc_ae/train.py``;
    only the first linked application document with a command is the default (the second is an alternative)."""
    (tmp_path / "README.md").write_text(
        "# Apps\n\n[readme](applications/dc_ae/README.md)\n[sam](applications/sam/README.md)\n"
    )
    for app, cmd in (
        ("dc_ae", "torchrun --nnodes=1 --nproc_per_node=8 -m applications.dc_ae.train x=1"),
        ("sam", "python applications/sam/train_sam.py"),
    ):
        folder = tmp_path / "applications" / app
        folder.mkdir(parents=True)
        (folder / "README.md").write_text(f"```bash\n{cmd}\n```\n")
    (tmp_path / "applications" / "dc_ae" / "train.py").write_text("import torch\n")
    (tmp_path / "applications" / "sam" / "train_sam.py").write_text("import torch\n")
    assert list(default_entries(tmp_path, _present(tmp_path)).how) == ["applications/dc_ae/train.py"]


def test_commands_after_cd_run_in_that_folder_and_other_generations_are_unreached(tmp_path: Path) -> None:
    """RWKV-LM's README: ``cd RWKV-v7/train_temp/`` then ``sh ./demo-training-run.sh`` (which runs ``python
    train.py``): the entry point is ``RWKV-v7/train_temp/train.py``, and the CUDA sources of ``RWKV-v4/`` (a tree of
    Python where no entry point lives) are listed apart, not blocking. Near miss: the sources beside the entry stay."""
    (tmp_path / "README.md").write_text("```\ncd RWKV-v7/train_temp/\nsh ./demo-training-run.sh\n```\n")
    run = tmp_path / "RWKV-v7" / "train_temp"
    (run / "cuda").mkdir(parents=True)
    (run / "demo-training-run.sh").write_text("python train.py --accelerator gpu\n")
    (run / "train.py").write_text("import torch\n")
    (run / "cuda" / "wkv7.cu").write_text("__global__ void k() {}\n")
    old = tmp_path / "RWKV-v4"
    (old / "cuda").mkdir(parents=True)
    (old / "train.py").write_text("import torch\n")
    (old / "cuda" / "wkv.cu").write_text("__global__ void k() {}\n")
    assert list(default_entries(tmp_path, _present(tmp_path)).how) == ["RWKV-v7/train_temp/train.py"]
    fs = {f.file: f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "cuda-source-file"}
    assert (fs["RWKV-v4/cuda/wkv.cu"].context, fs["RWKV-v4/cuda/wkv.cu"].porting) == ("unreached-module", False)
    assert fs["RWKV-v7/train_temp/cuda/wkv7.cu"].porting
