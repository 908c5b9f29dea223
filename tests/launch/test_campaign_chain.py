"""Issue 25's chain on this CPU: launch the three-candidate example, run the multi-node task's run block as two
loopback nodes, collect what they wrote, bill it; hours per run = tokens / throughput of all ranks.

The worked example's three candidates are one node each; its trn1 on-demand candidate is made two trn1.2xlarge
nodes (one Trainium chip each) so that one task spans two nodes and the devices priced (2 x 1 chip) equal the
devices measured (2 CPU ranks): the bill then divides by the measured throughput and nothing else. The run block
is executed verbatim by bash, with the task's own environment overridden only where ``sky launch --env`` would
(device cpu, the smallest pilot, a free rendezvous port) and the variables SkyPilot sets on each node faked.
"""

from __future__ import annotations

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


@pytest.mark.slow
def test_launch_two_loopback_nodes_collect_bill(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = _two_node_example(tmp_path)
    tasks = tmp_path / "tasks"
    args = ["launch", str(scenario), "--out", str(tasks), "--no-check", "--pilot-args", SMALL]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    yamls = sorted(p.name for p in tasks.glob("*.yaml"))
    assert len(yamls) == 3, yamls  # three candidates, three tasks
    multi = [yaml.safe_load((tasks / n).read_text()) for n in yamls]
    multi = [t for t in multi if t["num_nodes"] > 1]
    assert len(multi) == 1
    task = multi[0]
    assert task["num_nodes"] == 2

    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "accelpilot").write_text(f'#!/bin/sh\nexec {sys.executable} -m accelpilot "$@"\n')
    (shim / "accelpilot").chmod(0o755)
    port = str(_free_port())
    procs = []
    for rank in (0, 1):
        node = tmp_path / f"node{rank}"  # each node is its own machine: its own home and results folder
        node.mkdir()
        env = {
            **os.environ,
            **task["envs"],
            "HOME": str(node),
            "ACCELPILOT_DEVICE": "cpu",
            "ACCELPILOT_NPROC_PER_NODE": "1",  # one CPU process per node (the task's own per-node count may differ)
            "ACCELPILOT_RDZV_PORT": port,
            "SKYPILOT_NODE_RANK": str(rank),
            "SKYPILOT_NODE_IPS": "127.0.0.1\n127.0.0.1",
            "SKYPILOT_NUM_NODES": "2",
            "SKYPILOT_NUM_GPUS_PER_NODE": "1",
            "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
        }
        log = (node / "log").open("w")
        cmd = ["bash", "-c", task["run"]]
        procs.append(subprocess.Popen(cmd, env=env, cwd=node, stdout=log, stderr=subprocess.STDOUT))
        log.close()  # the child holds its own copy
    codes = []
    for p in procs:
        try:
            codes.append(p.wait(timeout=600))
        except subprocess.TimeoutExpired:
            p.kill()
            codes.append(p.wait())
    logs = [(tmp_path / f"node{r}" / "log").read_text()[-2000:] for r in (0, 1)]
    assert codes == [0, 0], logs  # every node exits 0, the worker that writes no result too
    written = sorted((tmp_path / "node0" / "accelpilot-results").glob("*.json"))
    assert len(written) == 1, logs
    assert not list((tmp_path / "node1").glob("accelpilot-results/*.json"))  # node 0 writes the result
    res = read_result(written[0])
    assert res.topology is not None and res.topology.world_size == 2 and res.topology.nnodes == 2
    assert res.training is not None and res.training.tokens_per_s

    # bring the result home into the scenario's folder, collect it into the option, bill it
    home = tmp_path / "results"
    home.mkdir()
    for f in written[0].parent.iterdir():
        (home / f.name).write_bytes(f.read_bytes())
    option = "trn1.2xlarge x 2 on-demand"
    collect = ["collect", str(home), "--scenario", str(scenario), "--write", "--as", option, "--json"]
    code, out, err = run_cli(collect, capsys)
    assert code == 0, err
    assert f'result = "results/{written[0].name}"' in scenario.read_text()
    code, out, err = run_cli(["bill", str(scenario), "--json"], capsys)
    assert code == 0, err
    opts = {o["name"]: o for o in json.loads(out)["options"]}
    trn1 = opts[option]
    assert trn1["measured"] is True
    # by hand: 1e8 tokens / (tokens/s of both ranks) / 3600 s per hour; 2 chips priced, 2 ranks measured
    hours = TOKENS / res.training.tokens_per_s / 3600
    assert trn1["hours_per_run"] == pytest.approx(hours, rel=1e-3, abs=5e-5)  # the JSON rounds to 4 places
    assert trn1["cost_per_run"] == pytest.approx(2 * 1.34 * hours, abs=0.01)  # 2 x trn1.2xlarge at 1.34/h
    print(
        f"chain: world_size={res.topology.world_size} tokens/s={res.training.tokens_per_s:.1f} "
        f"hours by hand={hours:.4f} billed={trn1['hours_per_run']}"
    )
