"""Bad portfolio input: one line naming the file and the field, exit 2."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from accelpilot.cli import main

DATA = Path(__file__).parent / "data"


def _setup(tmp_path: Path, text: str) -> Path:
    for f in ("x.toml", "y.toml"):
        shutil.copy(DATA / f, tmp_path / f)
    p = tmp_path / "p.toml"
    p.write_text(text)
    return p


HEAD = '[portfolio]\nlifetime_months = 12\n[[workloads]]\nname = "x"\nscenario = "x.toml"\n'
Y = '[[workloads]]\nname = "y"\nscenario = "y.toml"\n'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            HEAD.replace("x.toml", "gone.toml") + '[[estates]]\nname = "a"\noptions = { x = "p5" }\n',
            "workloads[1 'x'].scenario: scenario 'gone.toml' not found",
        ),
        (
            HEAD + '[[estates]]\nname = "a"\noptions = { x = "trn 1" }\n',
            "estates[1 'a'].options.x: 'trn 1' is not an option of",
        ),
        (
            HEAD + Y + '[[estates]]\nname = "a"\noptions = { x = "p5" }\n',
            "estates[1 'a'].options: no option chosen for workload 'y'",
        ),
        (
            HEAD + '[[estates]]\nname = "a"\noptions = { x = "p5" }\ncolour = "red"\n',
            "estates[1 'a'].colour: unknown field",
        ),
        (
            HEAD.replace("lifetime_months = 12", "lifetime_months = 0")
            + '[[estates]]\nname = "a"\noptions = { x = "p5" }\n',
            "portfolio.lifetime_months",
        ),
    ],
)
def test_bad_input_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str
) -> None:
    p = _setup(tmp_path, text)
    assert main(["bill", str(p)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(p) in err and expected in err, err


def test_estate_naming_an_unknown_workload(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _setup(tmp_path, HEAD + '[[estates]]\nname = "a"\noptions = { x = "p5", "x2" = "p5" }\n')
    assert main(["bill", str(p)]) == 2
    assert "estates[1 'a'].options: 'x2' names no workload; did you mean 'x'?" in capsys.readouterr().err


def test_report_needs_a_scenario_or_a_portfolio(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--out", str(tmp_path / "r")]) == 2
    assert "--scenario: give --scenario S.toml or --portfolio P.toml" in capsys.readouterr().err


def test_did_you_mean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _setup(tmp_path, HEAD + '[[estates]]\nname = "a"\noptions = { x = "trn1 reservd" }\n')
    assert main(["bill", str(p)]) == 2
    assert "did you mean 'trn1 reserved'?" in capsys.readouterr().err


def test_two_currencies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _setup(tmp_path, HEAD + Y + '[[estates]]\nname = "a"\noptions = { x = "p5", y = "p5" }\n')
    y = tmp_path / "y.toml"
    y.write_text(y.read_text().replace('name = "Y"', 'name = "Y"\ncurrency = "EUR"'))
    assert main(["bill", str(p)]) == 2
    err = capsys.readouterr().err
    assert "workloads: workloads are in different currencies (x: USD, y: EUR)" in err
