"""`accelpilot launch`: tasks per option, checked with SkyPilot's own schema and parser, offline."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from tests.launch.conftest import WORKED, run_cli, sky_or_skip

from accelpilot.errors import ConfigError

yaml = pytest.importorskip("yaml", reason="PyYAML (installed with SkyPilot) reads the written YAML back")


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def test_worked_example_tasks_pass_skypilots_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sky_or_skip()
    from accelpilot.launch.skypilot import check_task

    out = tmp_path / "tasks"
    code, stdout, err = run_cli(["launch", str(WORKED), "--out", str(out), "--json"], capsys)
    assert code == 0, err
    report = json.loads(stdout)
    assert report["checked"].startswith("checked with SkyPilot")
    names = sorted(p.name for p in out.iterdir())
    # trn1 on demand and trn1 reserved run on the same machine: one task prices both
    assert names == ["README.md", "dist", "p5-48xlarge-on-demand.yaml", "trn1-32xlarge-on-demand.yaml"]
    assert [p.name for p in (out / "dist").iterdir()] == ["accelpilot-0.1.0-py3-none-any.whl"]
    p5, trn1 = _load(out / names[2]), _load(out / names[3])
    for task, path in ((p5, out / names[2]), (trn1, out / names[3])):
        check_task(task, str(path))  # SkyPilot's task + resources schemas and Task.from_yaml_config
        # the task carries the wheel it installs; nothing asks an index for accelpilot
        assert task["file_mounts"] == {"~/accelpilot-dist": str((out / "dist").resolve())}
        assert (
            'python3 -m pip install "$HOME/accelpilot-dist/accelpilot-0.1.0-py3-none-any.whl[pilot]"' in (task["setup"])
        )
        assert "accelpilot==" not in task["setup"] and "accelpilot[pilot]==" not in task["setup"]
    stop = {"idle_minutes": 10, "down": True}  # every task stops itself
    assert p5["resources"] == {"infra": "aws/us-east-1", "instance_type": "p5.48xlarge", "autostop": stop}
    assert trn1["resources"] == {"infra": "aws/us-east-1", "instance_type": "trn1.32xlarge", "autostop": stop}
    assert p5["envs"]["ACCELPILOT_DEVICE"] == "cuda" and trn1["envs"]["ACCELPILOT_DEVICE"] == "neuron"
    assert json.loads(trn1["envs"]["ACCELPILOT_OPTIONS"]) == [
        "trn1.32xlarge on-demand",
        "trn1.32xlarge reserved 3 years",
    ]
    assert "torch==2.13.0" in p5["setup"] and "neuronx-cc==2.27.5334.0" in trn1["setup"]
    # the Neuron stack is the one seed 002 names (SDK 2.32.0, TorchNeuron Native), with that source in setup
    assert "# platform stack 'neuron-2.32': seed 002 (AWS Neuron docs dated 2026-09-28: Neuron 2.32.0" in trn1["setup"]
    # torch-neuronx is not included in 2.32.0: no line installs it; TorchNeuron Native is checked instead
    assert not [ln for ln in trn1["setup"].splitlines() if "pip install" in ln and "torch-neuronx" in ln]
    assert "getattr(torch, 'neuron', None)" in trn1["setup"]
    assert 'accelpilot run train --device "$ACCELPILOT_DEVICE"' in trn1["run"]
    readme = (out / "README.md").read_text()
    assert "sky launch -c accelpilot-trn1-32xlarge-on-demand trn1-32xlarge-on-demand.yaml" in readme
    assert "accelpilot collect results/" in readme
    assert "reserved_3y is a contract, not a machine" in readme


def test_skypilot_check_rejects_a_broken_task(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The check can fail: an unknown resources field and a wrong type are refused in one line."""
    sky_or_skip()
    from accelpilot.launch.skypilot import check_task

    out = tmp_path / "tasks"
    assert run_cli(["launch", str(WORKED), "--out", str(out)], capsys)[0] == 0
    task = _load(out / "p5-48xlarge-on-demand.yaml")
    bad = {**task, "resources": {**task["resources"], "instance_typo": "p5.48xlarge"}}
    with pytest.raises(ConfigError, match="instance_typo"):
        check_task(bad, "x.yaml")
    with pytest.raises(ConfigError, match="SkyPilot rejects"):
        check_task({**task, "num_nodes": "two"}, "x.yaml")
    # only SkyPilot's task parser reads inside file_mounts: a bucket with a bogus mode
    code, _, err = run_cli(["launch", str(WORKED), "--out", str(out), "--bucket", "my-results"], capsys)
    assert code == 0, err
    task = _load(out / "p5-48xlarge-on-demand.yaml")
    assert task["file_mounts"] == {
        "~/accelpilot-dist": str((out / "dist").resolve()),
        "/accelpilot-results": {"name": "my-results", "mode": "MOUNT"},
    }
    assert task["envs"]["ACCELPILOT_RESULTS"] == "/accelpilot-results/p5-48xlarge-on-demand"
    bogus = {**task, "file_mounts": {"/accelpilot-results": {"name": "my-results", "mode": "BOGUS"}}}
    with pytest.raises(ConfigError, match="BOGUS"):
        check_task(bogus, "x.yaml")


