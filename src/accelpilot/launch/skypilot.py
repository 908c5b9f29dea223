"""SkyPilot task YAML: build the task as plain data, write it, and check it with SkyPilot's own code, offline.

SkyPilot is optional (``accelpilot[launch]``): building and writing need nothing from it; ``check_task``
imports it. SkyPilot's task parser downloads its cloud catalog when a task names a cloud, so the full parse
runs on the task without ``resources``, and ``resources`` is checked against SkyPilot's resources schema,
which needs no network.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from accelpilot.errors import ConfigError
from accelpilot.launch.command import PilotSpec, pilot_args, run_block, setup_block, task_envs
from accelpilot.launch.plan import LaunchTarget
from accelpilot.launch.wheel import REMOTE_DIST

RESULTS_MOUNT = "/accelpilot-results"
DATA_MOUNT = "/accelpilot-data"
DATA_FLAGS = ("--tokens",)  # pilot options that name a file the pilot reads (pilot/train/config.py)
JOB_RECOVERY = {"strategy": "FAILOVER", "max_restarts_on_errors": 0}  # SkyPilot 0.14.1 sky/jobs/recovery_strategy.py


def build_task(
    target: LaunchTarget,
    spec: PilotSpec,
    scenario_name: str,
    *,
    image: str | None = None,
    setup: str | None = None,
    workdir: str | None = None,
    bucket: str | None = None,
    disk_size: int | None = None,
    dist: str = "dist",
) -> dict[str, Any]:
    """The task as SkyPilot reads it (``sky.Task.from_yaml_config``).

    ``dist`` is the local folder holding the accelpilot wheel the task carries; it is mounted on every node.
    """
    res: dict[str, Any] = {}
    if target.infra:
        res["infra"] = target.infra
    if target.instance_type:
        res["instance_type"] = target.instance_type
    else:
        res["accelerators"] = f"{target.accelerator}:{target.accelerators_per_node}"
    if target.use_spot:
        res["use_spot"] = True
        if bucket:
            # run as a managed job (`sky jobs launch`): a preempted spot node is relaunched and the pilot rerun;
            # FAILOVER retries the priced region first; a pilot that fails on its own is not rerun. Only with a
            # bucket: a managed job's cluster is gone when it ends, so rsync could not bring the result home.
            res["job_recovery"] = dict(JOB_RECOVERY)
    image_id = image or target.stack.image_id
    if image_id:
        res["image_id"] = image_id
    if disk_size:
        res["disk_size"] = disk_size
    if target.num_nodes > 1 and (target.instance_type or "").startswith("p5"):
        res["network_tier"] = "best"  # EFA between the nodes: without it a multi-node p5 measures TCP, not the cluster
    # a pilot left idle is money: stop and tear the cluster down 10 idle minutes after the pilot ends
    res["autostop"] = {"idle_minutes": 10, "down": True}
    if bucket:
        spec = _with_results(spec, f"{RESULTS_MOUNT}/{target.slug}")
    task: dict[str, Any] = {"name": f"accelpilot-{target.slug}"}
    if workdir:
        task["workdir"] = workdir
    task["num_nodes"] = target.num_nodes
    task["resources"] = res
    task["envs"] = task_envs(target, spec, scenario_name)
    args, data = mount_data_files(pilot_args(target, spec))
    if data:  # the pilot reads the mounted copy; the local path means nothing on the node
        task["envs"]["ACCELPILOT_PILOT_ARGS"] = shlex.join(args)
    mounts: dict[str, Any] = {REMOTE_DIST: dist}  # the accelpilot this task installs, never one from an index
    mounts.update(data)
    if bucket:
        mounts[RESULTS_MOUNT] = {"name": bucket, "mode": "MOUNT"}
    task["file_mounts"] = mounts
    task["setup"] = setup_block(target, spec, setup, wheel_dir="$HOME/" + REMOTE_DIST.removeprefix("~/"))
    task["run"] = run_block(target, spec)
    return task


def mount_data_files(args: list[str]) -> tuple[list[str], dict[str, str]]:
    """Pilot arguments naming a local data file (``--tokens FILE``) -> the same arguments reading the copy
    SkyPilot mounts under ``DATA_MOUNT``, and those mounts. A path that does not exist here is left alone: it
    may be relative to ``--workdir`` or already on the image."""
    out: list[str] = []
    mounts: dict[str, str] = {}
    i = 0
    while i < len(args):
        a = args[i]
        flag, value, joined = a, None, False
        if a in DATA_FLAGS and i + 1 < len(args):
            value = args[i + 1]
        elif a.split("=", 1)[0] in DATA_FLAGS and "=" in a:
            flag, value = a.split("=", 1)
            joined = True
        if value is not None and Path(value).expanduser().is_file():
            local = Path(value).expanduser().resolve()
            remote = f"{DATA_MOUNT}/{len(mounts)}-{local.name}"  # numbered: two files may share a name
            mounts[remote] = str(local)
            value = remote
        if value is None:
            out.append(a)
            i += 1
        else:
            out += [f"{flag}={value}"] if joined else [flag, value]
            i += 1 if joined else 2
    return out, mounts


def _with_results(spec: PilotSpec, path: str) -> PilotSpec:
    from dataclasses import replace

    return replace(spec, results_dir=path)


# --- YAML without a YAML dependency: JSON scalars are YAML scalars; shell blocks as literal blocks -----------


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return json.dumps(str(v), ensure_ascii=False)


def _literal_ok(v: str) -> bool:
    """A ``|`` block round-trips exactly: one trailing newline, no leading blank or indented first line."""
    lines = v.split("\n")
    return (
        v.endswith("\n")
        and not v.endswith("\n\n")
        and lines[0][:1] not in ("", " ", "\t")
        and "\r" not in v
        and all(line == line.rstrip(" \t") or line.strip() for line in lines)
        and all(line.strip() or line == "" for line in lines)
    )


def _emit(obj: Any, indent: int) -> list[str]:
    pad = " " * indent
    out: list[str] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            key = _scalar(k) if not str(k).replace("_", "").replace("-", "").isalnum() else str(k)
            if isinstance(v, dict):
                if not v:
                    out.append(f"{pad}{key}: {{}}")
                    continue
                out.append(f"{pad}{key}:")
                out += _emit(v, indent + 2)
            elif isinstance(v, list):
                out.append(f"{pad}{key}: [{', '.join(_scalar(x) for x in v)}]")
            elif isinstance(v, str) and _literal_ok(v):
                out.append(f"{pad}{key}: |")
                out += [f"{pad}  {line}" if line else "" for line in v.rstrip("\n").split("\n")]
            else:
                out.append(f"{pad}{key}: {_scalar(v)}")
    return out


def task_yaml(task: dict[str, Any], header: list[str] | None = None) -> str:
    lines = [f"# {h}" for h in header or []]
    return "\n".join(lines + _emit(task, 0)) + "\n"


# --- checks with SkyPilot's own code ----------------------------------------------------------------


def skypilot_version() -> str | None:
    try:
        import sky
    except ImportError:
        return None
    return str(getattr(sky, "__version__", "unknown"))


def check_task(task: dict[str, Any], where: str) -> None:
    """Validate with SkyPilot's task and resources schemas and parse with its task parser; no network."""
    from sky import Task
    from sky.utils import common_utils, schemas

    try:
        common_utils.validate_schema(task, schemas.get_task_schema(), "task: ")
        # SkyPilot 0.14's resources schema has additionalProperties false: a misspelt key is refused here
        common_utils.validate_schema(task.get("resources") or {}, schemas.get_resources_schema(), "resources: ")
        Task.from_yaml_config({k: v for k, v in task.items() if k != "resources"})
    except ValueError as exc:
        raise ConfigError(f"SkyPilot rejects the task: {str(exc).splitlines()[0]}", file=where) from None
