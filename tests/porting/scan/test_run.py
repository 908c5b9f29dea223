"""Scanning a whole tree: exact findings per rule over the fixture repository, parallel runs, bad input and safety."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from accelpilot.errors import InputFileError
from accelpilot.porting.log import PortabilityLog
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan import scan_file, scan_path

REPO = Path(__file__).parent.parent / "fixtures" / "repo"

# Every finding the fixture repository must produce: (line, rule) per file; line 0 = whole file.
EXPECTED: dict[str, list[tuple[int, str]]] = {
    "Dockerfile": [
        (2, "cuda-base-image"),
        (3, "flash-attn"),
        (4, "nccl-backend"),
        (7, "nvidia-smi"),
    ],
    "csrc/kernel.cu": [
        (0, "cuda-source-file"),
    ],
    "data.py": [
        (2, "aws-storage-sdk"),
        (5, "object-store-uri"),
        (6, "object-store-uri"),
        (7, "hub-download"),
        (8, "local-nvme-path"),
        (9, "cloudwatch"),
    ],
    "deploy/Dockerfile.neuron": [
        (1, "neuron-base-image"),
        (2, "neuron-package-pin"),
    ],
    "deploy/k8s.yaml": [
        (8, "cuda-base-image"),
        (11, "k8s-gpu-resource"),
        (13, "dcgm"),
        (14, "cuda-base-image"),
        (14, "dcgm"),
    ],
    "deploy/neuron-job.json": [
        (1, "k8s-neuron-resource"),
        (1, "neuron-tools"),
    ],
    "job.slurm": [
        (2, "slurm-gpu-gres"),
        (5, "nccl-backend"),
        (6, "nvidia-smi"),
        (7, "local-nvme-path"),
        (7, "object-store-uri"),
    ],
    "kernels.py": [
        (2, "triton-kernel"),
        (3, "triton-kernel"),
        (4, "flash-attn"),
        (5, "xformers"),
        (6, "apex"),
        (7, "bitsandbytes"),
        (8, "deepspeed"),
        (9, "cupy"),
        (10, "numba-cuda"),
        (11, "cpp-extension-cuda"),
        (12, "cuda-only-library"),
        (15, "triton-kernel"),
        (20, "numba-cuda"),
        (25, "cpp-extension-cuda"),
        (26, "flash-attn"),
    ],
    "model.py": [
        (9, "data-dependent-op"),
        (10, "data-dependent-op"),
        (11, "boolean-mask-index"),
        (12, "boolean-mask-index"),
        (13, "item-in-forward"),
        (14, "tensor-control-flow"),
        (16, "float64-dtype"),
        (17, "float64-dtype"),
        (18, "complex-dtype"),
        (19, "int64-index"),
        (20, "data-dependent-op"),
    ],
    "moe.py": [
        (7, "moe-experts-dispatch"),
        (10, "data-dependent-op"),  # the eager reference body: reference-fallback, not porting work
    ],
    "neuron_side.py": [
        (3, "neuron-api"),
        (4, "xla-api"),
        (5, "nki-kernel"),
        (7, "neuron-api"),
        (9, "neuron-api"),
        (10, "mps-device"),
        (11, "mps-device"),
        (14, "nki-kernel"),
    ],
    "ops_integration.py": [
        (4, "sagemaker"),
        (5, "nvidia-smi"),
        (7, "nvidia-smi"),
        (8, "cuda-visible-devices"),
        (9, "nccl-backend"),
        (10, "k8s-gpu-resource"),
    ],
    "pyproject.toml": [
        (3, "deepspeed"),
        (3, "neuron-package-pin"),
        (3, "sagemaker"),
    ],
    "requirements.txt": [
        (2, "cuda-version-pin"),
        (3, "cuda-version-pin"),
        (4, "bitsandbytes"),
        (5, "xformers"),
        (7, "cuda-version-pin"),
    ],
    "suppressed.py": [
        (7, "cuda-call"),
    ],
    "train.py": [
        (6, "amp-cuda"),
        (8, "cuda-call"),
        (9, "cuda-device-literal"),
        (10, "torch-cuda-api"),
        (11, "cudnn-tf32-flag"),
        (12, "cudnn-tf32-flag"),
        (13, "torch-backends"),
        (14, "nccl-backend"),
        (15, "cuda-graphs"),
        (16, "amp-cuda"),
        (18, "compile-backend"),
        (18, "cuda-graphs"),
    ],
}


def _found(log: PortabilityLog) -> dict[str | None, list[tuple[int, str]]]:
    out: dict[str | None, list[tuple[int, str]]] = {}
    for f in log.findings:
        out.setdefault(f.file, []).append((f.line or 0, f.rule))
    return {k: sorted(v) for k, v in out.items()}


def test_fixture_repo_exact_findings() -> None:
    log = scan_path(REPO, jobs=1)
    assert _found(log) == {k: sorted(v) for k, v in EXPECTED.items()}
    assert log.skipped == []
    assert log.suppressed == 3
    assert log.files_scanned == 16


def test_every_static_rule_is_covered_by_the_fixtures() -> None:
    seen = {r for v in EXPECTED.values() for _, r in v}
    seen |= {f.rule for f in scan_path(REPO.parent / "coverage", jobs=1).findings}  # test_coverage.py's fixture
    inventory_only = {"graph-break", "export-failure", "unsupported-op"}
    # rocm-base-image has its own test below, model-bringup, compile-step, memory-fit, launcher-local-rank,
    # fp32-training and submodule-unscanned and prefixed-import theirs (test_bringup.py, test_compile_step.py,
    # test_memory_fit.py, test_launch_flags.py,
    # test_precision.py: the coverage tree names precisions, so no fp32 item; test_submodules.py: a tree with a
    # .gitmodules; test_entry_paths.py: an entry point's import; test_lightning_trainer.py: the coverage tree's
    # lightning-cuda item holds its Lightning loop; test_declared_deps.py: the coverage tree declares its
    # dependencies); nothing else may go untested
    assert set(RULES) - seen - inventory_only == {
        "rocm-base-image",
        "model-bringup",
        "compile-step",
        "memory-fit",
        "launcher-local-rank",
        "fp32-training",
        "submodule-unscanned",
        "prefixed-import",
        "lightning-trainer",
        "undeclared-dependencies",
    }


def test_parallel_scan_equals_serial(monkeypatch: pytest.MonkeyPatch) -> None:
    import accelpilot.porting.scan.run as sc

    monkeypatch.setattr(sc, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(sc, "CHUNK", 2)
    assert _found(scan_path(REPO, jobs=2)) == _found(scan_path(REPO, jobs=1))


def test_scanned_code_is_never_imported_or_run(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    repo = tmp_path / "r"
    repo.mkdir()
    payload = (
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\nimport torch\nx = torch.ones(1).cuda()\n"
    )
    (repo / "evil.py").write_text(payload)
    (repo / "setup.py").write_text(payload)
    (repo / "conftest.py").write_text(payload)
    (repo / "__init__.py").write_text(payload)
    log = scan_path(repo)
    assert not marker.exists()
    assert len([f for f in log.findings if f.rule == "cuda-call"]) == 4


def test_bad_inputs_are_skipped_with_reasons(tmp_path: Path) -> None:
    r = tmp_path / "r"
    (r / "sub").mkdir(parents=True)
    (r / "sub" / "loop").symlink_to(r, target_is_directory=True)  # loop back to the root
    (r / "self.py").symlink_to(r / "self.py")  # ELOOP
    (r / "dangling.py").symlink_to(r / "nowhere.py")
    (r / "binary.py").write_bytes(b"\x00\x01torch.cuda\x00")
    (r / "latin1.py").write_bytes(b"x = 'caf\xe9'  # torch.cuda\n")
    (r / "broken.py").write_text("import torch\ndef f(:\n    torch.cuda.synchronize()\n")
    (r / "deep.py").write_text("import torch\nx = torch.cuda.is_available() + " + "+".join(["a"] * 200000) + "\n")
    (r / "unary.py").write_text("import torch\nx = torch.cuda.is_available() + " + "-" * 100000 + "1\n")
    big = r / "huge.py"
    with big.open("wb") as fh:  # 100 MB sparse file
        fh.truncate(100 * 1024 * 1024)
    (r / "outside.py").symlink_to("/proc/self/mem")  # leaves the root: never read
    (r / "ok.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    log = scan_path(r, follow_symlinks=True)
    reasons = {s.path: s.reason for s in log.skipped}
    assert reasons["sub/loop"].startswith("symlink loop")
    assert reasons["self.py"] == "symlink loop"
    assert reasons["dangling.py"] == "broken symlink"
    assert reasons["binary.py"].startswith("binary file")
    assert reasons["latin1.py"].startswith("not valid UTF-8")
    assert reasons["broken.py"].startswith("Python syntax error at line 2")
    assert "nesting too deep" in reasons["deep.py"]
    assert "nesting too deep" in reasons["unary.py"]
    assert "over the 10.5 MB limit" in reasons["huge.py"]
    assert reasons["outside.py"] == "symlink to outside the scanned root: not followed"
    assert [(f.file, f.line, f.rule) for f in log.findings] == [("ok.py", 2, "torch-cuda-api")]


def test_unreadable_file_is_a_skip_reason() -> None:
    _, found, reason, _ = scan_file("/proc/self/mem", "mem.py", "python")  # read fails (EIO), even as root
    assert found == [] and reason is not None and reason.startswith("unreadable")


# ---------------------------------------------------------------------------------------------------------------
# Notebooks: code cells are scanned, findings carry the cell and the line within it
# ---------------------------------------------------------------------------------------------------------------


def _notebook(cells: list[tuple[str, str]]) -> str:
    return json.dumps(
        {
            "cells": [
                {"cell_type": kind, "metadata": {}, "source": src.splitlines(keepends=True)} for kind, src in cells
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def test_notebook_code_cells_are_scanned_with_cell_and_line(tmp_path: Path) -> None:
    (tmp_path / "train.ipynb").write_text(
        _notebook(
            [
                ("markdown", "Run `x.cuda()` first"),  # markdown cells are prose
                ("code", "import torch\n%matplotlib inline\nmodel = model.cuda()\n"),
                ("code", "!nvidia-smi\nx = 1\ntorch.cuda.synchronize()  # accelpilot: ignore[torch-cuda-api]\n"),
                ("code", "import flash_attn\n"),
            ]
        )
    )
    log = scan_path(tmp_path)
    assert [(f.file, f.cell, f.line, f.rule) for f in log.findings] == [
        ("train.ipynb", 2, 3, "cuda-call"),
        ("train.ipynb", 4, 1, "flash-attn"),
        ("train.ipynb", 3, 1, "nvidia-smi"),
    ]
    assert log.suppressed == 1
    assert {f.snippet for f in log.findings} == {"model = model.cuda()", "import flash_attn", "!nvidia-smi"}


def test_a_broken_notebook_is_skipped_with_a_reason(tmp_path: Path) -> None:
    (tmp_path / "a.ipynb").write_text("{not json")
    (tmp_path / "b.ipynb").write_text('{"cells": 3}')
    (tmp_path / "c.ipynb").write_text(
        _notebook([("code", "import torch\ndef f(:\n    torch.cuda.synchronize()\n"), ("code", "x.cuda()\n")])
    )
    log = scan_path(tmp_path)
    reasons = {s.path: s.reason for s in log.skipped}
    assert reasons["a.ipynb"].startswith("not a readable notebook")
    assert reasons["b.ipynb"] == "not a readable notebook: no list of cells"
    assert reasons["c.ipynb"].startswith("Python syntax error in cell 1 line 2: ")
    assert reasons["c.ipynb"].endswith("(other cells scanned)")
    assert [(f.file, f.cell, f.line, f.rule) for f in log.findings] == [("c.ipynb", 2, 1, "cuda-call")]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_permission_denied_is_skipped(tmp_path: Path) -> None:
    p = tmp_path / "secret.py"
    p.write_text("import torch\ntorch.cuda.synchronize()\n")
    p.chmod(0)
    log = scan_path(tmp_path)
    assert log.skipped[0].reason.startswith("unreadable")


def test_missing_path_is_a_user_error() -> None:
    with pytest.raises(InputFileError, match="no such file"):
        scan_path("/definitely/not/here")


def test_json_data_files_are_skipped_with_the_reason_and_job_specs_still_read(tmp_path: Path) -> None:
    """A tokenizer JSON (by name) and any JSON over 512 KB are data: skipped before reading, with the reason, so a
    2 MB vocabulary never costs the scan seconds (issue 27). A small JSON job spec is still read line by line."""
    spec = '{"containers": [{"image": "nvcr.io/nvidia/pytorch:24.01-py3"}]}\n'
    (tmp_path / "job.json").write_text(spec)
    (tmp_path / "tokenizer.json").write_text(spec)  # the same line: found in a job spec, not in a tokenizer
    entries = ",\n".join(f'    "deepspeed{i}": {i}' for i in range(40_000))  # 40,000 lines of ~20 bytes: > 512 KB
    (tmp_path / "big.json").write_text('{\n  "image": "nvcr.io/nvidia/pytorch:24.01-py3",\n' + entries + "\n}\n")
    assert (tmp_path / "big.json").stat().st_size > 512 * 1024
    log = scan_path(tmp_path, jobs=1)
    assert {f.file for f in log.findings} == {"job.json"}
    reasons = {s.path: s.reason for s in log.skipped}
    assert reasons["tokenizer.json"].startswith("data file (tokenizer.json)")
    assert reasons["big.json"].startswith("data file: JSON of 1.") and "not a job spec" in reasons["big.json"]