def test_yaml_writer_round_trips_awkward_strings() -> None:
    from accelpilot.launch.skypilot import task_yaml

    task = {
        "name": "a: b # c",
        "num_nodes": 1,
        "envs": {"Q": 'it\'s "quoted" {x}', "EMPTY": "", "NUM": "007", "BOOL": "true"},
        "file_mounts": {"/accelpilot-results": {"name": "bkt", "mode": "MOUNT"}},
        "setup": "echo 'one'\n  indented: yes\n\nlast # not a comment\n",
        "run": "  leading space needs quoting\n",
        "resources": {"use_spot": True},
    }
    assert yaml.safe_load(task_yaml(task, ["header: with colon"])) == task


SCENARIO = """
[scenario]
name = "mixed"
workload = "training"

[[options]]
name = "trn1 spot x2"
instance = "trn1.32xlarge"
pricing = "spot"
price_per_hour = 9
instances = 2
hours_per_run = 26

[[options]]
name = "B200 at RunPod"
instance = "B200@RunPod"
pricing = "rental"
instances = 8
hours_per_run = 10

[[options]]
name = "H100 at Hyperstack"
instance = "H100@Hyperstack"
pricing = "rental"
instances = 8
hours_per_run = 10

[[options]]
name = "owned 8xH100"
instance = "8xH100"
pricing = "owned"
hours_per_run = 20
[options.owned]
purchase = 300000
"""


def test_rentals_owned_and_spot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import accelpilot.cli.launch as cli_launch

    monkeypatch.setattr(cli_launch, "_pilot_is_distributed", lambda: False)  # a pilot without --nnodes
    sc = tmp_path / "s.toml"
    sc.write_text(SCENARIO)
    out = tmp_path / "tasks"
    code, _, err = run_cli(["launch", str(sc), "--out", str(out), "--no-check"], capsys)
    assert code == 0, err
    spot = _load(out / "trn1-spot-x2.yaml")
    assert spot["resources"]["use_spot"] is True
    # the pilot is one device until `run train --nnodes` exists: one node, and the README says why
    assert spot["num_nodes"] == 1
    assert "the pilot runs on one" in (out / "README.md").read_text()
    runpod = _load(out / "b200-at-runpod.yaml")  # RunPod is a SkyPilot cloud
    assert runpod["resources"] == {
        "infra": "runpod",
        "accelerators": "B200:8",
        "autostop": {"idle_minutes": 10, "down": True},
    }
    for script in ("h100-at-hyperstack.sh", "owned-8xh100.sh"):  # not SkyPilot clouds: plain scripts
        text = (out / script).read_text()
        assert text.startswith("#!/usr/bin/env bash") and (out / script).stat().st_mode & 0o111
        assert "ACCELPILOT_DEVICE=cuda" in text and "accelpilot run train" in text


