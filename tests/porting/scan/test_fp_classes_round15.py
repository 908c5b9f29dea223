"""Classes read on round 15's repositories after their first score: a CPU fallback through a name bound to
``torch.cuda.is_available()`` (Wav2Lip), and another library's ``.stft`` (lws)."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path, scan_python


def test_a_cuda_or_cpu_choice_through_a_probed_name_falls_back(tmp_path: Path) -> None:
    """Wav2Lip's training scripts bind ``use_cuda = torch.cuda.is_available()`` and later pick
    ``torch.device("cuda" if use_cuda else "cpu")``: off CUDA the CPU arm runs, a performance item, not a stop.
    Near miss: a name bound from a CLI flag (``use_cuda = args.cuda``) keeps the line blocking."""
    src = 'import torch\n\nuse_cuda = torch.cuda.is_available()\ndevice = torch.device("cuda" if use_cuda else "cpu")\n'
    (tmp_path / "train.py").write_text(src)
    (tmp_path / "README.md").write_text("Train with `python train.py`.\n")
    found = [(f.line, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.rule == "cuda-device-literal"]
    assert found == [(4, "warning")]
    (tmp_path / "train.py").write_text(src.replace("torch.cuda.is_available()", "args.cuda"))
    found = [(f.line, f.severity) for f in scan_path(tmp_path, jobs=1).findings if f.rule == "cuda-device-literal"]
    assert found == [(4, "blocking")]


def test_another_librarys_stft_on_a_built_object_is_no_torch_site() -> None:
    """``_lws_processor(hp).stft(y)`` is the lws library's STFT; ``torch.stft(y, 512)`` without ``return_complex``
    stays a site."""
    src = "import torch\n\n\ndef spec(y, hp):\n    a = _lws_processor(hp).stft(y)\n    return torch.stft(y, 512)\n"
    assert [ln for r, ln, *_ in scan_python(src) if r == "stack-upgrade"] == [6]
