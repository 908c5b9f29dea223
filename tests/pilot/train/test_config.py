"""The run's configuration: one source of defaults (the CLI reads them from TrainConfig), and resolution."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import torch
import typer

from accelpilot.pilot.train.config import DEFAULTS, FALLBACKS, TrainConfig, resolve_settings
from accelpilot.pilot.workloads.gpt import GPTWorkload


def _train_command() -> Any:
    from accelpilot.cli.app import app

    group: Any = typer.main.get_command(app)
    return group.commands["run"].commands["train"]


def test_cli_defaults_come_from_the_config_class() -> None:
    """Every option that names a TrainConfig field shows that field's default, so no default is written twice."""
    import accelpilot.cli  # noqa: F401  (registers the commands)

    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    checked = 0
    for param in _train_command().params:
        name = {"compile_": "compile"}.get(param.name or "", param.name or "")
        if name not in fields or name == "workload":
            continue
        assert param.default == getattr(DEFAULTS, name), name
        checked += 1
    assert checked >= 18  # the comparison really covered the options


# Every flag `run train` had before its options were generated from TrainConfig (issue 25 item 6): none may go.
FLAGS_BEFORE = [
    "--device",
    "--workload",
    "--size",
    "--tokens",
    "--compile",
    "--precision",
    "--batch-size",
    "--seq-len",
    "--steps",
    "--warmup",
    "--shapes",
    "--target-loss",
    "--max-steps",
    "--eval-every",
    "--runs",
    "--interrupt-at",
    "--checkpoint-every",
    "--checkpoint-dir",
    "--compare-to",
    "--out",
    "--seed",
    "--lr",
    "--nproc-per-node",
    "--nnodes",
    "--node-rank",
    "--rdzv-endpoint",
    "--rdzv-timeout-s",
    "--scaling",
    "--parallel",
    "--global-batch",
    "--max-restarts",
    "--interrupt-rank",
    "--json",
]


def test_options_are_generated_from_the_config_fields() -> None:
    """Each option's flag, help and default come from its TrainConfig field; the source writes no option by hand."""
    import ast

    import accelpilot.cli  # noqa: F401  (registers the commands)
    import accelpilot.cli.run_train as rt

    declared = {f.metadata["flag"]: f for f in dataclasses.fields(TrainConfig) if "flag" in f.metadata}
    params = {max(p.opts, key=len): p for p in _train_command().params if getattr(p, "opts", None)}
    assert set(params) == set(declared) | {"--json"}
    assert set(FLAGS_BEFORE) <= set(params)  # no flag of the hand-written command went missing
    for flag, f in declared.items():
        assert params[flag].help == f.metadata["help"] and f.metadata["help"], flag
    tree = ast.parse(Path(rt.__file__).read_text(encoding="utf-8"))
    literal_flags = [
        a.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "typer.Option"
        for a in node.args
        if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--")
    ]
    assert literal_flags == ["--json"]  # the one option that is not a config field


def test_defaults_before_generation_still_hold() -> None:
    """The defaults the hand-written options had (README and scripts rely on them), typed out here."""
    cmd = {max(p.opts, key=len): p.default for p in _train_command().params if getattr(p, "opts", None)}
    before = {"--device": "cpu", "--workload": "builtin:gpt", "--steps": 20, "--warmup": 3, "--runs": 3}
    before |= {"--out": "pilot-results", "--seed": 0, "--nproc-per-node": 1, "--nnodes": 1, "--node-rank": 0}
    before |= {"--rdzv-timeout-s": 60.0, "--parallel": "ddp", "--max-restarts": 0, "--interrupt-rank": 0}
    before |= {"--json": False, "--shapes": None, "--scaling": None, "--target-loss": None, "--batch-size": None}
    for flag, value in before.items():
        assert cmd[flag] == value, flag


def test_resolution_order_cli_then_workload_then_fallback() -> None:
    w = GPTWorkload(size="tiny")
    cpu = torch.device("cpu")
    s = resolve_settings(TrainConfig(), w, cpu)
    wd = w.training_defaults()
    assert s.batch_size == wd.get("batch_size", FALLBACKS["batch_size"])
    assert s.seq_len == wd.get("seq_len", FALLBACKS["seq_len"])
    assert (s.backend, s.precision, s.interrupt_at) == ("eager", "fp32", 12)
    assert s.shapes == [s.seq_len, s.seq_len // 2]
    given = resolve_settings(TrainConfig(batch_size=3, seq_len=10, interrupt_at=0, shapes=[7]), w, cpu)
    assert (given.batch_size, given.seq_len, given.interrupt_at, given.shapes) == (3, 10, 0, [7])
    assert given.checkpoint_every == 5  # interrupt off: the default interval


def test_builtin_aliases_name_the_builtin_factory() -> None:
    assert TrainConfig(workload="builtin:gpt").workload == DEFAULTS.workload
    assert TrainConfig(workload="x.py:make").workload == "x.py:make"