def test_multi_node_when_the_pilot_is_distributed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import accelpilot.cli.launch as cli_launch

    monkeypatch.setattr(cli_launch, "_pilot_is_distributed", lambda: True)
    sc = tmp_path / "s.toml"
    sc.write_text(SCENARIO)
    out = tmp_path / "tasks"
    assert run_cli(["launch", str(sc), "--out", str(out), "--no-check"], capsys)[0] == 0
    spot = _load(out / "trn1-spot-x2.yaml")
    # trn1.32xlarge: 16 Trainium chips x 2 NeuronCores = 32 processes (one per NeuronCore, not per chip)
    assert spot["num_nodes"] == 2 and spot["envs"]["ACCELPILOT_NPROC_PER_NODE"] == str(16 * 2)
    stated = "32 processes per node: 16 Trainium chips x 2 NeuronCores per chip at LNC=1"
    assert stated in (out / "trn1-spot-x2.yaml").read_text() and stated in (out / "README.md").read_text()
    assert "8 processes per node: one per H100 GPU" in (out / "owned-8xh100.sh").read_text()
    assert '--nnodes "${SKYPILOT_NUM_NODES:-1}" --node-rank "${SKYPILOT_NODE_RANK:-0}"' in spot["run"]
    assert (
        'rdzv=(--rdzv-endpoint "$(echo "$SKYPILOT_NODE_IPS" | head -n1):${ACCELPILOT_RDZV_PORT:-29400}")' in spot["run"]
    )
    # beside the two-node task, one node of the same machine measures --scaling up to its 32 processes
    scaling = _load(out / "trn1-spot-x2-scaling.yaml")
    assert scaling["num_nodes"] == 1 and scaling["resources"] == spot["resources"]
    assert scaling["envs"]["ACCELPILOT_SCALING"] == "1,2,4,8,16,32"
    assert scaling["envs"]["ACCELPILOT_OPTIONS"] == spot["envs"]["ACCELPILOT_OPTIONS"]
    assert scaling["envs"]["ACCELPILOT_TASK"] == "trn1-spot-x2-scaling"
    assert '--scaling "$ACCELPILOT_SCALING"' in scaling["run"] and "--nnodes" not in scaling["run"]
    assert "trn1-spot-x2-scaling: --scaling 1,2,4,8,16,32 on one node" in (out / "README.md").read_text()
    assert not list(out.glob("*-scaling-scaling*"))  # one scaling task per multi-node task
    if importlib.util.find_spec("sky") is not None:
        from accelpilot.launch.skypilot import check_task

        check_task(scaling, "trn1-spot-x2-scaling.yaml")  # SkyPilot's own schema and parser, offline


def test_distributed_flags_are_detected_from_run_train(monkeypatch: pytest.MonkeyPatch) -> None:
    import typer

    import accelpilot.cli.run_train as run_train
    from accelpilot.cli.launch import _pilot_is_distributed
    from accelpilot.cli.run_train import train

    def distributed_train(
        nnodes: int = typer.Option(1, "--nnodes"),
        nproc: int = typer.Option(1, "--nproc-per-node"),
        rank: int = typer.Option(0, "--node-rank"),
        rdzv: str = typer.Option("", "--rdzv-endpoint"),
    ) -> None: ...

    monkeypatch.setattr(run_train, "train", distributed_train)
    assert _pilot_is_distributed() is True
    monkeypatch.undo()

    flags = {"--nnodes", "--nproc-per-node", "--node-rank", "--rdzv-endpoint"}
    import accelpilot.pilot.train.config as train_config  # run train's options are declared there (issue 25)

    src = Path(train.__code__.co_filename).read_text() + Path(train_config.__file__).read_text()
    assert _pilot_is_distributed() == all(f'"{f}"' in src for f in flags)


