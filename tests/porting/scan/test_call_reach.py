"""CUDA calls below an entry point (``scan/call_reach.py``, ``scan/deep_reach.py``): a line that raises without CUDA
in a function the entry point imports and calls by name, or reaches down a chain of such calls outside any ``if``,
blocks, with the entry point, the calls and the line as its reason; guarded lines, calls that do not raise, uncalled
functions and the process-group setup stay warnings."""

from __future__ import annotations

from pathlib import Path

from tests.porting.scan.scan_kit import write_tree

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.call_reach import raising_lines

TRAIN = """\
import torch
import util.misc as misc
from engine import train_one_epoch


def main(args):
    misc.init_distributed_mode(args)
    misc.log_stats()
    for epoch in range(3):
        train_one_epoch(args)
    if torch.cuda.is_available():
        misc.gpu_report()


if __name__ == "__main__":
    main(None)
"""

ENGINE = """\
import torch


def train_one_epoch(args):
    for step in range(10):
        torch.cuda.synchronize()
        t = torch.zeros(1, device="cuda")
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
        dev = torch.device("cuda")
        try:
            torch.cuda.synchronize()
        except RuntimeError:
            pass

        def later():
            torch.cuda.synchronize()


def evaluate(args):
    torch.cuda.synchronize()
"""

MISC = """\
import os

import torch
import torch.distributed as dist


def init_distributed_mode(args):
    if "RANK" not in os.environ:
        return
    torch.cuda.set_device(args.gpu)
    dist.init_process_group(backend="nccl")


def log_stats():
    if not torch.cuda.is_available():
        return
    torch.cuda.synchronize()


def gpu_report():
    torch.cuda.synchronize()
"""


def _scan(tmp_path: Path) -> dict[tuple[str, int], tuple[str, str, str | None]]:
    (tmp_path / "util").mkdir()
    (tmp_path / "util" / "__init__.py").write_text("")
    (tmp_path / "util" / "misc.py").write_text(MISC)
    (tmp_path / "engine.py").write_text(ENGINE)
    (tmp_path / "train.py").write_text(TRAIN)
    log = scan_path(tmp_path, jobs=1)
    return {(f.file or "", f.line or 0): (f.rule, f.severity, f.reason) for f in log.findings}


def test_a_raising_call_in_a_function_the_entry_point_calls_blocks_with_its_reason(tmp_path: Path) -> None:
    by_line = _scan(tmp_path)
    for line in (6, 7):  # torch.cuda.synchronize(), torch.zeros(..., device="cuda")
        rule, severity, reason = by_line[("engine.py", line)]
        assert severity == "blocking", (line, rule)
        assert reason is not None
        assert "entry point train.py" in reason and "train_one_epoch()" in reason and "train.py:10" in reason
        assert f"engine.py:{line}" in reason


def test_guarded_lines_calls_that_return_and_uncalled_functions_stay_warnings(tmp_path: Path) -> None:
    by_line = _scan(tmp_path)
    assert by_line[("engine.py", 9)][1] != "blocking"  # under torch.cuda.is_available()
    assert by_line[("engine.py", 10)][1] == "warning"  # max_memory_allocated returns 0 without CUDA
    assert by_line[("engine.py", 11)][1] == "warning"  # torch.device("cuda") builds a device, raises nothing
    assert by_line[("engine.py", 13)][1] == "warning"  # in a try with a handler: a fallback
    assert by_line[("engine.py", 18)][1] == "info"  # a nested def nothing calls: not run (``unused-def``)
    assert by_line[("engine.py", 22)][1] == "warning"  # evaluate(): the entry point never calls it
    assert by_line[("util/misc.py", 10)][1] == "warning"  # process-group setup: launch_reach.py judges it
    assert by_line[("util/misc.py", 17)][1] == "warning"  # after `if not torch.cuda.is_available(): return`
    assert by_line[("util/misc.py", 21)][1] == "warning"  # gpu_report() is called only under a CUDA test


