"""False-positive classes of transformers samples 15-20 (issue 12, scanfp14), each beside the near misses that must
stay findings: exact findings and items, and pruned scans equal to full parses."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.porting.scan.scan_kit import findings_in, item_lines

from accelpilot.porting.scan import scan_python

LIBRARY = """\
import logging
import os

logger = logging.getLogger(__name__)


class BatchingConfig:
    def validate(self):
        supported = os.environ.get("NCCL_GRAPH_MIXING_SUPPORT", "1") == "1"
        if self.disable_mixing and supported:
            logger.warning("Setting NCCL_GRAPH_MIXING_SUPPORT = 0 because disable_mixing is True.")
            os.environ.setdefault("NCCL_GRAPH_MIXING_SUPPORT", "0")

    def maybe_warn(self):
        if os.environ.get("NCCL_GRAPH_MIXING_SUPPORT") != "0":
            logger.warning(
                "NCCL_GRAPH_MIXING_SUPPORT was not set to '0': "
                "set NCCL_GRAPH_MIXING_SUPPORT=0 in the launch environment."
            )

    def force(self):
        os.environ["NCCL_ALGO"] = "Ring"

    def read_then_set(self):
        if "NCCL_DEBUG" not in os.environ:
            os.environ["NCCL_DEBUG"] = "INFO"


def launcher_default():
    os.environ.setdefault("NCCL_SOCKET_IFNAME", "eth0")
"""

LAUNCH = """\
#!/bin/bash
export NCCL_DEBUG=INFO
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
torchrun --nproc_per_node 8 train.py
"""


def test_an_nccl_variable_a_library_method_only_reads_or_defaults_is_a_no_op_elsewhere(tmp_path: Path) -> None:
    """A method that reads ``NCCL_GRAPH_MIXING_SUPPORT`` from the environment, sets it with ``setdefault`` and names
    it in its warnings tunes NCCL for a job that uses NCCL: under Neuron's collectives nothing reads it
    (``no-op-elsewhere``). An assignment (``os.environ["NCCL_ALGO"] = ...``), a read beside an assignment of the
    same variable, a plain function's ``setdefault`` (a launcher's) and a launch script's ``export`` stay findings."""
    (tmp_path / "config.py").write_text(LIBRARY)
    (tmp_path / "launch.sh").write_text(LAUNCH)
    found = findings_in(tmp_path, "config.py")
    assert [f for f in found if f[2] is not None] == [
        ("nccl-backend", line, "no-op-elsewhere") for line in (9, 11, 12, 15, 17)
    ]
    assert [f for f in found if f[2] is None] == [("nccl-backend", line, None) for line in (22, 25, 26, 30)]
    items = dict(item_lines(tmp_path))
    assert items["repo|nccl-backend"] == [22, 25, 26, 30, 2]
    assert ("gpu-launcher-setting", 3, None) in findings_in(tmp_path, "launch.sh")


GROUPED = """\
import torch


def can_use_grouped_mm(weight):
    if weight.device.type == "cuda":
        if hasattr(torch.nn.functional, "grouped_mm"):
            return torch.cuda.get_device_capability(weight.device) >= (8, 0)
        return torch.cuda.get_device_capability(weight.device)[0] == 9
    return hasattr(torch, "_grouped_mm")


def refuse_elsewhere(weight):
    if weight.device.type == "cuda":
        return torch.cuda.get_device_capability(weight.device) >= (8, 0)
    raise ValueError("grouped_mm needs a GPU")


def nothing_after(weight):
    if weight.device.type == "cuda":
        return torch.cuda.get_device_capability(weight.device) >= (8, 0)


def works_on_cuda(weight):
    if weight.device.type == "cuda":
        torch.cuda.synchronize(weight.device)
        return torch.cuda.get_device_capability(weight.device) >= (8, 0)
    return False
"""


def test_a_lone_device_type_branch_that_only_queries_its_device_before_a_generic_answer_is_a_dispatch(
    tmp_path: Path,
) -> None:
    """``if weight.device.type == "cuda": return <capability query>`` followed by a generic ``return``: the CUDA
    branch refines the answer for CUDA with device queries alone, and every other device (Neuron) takes the generic
    statement, so its queries are ``backend-branch``. The same branch before a ``raise``, with nothing after it, or
    doing work on CUDA (``synchronize``) beside its query stays porting work."""
    (tmp_path / "grouped.py").write_text(GROUPED)
    assert findings_in(tmp_path, "grouped.py") == [
        ("torch-cuda-api", 7, "backend-branch"),
        ("torch-cuda-api", 8, "backend-branch"),
        ("torch-cuda-api", 14, None),
        ("torch-cuda-api", 20, None),
        ("torch-cuda-api", 25, None),
        ("torch-cuda-api", 26, None),
    ]
    assert item_lines(tmp_path) == [("file|device-placement|grouped.py", [14, 20, 25, 26])]


QUESTIONS = """\
import torch


def cuda_version():
    version = getattr(torch.version, "cuda", None)
    return version


def place(model):
    return getattr(model, "cuda")()


def is_capturing():
    try:
        import torch

        return torch.cuda.is_current_stream_capturing()
    except Exception:
        return False


def is_capturing_bare():
    return torch.cuda.is_current_stream_capturing()


def is_capturing_synced():
    try:
        torch.cuda.synchronize()
        return torch.cuda.is_current_stream_capturing()
    except Exception:
        return False


def is_capturing_loud():
    try:
        return torch.cuda.is_current_stream_capturing()
    except Exception:
        raise RuntimeError("no CUDA")
"""


def test_a_cuda_question_whose_failure_answers_no_and_a_torch_version_read_are_probes(tmp_path: Path) -> None:
    """``try: return torch.cuda.is_current_stream_capturing()`` / ``except Exception: return False`` answers "no"
    where CUDA is missing (the query raises on a CPU or Neuron build of torch): ``probe``. ``getattr(torch.version,
    "cuda", None)`` reads the CUDA version torch was built with, as ``torch.version.cuda`` does: no finding. Stay: the
    bare question, one after CUDA work (``synchronize``), one whose handler raises, and ``getattr(model, "cuda")``."""
    (tmp_path / "questions.py").write_text(QUESTIONS)
    assert findings_in(tmp_path, "questions.py") == [
        ("cuda-device-literal", 10, None),
        ("torch-cuda-api", 17, "probe"),
        ("torch-cuda-api", 23, None),
        ("torch-cuda-api", 28, None),
        ("torch-cuda-api", 29, None),
        ("torch-cuda-api", 36, None),
    ]
    assert item_lines(tmp_path) == [("file|device-placement|questions.py", [10, 23, 28, 29, 36])]


@pytest.mark.parametrize("source", [LIBRARY, GROUPED, QUESTIONS], ids=["library", "grouped", "questions"])
def test_pruned_scan_equals_full_parse_on_scanfp14_classes(source: str) -> None:
    pruned = sorted((r, ln, m, str(ctx)) for r, ln, m, _, _, ctx in scan_python(source))
    full = sorted((r, ln, m, str(ctx)) for r, ln, m, _, _, ctx in scan_python(source, prune=False))
    assert pruned == full
