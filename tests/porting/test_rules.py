"""The rule registry and target filters."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelpilot.errors import UnknownNameError
from accelpilot.porting.rules import RECORD_CATEGORY, RULES, get_rule, resolve_targets
from accelpilot.porting.scan import scan_path

REPO = Path(__file__).parent / "fixtures" / "repo"


def test_rule_registry() -> None:
    for r in RULES.values():
        assert r.category in RECORD_CATEGORY and r.dimension in ("source", "model", "operational", "commercial")
        assert r.severity in ("info", "warning", "blocking") and r.effort in ("hours", "days", "weeks")
        assert r.targets and r.why
    with pytest.raises(UnknownNameError, match="did you mean 'cuda-call'"):
        get_rule("cuda-cal")
    assert resolve_targets(["neuron"]) == frozenset({"trainium", "inferentia"})
    with pytest.raises(UnknownNameError):
        resolve_targets(["tpu"])


def test_target_filter() -> None:
    gpu = scan_path(REPO, jobs=1, targets=resolve_targets(["gpu"]))
    assert gpu.findings and all("gpu" in f.targets for f in gpu.findings)
    rules = {f.rule for f in gpu.findings}
    assert "neuron-api" in rules and "nki-kernel" in rules and "cuda-call" not in rules
    trn = scan_path(REPO, jobs=1, targets=resolve_targets(["trainium"]))
    assert "cuda-call" in {f.rule for f in trn.findings} and "neuron-api" not in {f.rule for f in trn.findings}