def test_raising_lines_reads_one_function_and_its_guards() -> None:
    assert raising_lines(ENGINE.encode(), "train_one_epoch") == {
        6: "torch.cuda.synchronize()",
        7: "torch.zeros(..., device='cuda')",
    }
    assert raising_lines(ENGINE.encode(), "evaluate") == {22: "torch.cuda.synchronize()"}
    assert raising_lines(MISC.encode(), "init_distributed_mode") == {}  # sets up the process group
    assert raising_lines(
        b"import torch as th\ndef f(x):\n    x.cuda()\n    x.to('cuda:1')\n    th.cuda.Stream()\n", "f"
    ) == {
        3: ".cuda()",
        4: ".to('cuda')",
        5: "th.cuda.Stream()",
    }
    assert raising_lines(b"def f(x):\n    x.to(device)\n    x.cuda\n", "f") == {}
    # a call over several lines (Social GAN's ``torch.zeros(\n ...\n).cuda()``): the ``.cuda`` line counts too
    assert raising_lines(b"import torch\ndef f(n):\n    return torch.zeros(\n        n\n    ).cuda()\n", "f") == {
        3: ".cuda()",
        5: ".cuda()",
    }


def test_a_submitit_request_in_a_function_the_entry_calls_blocks(tmp_path: Path) -> None:
    """The README's launcher calls ``submit_jobs`` of another module, which asks Slurm for GPUs through submitit:
    on the default path, as if the request were on the entry's own line. Near miss: a request in a function the
    entry never calls."""
    (tmp_path / "README.md").write_text("```\npython run.py --nodes 4\n```\n")
    (tmp_path / "run.py").write_text("from launch import submit_jobs\n\nsubmit_jobs(None)\n")
    (tmp_path / "launch.py").write_text(
        "import submitit\n\n"
        "def submit_jobs(task):\n"
        "    executor = submitit.AutoExecutor(folder='x')\n"
        "    executor.update_parameters(gpus_per_node=8, tasks_per_node=8)\n\n"
        "def unused(task):\n"
        "    executor = submitit.AutoExecutor(folder='x')\n"
        "    executor.update_parameters(gpus_per_node=8)\n"
    )
    by = {f.line: f for f in scan_path(tmp_path, jobs=1).findings if f.rule == "slurm-gpu-gres"}
    assert by[5].severity == "blocking" and "calls submit_jobs() of launch.py at run.py:3" in (by[5].reason or "")
    assert by[9].severity == "warning"


MOCO = {
    "README.md": "# MoCo\n\n```\npython main_moco.py -a resnet50 --lr 0.03\n```\n",
    # the export kept its monorepo prefix: the tree's own moco/builder.py, called through the whole dotted name
    "main_moco.py": "import torch\nimport deeplearning.cross_image_ssl.moco.builder\nfrom moco.denoise import Denoiser\n\n"
    "def main(args):\n    model = deeplearning.cross_image_ssl.moco.builder.MoCo(args)\n"
    "    if args.denoise > 0:\n        d = Denoiser()\n\n"
    "if __name__ == '__main__':\n    main(None)\n",
    "moco/__init__.py": "",
    "moco/builder.py": "import torch\n\n\nclass MoCo(torch.nn.Module):\n"
    "    def _shuffle(self, x):\n        idx = torch.randperm(x.shape[0]).cuda()\n        return x[idx]\n\n"
    "    def forward(self, q, k):\n        k = self._shuffle(k)\n"
    "        labels = torch.zeros(q.shape[0], dtype=torch.long).cuda()\n        return labels\n\n"
    "    def unused(self):\n        return torch.zeros(1).cuda()\n",
    "moco/denoise.py": "import torch\n\n\nclass Denoiser(torch.nn.Module):\n"
    "    def forward(self, x):\n        return torch.zeros(1).cuda()\n",
}


def test_a_class_the_entry_point_builds_blocks_on_what_its_forward_runs(tmp_path: Path) -> None:
    """MoCo: ``main_moco.py`` builds ``MoCo`` (imported as ``deeplearning.cross_image_ssl.moco.builder``, the tree's
    ``moco/builder.py`` under a monorepo prefix); its ``forward`` and the ``self._shuffle`` it calls run ``.cuda()``
    every step: blocking, with the class and method named. Near misses: a method forward never calls, and a class
    built only under an option (``if args.denoise > 0``) stay warnings."""
    found = scan_path(write_tree(tmp_path, MOCO), jobs=1).findings
    lines = {(f.file, f.line): f for f in found if f.rule == "cuda-call"}
    assert lines[("moco/builder.py", 6)].severity == "blocking"
    assert "runs .cuda() in MoCo._shuffle, which MoCo.forward or __init__ calls" in (
        lines[("moco/builder.py", 6)].reason or ""
    )
    assert lines[("moco/builder.py", 11)].severity == "blocking"
    assert "calls MoCo() of moco/builder.py at main_moco.py:6" in (lines[("moco/builder.py", 11)].reason or "")
    assert lines[("moco/builder.py", 15)].severity == "warning"
    assert lines[("moco/denoise.py", 6)].severity == "warning"


