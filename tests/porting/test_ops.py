"""Op inventory: torch.export on a small model, the dynamo/dispatch fallback, supported-ops lists in both formats,
and the training pilot's reference GPT against both fixtures."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from accelpilot.errors import ConfigError, InputFileError
from accelpilot.porting.log import PortabilityLog
from accelpilot.porting.supported import load_supported_ops, normalise_op, parse_supported_ops, split_op

pytest.importorskip("torch")
from accelpilot.porting.ops import inventory

FIX = Path(__file__).parent / "fixtures"
MODELS = FIX / "models"
SUPPORTED = FIX / "supported"
GPT_MODULE = "accelpilot.pilot.workloads.gpt"


@pytest.fixture(autouse=True)
def _models_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(MODELS))


def _line_of(path: Path, needle: str) -> int:
    for i, line in enumerate(path.read_text().splitlines(), start=1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in {path}")


def test_normalise_op() -> None:
    assert normalise_op("aten.addmm.default") == "aten::addmm"
    assert normalise_op("aten::addmm.out") == "aten::addmm"
    assert normalise_op("addmm") == "aten::addmm"
    assert normalise_op("prims.convert_element_type.default") == "prims::convert_element_type"
    assert split_op("mylib::scale.default") == ("mylib::scale", "default")  # a custom op keeps its namespace
    assert split_op("aten::view") == ("aten::view", None)


def test_small_model_exports_with_hazards(capsys: pytest.CaptureFixture[str]) -> None:
    inv = inventory("small_model:tiny")
    assert "importing user code 'small_model'" in capsys.readouterr().err
    assert inv.method == "torch.export" and inv.export_error is None and inv.op_set == "core_aten"
    counts = {o.op: o.count for o in inv.ops}
    # core ATen: nn.Linear is permute + addmm, double()/float() are _to_copy
    assert counts == {
        "aten::_to_copy": 2,
        "aten::add": 2,
        "aten::addmm": 1,
        "aten::nonzero": 1,
        "aten::permute": 1,
        "aten::relu": 1,
        "aten::sum": 2,
    }
    assert inv.data_dependent_ops == ["aten::nonzero"]
    assert {"float32", "float64"} <= set(inv.dtypes)
    src = MODELS / "small_model.py"
    got = sorted((f.rule, f.line) for f in inv.findings)
    nz = _line_of(src, "h.nonzero()")
    # graph breaks are looked for although export succeeded: dynamo breaks on the data-dependent nonzero
    assert got == [("data-dependent-op", nz), ("float64-dtype", _line_of(src, "x.double()")), ("graph-break", nz)]
    assert all(f.file and f.file.endswith("small_model.py") for f in inv.findings)
    # the call site is the user's line, not torch's own linear.py
    linear_site = {o.op: o.call_site for o in inv.ops}["aten::addmm"]
    assert linear_site is not None
    assert linear_site.endswith(f"small_model.py:{_line_of(src, 'self.fc(x)')}")


def test_unexportable_model_falls_back_to_explain_and_dispatch_trace() -> None:
    inv = inventory("small_model:branchy")
    src = MODELS / "small_model.py"
    line = _line_of(src, "if h.sum().item() > 0")
    assert inv.method == "dispatch-trace" and inv.export_error and inv.op_set == "core_aten"
    assert len(inv.graph_breaks) >= 1
    location = inv.graph_breaks[0].location
    assert location is not None and location.endswith(f"small_model.py:{line}")
    assert "item" in inv.graph_breaks[0].reason.lower()
    counts = {o.op: o.count for o in inv.ops}
    assert counts["aten::_local_scalar_dense"] == 1 and "aten::addmm" in counts
    rules = sorted((f.rule, f.line) for f in inv.findings)
    assert ("export-failure", line) in rules and ("graph-break", line) in rules
    assert ("data-dependent-op", line) in rules


def test_supported_ops_formats(tmp_path: Path) -> None:
    text = load_supported_ops(SUPPORTED / "neuron_ops.txt")
    assert "aten::view" in text.supported and not text.from_analyze
    assert (text.op_set, text.op_set_stated) == ("core_aten", True)
    js = tmp_path / "ops.json"
    js.write_text(json.dumps(["aten::linear", "aten.relu.default"]))
    plain = load_supported_ops(js)
    assert plain.supported == {"aten::linear", "aten::relu"} and (plain.op_set, plain.op_set_stated) == (
        "core_aten",
        False,
    )
    js.write_text(json.dumps({"op_set": "aten", "operators": ["aten::linear"]}))
    assert load_supported_ops(js).op_set == "aten"
    an = load_supported_ops(SUPPORTED / "neuron_analyze.json")
    assert an.from_analyze and an.support_percentage == pytest.approx(90.91)
    assert (an.op_set, an.op_set_stated) == ("aten", False)  # torch_neuronx names what it traced
    assert [e.op for e in an.unsupported] == ["aten::scaled_dot_product_attention", "aten::erfinv"]
    flat = parse_supported_ops(
        {
            "support_percentage": 50.0,
            "supported_operators": {"aten::add": 1},
            "unsupported_operators": [{"kind": "aten::nonzero", "failureAt": "neuronx-cc", "call": "m.py 3"}],
        }
    )
    assert flat.supported == {"aten::add"} and flat.unsupported[0].op == "aten::nonzero"


@pytest.mark.parametrize(
    "content",
    [
        '{"x": 1}',
        "[1, 2]",
        "aten::ok\nthis is not an op\n",
        "{broken",
        '{"op_set": "nope", "operators": ["aten::add"]}',
        "# op_set: nope\naten::add\n",
    ],
)
def test_bad_supported_ops_files(tmp_path: Path, content: str) -> None:
    p = tmp_path / "s.txt"
    p.write_text(content)
    with pytest.raises(InputFileError):
        load_supported_ops(p)
    with pytest.raises(InputFileError, match="no such file"):
        load_supported_ops(tmp_path / "missing.txt")


def test_bad_model_spec() -> None:
    with pytest.raises(ConfigError, match="module:factory"):
        inventory("no_colon_here")
    with pytest.raises(ConfigError, match="cannot import"):
        inventory("definitely_not_a_module_xyz:factory")
    with pytest.raises(ConfigError, match="no callable"):
        inventory("small_model:nothing")


@pytest.mark.parametrize("fixture", ["neuron_ops.txt", "neuron_analyze.json"])
def test_reference_gpt_against_both_formats(fixture: str) -> None:
    # Located through the import system, not a hard-coded path: if the module moves, this fails (never skips).
    spec = importlib.util.find_spec(GPT_MODULE)
    assert spec is not None and spec.origin, f"{GPT_MODULE} not importable: update GPT_MODULE to its new home"
    gpt = Path(spec.origin)
    sup = load_supported_ops(SUPPORTED / fixture)
    inv = inventory(f"{GPT_MODULE}:factory", sup)
    assert inv.method == "torch.export" and inv.op_set == "core_aten"
    ops = {o.op: o for o in inv.ops}
    # core ATen: linear -> permute + addmm, layer_norm -> native_layer_norm, SDPA -> bmm + _softmax
    assert {"aten::addmm", "aten::native_layer_norm", "aten::_softmax", "aten::bmm", "aten::embedding"} <= set(ops)
    assert not {"aten::linear", "aten::layer_norm", "aten::scaled_dot_product_attention"} & set(ops)
    assert all(o.core for o in inv.ops)
    assert inv.data_dependent_ops == [] and "float64" not in inv.dtypes
    if fixture.endswith(".txt"):
        assert inv.supported_ops_op_set == "core_aten"
        # the text list leaves out gelu: one blocking finding at the MLP's line in gpt.py
        assert inv.unsupported_ops == ["aten::gelu"]
        [f] = inv.findings
        assert (f.rule, f.severity, f.line) == ("unsupported-op", "blocking", _line_of(gpt, "F.gelu("))
        assert f.file is not None and f.file.endswith("gpt.py")
        assert inv.support_percentage == pytest.approx(100 * (len(ops) - 1) / len(ops), abs=0.01)
    else:
        # the analyze output names ops as torch-neuronx traced them (op set "aten"): its verdicts are reported
        # as given, at the call sites it gives; the core ATen operators are not compared with it one by one
        assert inv.supported_ops_op_set == "aten"
        assert any("not compared with it one by one" in n for n in inv.notes)
        assert inv.unsupported_ops == ["aten::erfinv", "aten::scaled_dot_product_attention"]
        by_op = {f.snippet: f for f in inv.findings}
        sdpa = by_op["aten::scaled_dot_product_attention"]
        assert (sdpa.file, sdpa.line) == ("gpt.py", 107)  # the fixture's (fictional) "gpt.py(107): forward"
        assert "neuronx-cc" in sdpa.message
        assert (by_op["aten::erfinv"].file, by_op["aten::erfinv"].line) == ("other_model.py", 24)
        assert inv.support_percentage == pytest.approx(90.91)
        assert all(o.supported is None for o in inv.ops)
    log = PortabilityLog().with_inventory(inv)
    assert log.summary.by_record_category["unsupported operator"] == len(inv.findings)


def test_no_grad_and_autocast_regions_are_captured() -> None:
    inv = inventory("small_model:no_grad_model")
    counts = {o.op: o.count for o in inv.ops}
    assert inv.method == "torch.export"
    # both linears (inside no_grad and autocast sub-graphs) as core ATen, the autocast casts as _to_copy
    assert counts == {"aten::_to_copy": 4, "aten::addmm": 2, "aten::permute": 2, "aten::relu": 1, "aten::sum": 1}
    assert "bfloat16" in inv.dtypes


def test_no_operators_is_never_a_success() -> None:
    inv = inventory("small_model:identity")
    assert inv.method == "failed" and inv.ops == []
    assert inv.export_error is not None and "captured no ATen operator" in inv.export_error
    assert [f.rule for f in inv.findings] == ["export-failure"]


def test_cache_outputs_are_captured_with_caching_off() -> None:
    inv = inventory("small_model:cached")
    assert inv.method == "torch.export" and inv.export_error is None
    assert inv.notes == ["captured with config.use_cache=False (cache objects are outputs, not operators)"]
    assert {o.op for o in inv.ops} >= {"aten::addmm", "aten::relu"}


def test_graph_breaks_are_looked_for_even_when_export_succeeds(monkeypatch: pytest.MonkeyPatch) -> None:
    import accelpilot.porting.ops as ops
    from accelpilot.porting.log import GraphBreak

    calls: list[int] = []

    def fake_explain(model: object, inputs: object) -> tuple[int, list[GraphBreak]]:
        calls.append(1)
        return 2, [GraphBreak(reason="print() call", location="small_model.py:17")]

    monkeypatch.setattr(ops, "_explain", fake_explain)
    inv = inventory("small_model:tiny")
    assert inv.method == "torch.export" and calls == [1]
    assert [(f.rule, f.file, f.line) for f in inv.findings if f.rule == "graph-break"] == [
        ("graph-break", "small_model.py", 17)
    ]


def test_the_same_line_found_statically_and_by_capture_is_one_finding() -> None:
    from accelpilot.porting.log import Finding, OpInventory
    from accelpilot.porting.rules import get_rule

    rule = get_rule("data-dependent-op")
    static = Finding.from_rule(rule, file="pkg/model.py", line=12, message="nonzero()", snippet="h.nonzero()")
    captured = Finding.from_rule(
        rule, file="src/pkg/model.py", line=12, message="aten::nonzero", snippet="aten::nonzero", source="model"
    )
    other = Finding.from_rule(rule, file="src/pkg/model.py", line=30, message="aten::unique", source="model")
    log = PortabilityLog(findings=[static]).with_inventory(
        OpInventory(model="m", method="torch.export", findings=[captured, other])
    )
    assert [(f.file, f.line, f.source) for f in log.findings] == [
        ("pkg/model.py", 12, "static"),
        ("src/pkg/model.py", 30, "model"),
    ]
    assert log.findings[0].message == "nonzero() (confirmed by the op inventory)"


def test_numpy_graph_breaks_are_not_model_hazards_and_sites_outside_user_code_move_to_the_forward(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 27: a graph break on a numpy value is counted apart (``numpy-constant``, never blocking); a break with
    no location, or one inside torch itself, is placed at the model's forward and says so; a break in the user's
    code keeps its line."""
    import torch

    import accelpilot.porting.ops as ops
    from accelpilot.porting.log import GraphBreak

    inside_torch = f"{Path(torch.__file__).parent / 'nn' / 'modules' / 'linear.py'}:125"

    def fake_explain(model: object, inputs: object) -> tuple[int, list[GraphBreak]]:
        return 4, [
            GraphBreak(reason="call_function numpy.ndarray constant in forward", location="small_model.py:15"),
            GraphBreak(reason="print() call", location="small_model.py:16"),
            GraphBreak(reason="dynamo explain failed: RuntimeError: x"),
            GraphBreak(reason="Unsupported builtin", location=inside_torch),
        ]

    monkeypatch.setattr(ops, "_explain", fake_explain)
    inv = inventory("small_model:tiny")
    breaks = [(f.file, f.line, f.context, f.porting) for f in inv.findings if f.rule == "graph-break"]
    src = MODELS / "small_model.py"
    forward = _line_of(src, "def forward(self, x: torch.Tensor) -> torch.Tensor:")  # Tiny.forward, the first
    assert [(b[1], b[2], b[3]) for b in breaks] == [
        (15, "numpy-constant", False),
        (16, None, True),
        (forward, None, True),
        (forward, None, True),
    ]
    assert all(f.file and f.file.endswith("small_model.py") for f in inv.findings)
    placed = [f.message for f in inv.findings if f.line == forward and f.rule == "graph-break"]
    assert all(m.endswith("(no frame in the model's code: placed at its forward)") for m in placed)


def test_eager_forward_failed_is_said_only_when_it_did(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the dispatch trace fails but a plain forward runs, the log says the trace failed and the forward runs;
    "eager forward failed too" is kept for a forward that raises."""
    import accelpilot.porting.ops as ops

    def broken_trace(*args: object, **kwargs: object) -> None:
        raise RuntimeError("dispatch mode broke")

    def no_export(*args: object, **kwargs: object) -> None:
        raise RuntimeError("no export")

    monkeypatch.setattr(ops, "_capture_export", no_export)
    monkeypatch.setattr(ops, "_capture_dispatch", broken_trace)
    inv = inventory("small_model:tiny")
    assert inv.method == "failed" and inv.export_error is not None
    assert "eager forward failed" not in inv.export_error
    assert "the dispatch trace failed (RuntimeError: dispatch mode broke); the eager forward itself runs" in (
        inv.export_error
    )