def test_stack_override_and_image(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    over = tmp_path / "stacks.toml"
    over.write_text(
        '[[stack]]\nname = "neuron-2.32"\ntorch_install = "pip install my-torchneuron==1.0"\n'
        'python_packages = ["neuronx-cc==9.9"]\n'
    )
    out = tmp_path / "tasks"
    args = ["launch", str(WORKED), "--out", str(out), "--no-check", "--stacks", str(over), "--image", "ami-0abc"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    trn1 = _load(out / "trn1-32xlarge-on-demand.yaml")
    assert "pip install my-torchneuron==1.0" in trn1["setup"] and "neuronx-cc==9.9" in trn1["setup"]
    assert "nki==" not in trn1["setup"]  # the override replaced the list
    assert trn1["resources"]["image_id"] == "ami-0abc"
    assert "no torch_install" not in err


NO_PLATFORM = """
[scenario]
name = "x"
[[options]]
name = "mystery box"
instance = "the big one"
pricing = "owned"
hours_per_run = 5
[options.owned]
purchase = 1000
[[options]]
name = "inf1"
instance = "inf1.xlarge"
pricing = "on_demand"
hours_per_run = 5
"""


def test_option_with_no_launchable_platform(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sc = tmp_path / "s.toml"
    sc.write_text(NO_PLATFORM)
    out = tmp_path / "tasks"
    code, stdout, err = run_cli(["launch", str(sc), "--out", str(out), "--no-check"], capsys)
    assert code == 2 and stdout == ""
    assert err.count("\n") == 1 and "'mystery box' has no launchable platform" in err and "--skip" in err
    assert not out.exists()  # nothing written
    code, _, err = run_cli(["launch", str(sc), "--out", str(out), "--no-check", "--skip", "mystery box"], capsys)
    assert code == 2 and "'inf1' has no launchable platform" in err and "Inferentia" in err
    assert not out.exists()
    args = ["launch", str(sc), "--out", str(out), "--no-check", "--skip", "mystery box", "--skip", "inf1"]
    code, _, err = run_cli([*args[:5], "--skip", "mystery box", "--skip", "nope"], capsys)
    assert code == 2 and "--skip 'nope' names no option" in err


def test_launch_without_skypilot_says_not_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import accelpilot.launch.skypilot as sp

    monkeypatch.setattr(sp, "skypilot_version", lambda: None)
    out = tmp_path / "tasks"
    code, stdout, _ = run_cli(["launch", str(WORKED), "--out", str(out), "--json"], capsys)
    assert code == 0 and "not checked: SkyPilot is not installed" in json.loads(stdout)["checked"]
    assert shutil.which("bash")


SERVING = """
[scenario]
name = "serve"
workload = "serving"
[volumes]
requests_per_month = 1000000
[[options]]
name = "inf2"
instance = "inf2.xlarge"
pricing = "on_demand"
peak_qps = 50
"""


def test_serving_tasks_run_the_serving_pilot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sc = tmp_path / "s.toml"
    sc.write_text(SERVING)
    out = tmp_path / "tasks"
    assert run_cli(["launch", str(sc), "--out", str(out), "--no-check"], capsys)[0] == 0
    task = _load(out / "inf2.yaml")
    assert 'accelpilot run serve --device "$ACCELPILOT_DEVICE"' in task["run"] and "run train" not in task["run"]
    assert task["envs"]["ACCELPILOT_PILOT_ARGS"] == ""  # the training stack's --size is not a serving flag
    args = ["launch", str(sc), "--out", str(out), "--no-check", "--endpoint", "http://127.0.0.1:8000/v1"]
    args += ["--server-cmd", "vllm serve my-model --port 8000", "--pilot-args", "--target-qps 4"]
    assert run_cli(args, capsys)[0] == 0
    task = _load(out / "inf2.yaml")
    assert task["envs"]["ACCELPILOT_ENDPOINT"] == "http://127.0.0.1:8000/v1"
    assert task["envs"]["ACCELPILOT_PILOT_ARGS"] == "--target-qps 4"
    run = task["run"]
    assert run.index("vllm serve my-model --port 8000 &") < run.index(
        'accelpilot run serve --endpoint "$ACCELPILOT_ENDPOINT"'
    )


def test_owned_script_runs_with_its_own_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shell script end to end with a stand-in `accelpilot` that records what it was asked to run."""
    import os
    import subprocess

    import accelpilot.cli.launch as cli_launch

    monkeypatch.setattr(cli_launch, "_pilot_is_distributed", lambda: True)  # run train takes --nnodes

    sc = tmp_path / "s.toml"
    sc.write_text(SCENARIO)
    out = tmp_path / "tasks"
    args = ["launch", str(sc), "--out", str(out), "--no-check", "--workload", "my_model:make", "--workdir", "."]
    args += ["--pilot-args", "--steps 3 --tokens 'my data.bin'"]  # a space inside one argument
    assert run_cli(args, capsys)[0] == 0
    assert _load(out / "trn1-spot-x2.yaml")["workdir"] == "."
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "accelpilot").write_text(
        '#!/bin/bash\nwhile [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; echo "$1" >> "$HOME/argv"; shift; done\n'
        'echo "$ACCELPILOT_OPTIONS" > "$out/r.json"\n'
    )
    (shim / "accelpilot").chmod(0o755)
    results = tmp_path / "res"
    env = {
        **os.environ,
        "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
        "ACCELPILOT_SKIP_SETUP": "1",
        "ACCELPILOT_RESULTS": str(results),
        "ACCELPILOT_DEVICE": "cpu",  # overrides the script's default, as a user would
    }
    proc = subprocess.run(
        ["bash", str(out / "owned-8xh100.sh")], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    argv = (Path(os.environ["HOME"]) / "argv").read_text().split("\n")[:-1]
    assert argv == [
        *("run", "train", "--device", "cpu"),
        *("--nproc-per-node", "8", "--nnodes", "1", "--node-rank", "0"),  # 8 H100 in the box; no rendezvous flag
        *("--workload", "my_model:make", "--steps", "3", "--tokens", "my data.bin"),
        *("--out", str(results)),
    ]
    assert json.loads((results / "r.json").read_text()) == ["owned 8xH100"]
    assert (results / "r.json.sha256").read_text().split()[1] == "r.json"


def test_a_newline_in_an_option_name_stays_in_the_comment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sc = tmp_path / "s.toml"
    sc.write_text(SCENARIO.replace('name = "owned 8xH100"', 'name = "owned 8xH100 | a\\ntouch pwned"'))
    out = tmp_path / "tasks"
    assert run_cli(["launch", str(sc), "--out", str(out), "--no-check"], capsys)[0] == 0
    script = next(out.glob("owned-8xh100*.sh")).read_text()
    assert not any(line.startswith("touch pwned") for line in script.splitlines())
    assert "# Prices option(s): owned 8xH100 | a touch pwned." in script
    readme = (out / "README.md").read_text()
    assert "| owned 8xH100 \\| a touch pwned |" in readme


def test_multi_node_p5_asks_for_the_best_network_and_passes_the_schema() -> None:
    sky_or_skip()
    import dataclasses

    from accelpilot.bill.scenario import load_scenario
    from accelpilot.catalog import load_catalog
    from accelpilot.launch.command import PilotSpec
    from accelpilot.launch.plan import plan_launch
    from accelpilot.launch.skypilot import build_task, check_task
    from accelpilot.launch.stacks import load_stacks

    targets = plan_launch(load_scenario(WORKED), load_catalog([]), load_stacks([]), [], True)
    p5 = next(t for t in targets if (t.instance_type or "").startswith("p5"))
    one = build_task(p5, PilotSpec(kind="training", distributed=True), "s")
    two = build_task(dataclasses.replace(p5, num_nodes=2), PilotSpec(kind="training", distributed=True), "s")
    assert "network_tier" not in one["resources"] and two["resources"]["network_tier"] == "best"
    check_task(two, "p5 x 2")


def test_neuron_setup_stops_with_one_line_before_installing_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 002 (Neuron 2.32) names no pip line for TorchNeuron native: on an image without it (this machine's
    torch has no ``torch.neuron``) the setup block stops with one line and asks pip for nothing."""
    import os
    import subprocess
    import sys

    out = tmp_path / "tasks"
    assert run_cli(["launch", str(WORKED), "--out", str(out), "--no-check"], capsys)[0] == 0
    setup = _load(out / "trn1-32xlarge-on-demand.yaml")["setup"]
    shim, calls = tmp_path / "bin", tmp_path / "python3-calls"
    shim.mkdir()
    (shim / "python3").write_text(f'#!/bin/sh\necho "$*" >> "{calls}"\nexec "{sys.executable}" "$@"\n')
    (shim / "python3").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-c", setup], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 1, proc.stderr
    stops = [ln for ln in proc.stderr.splitlines() if not ln.startswith("accelpilot: warning:")]  # dpkg versions
    assert len(stops) == 1, proc.stderr
    assert stops[0].startswith("accelpilot: TorchNeuron native (device neuron) is not installed on this image and ")
    assert "stack neuron-2.32 names no pip line for it (its source: seed 002" in stops[0]
    assert "--stacks" in stops[0] and "--image" in stops[0]
    assert calls.read_text().count("\n") == 1 and "-m pip" not in calls.read_text()  # only the check ran