def test_a_cuda_call_after_a_cuda_test_in_an_and_or_in_a_conditionals_cuda_arm_is_guarded() -> None:
    """F5-TTS's ``load_checkpoint``: ``torch.float16 if "cuda" in device and
    torch.cuda.get_device_properties(device).major >= 7 else torch.float32`` runs the query only with a CUDA device,
    and so does ``torch.cuda.get_rng_state() if torch.cuda.is_available() else None``. Stay: the query before the
    test, or after a test that does not ask for CUDA."""
    src = b"""import torch
def load(device, flag):
    half = "cuda" in device and torch.cuda.get_device_properties(device).major >= 7
    state = torch.cuda.get_rng_state() if torch.cuda.is_available() else None
    early = torch.cuda.get_device_properties(0).major >= 7 and "cuda" in device
    late = flag and torch.cuda.get_device_name()
    return half, state, early, late
"""
    assert raising_lines(src, "load") == {
        5: "torch.cuda.get_device_properties()",
        6: "torch.cuda.get_device_name()",
    }


DEEP = {
    "README.md": "# Deep\n\n```\npython train.py --config base.yaml\n```\n",
    "train.py": "from trainer.run import main\n\nif __name__ == '__main__':\n    main()\n",
    "trainer/__init__.py": "",
    # entry -> main() -> fit() of the same file -> setup() of a sibling module imported relatively
    "trainer/run.py": "from .devices import setup, probe\n\n\ndef fit(cfg):\n    setup(cfg)\n"
    "    try:\n        probe()\n    except RuntimeError:\n        pass\n\n\ndef main():\n    fit(None)\n",
    "trainer/devices.py": "import torch\n\n\ndef setup(cfg):\n    torch.cuda.set_device(0)\n"
    "    if torch.cuda.is_available():\n        torch.cuda.synchronize()\n    deeper(cfg)\n\n\n"
    "def probe():\n    torch.cuda.synchronize()\n\n\n"
    "def deeper(cfg):\n    return torch.zeros(1).cuda()\n",
}


def test_a_raising_call_two_and_three_calls_deep_blocks_with_the_whole_chain(tmp_path: Path) -> None:
    """OpenNMT-py's shape: the entry point calls ``main`` of a package module, which calls ``fit`` of the same
    file, which calls ``setup`` of a module it imports relatively; ``setup`` runs ``torch.cuda.set_device`` with no
    guard (three calls from the entry point): blocking, the reason naming every call. Near misses: a CUDA-guarded
    line, a call inside a ``try`` with a handler (a fallback), and a function four calls deep (past ``MAX_DEPTH``)."""
    lines = {(f.file, f.line): f for f in scan_path(write_tree(tmp_path, DEEP), jobs=1).findings}
    hit = lines[("trainer/devices.py", 5)]
    assert hit.severity == "blocking"
    assert (
        "calls main() of trainer/run.py at train.py:4, which calls fit() of trainer/run.py at trainer/run.py:13, "
        "which calls setup() of trainer/devices.py at trainer/run.py:5, which runs torch.cuda.set_device()"
    ) in (hit.reason or "")
    assert lines[("trainer/devices.py", 7)].severity != "blocking"  # under torch.cuda.is_available()
    assert lines[("trainer/devices.py", 12)].severity != "blocking"  # probe() is called in a try with a handler
    assert lines[("trainer/devices.py", 16)].severity != "blocking"  # deeper(): four calls from the entry point


