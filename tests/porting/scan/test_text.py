"""Line rules of non-Python files."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path

REPO = Path(__file__).parent.parent / "fixtures" / "repo"


def test_text_comment_lines_are_skipped_but_sbatch_directives_are_read(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("# nvidia-smi\n#SBATCH --gpus=4\necho ok # not a comment line: nvidia-smi\n")
    log = scan_path(tmp_path)
    assert sorted((f.line, f.rule) for f in log.findings) == [(2, "slurm-gpu-gres"), (3, "nvidia-smi")]


def test_rocm_base_image(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("FROM rocm/pytorch:latest\n")
    assert [(f.line, f.rule) for f in scan_path(tmp_path).findings] == [(1, "rocm-base-image")]


def test_torchvision_beside_the_target_torch_is_a_companion_pin() -> None:
    """``torchvision`` in a requirements file (any pin) is a ``torch-companion`` line: each release requires one
    torch release; a path is no such package."""
    from accelpilot.porting.scan.text import scan_text

    found = scan_text("torch\ntorchvision\ntorchaudio==2.4.1\n./torchvision/x\n", "requirements")
    assert [(r, ln) for r, ln, *_ in found if r == "torch-companion"] == [
        ("torch-companion", 2),
        ("torch-companion", 3),
    ]


def test_cuda_visible_devices_minus_one_hides_gpus_and_selects_none() -> None:
    """``CUDA_VISIBLE_DEVICES=-1`` (or ``""``) runs on the CPU (cleanrl's JAX benchmarks): no device selection;
    ``CUDA_VISIBLE_DEVICES="1"`` picks a GPU and stays."""
    from accelpilot.porting.scan.text import scan_text

    text = 'CUDA_VISIBLE_DEVICES=-1 python a.py\nCUDA_VISIBLE_DEVICES="-1" b\nCUDA_VISIBLE_DEVICES="" c\nCUDA_VISIBLE_DEVICES="1" d\n'
    assert [ln for r, ln, *_ in scan_text(text, "shell") if r == "cuda-visible-devices"] == [4]


def test_the_triton_inference_server_is_not_the_triton_kernel_language() -> None:
    """F5-TTS's ``run.sh``: ``echo "Starting triton server"`` and ``Testing triton inference server`` name NVIDIA's
    Triton Inference Server, not the kernel language. Stays: ``pip install triton`` (and a version pin)."""
    from accelpilot.porting.scan.text import scan_text

    text = 'echo "Starting triton server"\necho "Testing triton inference server"\npip install triton==3.1\n'
    assert [ln for r, ln, *_ in scan_text(text, "shell") if r == "triton-kernel"] == [3]
