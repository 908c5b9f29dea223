"""bill --json: the shared-leaf projection equals fig_ref's, and the issue-10 fields are added, none renamed."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelpilot.bill.compute import make_bill
from accelpilot.bill.model import _fig, bill_to_json
from accelpilot.bill.scenario import load_scenario
from accelpilot.catalog import load_catalog
from accelpilot.figures import fig_ref

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("name", ["worked-example", "aws-product-team", "flat-traffic-serving"])
def test_json_projection_equals_fig_ref(name: str) -> None:
    b = make_bill(load_scenario(EXAMPLES / f"{name}.toml"), load_catalog())
    j = bill_to_json(b)
    for o, oj in zip(b.options, j["options"], strict=True):
        for k, v in oj["figures"].items():
            assert v == _fig(getattr(o, k))
        for li, lj in zip(o.line_items, oj["line_items"], strict=True):
            assert lj["leaves"] == [fig_ref(lf).flat_json(with_leaves=False) for lf in li.figure.leaves()]


def test_json_keeps_every_documented_field() -> None:
    j = bill_to_json(make_bill(load_scenario(EXAMPLES / "worked-example.toml"), load_catalog()))
    kept = {
        "monthly_cost",
        "total_36_months",
        "cost_per_accepted_run",
        "cost_per_1k_accepted_requests",
        "cost_per_million_accepted_tokens",
    }
    assert kept <= set(j["options"][0])
    assert {"paid_capacity_share", "outstanding_commitment", "fleet"} <= set(j["options"][0])
    assert {"break_even_runs", "break_even_months", "saving_per_run", "saving_per_month", "flip_hours_per_run"} <= set(
        j["comparisons"][0]
    )
    assert j["statements"]
