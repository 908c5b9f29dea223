"""One op set: the inventory names core ATen operators whichever capture path ran, keeps what has no decomposition
(labelled), and compares only with supported-operator lists in core ATen."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from accelpilot.errors import InputFileError

pytest.importorskip("torch")
import accelpilot.porting.ops as ops
from accelpilot.cli import main
from accelpilot.porting.log import OpInventory, PortabilityLog
from accelpilot.porting.ops import inventory
from accelpilot.porting.render import render_markdown, render_table
from accelpilot.porting.supported import check_core_aten, load_supported_ops

MODELS = Path(__file__).parent / "fixtures" / "models"
SRC = MODELS / "small_model.py"
GPT = "accelpilot.pilot.workloads.gpt:factory"

# Read off a run of the Linear+GELU+LayerNorm block (torch 2.13): linear -> permute + addmm, layer_norm ->
# native_layer_norm, relu_ -> relu and `h += x` -> add (functionalized), silu -> sigmoid * mul... (see the fixture)
BLOCK_OPS = {
    "aten::add": 2,
    "aten::addmm": 1,
    "aten::exp": 1,
    "aten::gelu": 1,
    "aten::gt": 1,
    "aten::log1p": 1,
    "aten::mul": 1,
    "aten::native_layer_norm": 1,
    "aten::permute": 1,
    "aten::relu": 1,
    "aten::sigmoid": 1,
    "aten::where": 1,
}


@pytest.fixture(autouse=True)
def _models_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(MODELS))


def _line_of(needle: str) -> int:
    return next(i for i, line in enumerate(SRC.read_text().splitlines(), start=1) if needle in line)


def _fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Force the fallback trace on a model that exports: torch.export 'fails'."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("export refused by the test")

    monkeypatch.setattr(ops, "_capture_export", refuse)


def _quiet(_: str) -> None:
    return None


def test_block_is_named_in_core_aten() -> None:
    inv = inventory("small_model:block", announce=_quiet)
    assert (inv.method, inv.op_set) == ("torch.export", "core_aten")
    assert {o.op: o.count for o in inv.ops} == BLOCK_OPS
    assert all(o.core is True for o in inv.ops)
    sites = {o.op: o.call_site for o in inv.ops}
    # the decomposed parts keep the user's line they came from
    assert sites["aten::addmm"] == f"{os.path.relpath(SRC)}:{_line_of('self.ln(torch.nn')}"
    assert sites["aten::sigmoid"] == f"{os.path.relpath(SRC)}:{_line_of('silu(h)')}"


@pytest.mark.parametrize("factory", ["block", "no_grad_model", "tiny", "custom"])
def test_export_and_fallback_give_the_same_operators(factory: str, monkeypatch: pytest.MonkeyPatch) -> None:
    exported = inventory(f"small_model:{factory}", announce=_quiet)
    _fallback(monkeypatch)
    traced = inventory(f"small_model:{factory}", announce=_quiet)
    assert (exported.method, traced.method) == ("torch.export", "dispatch-trace")
    assert traced.export_error == "RuntimeError: export refused by the test"
    # same names, counts, op-set membership and call sites; dtypes too (no_grad_model: the autocast bfloat16)
    assert [o.model_dump() for o in traced.ops] == [o.model_dump() for o in exported.ops]
    assert traced.dtypes == exported.dtypes
    if factory == "no_grad_model":
        assert "bfloat16" in traced.dtypes and {o.op for o in traced.ops} >= {"aten::addmm", "aten::relu"}


def test_reference_gpt_same_names_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    exported = inventory(GPT, announce=_quiet)
    _fallback(monkeypatch)
    traced = inventory(GPT, announce=_quiet)
    assert {o.op for o in traced.ops} == {o.op for o in exported.ops}
    assert "aten::scaled_dot_product_attention" not in {o.op for o in traced.ops}  # decomposed on both paths


def test_custom_op_is_kept_and_labelled(monkeypatch: pytest.MonkeyPatch) -> None:
    for forced in (False, True):
        if forced:
            _fallback(monkeypatch)
        inv = inventory("small_model:custom", announce=_quiet)
        core = {o.op: o.core for o in inv.ops}
        assert core == {"accelpilot_test::scale": False, "aten::addmm": True, "aten::permute": True}
        assert inv.notes == ["outside core ATen (no decomposition; kept as named): accelpilot_test::scale"]


def test_a_list_outside_core_aten_is_refused(tmp_path: Path) -> None:
    lst = tmp_path / "target_ops.txt"
    lst.write_text("aten::addmm\naten::linear\naten.view.dtype\naten::not_an_op\n")
    with pytest.raises(InputFileError) as err:
        inventory("small_model:block", load_supported_ops(lst), announce=_quiet)
    msg = str(err.value)
    assert msg.startswith(f"{lst}: op_set: aten::linear (not core ATen), aten.view.dtype (not core ATen), ")
    assert "aten::not_an_op (unknown operator)" in msg and "fix: replace each with the core ATen" in msg
    assert "\n" not in msg
    lst.write_text("# op_set: aten\naten::addmm\n")  # a stated other op set: refused before any comparison
    with pytest.raises(InputFileError, match=r"in op set 'aten', but operators are compared in core ATen"):
        check_core_aten(load_supported_ops(lst))
    lst.write_text("# op_set: core_aten\naten::addmm\naten.view.default\naten::add\n")
    assert check_core_aten(load_supported_ops(lst)) is True


def test_cli_refuses_a_list_in_another_op_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lst = tmp_path / "ops.txt"
    lst.write_text("aten::linear\n")
    code = main(["scan", "--model", "small_model:block", "--supported-ops", str(lst), "--json"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "Traceback" not in "\n".join(err)
    assert err[-1].endswith(
        "aten::linear (not core ATen): the list must name core ATen operators (torch.Tag.core), as the inventory "
        "does (fix: replace each with the core ATen operators it decomposes to (e.g. aten::linear -> "
        "aten::addmm, aten::permute), as `accelpilot scan --model` names them)"
    )
    assert str(lst) in err[-1]


def test_comparison_in_core_aten(tmp_path: Path) -> None:
    lst = tmp_path / "ops.txt"
    lst.write_text("\n".join(op for op in BLOCK_OPS if op != "aten::sigmoid") + "\n")
    inv = inventory("small_model:block", load_supported_ops(lst), announce=_quiet)
    assert inv.unsupported_ops == ["aten::sigmoid"] and inv.supported_ops_op_set == "core_aten"
    assert [(f.rule, f.line) for f in inv.findings] == [("unsupported-op", _line_of("silu(h)"))]
    assert inv.support_percentage == pytest.approx(100 * 11 / 12, abs=0.01)


def test_views_say_the_op_set_and_the_capture_path(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from rich.console import Console

    def shown(inv: OpInventory) -> tuple[str, str]:
        log = PortabilityLog().with_inventory(inv)
        buf = io.StringIO()
        render_table(log, Console(file=buf, width=400))
        return buf.getvalue(), render_markdown(log)

    table, md = shown(inventory("small_model:custom", announce=_quiet))
    assert "3 distinct core ATen operators (captured by torch.export)" in table
    assert "outside core ATen: accelpilot_test::scale" in table
    assert "## Op inventory: `small_model:custom`: core ATen operators (captured by torch.export)" in md
    assert "| `accelpilot_test::scale` (not core ATen) | 1 |" in md
    _fallback(monkeypatch)
    table, md = shown(inventory("small_model:custom", announce=_quiet))
    assert "core ATen operators (captured by fallback trace)" in table and "(captured by fallback trace)" in md


def test_control_flow_op_is_kept_and_labelled() -> None:
    # torch.cond exports as a higher-order op around two sub-graphs: both branches are walked, the cond itself
    # has no core ATen form and is listed as such (an eager trace would run one branch: export only here)
    inv = inventory("small_model:cond", announce=_quiet)
    assert inv.method == "torch.export"
    assert {o.op: (o.count, o.core) for o in inv.ops} == {
        "aten::cos": (1, True),
        "aten::gt": (1, True),
        "aten::sin": (1, True),
        "aten::sum": (1, True),
        "higher_order::cond": (1, False),
    }
    assert {o.call_site for o in inv.ops} == {f"{os.path.relpath(SRC)}:{_line_of('torch.cond(')}"}


def test_a_decomposition_that_fails_keeps_the_operator(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from accelpilot.porting.opset import decomposition_table

    def broken(*args: Any, **kwargs: Any) -> Any:
        torch.ops.aten.sigmoid.default(args[0])  # a part recorded before the failure must be forgotten
        raise RuntimeError("this decomposition does not apply")

    table = {**decomposition_table(), torch.ops.aten.silu.default: broken}
    monkeypatch.setattr(ops, "decomposition_table", lambda: table)
    _fallback(monkeypatch)
    inv = inventory("small_model:block", announce=_quiet)
    counts = {o.op: o.count for o in inv.ops}
    assert inv.method == "dispatch-trace" and counts["aten::silu"] == 1 and "aten::sigmoid" not in counts
    assert [o.op for o in inv.ops if o.core is False] == ["aten::silu"]
    assert counts["aten::log1p"] == 1  # softplus still decomposed: the trace went on
