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
from accelpilot.pilot.train.scaling import WorldStats, comm_share, scaling_figures, world_stats
from accelpilot.pilot.train.torchrun import Launch

SRC = str(Path(__file__).resolve().parents[3] / "src")
TINY = ["--device", "cpu", "--batch-size", "2", "--seq-len", "16", "--steps", "3", "--warmup", "2"]


def _cli(args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen(
        [sys.executable, "-m", "accelpilot", "run", "train", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _stats(world: int, tok: float, sync: float | None = None, nosync: float | None = None) -> WorldStats:
    return WorldStats(
        world=world,
        tokens_per_s=tok,
        samples_per_s=tok / 16,
        step_s=[0.1, 0.2, 0.3],
        rank_median_step_s={r: 0.2 + 0.1 * r for r in range(world)},
        launch_to_first_step_s=3.0,
        process_group_s=0.5,
        fwd_bwd_sync_s=sync,
        fwd_bwd_nosync_s=nosync,
        grad_bytes=1000,
        ckpt_save_s=0.4,
        ckpt_bytes=2000,
        ckpt_load_s=0.3,
        losses=[5.0, 4.0],
    )


def test_scaling_efficiency_is_derived_from_the_measured_throughputs() -> None:
    figs, unavailable = scaling_figures({1: _stats(1, 1000.0), 2: _stats(2, 1500.0, 0.08, 0.06)}, strong=False)
    eff = figs["scaling_efficiency_world2"]
    assert float(eff.value) == pytest.approx(1500.0 / (2 * 1000.0))  # 0.75, by hand
    assert eff.kind.value == "derived" and "weak" in eff.note
    leaves = {(f.label, float(f.value)) for f in eff.leaves()}
    assert ("training throughput, all ranks", 1000.0) in leaves and ("training throughput, all ranks", 1500.0) in leaves
    assert float(figs["comm_share_world2"].value) == pytest.approx((0.08 - 0.06) / 0.08)  # 0.25
    assert float(figs["rank_step_skew_world2"].value) == pytest.approx((0.3 - 0.2) / 0.2)
    assert "comm_share_world1" in unavailable  # no sync/no_sync pair measured there
    strong, _ = scaling_figures({1: _stats(1, 1000.0), 4: _stats(4, 3000.0)}, strong=True)
    assert float(strong["scaling_efficiency_world4"].value) == pytest.approx(0.75)
    assert "strong" in strong["scaling_efficiency_world4"].note
    _, missing = scaling_figures({2: _stats(2, 1500.0)}, strong=False)
    assert "world size 1 not measured" in missing["scaling_efficiency"]


def test_world_stats_take_the_slowest_rank_per_step() -> None:
    ev: list[dict[str, Any]] = [{"event": "process_group", "rank": r, "attempt": 0, "seconds": 0.1} for r in (0, 1)]
    times = {(1, 0): 9.0, (1, 1): 9.0, (2, 0): 0.10, (2, 1): 0.30, (3, 0): 0.20, (3, 1): 0.10}
    for (step, rank), sec in times.items():
        ev.append(
            {
                "event": "step",
                "rank": rank,
                "attempt": 0,
                "step": step,
                "seconds": sec,
                "tokens": 32,
                "loss": 5.0 - step,
                "t": 100.0 + step,
            }
        )
    st = world_stats(Launch(world=2, t_launch=98.0, wall_s=5.0, returncode=0, events=ev), warmup=1, batch_per_rank=2)
    assert st.step_s == [0.30, 0.20]  # step 1 is warm-up
    assert st.tokens_per_s == pytest.approx(4 * 32 / 0.5)
    assert st.rank_median_step_s == {0: pytest.approx(0.15), 1: pytest.approx(0.20)}
    assert st.launch_to_first_step_s == pytest.approx(3.0)
    assert st.losses == [4.0, 3.0, 2.0]


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
    for key in (
        "comm_share_world2",
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
    common = [*TINY, "--nnodes", "2", "--nproc-per-node", "1", "--rdzv-endpoint", f"127.0.0.1:{port}"]
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
    proc = _cli([*TINY, "--scaling", "1,2", "--parallel", "fsdp", "--out", str(tmp_path)])
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err[-3000:]
    res = read_result(next(tmp_path.glob("*.json")))
    assert res.platform.model_dump()["topology"]["parallel"] == "fsdp"
    assert "tokens_per_s_world2" in res.figures and "scaling_efficiency_world2" in res.figures
    assert "comm_share_world2" not in res.figures and "FSDP" in res.details["unavailable"]["comm_share_world2"]
    assert res.details["distributed"]["portability"]["world2_to_world1"]["identical_weights"] is True
