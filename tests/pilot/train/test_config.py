"""The run's configuration: one source of defaults (the CLI reads them from TrainConfig), and resolution."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, cast

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


def test_no_option_writes_a_config_default_again() -> None:
    """In the source of `run train`, an option naming a TrainConfig field takes its default from ``D``."""
    import ast

    import accelpilot.cli.run_train as rt

    tree = ast.parse(Path(rt.__file__).read_text(encoding="utf-8"))
    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    seen = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and ast.unparse(node.func) == "typer.Option"):
            continue
        flag = next(
            cast(str, a.value) for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("--")
        )
        name = flag[2:].replace("-", "_")
        if name not in fields or name in ("shapes", "scaling"):  # text, parsed into the list field
            continue
        seen.append(name)
        assert "D." in ast.unparse(node.args[0]), f"{flag} writes its default again: {ast.unparse(node.args[0])}"
    assert len(seen) >= 19


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
