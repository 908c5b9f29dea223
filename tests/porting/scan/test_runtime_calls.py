"""accelerate's ``Accelerator`` as the training runtime, its fp16 mixed precision, and a submitit Slurm GPU request
read from Python keywords (``scan/runtime_calls.py``); each beside its near miss. Small synthetic sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.python import scan_python

TRAINER = """\
from accelerate import Accelerator


class Trainer:
    def __init__(self, model, *, amp=False, mixed_precision_type="fp16", precision="bf16"):
        self.accelerator = Accelerator(
            split_batches=True,
            mixed_precision=mixed_precision_type if amp else "no",
        )
"""


def _lines(source: str, rule: str) -> dict[int, str]:
    return {ln or 0: msg for r, ln, msg, *_ in scan_python(source) if r == rule}


def test_an_accelerator_is_the_training_runtime_and_a_flagged_fp16_default_names_its_flag() -> None:
    assert _lines(TRAINER, "hf-trainer") == {6: "Accelerator(...)"}
    assert _lines(TRAINER, "amp-cuda") == {
        8: "mixed_precision=mixed_precision_type (default 'fp16') when `amp` is true (CUDA AMP with a GradScaler)"
    }


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"fp16"', "mixed_precision='fp16' (CUDA AMP with a GradScaler)"),
        ("mixed_precision_type", "mixed_precision=mixed_precision_type (default 'fp16') (CUDA AMP with a GradScaler)"),
        ('"bf16"', None),  # Trainium's type: no scaler, nothing to port
        ("precision", None),  # a parameter whose default is bf16
        ("args.mixed_precision", None),  # a value the scan cannot tell
        ('"fp16" if amp else "fp16"', None),  # fp16 either way is no flag: not read as one
    ],
)
def test_fp16_is_read_from_a_literal_or_a_parameters_default(value: str, message: str | None) -> None:
    source = TRAINER.replace('mixed_precision_type if amp else "no"', value)
    assert _lines(source, "amp-cuda").get(8) == message


def test_an_accelerator_imported_as_a_module_attribute_counts_and_an_own_class_of_that_name_does_not() -> None:
    assert _lines("import accelerate as acc\nacc.Accelerator(mixed_precision='fp16')\n", "hf-trainer") == {
        2: "Accelerator(...)"
    }
    own = "from mylib import Accelerator  # see accelerate docs\nAccelerator(mixed_precision='fp16')\n"
    assert _lines(own, "hf-trainer") == {} and _lines(own, "amp-cuda") == {}


LAUNCHER = """\
import submitit


def main(args):
    executor = submitit.AutoExecutor(folder=args.job_dir)
    kwargs = {}
    if args.use_volta32:
        kwargs['slurm_constraint'] = 'volta32gb'
    executor.update_parameters(
        mem_gb=40 * args.ngpus,
        gpus_per_node=args.ngpus,
        tasks_per_node=args.ngpus,
        **kwargs
    )
    executor.update_parameters(name="job")
"""


def test_a_submitit_request_names_the_gpus_per_node_and_the_gpu_constraint() -> None:
    found = [(ln, msg, sub) for r, ln, msg, _, sub, _ in scan_python(LAUNCHER) if r == "slurm-gpu-gres"]
    assert found == [
        (
            11,
            "submitit Slurm request gpus_per_node=args.ngpus, tasks_per_node=args.ngpus, slurm_constraint='volta32gb'",
            "submitit Slurm GPU request",
        ),
        (8, "submitit Slurm constraint 'volta32gb' (GPU hardware)", "submitit Slurm GPU request"),
    ]


@pytest.mark.parametrize(
    "source",
    [
        LAUNCHER.replace("import submitit\n", "import mysched as submitit_like\n").replace("submitit.", "x."),
        LAUNCHER.replace("gpus_per_node=args.ngpus,", "cpus_per_task=10,"),  # a CPU job: no GPU asked
    ],
)
def test_update_parameters_without_submitit_or_without_a_gpu_keyword_is_no_request(source: str) -> None:
    assert _lines(source, "slurm-gpu-gres") == {}


def test_a_library_accelerator_is_a_warning_and_the_same_on_a_readme_entry_point_blocks(tmp_path: Path) -> None:
    """Off the default path the Accelerator is a warning (the rule's severity); on a README command's script it is
    a validation item while the requirements allow accelerate >= 1.13 (the first release that places on the neuron
    device), and stops the run on a stack pinned below it: blocking, with the pin in the reason; its fp16 blocks."""
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "loop.py").write_text("from accelerate import Accelerator\nacc = Accelerator(mixed_precision='fp16')\n")
    log = scan_path(lib, jobs=1)
    assert {(f.rule, f.severity) for f in log.findings} == {("hf-trainer", "warning"), ("amp-cuda", "warning")}
    app = tmp_path / "app"
    app.mkdir()
    (app / "train.py").write_text((lib / "loop.py").read_text())
    (app / "README.md").write_text("Run `accelerate launch train.py`.\n")
    # the README runs something, so the repository also gets its parity-validation item (test_validation.py) and,
    # with no requirements file, its undeclared-dependencies item (test_declared_deps.py)
    apart = ("parity-validation", "undeclared-dependencies")
    by_rule = {f.rule: f for f in scan_path(app, jobs=1).findings if f.rule not in apart}
    assert {r: f.severity for r, f in by_rule.items()} == {"hf-trainer": "warning", "amp-cuda": "blocking"}
    assert (by_rule["hf-trainer"].reason or "").startswith("validation item")
    (app / "requirements.txt").write_text("accelerate==0.21.0\n")
    by_rule = {f.rule: f for f in scan_path(app, jobs=1).findings if f.rule != "parity-validation"}
    assert {r: f.severity for r, f in by_rule.items()} == {"hf-trainer": "blocking", "amp-cuda": "blocking"}
    reason = by_rule["hf-trainer"].reason or ""
    assert "before accelerate 1.13 picks CUDA or the CPU" in reason and "accelerate==0.21.0" in reason
    assert "accelerate refuses on a device that is not a GPU" in (by_rule["amp-cuda"].reason or "")


def test_nvidia_smi_run_as_an_argument_list_on_an_entry_point_blocks_and_through_a_shell_does_not(
    tmp_path: Path,
) -> None:
    """``subprocess.run(["nvidia-smi"])`` raises FileNotFoundError where the executable is missing (modded-nanogpt
    logs it at start-up): blocking on a README command's script. ``os.popen("nvidia-smi -L")`` only prints "not
    found" through the shell and returns (YOLOX): a warning, as is the same call in a module no command runs."""
    (tmp_path / "train.py").write_text(
        "import subprocess\n\ndef smi():\n"
        '    return subprocess.run(["nvidia-smi"], stdout=subprocess.PIPE, text=True).stdout\n\nprint(smi())\n'
    )
    (tmp_path / "count.py").write_text('import os\nn = len(os.popen("nvidia-smi -L").read().split())\n')
    (tmp_path / "README.md").write_text("Run `python train.py` or `python count.py`.\n")
    (tmp_path / "lib.py").write_text('import subprocess\nsubprocess.check_output(["nvidia-smi", "-L"])\n')
    lines = {(f.file, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.rule == "nvidia-smi"}
    assert lines == {("train.py", "blocking"), ("count.py", "warning"), ("lib.py", "warning")}
    blocking = next(f for f in scan_path(tmp_path, jobs=1).findings if f.severity == "blocking")
    assert "FileNotFoundError" in (blocking.reason or "") and "train.py:4" in (blocking.reason or "")
