"""Issue 25's chain on this CPU: launch the three-candidate example, run the multi-node task's run block as two
loopback nodes and the one-node scaling task written beside it, collect what they wrote (joined as result and
scaling_result), bill it; hours per run = tokens / throughput of all ranks, scaled by the measured efficiency.

The worked example's three candidates are one node each; its trn1 on-demand candidate is made two trn1.2xlarge
nodes (one Trainium chip each) so that one task spans two nodes and the devices priced (2 x 1 chip) equal the
devices measured (2 CPU ranks): the bill then divides by the measured throughput and nothing else. The run block
is executed verbatim by bash, with the task's own environment overridden only where ``sky launch --env`` would
(device cpu, the smallest pilot, a free rendezvous port) and the variables SkyPilot sets on each node faked.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from tests.launch.conftest import ROOT, WORKED, run_cli

from accelpilot.pilot.result import read_result

yaml = pytest.importorskip("yaml", reason="PyYAML (installed with SkyPilot) reads the written YAML back")

SMALL = "--size tiny --batch-size 8 --seq-len 32 --steps 3 --warmup 1 --shapes 32 --runs 1"
TOKENS = 100_000_000


def _two_node_example(tmp_path: Path) -> Path:
    text = WORKED.read_text()
    old = 'name = "trn1.32xlarge on-demand"\ninstance = "trn1.32xlarge"\n'
    assert old in text, "the worked example's trn1 on-demand option moved; update this test"
    new = f'name = "trn1.2xlarge x 2 on-demand"\ninstance = "trn1.2xlarge"\ninstances = 2\ntokens_per_run = {TOKENS}\n'
    scenario = tmp_path / "worked-example.toml"
    scenario.write_text(text.replace(old, new))
    return scenario


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _more_options(text: str) -> str:
    """Two options priced from the same two-node campaign, launched for neither (``--skip``): one node and four."""
    return text + "".join(
        f'''
[[options]]
name = "{name}"
instance = "trn1.2xlarge"
instances = {n}
pricing = "on_demand"
tokens_per_run = {TOKENS}
'''
        for name, n in ((ONE, 1), (FOUR, 4))
    )


ONE, FOUR = "trn1.2xlarge x 1 on-demand", "trn1.2xlarge x 4 on-demand"


def _node_env(task: dict, home: Path, shim: Path, rank: int, nodes: int, port: str) -> dict[str, str]:
    """The task's environment on one node, overridden where `sky launch --env` would, SKYPILOT_* faked."""
    return {
        **os.environ,
        **task["envs"],
        "HOME": str(home),
        "ACCELPILOT_DEVICE": "cpu",
        "ACCELPILOT_RDZV_PORT": port,
        "SKYPILOT_NODE_RANK": str(rank),
        "SKYPILOT_NODE_IPS": "\n".join(["127.0.0.1"] * nodes),
        "SKYPILOT_NUM_NODES": str(nodes),
        "SKYPILOT_NUM_GPUS_PER_NODE": "1",
        "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }


@pytest.mark.slow
def test_launch_two_loopback_nodes_collect_bill(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = _two_node_example(tmp_path)
    scenario.write_text(_more_options(scenario.read_text()))
    tasks = tmp_path / "tasks"
    args = ["launch", str(scenario), "--out", str(tasks), "--no-check", "--pilot-args", SMALL]
    code, _, err = run_cli([*args, "--skip", ONE, "--skip", FOUR], capsys)
    assert code == 0, err
    yamls = sorted(p.name for p in tasks.glob("*.yaml"))
    # three candidates, three tasks, and the one-node scaling task beside the two-node one
    assert len(yamls) == 4, yamls
    loaded = {n: yaml.safe_load((tasks / n).read_text()) for n in yamls}
    multi = [t for t in loaded.values() if t["num_nodes"] > 1]
    assert len(multi) == 1
    task = multi[0]
    assert task["num_nodes"] == 2
    scaling_task = loaded[f"{task['name'].removeprefix('accelpilot-')}-scaling.yaml"]
    assert (
        scaling_task["num_nodes"] == 1
        and scaling_task["envs"]["ACCELPILOT_OPTIONS"] == task["envs"]["ACCELPILOT_OPTIONS"]
    )
    # trn1.2xlarge: 1 Trainium chip x 2 NeuronCores = 2 processes per node, so world sizes 1 and 2
    assert scaling_task["envs"]["ACCELPILOT_SCALING"] == "1,2"
    if importlib.util.find_spec("sky") is not None:  # SkyPilot's own schema and parser, offline
        from accelpilot.launch.skypilot import check_task

        check_task(scaling_task, "scaling task")
        check_task(task, "two-node task")

    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "accelpilot").write_text(f'#!/bin/sh\nexec {sys.executable} -m accelpilot "$@"\n')
    (shim / "accelpilot").chmod(0o755)
    port = str(_free_port())
    runs = []  # (home, task, rank, nodes)
    for rank in (0, 1):  # each node is its own machine: its own home and results folder
        runs.append((tmp_path / f"node{rank}", task, rank, 2))
    runs.append((tmp_path / "scaling-node", scaling_task, 0, 1))
    codes = []
    for batch in (runs[:2], runs[2:]):  # the two nodes together, then the scaling node (not sharing the cores)
        procs = []
        for home, t, rank, nodes in batch:
            home.mkdir()
            env = _node_env(t, home, shim, rank, nodes, port)
            if t is task:
                env["ACCELPILOT_NPROC_PER_NODE"] = "1"  # one CPU process per node (the task's own count is 2)
            log = (home / "log").open("w")
            cmd = ["bash", "-c", t["run"]]
            procs.append(subprocess.Popen(cmd, env=env, cwd=home, stdout=log, stderr=subprocess.STDOUT))
            log.close()  # the child holds its own copy
        for p in procs:
            try:
                codes.append(p.wait(timeout=600))
            except subprocess.TimeoutExpired:
                p.kill()
                codes.append(p.wait())
    logs = [(home / "log").read_text()[-2000:] for home, *_ in runs]
    assert codes == [0, 0, 0], logs  # every node exits 0, the worker that writes no result too
    written = sorted((tmp_path / "node0" / "accelpilot-results").glob("*.json"))
    assert len(written) == 1, logs
    assert not list((tmp_path / "node1").glob("accelpilot-results/*.json"))  # node 0 writes the result
    scaled = sorted((tmp_path / "scaling-node" / "accelpilot-results").glob("*.json"))
    assert len(scaled) == 1, logs
    res, sres = read_result(written[0]), read_result(scaled[0])
    assert res.topology is not None and res.topology.world_size == 2 and res.topology.nnodes == 2
    assert res.training is not None and res.training.tokens_per_s
    assert sres.topology is not None and sres.topology.nnodes == 1

    # bring both results home, one folder per task as the README's rsync lines do, collect, bill
    home = tmp_path / "results"
    for src, sub in ((written[0].parent, "two-node"), (scaled[0].parent, "scaling")):
        (home / sub).mkdir(parents=True)
        for f in src.iterdir():
            (home / sub / f.name).write_bytes(f.read_bytes())
    option = "trn1.2xlarge x 2 on-demand"
    # --as: the results ran on the CPU, which the Trainium option's platform contradicts (collect refuses that
    # unless told); the same campaign also prices one node and four
    collect = ["collect", str(home), "--scenario", str(scenario), "--write", "--json"]
    for name in (option, ONE, FOUR):
        code, out, err = run_cli([*collect, "--as", name], capsys)
        assert code == 0, err
        row = next(r for r in json.loads(out)["options"] if r["option"] == name)
        assert row["result"].endswith(written[0].name) and row["scaling_result"].endswith(scaled[0].name)
    text = scenario.read_text()
    assert text.count(f'result = "results/two-node/{written[0].name}"') == 3
    assert text.count(f'scaling_result = "results/scaling/{scaled[0].name}"') == 3
    code, out, err = run_cli(["bill", str(scenario), "--json"], capsys)
    assert code == 0, err
    opts = {o["name"]: o for o in json.loads(out)["options"]}

    # by hand, from the throughputs in the two result files
    tps = res.training.tokens_per_s  # both ranks of the two-node run, tokens/s
    one = float(sres.figures["tokens_per_s_world1"].value)  # world 1 of the one-node scaling run
    eff2 = tps / (2 * one)  # efficiency at the measured world size 2 (over 2 nodes) against world 1
    # 2 instances x 1 chip priced, 2 ranks measured: tokens / throughput of all ranks, no efficiency
    hours2 = TOKENS / tps / 3600
    # 1 chip priced: nearest world size 1 (efficiency 1), relative to eff2 at the measured 2: tps x 1/2 x 1/eff2
    hours1 = TOKENS / (tps * (1 / 2) * (1.0 / eff2)) / 3600
    # 4 chips priced: nearest world size measured is 2 (eff2, extrapolated), relative to eff2: tps x 4/2 x 1
    hours4 = TOKENS / (tps * (4 / 2) * (eff2 / eff2)) / 3600
    for name, hours, n in ((option, hours2, 2), (ONE, hours1, 1), (FOUR, hours4, 4)):
        got = opts[name]
        assert got["measured"] is True
        assert got["hours_per_run"] == pytest.approx(hours, rel=1e-3, abs=5e-5), name  # the JSON rounds to 4 places
        assert got["cost_per_run"] == pytest.approx(n * 1.34 * hours, abs=0.01), name  # n x trn1.2xlarge at 1.34/h
    assert hours1 == pytest.approx(TOKENS / one / 3600)  # one chip priced at the measured one-rank throughput
    notes4 = " ".join(opts[FOUR]["notes"])
    assert "extrapolated beyond the largest world size measured (2)" in notes4, notes4
    print(
        f"chain: world_size={res.topology.world_size} tokens/s={tps:.1f} world1 tokens/s={one:.1f} "
        f"eff2={eff2:.3f} hours by hand x2={hours2:.4f} x1={hours1:.4f} x4={hours4:.4f} billed "
        f"x2={opts[option]['hours_per_run']} x1={opts[ONE]['hours_per_run']} x4={opts[FOUR]['hours_per_run']}"
    )
