"""`accelpilot scan` end to end: formats, --out, --baseline, --target, --model, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelpilot.cli import main

REPO = Path(__file__).parent / "fixtures" / "repo"
MODELS = Path(__file__).parent / "fixtures" / "models"
SUPPORTED = Path(__file__).parent / "fixtures" / "supported"
TRANSFORMERS = (
    Path(__import__("importlib").util.find_spec("transformers").origin).parent
    if __import__("importlib").util.find_spec("transformers")
    else None
)


def test_json_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", str(REPO), "--json", "--jobs", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["total"] == len(data["findings"]) > 50
    assert {f["rule"] for f in data["findings"]} >= {"cuda-call", "flash-attn", "k8s-gpu-resource"}


def test_table_and_markdown(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["scan", str(REPO), "--jobs", "1", "--max-rows", "3"]) == 0
    out = capsys.readouterr().out
    for heading in (
        "device-specific code path",
        "container difference",
        "data movement step",
        "operational integration",
        "unsupported operator",
    ):
        assert heading in out
    md = tmp_path / "log.md"
    assert main(["scan", str(REPO), "--out", str(md), "--jobs", "1"]) == 0
    text = md.read_text()
    assert text.startswith("# Portability log") and "## Why these matter" in text and "`cuda-call`" in text


def test_baseline_workflow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "a.py").write_text("import torch\nx = torch.ones(1).cuda()\n")
    base = tmp_path / "base.json"
    assert main(["scan", str(repo), "--out", str(base)]) == 0
    (repo / "a.py").write_text("import torch\n\n\nx = torch.ones(1).cuda()\nimport flash_attn\n")
    capsys.readouterr()
    assert main(["scan", str(repo), "--baseline", str(base), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(f["rule"], f["line"]) for f in data["findings"]] == [("flash-attn", 5)]
    assert data["baseline_known"] == 1


def test_target_and_fail_on(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", str(REPO), "--json", "--target", "gpu", "--jobs", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["targets"] == ["gpu"] and all("gpu" in f["targets"] for f in data["findings"])
    assert main(["scan", str(REPO / "csrc"), "--fail-on", "blocking", "--format", "json"]) == 1
    assert main(["scan", str(REPO / "data.py"), "--fail-on", "blocking", "--format", "json"]) == 0


@pytest.mark.parametrize(
    "args",
    [
        ["scan", "/no/such/path"],
        ["scan"],
        ["scan", str(REPO), "--format", "xml"],
        ["scan", str(REPO), "--target", "tpu"],
        ["scan", str(REPO), "--baseline", "/no/such/log.json"],
        ["scan", str(REPO), "--fail-on", "sometimes"],
        ["scan", "--model", "not_a_spec"],
        ["scan", "--model", "small_model:tiny", "--supported-ops", "/no/such/ops.txt"],
    ],
)
def test_user_errors_exit_2_with_one_line(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("accelpilot: error:")


def test_bad_baseline_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "b.json"
    bad.write_text('{"findings": "nope"}')
    assert main(["scan", str(REPO), "--baseline", str(bad)]) == 2
    assert "not a portability log" in capsys.readouterr().err


def test_model_inventory_from_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    monkeypatch.syspath_prepend(str(MODELS))
    code = main(["scan", "--model", "small_model:tiny", "--supported-ops", str(SUPPORTED / "neuron_ops.txt"), "--json"])
    assert code == 0
    cap = capsys.readouterr()
    assert "importing user code" in cap.err
    data = json.loads(cap.out)
    inv = data["inventory"]
    assert inv["method"] == "torch.export" and inv["unsupported_ops"] == ["aten::nonzero"]
    expected = {"unsupported-op", "data-dependent-op", "float64-dtype", "graph-break"}  # breaks always looked for
    assert {f["rule"] for f in data["findings"]} == expected


def test_explain_rule_and_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", "--explain", "flash-attn"]) == 0
    assert "flash-attn ships CUDA kernels only" in capsys.readouterr().out
    assert main(["scan", "--explain", "flash-atn"]) == 2
    assert "did you mean 'flash-attn'" in capsys.readouterr().err


def test_list_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", "--list-rules"]) == 0
    assert "cuda-call\tdevice-specific code path" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.skipif(TRANSFORMERS is None, reason="transformers is not installed")
def test_scan_installed_transformers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", str(TRANSFORMERS), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["files_scanned"] > 1000
    by_rule: dict[str, list[str]] = {}
    for f in data["findings"]:
        by_rule.setdefault(f["rule"], []).append(f["file"])
    assert any("flash_attention" in p for p in by_rule["flash-attn"])
    assert any("bitsandbytes" in p for p in by_rule["bitsandbytes"])
    assert len(by_rule["torch-cuda-api"]) > 20 and len(by_rule["cuda-device-literal"]) > 20
    assert not [s for s in data["skipped"] if s["reason"].startswith("internal")]


# ---------------------------------------------------------------------------------------------------------------
# Hostile input (issue 11)
# ---------------------------------------------------------------------------------------------------------------


def _hostile_names(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "evil_\x1b[2J\x1b]0;owned\x07[bold]x.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (repo / "Dockerfile").write_text("FROM nvidia/cuda:12\x1b[31mred\n")  # a message quoting file content
    return repo


@pytest.mark.parametrize("fmt", ["table", "md"])
def test_control_characters_in_names_never_reach_the_terminal(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _hostile_names(tmp_path)
    assert main(["scan", str(repo), "--jobs", "1", "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "evil_\\x1b[2J\\x1b]0;owned\\x07[bold]x.py:2" in out  # shown escaped, markup shown as text
    assert "nvidia/cuda:12\\x1b[31mred" in out


def test_table_written_to_out_is_escaped_too(tmp_path: Path) -> None:
    repo = _hostile_names(tmp_path)
    out = tmp_path / "log.txt"
    assert main(["scan", str(repo), "--jobs", "1", "--format", "table", "--out", str(out)]) == 0
    text = out.read_text()
    assert "\x1b" not in text and "evil_\\x1b[2J" in text


@pytest.mark.parametrize("value", ["nan", "-1", "0", "inf"])
def test_max_file_mb_must_be_positive(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", str(REPO), "--jobs", "1", f"--max-file-mb={value}"]) == 2
    err = capsys.readouterr().err
    assert "--max-file-mb" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_out_naming_a_folder_or_a_missing_parent_is_refused_before_scanning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import accelpilot.porting.scan as scan_pkg

    def boom(*a: object, **k: object) -> None:
        raise AssertionError("the scan ran before --out was checked")

    monkeypatch.setattr(scan_pkg, "scan_path", boom)
    for bad, words in ((tmp_path, "is a folder"), (tmp_path / "missing" / "log.json", "does not exist")):
        assert main(["scan", str(REPO), "--out", str(bad)]) == 2
        err = capsys.readouterr().err
        assert words in err and "--out" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_failed_write_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from accelpilot.cli import scan as cli_scan

    def full_disk(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli_scan.os, "replace", full_disk)
    out = tmp_path / "log.json"
    assert main(["scan", str(REPO), "--jobs", "1", "--out", str(out)]) == 2
    assert os.listdir(tmp_path) == []