def test_a_weights_only_load_two_calls_deep_blocks_only_down_a_chain_outside_any_if(tmp_path: Path) -> None:
    """The entry point calls ``main`` of ``app/cli.py``, which calls ``restore`` of ``app/ckpt.py`` (relative
    import) outside any ``if``; ``restore`` loads a Lightning checkpoint with no guard: torch >= 2.6 raises there,
    so it blocks with the chain as its reason. Near miss: ``resume`` is called only under ``if cfg.resume:``, so
    its load stays "blocks when that checkpoint is loaded here"."""
    ckpt = (
        "import torch\nimport pytorch_lightning as ptl\n\n\nclass Module(ptl.LightningModule):\n    pass\n\n\n"
        "def restore(path):\n    state = torch.load(path, map_location='cpu')\n    return state['state_dict']\n\n\n"
        "def resume(path):\n    state = torch.load(path, map_location='cpu')\n    return state['state_dict']\n"
    )
    cli = (
        "from .ckpt import restore, resume\n\n\ndef main(cfg=None):\n    model = restore('best.ckpt')\n"
        "    if cfg.resume:\n        resume('last.ckpt')\n    return model\n"
    )
    tree = {
        "README.md": "```\npython predict.py\n```\n",
        "predict.py": "from app.cli import main\n\nmain()\n",
        "app/__init__.py": "",
        "app/cli.py": cli,
        "app/ckpt.py": ckpt,
    }
    found = scan_path(write_tree(tmp_path, tree), jobs=1).findings
    loads = {f.line: f for f in found if f.rule == "checkpoint-weights-only"}
    assert loads[10].severity == "blocking"
    assert "calls main() of app/cli.py at predict.py:3, which calls restore() of app/ckpt.py at app/cli.py:5" in (
        loads[10].reason or ""
    )
    assert loads[15].severity == "warning"


def test_a_chain_starts_at_the_entry_points_call_outside_any_if(tmp_path: Path) -> None:
    """The entry point calls ``go()`` first under an option (``run.py:5``), then unconditionally (``run.py:6``):
    the chain down to ``setup()``'s ``torch.cuda.set_device`` starts at the unconditional call and blocks."""
    tree = {
        "README.md": "```\npython run.py\n```\n",
        "run.py": "import sys\nfrom lib.a import go\n\nif len(sys.argv) > 2:\n    go()\ngo()\n",
        "lib/__init__.py": "",
        "lib/a.py": "from .b import setup\n\n\ndef go():\n    setup()\n",
        "lib/b.py": "import torch\n\n\ndef setup():\n    torch.cuda.set_device(0)\n",
    }
    hit = next(f for f in scan_path(write_tree(tmp_path, tree), jobs=1).findings if f.file == "lib/b.py")
    assert hit.severity == "blocking"
    assert "calls go() of lib/a.py at run.py:6, which calls setup() of lib/b.py at lib/a.py:5" in (hit.reason or "")


TRAINER = {
    "README.md": "# Depth\n\n```\npython train.py --model_name mono\n```\n",
    "train.py": "from trainer import Trainer\n\n"
    "if __name__ == '__main__':\n    trainer = Trainer(None)\n    trainer.train()\n",
    "trainer.py": "import torch\n\n\nclass Trainer:\n"
    "    def __init__(self, opts):\n        self.opts = opts\n\n"
    "    def train(self):\n        for _ in range(2):\n            self.run_epoch()\n\n"
    "    def run_epoch(self):\n        if self.opts.predictive_mask:\n            torch.ones(2).cuda()\n"
    "        self.val()\n\n"
    "    def val(self):\n        return torch.zeros(1).cuda()\n\n"
    "    def export(self):\n        return torch.ones(1).cuda()\n",
}


def test_the_methods_an_entry_point_calls_on_the_instance_it_builds_run_with_their_helpers(tmp_path: Path) -> None:
    """monodepth2's ``trainer = Trainer(opts); trainer.train()``: ``train`` runs ``run_epoch``, which runs ``val``, so
    ``val``'s ``.cuda()`` blocks, the method named in the reason. Near misses: a line under a run option in such a
    method (``if self.opts.predictive_mask:``), and a method nothing reached calls (``export``)."""
    found = scan_path(write_tree(tmp_path, TRAINER), jobs=1).findings
    lines = {f.line: f for f in found if f.rule == "cuda-call" and f.file == "trainer.py"}
    assert lines[18].severity == "blocking"
    assert "in Trainer.val, which the entry point's instance runs" in (lines[18].reason or "")
    assert lines[14].severity == "warning"
    assert lines[21].severity == "warning"
