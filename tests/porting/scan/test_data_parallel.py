"""The ``data-parallel`` item: single-process replication over the visible devices (``nn.DataParallel``, DLRM's
hand-rolled ``parallel_apply``); near miss: ``DistributedDataParallel``, the multi-process form the port moves to."""

from __future__ import annotations

from pathlib import Path

from accelpilot.porting.scan import scan_path, scan_python


def test_data_parallel_and_parallel_apply_are_one_item() -> None:
    src = (
        "import torch\nfrom torch.nn.parallel import parallel_apply, replicate\n\n"
        "net = torch.nn.DataParallel(torch.nn.Linear(2, 2))\n"
        "ddp = torch.nn.parallel.DistributedDataParallel(net)\n\n\n"
        "def forward(mods, xs):\n    return parallel_apply(replicate(mods, [0, 1]), xs)\n"
    )
    found = [(ln, msg) for r, ln, msg, *_ in scan_python(src) if r == "data-parallel"]
    assert found == [
        (4, "DataParallel(...): single-process multi-device replication"),
        (9, "parallel_apply(...): single-process multi-device replication"),
    ]


def test_the_item_is_a_warning_with_its_days(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import torch\n\nnet = torch.nn.DataParallel(torch.nn.Linear(2, 2))\n")
    items = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "data-parallel"]
    assert [(i.severity, i.days_low, i.days_high) for i in items] == [("warning", 0.5, 1.5)]
