"""An entry point's CUDA line that runs only under a command-line option the README's command does not meet blocks
only when that option is set (issue 27: "blocks when FLAG is set"), not on the default path."""

from __future__ import annotations

import ast
from pathlib import Path

from accelpilot.porting.scan import scan_path
from accelpilot.porting.scan.option_guards import command_value, options

TRAIN = """\
import click
import torch


def subprocess_fn(rank, args):
    if args.num_gpus > 1:
        torch.distributed.init_process_group(backend='nccl', rank=rank, world_size=args.num_gpus)
    sync_device = torch.device('cuda', rank) if args.num_gpus > 1 else None
    device = torch.device('cuda', rank)
    return sync_device, device


@click.command()
@click.option('--gpus', help='Number of GPUs', type=int, default=1)
def main(gpus):
    args = dict()
    args.num_gpus = gpus
    subprocess_fn(0, args)


if __name__ == "__main__":
    main()
"""


def _items(root: Path, readme: str) -> dict[str, tuple[str, list[tuple[int | None, str]]]]:
    (root / "README.md").write_text(readme)
    (root / "train.py").write_text(TRAIN)
    items = scan_path(root, jobs=1).items
    return {i.rule: (i.severity, [(ln.line, ln.severity) for ln in i.lines]) for i in items if i.file == "train.py"}


def test_lines_under_gpus_above_one_block_only_when_gpus_is_above_one(tmp_path: Path) -> None:
    """README: ``--gpus=1``; the ``nccl`` group (line 7) and the sync device (line 8) sit under ``num_gpus > 1``
    (bound from ``--gpus``), the device on line 9 does not."""
    items = _items(tmp_path, "# Train\n\n```\npython train.py --data=x \\\n  --gpus=1\n```\n")
    assert items["nccl-backend"] == ("warning", [(7, "warning")])
    assert items["cuda-device-literal"] == ("blocking", [(8, "warning"), (9, "blocking")])
    log = scan_path(tmp_path, jobs=1)
    [nccl] = [f for f in log.findings if f.rule == "nccl-backend"]
    assert nccl.reason is not None and nccl.reason.startswith(
        "blocks when --gpus > 1 (`args.num_gpus > 1` at train.py:6): the default command"
    )


def test_the_options_default_stands_when_the_command_omits_it_and_a_larger_value_blocks(tmp_path: Path) -> None:
    items = _items(tmp_path, "# Train\n\n```\npython train.py --data=x --gpus 8\n```\n")
    assert items["nccl-backend"] == ("blocking", [(7, "blocking")])
    omitted = tmp_path / "b"
    omitted.mkdir()
    items = _items(omitted, "# Train\n\n```\npython train.py --data=x\n```\n")
    assert items["nccl-backend"] == ("warning", [(7, "warning")])


def test_options_and_command_values_are_read_from_click_argparse_and_bindings() -> None:
    tree = ast.parse(
        "p.add_argument('-n', '--num-nodes', type=int, default=2)\n"
        "@click.option('--amp', is_flag=True)\ndef f(amp): cfg = EasyDict(use_amp=amp)\n"
    )
    assert options(tree) == {
        "num_nodes": ("--num-nodes", 2, True),
        "amp": ("--amp", None, True),
        "use_amp": ("--amp", None, True),
    }
    assert command_value("python t.py --gpus=4 --amp", "--gpus") == (True, "4")
    assert command_value("python t.py --gpus 4", "--gpus") == (True, "4")
    assert command_value("python t.py --amp --gpus 4", "--amp") == (True, None)
    assert command_value("python t.py --gpusx=4", "--gpus") == (False, None)
