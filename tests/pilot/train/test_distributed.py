"""The distributed training pilot on torchrun: gloo on the CPU, world sizes 1 and 2, a killed rank, two "nodes"."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from accelpilot.cli import main
from accelpilot.pilot.result import read_result
from accelpilot.pilot.train.scaling import (
    WorldStats,
    comm_samples,
    comm_share,
    scaling_figures,
    target_figures,
    world_stats,
)
from accelpilot.pilot.train.torchrun import Launch, failure_line

SRC = str(Path(__file__).resolve().parents[3] / "src")
TINY = ["--device", "cpu", "--batch-size", "2", "--seq-len", "16", "--steps", "3", "--warmup", "2"]
TARGET = ["--target-loss", "5.25", "--runs", "3", "--max-steps", "100", "--eval-every", "5", "--lr", "0.003"]


def _cli(args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen(
        [sys.executable, "-m", "accelpilot", "run", "train", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _stats(world: int, tok: float, pairs: list[dict[str, float]] | None = None) -> WorldStats:
    return WorldStats(
        world=world,
        tokens_per_s=tok,
        samples_per_s=tok / 16,
        step_s=[0.1, 0.2, 0.3],
        rank_median_step_s={r: 0.2 + 0.1 * r for r in range(world)},
        launch_to_first_step_s=3.0,
        process_group_s=0.5,
        comm=comm_share(pairs) if pairs else None,
        grad_bytes=1000,
        ckpt_save_s=0.4,
        ckpt_bytes=2000,
        ckpt_load_s=0.3,
        losses=[5.0, 4.0],
    )


def _sample(allreduce: float, busy: float) -> dict[str, float]:
    return {"sync_s": 0.10, "nosync_s": 0.08, "allreduce_s": allreduce, "busy_s": busy}


# all-reduce / busy: 0.02/0.1 = 0.2, 0.03/0.1 = 0.3, 0.01/0.1 = 0.1, 0.02/0.1 = 0.2
STEADY = [_sample(0.02, 0.10), _sample(0.03, 0.10), _sample(0.01, 0.10), _sample(0.02, 0.10)]
# 0.01/0.1 = 0.1, 0/0.1 = 0, 0/0.1 = 0, 0.005/0.1 = 0.05
NOISY = [_sample(0.01, 0.10), _sample(0.0, 0.10), _sample(0.0, 0.10), _sample(0.005, 0.10)]


def test_scaling_efficiency_is_derived_from_the_measured_throughputs() -> None:
    figs, unavailable, _ = scaling_figures({1: _stats(1, 1000.0), 2: _stats(2, 1500.0, STEADY)}, strong=False)
    eff = figs["scaling_efficiency_world2"]
    assert float(eff.value) == pytest.approx(1500.0 / (2 * 1000.0))  # 0.75, by hand
    assert eff.kind.value == "derived" and "weak" in eff.note
    leaves = {(f.label, float(f.value)) for f in eff.leaves()}
    assert ("training throughput, all ranks", 1000.0) in leaves and ("training throughput, all ranks", 1500.0) in leaves
    assert float(figs["rank_step_skew_world2"].value) == pytest.approx((0.3 - 0.2) / 0.2)
    assert "comm_share_world1" in unavailable  # no sync/no_sync pairs measured there
    strong, _, _ = scaling_figures({1: _stats(1, 1000.0), 4: _stats(4, 3000.0)}, strong=True)
    assert float(strong["scaling_efficiency_world4"].value) == pytest.approx(0.75)
    assert "strong" in strong["scaling_efficiency_world4"].note
    _, missing, _ = scaling_figures({2: _stats(2, 1500.0)}, strong=False)
    assert "world size 1 not measured" in missing["scaling_efficiency"]


def test_comm_share_is_the_median_all_reduce_share_with_its_spread() -> None:
    figs, unavailable, samples = scaling_figures({2: _stats(2, 1500.0, STEADY)}, strong=False)
    # shares sorted 0.1, 0.2, 0.2, 0.3: median 0.2; quartiles (inclusive) at 0.75 and 2.25 of the index range:
    # 0.1 + 0.75 x 0.1 = 0.175 and 0.2 + 0.25 x 0.1 = 0.225, so the spread is 0.05 <= 0.2: measured
    assert float(figs["comm_share_world2"].value) == pytest.approx(0.2)
    assert "0.05" in figs["comm_share_world2"].note and "comm hook" in figs["comm_share_world2"].note
    assert float(figs["allreduce_s_world2"].value) == pytest.approx(0.02)  # median of 0.01, 0.02, 0.02, 0.03
    assert samples["comm_allreduce_s_world2"] == [0.02, 0.03, 0.01, 0.02]
    assert samples["comm_busy_s_world2"] == [0.10] * 4
    assert samples["comm_share_samples_world2"] == pytest.approx([0.2, 0.3, 0.1, 0.2])
    assert samples["comm_sync_s_world2"] == [0.10] * 4 and samples["comm_nosync_s_world2"] == [0.08] * 4
    assert "comm_share_world2" not in unavailable


def test_comm_share_whose_spread_exceeds_it_is_not_measured() -> None:
    figs, unavailable, samples = scaling_figures({2: _stats(2, 1000.0, NOISY)}, strong=False)
    # shares sorted 0, 0, 0.05, 0.1: median 0.025; quartiles 0 + 0.75 x 0 = 0 and 0.05 + 0.25 x 0.05 = 0.0625:
    # spread 0.0625 > 0.025, so the share is noise
    assert "comm_share_world2" not in figs
    assert unavailable["comm_share_world2"].startswith("not measured") and "0.0625" in unavailable["comm_share_world2"]
    assert len(samples["comm_share_samples_world2"]) == 4  # the raw samples are kept all the same
    assert comm_share(STEADY[:3]) is None  # fewer than 4 samples: no spread to judge
    old = [{"sync_s": 0.1, "nosync_s": 0.08}] * 6  # a run whose hook timed nothing has no share
    assert comm_share(old) is None


def test_world_1_reads_not_measured() -> None:
    figs, unavailable, samples = scaling_figures({1: _stats(1, 1000.0, STEADY)}, strong=False)
    assert not any(k.startswith(("comm_share", "allreduce_s")) for k in figs)
    assert unavailable["comm_share_world1"].startswith("not measured: world size 1 exchanges nothing")
    assert len(samples["comm_share_samples_world1"]) == 4


def test_comm_samples_take_the_slowest_rank_and_its_own_compute() -> None:
    ev = [
        {"pair": 0, "rank": 0, "sync_s": 0.10, "nosync_s": 0.08, "timed_s": 0.12, "hook_s": 0.04, "allreduce_s": 0.02},
        {"pair": 0, "rank": 1, "sync_s": 0.11, "nosync_s": 0.07, "timed_s": 0.13, "hook_s": 0.06, "allreduce_s": 0.03},
    ]
    (row,) = comm_samples(ev)
    # busy = timed - hook + all-reduce: rank 0 0.12 - 0.04 + 0.02 = 0.10, rank 1 0.13 - 0.06 + 0.03 = 0.10
    assert row == pytest.approx({"sync_s": 0.11, "nosync_s": 0.08, "allreduce_s": 0.03, "busy_s": 0.10})
    four = [{**e, "timed_passes": 4} for e in ev]  # the same times over 4 passes: per pass a quarter of each
    (row,) = comm_samples(four)
    assert row == pytest.approx({"sync_s": 0.11, "nosync_s": 0.08, "allreduce_s": 0.03 / 4, "busy_s": 0.10 / 4})


def test_time_to_target_from_the_ranks_runs() -> None:
    rows = [
        {"run": 0, "accepted": True, "seconds": 10.0, "steps": 40, "final_eval_loss": 3.2},
        {"run": 1, "accepted": True, "seconds": 30.0, "steps": 60, "final_eval_loss": 3.1},
        {"run": 2, "accepted": True, "seconds": 12.0, "steps": 50, "final_eval_loss": 3.25},
        {"run": 3, "accepted": False, "seconds": 99.0, "steps": 80, "final_eval_loss": 3.4},
    ]
    figs, summary, times = target_figures(rows, 3.3, world=2)
    # olympic mean of the accepted 10, 30, 12: drop 10 and 30, 12 remains; steps: drop 40 and 60, 50 remains
    assert summary == {"runs": 4, "accepted_runs": 3, "time_to_target_s": 12.0}
    assert float(figs["time_to_target_s"].value) == 12.0 and float(figs["steps_to_target"].value) == 50.0
    assert times == [10.0, 30.0, 12.0] and "all 2 ranks" in figs["time_to_target_s"].note
    assert float(figs["final_eval_loss"].value) == 3.4
    none, s2, t2 = target_figures(rows[3:], 3.3, world=2)
    assert (
        s2 == {"runs": 1, "accepted_runs": 0, "time_to_target_s": None} and t2 == [] and "time_to_target_s" not in none
    )


def test_a_restarted_launch_is_read_from_the_attempt_that_finished() -> None:
    ev: list[dict[str, Any]] = []
    for attempt, sec in ((0, 9.0), (1, 0.5)):
        for step in (1, 2):
            ev.append({"event": "step", "rank": 0, "attempt": attempt, "step": step, "seconds": sec, "tokens": 10})
            ev[-1].update(loss=5.0, t=100.0)
    ev = ev[:3]  # attempt 0 died after its first step
    ev.append({"event": "step", "rank": 0, "attempt": 1, "step": 2, "seconds": 0.5, "tokens": 10, "loss": 5, "t": 9})
    st = world_stats(Launch(world=1, t_launch=98.0, wall_s=5.0, returncode=0, events=ev), warmup=1, batch_per_rank=2)
    assert st.restarts == 1 and st.step_s == [0.5]  # attempt 0's 9 s step is not a measurement of this launch


def test_failure_line_names_the_root_cause_rank() -> None:
    log = """Failures:
