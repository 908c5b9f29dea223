"""The PortabilityLog: JSON shape and baselines."""

from __future__ import annotations

import json
from pathlib import Path

from accelpilot.porting.scan import scan_path

REPO = Path(__file__).parent / "fixtures" / "repo"


def test_json_shape() -> None:
    data = json.loads(scan_path(REPO, jobs=1).to_json())
    assert {"findings", "summary", "skipped", "files_scanned"} <= set(data)
    f = data["findings"][0]
    assert {
        "rule",
        "category",
        "record_category",
        "dimension",
        "severity",
        "file",
        "line",
        "message",
        "why",
        "effort",
        "targets",
        "fingerprint",
    } <= set(f)
    s = data["summary"]
    assert sum(s["by_category"].values()) == s["total"] == len(data["findings"])
    assert sum(s["by_dimension"].values()) == s["total"]
    assert list(s["by_record_category"]) == [
        "device-specific code path",
        "container difference",
        "unsupported operator",
        "data movement step",
        "operational integration",
    ]


def test_baseline_ignores_line_shifts_and_shows_new(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "a.py").write_text("import torch\nx = torch.ones(2).cuda()\ntorch.cuda.synchronize()\n")
    base = scan_path(repo)
    assert len(base.findings) == 2
    # edits above move the lines; one new finding appears; a duplicate of a known line is new too (multiset)
    (repo / "a.py").write_text(
        "import torch\n# a new comment\n\n\nx = torch.ones(2).cuda()\ntorch.cuda.synchronize()\n"
        "y = torch.ones(2).to('cuda')\ntorch.cuda.synchronize()\n"
    )
    now = scan_path(repo).new_since(base, "base.json")
    assert [(f.line, f.rule) for f in now.findings] == [(7, "cuda-device-literal"), (8, "torch-cuda-api")]
    assert now.baseline_known == 2 and now.summary.total == 2
