"""Issue 28 / 25 at launch's joins: the task folder, its README and its run block under hostile names and nodes."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from accelpilot.bill.scenario import load_scenario
from accelpilot.catalog import load_catalog
from accelpilot.launch.command import PilotSpec, run_block
from accelpilot.launch.plan import plan_launch
from accelpilot.launch.stacks import load_stacks

ROOT = Path(__file__).resolve().parents[2]
WORKED = ROOT / "examples" / "worked-example.toml"
Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture(autouse=True)
def _private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SkyPilot keeps state under ~/.sky: a throw-away home, no credentials."""
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_launch_out_dot_keeps_the_projects_readme(tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "README.md").write_text("# my project\n", encoding="utf-8")
    monkeypatch.chdir(proj)
    code, _out, err = cli("launch", str(WORKED), "--out", ".")
    assert code == 2, err
    assert "--out" in err and "Traceback" not in err
    assert (proj / "README.md").read_text(encoding="utf-8") == "# my project\n"


def test_launch_again_into_its_own_folder(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "tasks"
    assert cli("launch", str(WORKED), "--out", str(out))[0] == 0
    assert cli("launch", str(WORKED), "--out", str(out))[0] == 0  # a launch folder may be rewritten


def test_pasted_collect_line_runs_no_command(tmp_path: Path, cli: Cli) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    scen = tmp_path / "x$(touch PWNED).toml"
    scen.write_text(WORKED.read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "tasks"
    code, _o, err = cli("launch", str(scen), "--out", str(out))
    assert code == 0, err
    readme = (out / "README.md").read_text(encoding="utf-8")
    line = next(x for x in readme.splitlines() if x.startswith("accelpilot collect") and "--write" not in x)
    cmd = line.split("#")[0]
    # `accelpilot` replaced by printf: the line is pasted into a shell as it is written
    subprocess.run([bash, "-c", "printf '%s\\n' " + cmd.removeprefix("accelpilot ")], cwd=tmp_path, check=True)
    assert not (tmp_path / "PWNED").exists()


def test_option_names_put_no_raw_html_in_the_readme(tmp_path: Path, cli: Cli) -> None:
    text = WORKED.read_text(encoding="utf-8").replace(
        "trn1.32xlarge on-demand", "trn1.32xlarge <img src=x onerror=alert(1)> [x](javascript:alert(1))", 1
    )
    scen = tmp_path / "s.toml"
    scen.write_text(text, encoding="utf-8")
    out = tmp_path / "tasks"
    code, _o, err = cli("launch", str(scen), "--out", str(out))
    assert code == 0, err
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "<img" not in readme and "](javascript:" not in readme
    assert "&lt;img src=x onerror=alert\\(1\\)&gt;" in readme


def test_every_node_of_a_multi_node_task_exits_0(tmp_path: Path) -> None:
    """The run block's checksum loop on a node that writes no result (a worker) and on one that does (node 0)."""
    sc = load_scenario(WORKED)
    target = plan_launch(sc, load_catalog([]), load_stacks([]), [], True)[0]
    block = run_block(target, PilotSpec(kind="training", distributed=True))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "accelpilot"  # stands in for the pilot: node 0 writes a result, the others none
    fake.write_text(
        '#!/usr/bin/env bash\nif [ "$SKYPILOT_NODE_RANK" = 0 ]; then echo "{}" > "${@: -1}/r.json"; fi\n',
        encoding="utf-8",
    )
    fake.chmod(0o755)
    codes = {}
    for rank in (0, 1):
        res = tmp_path / f"res{rank}"
        env = {
            **os.environ,
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "SKYPILOT_NODE_RANK": str(rank),
            "SKYPILOT_NUM_NODES": "2",
            "SKYPILOT_NODE_IPS": "127.0.0.1\n127.0.0.1",
            "ACCELPILOT_RESULTS": str(res),
            "ACCELPILOT_PILOT_ARGS": "",
            "ACCELPILOT_DEVICE": "cpu",
            "ACCELPILOT_NPROC_PER_NODE": "1",
        }
        codes[rank] = subprocess.run(["bash", "-c", block], env=env, capture_output=True, text=True).returncode
    assert codes == {0: 0, 1: 0}
    assert (tmp_path / "res0" / "r.json.sha256").is_file()
    assert not list((tmp_path / "res1").iterdir())


def test_a_user_factory_gets_no_builtin_size() -> None:
    """The stack's default `--size gpt2-124m` is for the built-in model: `pkg:factory` without `size` would fail."""
    from accelpilot.launch.command import pilot_args

    sc = load_scenario(WORKED)
    target = plan_launch(sc, load_catalog([]), load_stacks([]), [], False)[0]
    assert "--size" in pilot_args(target, PilotSpec(kind="training"))
    args = pilot_args(target, PilotSpec(kind="training", workload="mypkg.models:build"))
    assert args[:2] == ["--workload", "mypkg.models:build"] and "--size" not in args and "gpt2-124m" not in args
