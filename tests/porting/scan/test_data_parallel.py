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


def test_the_item_has_its_days_and_blocks_only_where_the_entry_point_always_builds_it(tmp_path: Path) -> None:
    """Under a device-count test the wrapper is a multi-device choice (a warning); the script, the tree's entry point,
    building it unconditionally blocks (on a Neuron host it scatters through ``torch._C._scatter``, round 41)."""
    guarded = (
        "import torch\n\nif torch.cuda.device_count() > 1:\n    net = torch.nn.DataParallel(torch.nn.Linear(2, 2))\n"
    )
    (tmp_path / "train.py").write_text(guarded)
    items = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "data-parallel"]
    assert [(i.severity, i.days_low, i.days_high) for i in items] == [("warning", 0.5, 1.5)]
    (tmp_path / "train.py").write_text("import torch\n\nnet = torch.nn.DataParallel(torch.nn.Linear(2, 2))\n")
    items = [i for i in scan_path(tmp_path, jobs=1).items if i.rule == "data-parallel"]
    assert [(i.severity, i.days_low, i.days_high) for i in items] == [("blocking", 0.5, 1.5)]
