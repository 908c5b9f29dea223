"""CLI: bad input is one line on stderr and exit 2; JSON shapes for scripts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from accelpilot.cli import main

ROOT = Path(__file__).resolve().parents[2]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_prices_json_rows(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["prices", "--json", "--accelerator", "trainium", "--pricing", "capacity_block"], capsys)
    assert code == 0
    rows = json.loads(out)
    assert [r["instance"] for r in rows] == ["trn2.48xlarge"]
    keys = {
        "instance",
        "accelerator",
        "accelerator_count",
        "pricing",
        "price_per_hour",
        "price_per_accelerator_hour",
        "region",
        "as_of",
        "source",
    }
    assert keys <= set(rows[0])


def test_prices_table_marks_override(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "o.toml"
    f.write_text(
        '[[price]]\ninstance = "inf2.xlarge"\naccelerator = "Inferentia2"\naccelerator_count = 1\n'
        'pricing = "on_demand"\nprice_per_hour = "0.70"\nas_of = 2026-11-01\nsource = "quote"\n'
    )
    code, out, _ = run(["prices", "--catalog", str(f), "--instance", "inf2.xlarge"], capsys)
    assert code == 0 and "inf2.xlarge *" in out and "overrides bundled" in out.replace("\n", " ").replace("│", "")


@pytest.mark.parametrize(
    "content,match",
    [
        (None, "no such file"),
        ("[scenario\n", "malformed TOML"),
        (
            '[[options]]\nname = "a"\ninstance = "p5.48xlarg"\npricing = "on_demand"\nhours_per_run = 1\n',
            "did you mean",
        ),
        ('[[options]]\nname = "a"\ninstance = "p5.48xlarge"\npricing = "on_demand"\nhours_per_run = -2\n', "negative"),
        ('[[options]]\nname = "a"\ninstance = "p5.48xlarge"\npricing = "on_demand"\nhours_per_run = nan\n', "finite"),
        ('[[options]]\nname = "a"\ninstance = "p5.48xlarge"\npricing = "on_demand"\n', "no assumed hours"),
    ],
)
def test_bill_bad_input_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, match: str
) -> None:
    f = tmp_path / "s.toml"
    if content is not None:
        f.write_text(content)
    code, out, err = run(["bill", str(f)], capsys)
    assert code == 2
    assert match in err and str(f) in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err and out == ""


def test_console_script_end_to_end() -> None:
    """The installed entry point, as a user runs it."""
    exe = Path(sys.executable).parent / "accelpilot"
    proc = subprocess.run(
        [str(exe), "bill", str(ROOT / "examples/worked-example.toml")], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert "1,100.80" in proc.stdout and "559.00" in proc.stdout and "213.20" in proc.stdout
    bad = subprocess.run([str(exe), "bill", "/nonexistent.toml"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
