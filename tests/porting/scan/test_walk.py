"""The walk: file kinds by name, excluded directories."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import classify, scan_path

REPO = Path(__file__).parent.parent / "fixtures" / "repo"


def test_rocm_image_and_classify() -> None:
    assert classify("Dockerfile") == "dockerfile"
    assert classify("Dockerfile.gpu") == "dockerfile"
    assert classify("requirements-dev.txt") == "requirements"
    assert classify("notes.txt") is None
    assert classify("k.cuh") == "cuda"


def test_excluded_directories_are_recorded(tmp_path: Path) -> None:
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "x.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    log = scan_path(tmp_path)
    assert log.findings == [] and [(s.path, s.reason) for s in log.skipped] == [(".venv", "excluded directory")]
