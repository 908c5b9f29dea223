"""The false-positive class table: every row names a test that exists, every class test has a row, and the README's
list is the table rendered."""

from __future__ import annotations

import ast
from pathlib import Path

from accelpilot.porting.findings import NOT_PORTING
from accelpilot.porting.fp_classes import BEGIN, END, main, render, rewrite
from accelpilot.porting.fp_rows import OUTCOMES
from accelpilot.porting.fp_rows_guards import CLASSES

ROOT = Path(__file__).resolve().parents[2]
# The modules whose every test (but the pruned-equals-full-parse checks) holds one false-positive class.
CLASS_TEST_FILES = [
    *sorted((ROOT / "tests/porting/scan").glob("test_fp_classes*.py")),
    ROOT / "tests/porting/scan/test_placement_classes.py",
]


def _tests_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}


def test_every_row_names_tests_that_exist_and_an_outcome_the_log_knows() -> None:
    assert len({c.id for c in CLASSES}) == len(CLASSES), "duplicate class id"
    for c in CLASSES:
        assert c.outcome in NOT_PORTING or c.outcome in OUTCOMES, c.id
        assert c.tests, c.id
        for ref in c.tests:
            path, _, name = ref.partition("::")
            assert name in _tests_of(ROOT / path), f"{c.id}: no test {ref}"


def test_every_class_test_has_a_row() -> None:
    named = {ref for c in CLASSES for ref in c.tests}
    for path in CLASS_TEST_FILES:
        rel = path.relative_to(ROOT).as_posix()
        for name in _tests_of(path):
            if not name.startswith("test_pruned_scan_equals_full_parse"):
                assert f"{rel}::{name}" in named, f"{rel}::{name} holds a class the table does not list"


def test_the_readme_list_is_the_table_rendered() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count(BEGIN) == 1 and readme.count(END) == 1
    assert rewrite(readme) == readme, "README differs from fp_classes.py: python -m accelpilot.porting.fp_classes"
    for c in CLASSES:
        assert f"- `{c.id}` → **{c.outcome}**:" in render()


def test_the_entry_point_rewrites_a_stale_list_and_check_says_so(tmp_path: Path) -> None:
    stale = tmp_path / "README.md"
    stale.write_text(f"# x\n\n{BEGIN}\n- `old` → **probe**: gone\n{END}\n\nafter\n", encoding="utf-8")
    assert main([str(stale), "--check"]) == 1
    assert main([str(stale)]) == 0
    text = stale.read_text(encoding="utf-8")
    assert "`old`" not in text and text.endswith(f"{END}\n\nafter\n") and text.startswith("# x\n\n")
    assert main([str(stale), "--check"]) == 0
