"""One rewrite, one item (issue 12, sample-3 class B): the compile hazards of one function are one porting item,
whichever rules fired; the same hazards in two functions of a file stay two items."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelpilot.porting.log import Finding, build_items
from accelpilot.porting.rules import RULES
from accelpilot.porting.scan import scan_path

# bart-style eos pooling: the unique_consecutive check and the boolean-mask gather go together (gather at the last
# eos removes both).
ONE_FUNCTION = """\
import torch
from torch import nn


class Pool(nn.Module):
    def forward(self, hidden, ids):
        eos_mask = ids.eq(2)
        if len(torch.unique_consecutive(eos_mask.sum(1))) > 1:
            raise ValueError("all examples must have the same number of <eos> tokens")
        return hidden[eos_mask, :]
"""

# The same two rules, each in its own function: two rewrites, two items.
TWO_FUNCTIONS = """\
import torch
from torch import nn


def count_eos(ids):
    return len(torch.unique_consecutive(ids.eq(2).sum(1)))


class Pool(nn.Module):
    def forward(self, hidden, ids):
        eos_mask = ids.eq(2)
        return hidden[eos_mask, :]
"""

# glm4v-style packed vision attention: `lengths.tolist()` on cu_seqlens differences is part of the varlen rewrite.
VARLEN = """\
import torch
from torch import nn


class Attention(nn.Module):
    def forward(self, q, cu_seqlens):
        lengths = cu_seqlens[1:] - cu_seqlens[:-1]
        chunks = torch.split(q, lengths.tolist(), dim=0)
        return torch.cat(chunks)
"""


def _items(tmp_path: Path, source: str) -> list[tuple[str, str, list[tuple[int | None, str]]]]:
    (tmp_path / "modeling_x.py").write_text(source)
    log = scan_path(tmp_path, jobs=1)
    return [(i.key, i.rule, [(ln.line, ln.rule) for ln in i.lines]) for i in log.items]


def test_two_rules_in_one_function_are_one_item(tmp_path: Path) -> None:
    # Three rules (the `if` on the count is a branch on a tensor value too), one item; its key, rule and title
    # are those of the earliest line (line 8; on one line, the rule first by name).
    assert _items(tmp_path, ONE_FUNCTION) == [
        (
            "file|data-dependent-op|modeling_x.py",
            "data-dependent-op",
            [(8, "data-dependent-op"), (8, "tensor-control-flow"), (10, "boolean-mask-index")],
        )
    ]


def test_the_same_rules_in_two_functions_are_two_items(tmp_path: Path) -> None:
    assert _items(tmp_path, TWO_FUNCTIONS) == [
        ("file|boolean-mask-index|modeling_x.py", "boolean-mask-index", [(12, "boolean-mask-index")]),
        ("file|data-dependent-op|modeling_x.py", "data-dependent-op", [(6, "data-dependent-op")]),
    ]


def test_tolist_of_cu_seqlens_joins_the_varlen_item(tmp_path: Path) -> None:
    assert _items(tmp_path, VARLEN) == [
        (
            "file|varlen-packing|modeling_x.py",
            "varlen-packing",
            [(6, "varlen-packing"), (7, "varlen-packing"), (8, "item-in-forward")],
        )
    ]


def _finding(rule: str, line: int, function: str | None) -> Finding:
    return Finding.from_rule(RULES[rule], file="m.py", line=line, message=rule, subject=function)


def test_merge_is_transitive_and_leaves_dtype_and_unnamed_functions_apart() -> None:
    items = build_items(
        [
            _finding("item-in-forward", 30, "forward:20"),
            _finding("varlen-packing", 22, "forward:20"),
            _finding("varlen-packing", 5, "pack:3"),
            _finding("boolean-mask-index", 6, "pack:3"),
            _finding("float64-dtype", 23, "forward:20"),  # a dtype change is its own work
            _finding("data-dependent-op", 50, None),  # a log written before findings named their function
            _finding("tensor-control-flow", 51, None),
        ]
    )
    assert [(i.key, [ln.line for ln in i.lines]) for i in items] == [
        ("file|data-dependent-op|m.py", [50]),
        ("file|float64-dtype|m.py", [23]),
        ("file|tensor-control-flow|m.py", [51]),
        ("file|varlen-packing|m.py", [5, 6, 22, 30]),
    ]


# superpoint-style: the border mask lives in a helper that only `_extract` calls, whose nonzero makes the variable
# keypoint count: one rewrite of `_extract` (and its helper), one item.
SOLE_CALLER = """\
import torch
from torch import nn


def remove_borders(keypoints, scores):
    mask = keypoints[:, 0] > 4
    return keypoints[mask], scores[mask]


class Points(nn.Module):
    def _extract(self, scores):
        keypoints = torch.nonzero(scores > 0.5)
        return remove_borders(keypoints, scores)
"""

# Near misses, each two items: a helper two defs call; a helper whose rule also has a line in another function
# (joining would pull that function's work in too); a public method (other files may call it).
TWO_CALLERS = """\
import torch
from torch import nn


def drop(x):
    mask = x > 0
    return x[mask]


class Points(nn.Module):
    def a(self, s):
        return drop(torch.nonzero(s))

    def b(self, s):
        return drop(torch.nonzero(s))
"""

RULE_ELSEWHERE = """\
import torch
from torch import nn


class Points(nn.Module):
    def _pick(self, s):
        keep_mask = s > 1
        return s[keep_mask]

    def c(self, s):
        return self._pick(torch.nonzero(s))

    def e(self, t):
        return t[t > 2]
"""

PUBLIC = """\
import torch
from torch import nn


class Points(nn.Module):
    def select(self, s):
        mask = s > 3
        return s[mask]

    def d(self, s):
        return self.select(torch.nonzero(s))
"""


def test_a_helper_one_function_alone_calls_joins_that_functions_item(tmp_path: Path) -> None:
    assert _items(tmp_path, SOLE_CALLER) == [
        (
            "file|boolean-mask-index|modeling_x.py",
            "boolean-mask-index",
            [(7, "boolean-mask-index"), (12, "data-dependent-op")],
        )
    ]


@pytest.mark.parametrize(
    ("source", "masks", "nonzero"),
    [(TWO_CALLERS, [7], [12, 15]), (RULE_ELSEWHERE, [8, 14], [11]), (PUBLIC, [8], [11])],
)
def test_helpers_called_twice_or_pulling_other_work_or_public_stay_apart(
    tmp_path: Path, source: str, masks: list[int], nonzero: list[int]
) -> None:
    assert _items(tmp_path, source) == [
        ("file|boolean-mask-index|modeling_x.py", "boolean-mask-index", [(n, "boolean-mask-index") for n in masks]),
        ("file|data-dependent-op|modeling_x.py", "data-dependent-op", [(n, "data-dependent-op") for n in nonzero]),
    ]