[1]:
  rank      : 0 (local_rank: 0)
  exitcode  : -15 (pid: 11)
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  rank      : 1 (local_rank: 1)
  exitcode  : -9 (pid: 12)  (SIGKILL)
"""
    assert (
        failure_line(1, log, 2)
        == "rank 1 was killed by SIGKILL at world size 2 (torchrun then stopped 1 other rank(s))"
    )
    assert failure_line(-9, "", 4) == "the torchrun agent was killed by SIGKILL at world size 4"
    crashed = "[rank0]: Traceback (most recent call last):\n[rank0]: RuntimeError: shapes differ\n"
    crashed += "rank      : 0 (local_rank: 0)\n  exitcode  : 3 (pid: 1)"
    assert failure_line(1, crashed, 1) == "rank 0 exited with code 3 at world size 1: RuntimeError: shapes differ"


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--scaling", "1,2", "--global-batch", "3"], "--global-batch"),
        (["--nproc-per-node", str((os.cpu_count() or 1) + 1)], "--nproc-per-node"),
        (["--scaling", f"1,{(os.cpu_count() or 1) * 4}"], "--scaling"),
        (["--nproc-per-node", "2", "--parallel", "tp"], "--parallel"),
        (["--nnodes", "2"], "--rdzv-endpoint"),
        (["--nproc-per-node", "2", "--interrupt-at", "3", "--interrupt-rank", "2"], "--interrupt-rank"),
    ],
)
def test_bad_distributed_input_is_one_line(
    args: list[str], flag: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["run", "train", *TINY, *args, "--out", str(tmp_path)]) == 2
    assert flag in _one_line(capsys)
    assert not list(tmp_path.iterdir())  # no partial result, no run folder


@pytest.fixture(scope="module")
def scaling_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("dist")
    args = [*TINY, "--scaling", "1,2", "--interrupt-at", "3", "--interrupt-rank", "1", "--out", str(out), "--json"]
    proc = _cli(args)
    stdout, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 0, stderr[-3000:]
    (path,) = out.glob("*.json")
    assert [p.name for p in out.iterdir()] == [path.name]  # the run folders and checkpoints are gone
    return {"json": json.loads(stdout), "path": path}


@pytest.mark.slow
def test_scaling_1_2_writes_one_result_with_both_world_sizes(scaling_run: dict[str, Any]) -> None:
    res = read_result(scaling_run["path"])
    f = res.figures
    t1, t2 = float(f["tokens_per_s_world1"].value), float(f["tokens_per_s_world2"].value)
    assert t1 > 0 and t2 > 0
    assert float(f["scaling_efficiency_world2"].value) == pytest.approx(t2 / (2 * t1))
    assert {leaf.label for leaf in f["scaling_efficiency_world2"].leaves()} >= {"training throughput, all ranks"}
    # the communication share is a figure, or "not measured" when its samples spread wider than it; raw samples kept
    assert ("comm_share_world2" in f) != res.details["unavailable"].get("comm_share_world2", "").startswith(
        "not measured"
    )
    assert len(res.samples["comm_sync_s_world2"]) == len(res.samples["comm_nosync_s_world2"]) == 20
    assert len(res.samples["comm_allreduce_s_world2"]) == len(res.samples["comm_busy_s_world2"]) == 20
    assert all(
        0 < a < b
        for a, b in zip(res.samples["comm_allreduce_s_world2"], res.samples["comm_busy_s_world2"], strict=True)
    )
    assert "comm_share_world1" not in f and "exchanges nothing" in res.details["unavailable"]["comm_share_world1"]
    assert "allreduce_s_world2" in f and "allreduce_s_world1" not in f
    for key in (
        "allreduce_bytes_per_step_world2",
        "launch_to_first_step_s_world2",
        "slowest_rank_step_s_world2",
        "rank_step_skew_world2",
        "dcp_save_s_world2",
        "dcp_bytes_world2",
        "dcp_load_s_world2",
        "dcp_load_s_world2_to_world1",
    ):
        assert key in f, key
    assert len(res.samples["step_time_s_world2"]) == 3
    dist = res.details["distributed"]
    assert dist["portability"]["world2_to_world1"]["identical_weights"] is True  # saved at 2, loaded at 1
    assert set(dist["per_world"]["2"]["rank_median_step_s"]) == {"0", "1"}
    topo = res.platform.model_dump()["topology"]
    assert topo["backend"] == "gloo" and topo["world_sizes"] == [1, 2] and "torchrun" in topo["launcher"]
    assert res.errors == []
    # the summary is world size 1's, and says so: one rank, one accelerator (a CPU process counts as one)
    assert res.topology is not None and (res.topology.world_size, res.topology.accelerators) == (1, 1.0)
    assert res.training is not None and res.training.tokens_per_s == float(f["tokens_per_s_world1"].value)


@pytest.mark.slow
def test_a_killed_rank_is_recovered_by_torchrun(scaling_run: dict[str, Any]) -> None:
    res = read_result(scaling_run["path"])
    intr = res.details["distributed"]["interrupt"]
    assert intr["world"] == 2 and intr["interrupt_rank"] == 1 and intr["restarts"] >= 1
    assert intr["restored_step"] == 2 and intr["steps_lost"] == 1  # checkpoint every 2 steps, killed after 3
    assert len(intr["loss_curve_resumed"]) == 5 - 2
    assert intr["matches"] is True  # gloo on the CPU is deterministic: the resumed curve is the uninterrupted one
    assert float(res.figures["rank_recover_s"].value) > 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_two_nodes_on_loopback_join_one_rendezvous(tmp_path: Path) -> None:
    port = _free_port()
    common = [*TINY, "--nnodes", "2", "--nproc-per-node", "1", "--rdzv-endpoint", f"127.0.0.1:{port}", *TARGET]
    nodes = [_cli([*common, "--node-rank", str(r), "--out", str(tmp_path / f"node{r}")]) for r in (0, 1)]
    outs = [n.communicate(timeout=600) for n in nodes]
    assert [n.returncode for n in nodes] == [0, 0], [o[1][-2000:] for o in outs]
    (path,) = (tmp_path / "node0").glob("*.json")
    assert not list((tmp_path / "node1").glob("*.json"))  # one job, one result: node rank 0 writes it
    res = read_result(path)
    assert res.platform.model_dump()["topology"]["nnodes"] == 2
    ranks = res.details["distributed"]["per_world"]["2"]["rank_median_step_s"]
    assert set(ranks) == {"0", "1"}  # rank 1 ran on the other "node" and its steps were gathered
    assert "dcp" in res.details["unavailable"]
    assert res.topology is not None and (res.topology.world_size, res.topology.nnodes, res.topology.nproc_per_node) == (
        2,
        2,
        1,
    )
    t = res.training
    assert t is not None and t.runs == 3 and t.time_to_target_s is not None  # time to target across nodes
    assert all(run["ranks"] == [0, 1] for run in res.details["time_to_target"]["runs"])  # node 1's rank gathered


@pytest.mark.slow
def test_a_rendezvous_that_never_answers_is_bounded(tmp_path: Path) -> None:
    port = _free_port()  # nobody listens here
    args = [*TINY, "--nnodes", "2", "--node-rank", "1", "--rdzv-endpoint", f"127.0.0.1:{port}"]
    t0 = time.monotonic()
    proc = _cli([*args, "--rdzv-timeout-s", "5", "--out", str(tmp_path)])
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, err[-2000:]
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--rdzv-endpoint" in lines[0] and "Traceback" not in err
    assert time.monotonic() - t0 < 240
    assert not list(tmp_path.glob("*.json"))


@pytest.mark.slow
def test_fsdp2_shards_and_its_checkpoint_loads_at_another_world_size(tmp_path: Path) -> None:
    easy = ["--target-loss", "5.35", "--runs", "3", "--max-steps", "150", "--eval-every", "5", "--lr", "0.003"]
    proc = _cli([*TINY, "--scaling", "1,2", "--parallel", "fsdp", *easy, "--out", str(tmp_path)])
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err[-3000:]
    res = read_result(next(tmp_path.glob("*.json")))
    assert res.platform.model_dump()["topology"]["parallel"] == "fsdp"
    assert "tokens_per_s_world2" in res.figures and "scaling_efficiency_world2" in res.figures
    assert "comm_share_world2" not in res.figures and "FSDP" in res.details["unavailable"]["comm_share_world2"]
    assert res.details["distributed"]["portability"]["world2_to_world1"]["identical_weights"] is True
    t = res.training  # time to target at the summary's world size (1), FSDP's shards reset to fresh weights per run
    assert t is not None and t.runs == 3 and t.accepted_runs == 3 and res.details["time_to_target"]["world_size"] == 1


@pytest.mark.slow
def test_nproc_2_is_a_complete_pilot_and_its_checkpoint_resumes_at_world_1_with_fsdp(tmp_path: Path) -> None:
    """Time to target and the olympic mean over --runs at world size 2; then `--resume` of its sharded checkpoint."""
    keep = tmp_path / "ckpt"
    proc = _cli([*TINY, "--nproc-per-node", "2", *TARGET, "--checkpoint-dir", str(keep), "--out", str(tmp_path / "a")])
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    res = read_result(next((tmp_path / "a").glob("*.json")))
    t, topo = res.training, res.topology
    assert t is not None and topo is not None
    assert (topo.world_size, topo.nnodes, topo.nproc_per_node, topo.accelerators) == (2, 1, 2, 2.0)
    assert t.tokens_per_s == float(res.figures["tokens_per_s_world2"].value)  # all ranks of world size 2
    assert float(res.figures["tokens_per_s_per_accelerator"].value) == pytest.approx(t.tokens_per_s / 2)
    assert t.runs == 3 and t.accepted_runs == 3 and res.accepted is True and t.target_loss == 5.25
    times = res.samples["time_to_target_s"]
    assert len(times) == 3 and t.time_to_target_s == pytest.approx(sorted(times)[1])  # olympic mean of three
    for run in res.details["time_to_target"]["runs"]:
        *before, (last_step, last_loss) = run["eval_curve"]
        assert last_loss <= 5.25 and last_step == run["steps"] and all(loss > 5.25 for _, loss in before)
    assert len(res.samples["comm_share_samples_world2"]) == 20  # the communication share's raw samples are kept
    assert ("comm_share_world2" in res.figures) != ("comm_share_world2" in res.details["unavailable"])
    (step_dir,) = keep.glob("*-world2/ckpt/step_5")
    resumed = _cli([*TINY, "--resume", str(keep), "--parallel", "fsdp", "--out", str(tmp_path / "b")])
    _, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err[-3000:]
    again = read_result(next((tmp_path / "b").glob("*.json")))
    info = again.details["distributed"]["resume"]
    assert (
        info["from"] == str(step_dir.resolve()) and info["saved"]["world"] == 2 and info["saved"]["parallel"] == "ddp"
    )
    assert info["loaded_at_world"] == 1 and info["parallel"] == "fsdp"
    assert info["identical_weights"] is True  # the DDP world-2 weights, resharded into FSDP at world 1
    fresh = res.details["distributed"]["per_world"]["2"]["loss_curve_rank0"][0]
    assert info["first_loss"] < fresh - 0.1  # it continued the trained model, not a fresh one
    assert again.errors == [] and again.topology is not None and again.topology.world_size == 1
    other = _cli([*TINY, "--size", "small", "--resume", str(keep), "--out", str(tmp_path / "c")])
    _, err = other.communicate(timeout=120)
    assert other.returncode == 2 and "--resume" in err and "holds a gpt-tiny checkpoint" in err, err[-2000:]


def test_topology_counts_accelerators_from_the_device_table(monkeypatch: pytest.MonkeyPatch) -> None:
    from accelpilot.pilot.result import Platform
    from accelpilot.pilot.train.record import topology_of

    monkeypatch.delenv("NEURON_LOGICAL_NC_CONFIG", raising=False)
    trn1 = Platform(device="neuron", device_type="neuron", accelerator="Trainium")
    t, how = topology_of(trn1, world=64, nnodes=2)  # trn1.32xlarge x 2: 32 NeuronCores each, 2 per chip
    assert (t.nproc_per_node, t.devices_per_accelerator, t.accelerators) == (32, 2, 64 / 2) and "assumed" in how
    trn2 = Platform(device="neuron", device_type="neuron", accelerator="Trainium2")
    t, how = topology_of(trn2, world=64)  # 8 NeuronCores per chip at LNC=2: 4 logical per chip, 64 / 4 = 16 chips
    assert (t.devices_per_accelerator, t.accelerators) == (4, 16.0) and "LNC=2" in how
    monkeypatch.setenv("NEURON_LOGICAL_NC_CONFIG", "1")
    assert topology_of(trn2, world=64)[0].accelerators == 64 / 8  # LNC=1: 8 per chip
    h100 = Platform(device="cuda", device_type="cuda", accelerator="H100")
    assert topology_of(h100, world=16, nnodes=2)[0].accelerators == 16.0  # one GPU per rank
    cpu = Platform(device="cpu", device_type="cpu")
    assert topology_of(cpu, world=2)[0].accelerators == 2.0  # a CPU process counts as one
