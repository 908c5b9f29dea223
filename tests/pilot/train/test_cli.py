"""`accelpilot run train` end to end on the CPU: every measurement, a real SIGKILL, parity, bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from accelpilot.cli import main
from accelpilot.pilot.result import read_result
from accelpilot.pilot.stats import olympic_mean

SRC = str(Path(__file__).resolve().parents[2] / "src")
SMALL = ["--batch-size", "8", "--seq-len", "32", "--steps", "4", "--warmup", "2"]

EXPECTED_FIGURES = {
    "time_to_first_correct_run_s",
    "first_step_s",
    "compile_time_s",
    "compile_time_eval_s",
    "recompilations",
    "recompile_time_s",
    "shape_32_first_call_s",
    "shape_32_step_s",
    "shape_16_step_s",
    "padding_cost_ratio",
    "tokens_per_s",
    "samples_per_s",
    "step_time_p50_s",
    "step_time_p90_s",
    "step_time_p99_s",
    "model_flops_per_s",
    "peak_host_rss_bytes",
    "time_to_target_s",
    "steps_to_target",
    "final_eval_loss",
    "checkpoint_write_s",
    "checkpoint_bytes",
    "checkpoint_restore_s",
    "interrupt_steps_lost",
    "restart_s",
    "restart_to_first_step_s",
    "resume_loss_max_abs_diff",
    "profile_top_ops_share",
    "profile_time_to_identify_s",
}


def _run_cli(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "accelpilot", *args], capture_output=True, text=True, env=env, timeout=600, check=False
    )


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("results")
    args = ["run", "train", "--device", "cpu", *SMALL, "--shapes", "32,16", "--runs", "3"]
    args += ["--target-loss", "4.6", "--max-steps", "80", "--eval-every", "5"]
    args += ["--interrupt-at", "4", "--checkpoint-every", "3", "--out", str(out), "--json"]
    proc = _run_cli(args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout)  # stdout holds nothing but the result
    files = list(out.glob("cpu-gpt-tiny-*.json"))
    assert len(files) == 1
    assert [p.name for p in out.iterdir()] == [files[0].name]  # no empty .checkpoints-* folder, no temp file
    return data, files[0]


def test_result_has_every_measurement(full_run: tuple[dict[str, Any], Path]) -> None:
    data, path = full_run
    res = read_result(path)
    assert res.kind == "training" and res.model_dump(mode="json")["figures"] == data["figures"]
    missing = EXPECTED_FIGURES - set(res.figures)
    assert not missing, missing
    assert all(f.kind.value in ("measured", "derived", "list_price") for f in res.figures.values())
    assert res.figures["tokens_per_s"].unit == "token/s" and float(res.figures["tokens_per_s"].value) > 0
    assert res.command.startswith("accelpilot run train") and "--interrupt-at 4" in res.command
    assert res.platform.device == "cpu" and res.workload.name == "gpt-tiny" and res.workload.params
    assert len(res.samples["step_time_s"]) == 4
    # CPU: no MFU and no device memory counter, each with a reason; no errors
    assert "mfu" not in res.figures and "catalog accelerator" in res.details["unavailable"]["mfu"]
    assert res.errors == []
    first = res.details["first_run"]
    assert first["correct"] and first["tolerance_relative"] > 0
    assert first["relative_difference"] <= first["tolerance_relative"]
    prof = res.details["profile"]
    assert prof["slowest_op"] and prof["top_ops"][0]["op"] == prof["slowest_op"]


def test_time_to_target_is_an_olympic_mean(full_run: tuple[dict[str, Any], Path]) -> None:
    res = read_result(full_run[1])
    t = res.training
    assert t is not None and t.runs == 3 and t.accepted_runs == 3 and res.accepted is True
    times = res.samples["time_to_target_s"]
    assert len(times) == 3
    assert t.time_to_target_s == pytest.approx(olympic_mean(times))
    assert float(res.figures["time_to_target_s"].value) == pytest.approx(sorted(times)[1])
    for run in res.details["time_to_target"]["runs"]:
        *before, (last_step, last_loss) = run["eval_curve"]
        assert last_loss <= 4.6 and last_step == run["steps"]  # the run stops at the first eval on target
        assert all(loss > 4.6 for _, loss in before)  # ... and not a step later
        assert [s for s, _ in run["eval_curve"]] == list(range(5, last_step + 1, 5))  # every --eval-every steps
    assert res.config["target_loss"] == 4.6


def test_interrupt_really_kills_and_resumes(full_run: tuple[dict[str, Any], Path]) -> None:
    res = read_result(full_run[1])
    intr = res.details["interrupt"]
    assert intr["killed_returncode"] == -signal.SIGKILL
    with pytest.raises(ProcessLookupError):
        os.kill(intr["killed_pid"], 0)  # the killed worker is gone
    assert intr["restored_step"] == 3 and intr["steps_lost"] == 1
    assert float(res.figures["interrupt_steps_lost"].value) == 1
    assert intr["loss_curve_before_kill"] == intr["loss_curve_uninterrupted"][:4]
    assert len(intr["loss_curve_resumed"]) == intr["total_steps"] - 3
    assert intr["bitwise_equal"] is True and intr["matches"] is True  # deterministic on the CPU
    assert intr["restart_s"] > 0


def test_compare_to_and_target_not_reached(full_run: tuple[dict[str, Any], Path], tmp_path: Path) -> None:
    """A second platform's run compared with the first; its target is out of reach: not accepted, exit 0."""
    other = full_run[1]
    args = ["run", "train", *SMALL, "--runs", "1", "--target-loss", "0.01", "--max-steps", "6", "--eval-every", "3"]
    args += ["--interrupt-at", "0", "--shapes", "32", "--compare-to", str(other), "--out", str(tmp_path)]
    code = main(args)
    assert code == 0
    res = read_result(next(tmp_path.glob("*.json")))
    assert res.accepted is False and res.training is not None and res.training.accepted_runs == 0
    assert "time_to_target_s" not in res.figures and "not accepted" in res.details["unavailable"]["time_to_target_s"]
    parity = res.details["parity"]
    assert parity["init"]["max_abs_diff"] == 0.0  # same seed, same platform: identical numerics
    assert parity["trained"]["max_abs_diff"] > 0  # trained differently (fewer steps)
    assert "parity_eval_loss_diff" in res.figures and "parity_logits_max_abs_diff" in res.figures
    theirs = read_result(other).details["reference_outputs"]["eval_loss"]
    mine = res.details["reference_outputs"]["eval_loss"]
    assert parity["eval_loss_diff"] == pytest.approx(mine - theirs)


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err, err
    return err


