"""A plain shell script for machines SkyPilot cannot reach (owned boxes, other rental providers).

Same setup and run blocks as the SkyPilot task, with the task's environment as overridable defaults.
"""

from __future__ import annotations

import shlex

from accelpilot.launch.command import PilotSpec, run_block, setup_block, task_envs
from accelpilot.launch.plan import LaunchTarget
from accelpilot.launch.wheel import DIST


def build_script(
    target: LaunchTarget, spec: PilotSpec, scenario_name: str, *, setup: str | None = None, header: list[str]
) -> str:
    lines = ["#!/usr/bin/env bash", *(f"# {h}" for h in header), "set -euo pipefail", ""]
    # the accelpilot wheel travels in dist/ beside this script: copy both to the machine
    lines += ['ACCELPILOT_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"', ""]
    lines.append("# The task's environment; set any of these before running to override it.")
    for k, v in task_envs(target, spec, scenario_name).items():
        lines.append(f'[ -n "${{{k}+x}}" ] || {k}={shlex.quote(v)}; export {k}')
    lines += [
        "",
        "# Setup: the platform stack. Skip it with ACCELPILOT_SKIP_SETUP=1 on a machine that is ready.",
        'if [ "${ACCELPILOT_SKIP_SETUP:-0}" != "1" ]; then',
        "(",
        setup_block(target, spec, setup, wheel_dir=f"$ACCELPILOT_HERE/{DIST}").rstrip("\n"),
        ")",
        "fi",
        "",
        "# Run: the pilot, the same command the SkyPilot tasks run.",
        run_block(target, spec).rstrip("\n"),
    ]
    return "\n".join(lines) + "\n"
