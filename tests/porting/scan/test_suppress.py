"""Suppression comments."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path

REPO = Path(__file__).parent.parent / "fixtures" / "repo"


def test_suppression_in_text_files(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text(
        "# accelpilot: ignore[cuda-base-image]\nFROM nvidia/cuda:12.1.0-base\nRUN nvidia-smi  # accelpilot: ignore[dcgm]\n"
    )
    log = scan_path(tmp_path)
    assert [(f.line, f.rule) for f in log.findings] == [(3, "nvidia-smi")]
    assert log.suppressed == 1
