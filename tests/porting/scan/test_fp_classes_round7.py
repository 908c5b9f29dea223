"""Classes read on round 7's repositories (lit-llama, bark, latent-diffusion) after their first score: notebooks and
a module written for them are demo code, and a workflow YAML directly under ``.github/`` is CI."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path

NOTEBOOK = (
    '{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": null, '
    '"source": ["import torch\\n", "model = torch.nn.Linear(1, 1).cuda()\\n"]}], '
    '"metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
)
CUDA = "import torch\nmodel = torch.nn.Linear(1, 1).cuda()\n"


def test_notebooks_and_their_helper_modules_are_demo_code(tmp_path: Path) -> None:
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "profile.ipynb").write_text(NOTEBOOK)
    (tmp_path / "run.ipynb").write_text(NOTEBOOK)
    (tmp_path / "notebook_helpers.py").write_text(CUDA)
    (tmp_path / "model.py").write_text(CUDA)
    ctx = {f.file: f.context for f in scan_path(tmp_path, jobs=1).findings if f.rule == "cuda-call"}
    assert ctx == {
        "notebooks/profile.ipynb": "example",
        "run.ipynb": "example",
        "notebook_helpers.py": "example",
        "model.py": None,
    }


def test_a_workflow_yaml_under_github_is_ci(tmp_path: Path) -> None:
    (tmp_path / ".github").mkdir()
    job = "jobs:\n  test:\n    container:\n      image: nvidia/cuda:12.1.0-devel-ubuntu22.04\n"
    (tmp_path / ".github" / "azure-gpu-tests.yml").write_text(job)
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n")
    ctx = {f.file: f.context for f in scan_path(tmp_path, jobs=1).findings if f.rule == "cuda-base-image"}
    assert ctx == {".github/azure-gpu-tests.yml": "ci", "Dockerfile": None}
