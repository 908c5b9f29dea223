"""The ``parity-validation`` item (``scan/validation.py``): one per repository whose README says what runs, naming
the oracle the repository offers (its README's results table, its tests, or neither), with no days of its own (the
exit test's re-validation counts them once); near miss: a library whose README runs nothing gets none."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path

README = "# Pose\n\nTest with `python test.py`.\n\n| model | input | AP |\n|---|---|---|\n| w32 | 256x192 | 0.744 |\n"


def _items(root: Path) -> list[tuple[str | None, int | None, str, float, float]]:
    return [
        (i.file, i.line, i.lines[0].message, i.days_low, i.days_high)
        for i in scan_path(root, jobs=1).items
        if i.rule == "parity-validation"
    ]


def test_the_oracle_is_the_readmes_results_table_then_the_tests_then_none(tmp_path: Path) -> None:
    (tmp_path / "test.py").write_text("import torch\n\nprint(torch.ones(2))\n")
    (tmp_path / "README.md").write_text(README)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "tests" / "test_model.py").write_text("def test_shape():\n    assert True\n")
    [(file, line, message, low, high)] = _items(tmp_path)
    assert (file, line, low, high) == ("README.md", 7, 0.0, 0.0)
    assert (
        message == "outputs to match: the README's reported results (| w32 | 256x192 | 0.744 |) and 1 test file "
        "(tests/test_model.py)"
    )
    # a table that names no metric (a download list) is no results table
    (tmp_path / "README.md").write_text(README.split("\n\n|")[0] + "\n\n| file | size |\n|---|---|\n| w32 | 1.5 |\n")
    assert [(f, m) for f, _, m, _, _ in _items(tmp_path)] == [
        ("tests/test_model.py", "outputs to match: 1 test file (tests/test_model.py)")
    ]
    (tmp_path / "tests" / "test_model.py").unlink()
    assert [m for _, _, m, _, _ in _items(tmp_path)] == [
        "outputs to match: no results table or test in the repository: record CPU outputs first"
    ]
    (tmp_path / "README.md").write_text("# A library\n\nImport it.\n")
    assert _items(tmp_path) == []
