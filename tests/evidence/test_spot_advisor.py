"""The Spot Instance Advisor's data file read as evidence: its bands, its Linux rows, one-line refusals."""

from __future__ import annotations

import json
from decimal import Decimal as D
from pathlib import Path

import pytest

from accelpilot.cli import main
from accelpilot.errors import InputFileError
from accelpilot.evidence import read_file

DATA = {
    "ranges": [{"index": 0, "label": "<5%", "dots": 0, "max": 5}, {"index": 4, "label": ">20%", "dots": 4, "max": 100}],
    "instance_types": {},
    "spot_advisor": {
        "us-east-1": {"Linux": {"p5.48xlarge": {"s": 60, "r": 4}, "trn1.32xlarge": {"s": 70, "r": 0}}},
        "us-west-2": {"Windows": {"p5.48xlarge": {"s": 50, "r": 0}}},
    },
}


def test_reads_bands_and_linux_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "spot-advisor-data.json"
    f.write_text(json.dumps(DATA))
    ev = read_file(f)
    assert ev.files[0].shape == "spot_advisor" and ev.files[0].items == 2
    a = ev.advisors[0]
    share = a.interruption_share("us-east-1", "p5.48xlarge")
    assert share is not None and share.value == D(1) and share.kind.value == "measured"  # ">20%": up to 100%
    assert a.interruption_share("us-west-2", "p5.48xlarge") is None  # Windows rows are not Linux prices
    assert main(["evidence", "import", str(f)]) == 0
    assert "2 Linux rows in 2 region(s)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "mutate,said",
    [
        (lambda d: d["ranges"][0].update(max=0), "ranges[0]: index must be whole and max a percentage above 0"),
        (lambda d: d.update(spot_advisor=[]), "spot_advisor must be an object of regions"),
        (lambda d: d["spot_advisor"]["us-east-1"]["Linux"].update(x={"s": 1}), "Linux.x.r is not a number"),
    ],
)
def test_bad_advisor_file_is_one_line(tmp_path: Path, mutate: object, said: str) -> None:
    data = json.loads(json.dumps(DATA))
    mutate(data)  # type: ignore[operator]
    f = tmp_path / "a.json"
    f.write_text(json.dumps(data))
    with pytest.raises(InputFileError, match=said.replace("[", r"\[").replace("]", r"\]")):
        read_file(f)
