"""The shell a launched machine runs: setup (the platform stack) and the pilot command.

The run block reads its device and pilot arguments from environment variables the task sets
(``ACCELPILOT_DEVICE``, ``ACCELPILOT_PILOT_ARGS``), so the very same block runs on the CPU in a test with
``ACCELPILOT_DEVICE=cpu`` (as ``sky launch --env`` would override it). Only node rank 0 runs the pilot and
writes the result (a one-node ``--scaling`` task, ``role == "scaling"``, runs beside each multi-node one);
a ``.sha256`` file beside each result lets ``collect`` prove it arrived intact.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from accelpilot import __version__
from accelpilot.launch.plan import LaunchTarget

RESULTS_ENV = "ACCELPILOT_RESULTS"


@dataclass(frozen=True, slots=True)
class PilotSpec:
    """What the user asked the pilot to do everywhere."""

    kind: str  # training or serving
    workload: str | None = None  # module:factory (training) from the workdir
    pilot_args: tuple[str, ...] | None = None  # replaces the stack's default pilot arguments
    wheel: str = f"accelpilot-{__version__}-py3-none-any.whl"  # the wheel the task carries (launch/wheel.py)
    endpoint: str | None = None  # serving: drive this OpenAI-compatible server instead of MiniLM in process
    server_cmd: str | None = None  # serving: start the user's server first
    results_dir: str = "~/accelpilot-results"
    distributed: bool = False  # `run train` takes torchrun-style --nnodes/--nproc-per-node (issue 13)


def _without_size(args: list[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a == "--size":
            skip = True
        elif not a.startswith("--size="):
            out.append(a)
    return out


def pilot_args(target: LaunchTarget, spec: PilotSpec) -> list[str]:
    args = list(spec.pilot_args) if spec.pilot_args is not None else list(target.stack.pilot_args)
    if spec.kind == "serving":
        # the serving pilot has no --size; keep only what the user gave
        args = list(spec.pilot_args or ())
    if spec.workload and spec.kind == "training":
        if spec.pilot_args is None:
            args = _without_size(args)  # --size picks a built-in model; a user factory may take no `size`
        args = ["--workload", spec.workload, *args]
    return args


def _sidecars() -> str:
    return (
        # an `if`, not `[ ] && ...`: under set -e a false test as the loop's last command made a node
        # that wrote no result (every worker) exit 1 and fail the whole job
        'for f in "$results"/*.json; do\n'
        '  if [ -e "$f" ] && [ ! -e "$f.sha256" ]; then\n'
        '    (cd "$(dirname "$f")" && sha256sum "$(basename "$f")" > "$(basename "$f").sha256")\n'
        "  fi\n"
        "done\n"
        "exit 0\n"
    )


def run_block(target: LaunchTarget, spec: PilotSpec) -> str:
    """Bash for the run section: rank 0 runs the pilot into $ACCELPILOT_RESULTS, then checksums."""
    lines = [
        "set -euo pipefail",
        f'results="${{{RESULTS_ENV}/#\\~/$HOME}}"',
        'eval "pilot_args=($ACCELPILOT_PILOT_ARGS)"  # shell words, as shlex.join wrote them',
        'mkdir -p "$results"',
    ]
    if spec.kind == "training" and spec.distributed and target.role == "scaling":
        # one node, every world size of ACCELPILOT_SCALING in turn (torchrun on this node only)
        lines.append(
            'accelpilot run train --device "$ACCELPILOT_DEVICE" --scaling "$ACCELPILOT_SCALING" '
            '"${pilot_args[@]}" --out "$results"'
        )
        return "\n".join(lines) + "\n" + _sidecars()
    if spec.kind == "training" and spec.distributed:
        # every node joins one torchrun rendezvous on the head node (SkyPilot lists the head's IP first)
        lines += [
            "rdzv=()",
            'if [ "${SKYPILOT_NUM_NODES:-1}" -gt 1 ]; then',
            # the port is an env so that `sky launch --env` (or a test sharing one host) can move it
            '  rdzv=(--rdzv-endpoint "$(echo "$SKYPILOT_NODE_IPS" | head -n1):${ACCELPILOT_RDZV_PORT:-29400}")',
            "fi",
            'accelpilot run train --device "$ACCELPILOT_DEVICE" --nproc-per-node "$ACCELPILOT_NPROC_PER_NODE" '
            '--nnodes "${SKYPILOT_NUM_NODES:-1}" --node-rank "${SKYPILOT_NODE_RANK:-0}" '
            '"${rdzv[@]}" "${pilot_args[@]}" --out "$results"',
        ]
        return "\n".join(lines) + "\n" + _sidecars()
    lines += [
        'if [ "${SKYPILOT_NODE_RANK:-0}" != "0" ]; then',
        '  echo "accelpilot: node ${SKYPILOT_NODE_RANK} idle: the pilot runs on node 0"; exit 0',
        "fi",
    ]
    if spec.kind == "training":
        lines.append('accelpilot run train --device "$ACCELPILOT_DEVICE" "${pilot_args[@]}" --out "$results"')
    elif spec.endpoint:
        if spec.server_cmd:
            lines += [
                f"{spec.server_cmd} &",
                "server_pid=$!",
                "trap 'kill $server_pid 2>/dev/null || true' EXIT",
                'for i in $(seq 600); do curl -s -o /dev/null "$ACCELPILOT_ENDPOINT" && break; sleep 1; done',
            ]
        lines.append('accelpilot run serve --endpoint "$ACCELPILOT_ENDPOINT" "${pilot_args[@]}" --out "$results"')
    else:
        lines.append('accelpilot run serve --device "$ACCELPILOT_DEVICE" "${pilot_args[@]}" --out "$results"')
    return "\n".join(lines) + "\n" + _sidecars()


def _split_pkg(spec: str) -> tuple[str, str]:
    """``aws-neuronx-dkms-2.30.2.0`` -> (aws-neuronx-dkms, 2.30.2.0)."""
    parts = spec.split("-")
    for i in range(1, len(parts)):
        if parts[i][:1].isdigit():
            return "-".join(parts[:i]), "-".join(parts[i:])
    return spec, ""


def install_line(spec: PilotSpec, wheel_dir: str) -> str:
    """Install the carried wheel with the pilot extra; only the extra's dependencies come from an index.

    ``wheel_dir`` is shell text inside double quotes (``$HOME/accelpilot-dist``), so variables expand.
    """
    return f'python3 -m pip install "{wheel_dir}/{spec.wheel}[pilot]"'


def setup_block(target: LaunchTarget, spec: PilotSpec, override: str | None = None, *, wheel_dir: str) -> str:
    """Bash for the setup section from the platform stack (or the user's own block)."""
    if override is not None:
        return override if override.endswith("\n") else override + "\n"
    st = target.stack
    lines = ["set -euo pipefail", f"# platform stack {st.name!r}: {st.source} ({st.as_of})"]
    for pkg in st.system_packages:
        name, version = _split_pkg(pkg)
        lines.append(
            f"v=$(dpkg-query -W -f='${{Version}}' {shlex.quote(name)} 2>/dev/null || true); "
            f'case "$v" in {shlex.quote(version)}*) ;; *) echo "accelpilot: warning: {name} is ${{v:-absent}}, '
            f'stack {st.name} expects {version}" >&2 ;; esac'
        )
    index = []
    if st.pip_index_url:
        index = ["--extra-index-url", st.pip_index_url]
    if st.device == "neuron" and not st.torch_install:
        # the stack's source names no pip line for TorchNeuron native (seed 002, Neuron 2.32): check the image has
        # it before installing anything, and stop with one line rather than install a guessed package
        lines.append(_neuron_check(f"stack {st.name} names no pip line for it (its source: {st.source.split(';')[0]})"))
    if st.python_packages:
        lines.append(shlex.join(["python3", "-m", "pip", "install", *index, *st.python_packages]))
    if st.torch_install:
        lines.append(st.torch_install)
        if st.device == "neuron":
            lines.append(_neuron_check(f"the torch_install line of stack {st.name} did not provide it"))
    lines.append(install_line(spec, wheel_dir))
    return "\n".join(lines) + "\n"


def _neuron_check(why: str) -> str:
    """One shell line: stop setup with one line unless this image's torch has TorchNeuron native (``torch.neuron``)."""
    msg = (
        f"accelpilot: TorchNeuron native (device neuron) is not installed on this image and {why}: launch with "
        f"--image NEURON_IMAGE that has it, or set torch_install in a --stacks file"
    )
    return (
        "python3 -c \"import torch, sys; sys.exit(0 if getattr(torch, 'neuron', None) else 1)\" 2>/dev/null || "
        f"{{ echo {shlex.quote(msg)} >&2; exit 1; }}"
    )


def processes_per_node(target: LaunchTarget) -> tuple[int, str]:
    """torchrun processes on one node: one per GPU, one per NeuronCore (not per chip) on Neuron, and why.

    The pilot counts a Neuron rank as one NeuronCore at the runtime's default LNC (pilot/neuroncores.py), so a
    trn1.32xlarge (16 Trainium chips of 2 NeuronCores) runs 32 processes, not 16.
    """
    n = target.accelerators_per_node
    if target.device != "neuron":
        return n, f"{n} processes per node: one per {target.accelerator} GPU"
    from accelpilot.pilot.neuroncores import ranks_per_chip

    known = ranks_per_chip(target.accelerator)
    if known is None:
        return n, f"{n} processes per node: one per {target.accelerator} chip (NeuronCores per chip not known)"
    cores, lnc, per = known
    return n * per, (
        f"{n * per} processes per node: {n} {target.accelerator} chips x {cores} NeuronCores per chip at LNC={lnc} "
        f"(one process per NeuronCore, not per chip; override with ACCELPILOT_NPROC_PER_NODE)"
    )


def task_envs(target: LaunchTarget, spec: PilotSpec, scenario_name: str) -> dict[str, str]:
    """Environment the run block reads; ACCELPILOT_OPTIONS lands in the result's fingerprint."""
    import json

    envs = {
        "ACCELPILOT_DEVICE": target.device,
        "ACCELPILOT_PILOT_ARGS": shlex.join(pilot_args(target, spec)),
        RESULTS_ENV: spec.results_dir,
        "ACCELPILOT_OPTIONS": json.dumps(target.options),
        "ACCELPILOT_TASK": target.slug,
        "ACCELPILOT_SCENARIO": scenario_name,
    }
    if spec.endpoint:
        envs["ACCELPILOT_ENDPOINT"] = spec.endpoint
    if spec.distributed and spec.kind == "training":
        if target.role == "scaling":
            envs["ACCELPILOT_SCALING"] = scaling_sizes(processes_per_node(target)[0])
        else:
            envs["ACCELPILOT_NPROC_PER_NODE"] = str(processes_per_node(target)[0])
    return envs


def scaling_sizes(per_node: int) -> str:
    """World sizes a one-node scaling task measures: 1, the powers of two below, and every process of the node."""
    sizes = {1, per_node}
    n = 2
    while n < per_node:
        sizes.add(n)
        n *= 2
    return ",".join(str(w) for w in sorted(sizes))