def test_bad_device_names_what_torch_sees(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["run", "train", "--device", "tpu", "--out", str(tmp_path)]) == 2
    assert "present here: cpu" in _one_line_error(capsys)
    assert main(["run", "train", "--device", "cuda", "--out", str(tmp_path)]) == 2
    assert "not present" in _one_line_error(capsys)


def test_factory_that_does_not_import(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["run", "train", "--workload", "no_such_pkg.mod:factory", "--out", str(tmp_path)]) == 2
    assert "cannot import 'no_such_pkg.mod'" in _one_line_error(capsys)


def test_unwritable_checkpoint_dir_is_refused_before_training(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Checked with --out before the first step (it used to be found 10-42 s into the run, issue 28)."""
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    out = tmp_path / "out"
    args = ["run", "train", *SMALL, "--runs", "1", "--max-steps", "5", "--interrupt-at", "0", "--shapes", "32"]
    code = main([*args, "--checkpoint-dir", str(blocker / "ckpt"), "--out", str(out)])
    assert code == 2
    line = _one_line_error(capsys)
    assert "--checkpoint-dir" in line and str(blocker / "ckpt") in line
    assert not list(out.glob("*.json"))  # nothing was measured, so nothing is written


def test_single_device_result_says_one_process_on_one_accelerator(full_run: tuple[dict[str, Any], Path]) -> None:
    res = read_result(full_run[1])
    t = res.topology
    assert t is not None and (t.world_size, t.nnodes, t.nproc_per_node, t.accelerators) == (1, 1, 1, 1.0)
    tok = float(res.figures["tokens_per_s"].value)
    assert float(res.figures["tokens_per_s_per_accelerator"].value) == pytest.approx(tok / 1)  # a CPU process: one
    assert "CPU" in res.details["topology"]["assumed"]


USER_WORKLOAD = """
import torch

class Regression:
    name = "user-regression"

    def build_model(self):
        return torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))

    def example_inputs(self):
        return (torch.ones(4, 8),)

    def batches(self, split, batch_size, seq_len, seed):
        g = torch.Generator().manual_seed(seed * 2 + (split == "eval"))
        w = torch.arange(8, dtype=torch.float32) / 8
        while True:
            x = torch.randn(batch_size, 8, generator=g)
            yield x, (x @ w).unsqueeze(1)

    def loss(self, model, batch):
        return torch.nn.functional.mse_loss(model(batch[0]), batch[1])

    def tokens_in(self, batch):
        return int(batch[0].shape[0])


def make(**options):
    return Regression()
"""


def test_user_workload_plugs_in(tmp_path: Path) -> None:
    mod = tmp_path / "userwl.py"
    mod.write_text(USER_WORKLOAD)
    out = tmp_path / "out"
    args = [
        "run",
        "train",
        "--workload",
        f"{mod}:make",
        "--batch-size",
        "16",
        "--steps",
        "3",
        "--runs",
        "1",
        "--lr",
        "0.01",
    ]
    args += ["--target-loss", "0.2", "--max-steps", "200", "--interrupt-at", "3", "--checkpoint-every", "2"]
    assert main([*args, "--out", str(out)]) == 0
    res = read_result(next(out.glob("cpu-user-regression-*.json")))
    assert res.workload.factory.endswith("userwl.py:make")
    assert res.accepted is True and "time_to_target_s" in res.figures
    assert res.details["interrupt"]["bitwise_equal"] is True  # the worker process imports the user's file too
    # the user's workload gives no flops_per_token: the FLOPs per token are the 6N assumption, N = its parameters
    (fpt,) = [f for f in res.figures["model_flops_per_s"].leaves() if f.unit == "FLOP/token"]
    assert fpt.kind.value == "assumption" and fpt.source.startswith("6N")
    assert res.workload.params is not None
    assert float(fpt.value) == 6 * res.workload.params == 6 * (8 * 32 + 32 + 32 + 1)


def test_compare_to_missing_file_fails_before_measuring(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["run", "train", "--compare-to", str(tmp_path / "nope.json"), "--out", str(tmp_path / "o")]) == 2
    assert "no such result file" in _one_line_error(capsys)
    assert not list((tmp_path / "o").glob("*.json"))
