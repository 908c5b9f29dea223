"""The device layer: the only place where code differs by device.

A device is a torch device string (``cpu``, ``cuda``, ``cuda:1``, ``neuron``, ``xla``, ``mps``). One small table
(``DEVICE_OPS``) says how each device type synchronises, reports memory and fingerprints the platform.
Compile backend and precision are separate choices. Paths exercised so far: cpu (CI). cuda, neuron, xla and mps
use the same generic torch calls and have not been run on real hardware yet (benchmarks/gpu_checks.sh is ready).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform as _platform
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

from accelpilot.errors import ConfigError, DeviceError, did_you_mean
from accelpilot.pilot.location import location_fields
from accelpilot.pilot.neuroncores import ranks_per_chip
from accelpilot.pilot.result import Platform

DEVICE_TYPES = ("cpu", "cuda", "neuron", "xla", "mps")
COMPILE_BACKENDS = ("eager", "inductor", "neuron", "openxla", "cudagraphs", "aot_eager")
PRECISIONS = ("fp32", "bf16", "fp16")

# Catalog accelerator names keyed by a substring of the device name torch reports.
_ACCELERATOR_NAMES = (
    ("H200", "H200"),
    ("H100", "H100"),
    ("B200", "B200"),
    ("A100", "A100"),
    ("L4", "L4"),
    ("A10", "A10"),
    ("Trainium3", "Trainium3"),
    ("Trainium2", "Trainium2"),
    ("Trainium", "Trainium"),
    ("Inferentia2", "Inferentia2"),
    ("Inferentia", "Inferentia"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceOps:
    """How one device type synchronises, reports memory and names itself."""

    is_available: Callable[[], bool]
    count: Callable[[], int]
    synchronize: Callable[[torch.device], None]
    max_memory_allocated: Callable[[torch.device], int | None]
    reset_peak_memory: Callable[[torch.device], None]
    name: Callable[[torch.device], str]
    autocast_type: str  # device_type argument of torch.autocast
    process_group: str  # torch.distributed backend for this device type (what torchrun's workers init)


def _noop(_: torch.device) -> None:
    return None


def _none(_: torch.device) -> int | None:
    return None


def _backend_module(name: str) -> Any:
    """torch.neuron / torch.xla / torch.mps when the platform registers them, else None."""
    return getattr(torch, name, None)


def _neuron_available() -> bool:
    mod = _backend_module("neuron")
    return bool(mod is not None and getattr(mod, "is_available", lambda: False)())


def _neuron_sync(_: torch.device) -> None:
    mod = _backend_module("neuron")
    if mod is not None and hasattr(mod, "synchronize"):
        mod.synchronize()


def _xla_available() -> bool:
    try:
        import torch_xla  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        return False
    return True


def _xla_sync(_: torch.device) -> None:
    import torch_xla.core.xla_model as xm  # type: ignore[import-not-found]

    xm.mark_step()
    xm.wait_device_ops()


def _cpu_name(_: torch.device) -> str:
    return cpu_model()


def _always() -> bool:
    return True


def _one() -> int:
    return 1


def _cuda_sync(d: torch.device) -> None:
    torch.cuda.synchronize(d)


def _cuda_peak(d: torch.device) -> int | None:
    return int(torch.cuda.max_memory_allocated(d))


def _cuda_reset_peak(d: torch.device) -> None:
    torch.cuda.reset_peak_memory_stats(d)


def _cuda_name(d: torch.device) -> str:
    return str(torch.cuda.get_device_name(d))


def _neuron_count() -> int:
    return int(getattr(_backend_module("neuron"), "device_count", _one)())


def _mps_available() -> bool:
    return bool(torch.backends.mps.is_available())


def _mps_sync(_: torch.device) -> None:
    torch.mps.synchronize()


def _mps_allocated(_: torch.device) -> int | None:
    return int(torch.mps.driver_allocated_memory())


def _named(name: str) -> Callable[[torch.device], str]:
    def get(_: torch.device) -> str:
        return name

    return get


DEVICE_OPS: dict[str, DeviceOps] = {
    "cpu": DeviceOps(
        is_available=_always,
        count=_one,
        synchronize=_noop,  # CPU ops run synchronously
        max_memory_allocated=_none,  # no allocator counter: the result reports host RSS instead
        reset_peak_memory=_noop,
        name=_cpu_name,
        autocast_type="cpu",
        process_group="gloo",
    ),
    "cuda": DeviceOps(
        is_available=torch.cuda.is_available,
        count=torch.cuda.device_count,
        synchronize=_cuda_sync,
        max_memory_allocated=_cuda_peak,
        reset_peak_memory=_cuda_reset_peak,
        name=_cuda_name,
        autocast_type="cuda",
        process_group="nccl",
    ),
    "neuron": DeviceOps(
        is_available=_neuron_available,
        count=_neuron_count,
        synchronize=_neuron_sync,
        max_memory_allocated=_none,
        reset_peak_memory=_noop,
        name=_named("AWS Neuron device"),
        autocast_type="neuron",
        process_group="neuron",
    ),
    "xla": DeviceOps(
        is_available=_xla_available,
        count=_one,
        synchronize=_xla_sync,  # mark_step + wait: XLA is lazy, nothing runs until the graph is cut
        max_memory_allocated=_none,
        reset_peak_memory=_noop,
        name=_named("XLA device"),
        autocast_type="xla",
        process_group="xla",
    ),
    "mps": DeviceOps(
        is_available=_mps_available,
        count=_one,
        synchronize=_mps_sync,
        max_memory_allocated=_mps_allocated,
        reset_peak_memory=_noop,
        name=_named("Apple MPS"),
        autocast_type="mps",
        process_group="gloo",
    ),
}


def present_devices() -> list[str]:
    """Device strings torch can use on this machine, for error messages."""
    out = []
    for kind, ops in DEVICE_OPS.items():
        try:
            if ops.is_available():
                n = ops.count() if kind == "cuda" else 1
                out.append(kind)
                out += [f"{kind}:{i}" for i in range(1, n)] if kind == "cuda" else []
        except Exception:  # a broken backend must not hide the others
            continue
    return out


def resolve_device(spec: str) -> torch.device:
    """Parse and check a device string; unknown or absent devices are user errors listing what is here."""
    spec = (spec or "").strip().lower()
    kind, _, index = spec.partition(":")
    if kind not in DEVICE_OPS:
        raise DeviceError(
            f"unknown device {spec!r}; {did_you_mean(kind, DEVICE_TYPES)} "
            f"(present here: {', '.join(present_devices())})",
            field="--device",
        )
    ops = DEVICE_OPS[kind]
    if not ops.is_available():
        raise DeviceError(
            f"device {spec!r} is not present on this machine (present here: {', '.join(present_devices())})",
            field="--device",
        )
    if index:
        if not index.isdigit():
            raise DeviceError(f"bad device index in {spec!r}", field="--device", fix="use e.g. cuda:0")
        if int(index) >= ops.count():
            raise DeviceError(f"device {spec!r} is not present: {ops.count()} {kind} device(s) here", field="--device")
    if kind == "xla":
        import torch_xla.core.xla_model as xm

        return torch.device(xm.xla_device())
    return torch.device(spec)


def process_group_backend(device_type: str) -> str:
    """The torch.distributed backend for a device type: gloo on CPU, nccl on CUDA, neuron, xla."""
    return DEVICE_OPS[device_type].process_group


def devices_per_accelerator(device_type: str, accelerator: str | None) -> tuple[int, str]:
    """How many torch devices (ranks, one each) make one catalog accelerator, and what that assumes.

    A GPU is one device and a CPU process counts as one. On Neuron a rank drives one NeuronCore as the runtime
    shows it, so one chip is its NeuronCores / LNC (``NEURON_LOGICAL_NC_CONFIG`` overrides the default LNC).
    """
    if device_type == "cpu":
        return 1, "CPU: each process counts as one accelerator"
    if device_type != "neuron":
        return 1, f"{device_type}: one rank per device, one device per accelerator"
    known = ranks_per_chip(accelerator or "", os.environ.get("NEURON_LOGICAL_NC_CONFIG", ""))
    if known is None:
        return 1, f"Neuron chip {accelerator or 'not recognised'}: each rank counted as one accelerator (assumed)"
    cores, lnc, per = known
    return per, (
        f"{accelerator}: one rank per NeuronCore, {cores} NeuronCores per chip at LNC={lnc} = {per} per chip "
        "(assumed: the runtime's default grouping unless NEURON_LOGICAL_NC_CONFIG says otherwise)"
    )


def ops_for(device: torch.device) -> DeviceOps:
    return DEVICE_OPS[device.type]


def synchronize(device: torch.device) -> None:
    """Wait for queued device work; call before reading a host clock."""
    ops_for(device).synchronize(device)


def peak_memory_bytes(device: torch.device) -> int | None:
    try:
        return ops_for(device).max_memory_allocated(device)
    except Exception:
        return None


def reset_peak_memory(device: torch.device) -> None:
    with contextlib.suppress(Exception):
        ops_for(device).reset_peak_memory(device)


def check_precision(precision: str) -> str:
    if precision not in PRECISIONS:
        raise ConfigError(
            f"unknown precision {precision!r}; {did_you_mean(precision, PRECISIONS)}", field="--precision"
        )
    return precision


def check_backend(backend: str) -> str:
    if backend not in COMPILE_BACKENDS:
        raise ConfigError(
            f"unknown compile backend {backend!r}; {did_you_mean(backend, COMPILE_BACKENDS)}",
            field="--compile",
        )
    return backend


def autocast(device: torch.device, precision: str) -> contextlib.AbstractContextManager[Any]:
    """bf16/fp16 autocast on the device, or nothing for fp32."""
    if precision == "fp32":
        return contextlib.nullcontext()
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    return torch.autocast(device_type=ops_for(device).autocast_type, dtype=dtype)


def compile_model(model: Any, backend: str, **kwargs: Any) -> Any:
    """torch.compile with the chosen backend; ``eager`` returns the model unchanged."""
    check_backend(backend)
    if backend == "eager":
        return model
    return torch.compile(model, backend=backend, **kwargs)


@dataclass(slots=True)
class Timing:
    """Seconds of a timed region; set when the region ends."""

    seconds: float = 0.0


@contextlib.contextmanager
def timed_region(device: torch.device) -> Iterator[Timing]:
    """Synchronise, time a block with perf_counter, synchronise again: queued device work counts."""
    timing = Timing()
    synchronize(device)
    t0 = time.perf_counter()
    yield timing
    synchronize(device)
    timing.seconds = time.perf_counter() - t0


# --- fingerprint --------------------------------------------------------------------------------


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return _platform.processor() or _platform.machine()


def _run_json_tool(argv: list[str], timeout: float = 10.0) -> Any:
    if shutil.which(argv[0]) is None:
        return None
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        return out.stdout.strip()


def _nvidia_smi() -> list[dict[str, str]] | None:
    fields = "name,driver_version,memory.total,clocks.max.sm,power.limit"
    raw = _run_json_tool(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"])
    if not isinstance(raw, str) or not raw:
        return None
    keys = fields.split(",")
    return [dict(zip(keys, (c.strip() for c in line.split(",")), strict=False)) for line in raw.splitlines()]


def accelerator_name(device_name: str) -> str | None:
    """Map a torch device name to a catalog accelerator name (``NVIDIA H200`` -> ``H200``)."""
    for needle, name in _ACCELERATOR_NAMES:
        if needle.lower() in device_name.lower():
            return name
    return None


def fingerprint(device: torch.device, compile_backend: str = "eager", precision: str = "fp32") -> Platform:
    """Who ran this: device, versions, tools' own reports, and a hash (not the name) of the host."""
    ops = ops_for(device)
    try:
        name = ops.name(device)
    except Exception:
        name = device.type
    tools: dict[str, Any] = {}
    driver = None
    if device.type == "cuda":
        smi = _nvidia_smi()
        if smi:
            tools["nvidia-smi"] = smi
            driver = smi[0].get("driver_version")
    neuron_ls = _run_json_tool(["neuron-ls", "--json-output"])
    if neuron_ls is not None:
        tools["neuron-ls"] = neuron_ls
    neuron_version = None
    with contextlib.suppress(Exception):
        import importlib.metadata as md

        for pkg in ("torch-neuron", "torch-neuronx", "neuronx-cc"):
            with contextlib.suppress(md.PackageNotFoundError):
                neuron_version = f"{pkg} {md.version(pkg)}"
                break
    return Platform(
        device=str(device),
        device_type=device.type,
        device_name=name,
        device_count=ops.count(),
        accelerator=accelerator_name(name) if device.type != "cpu" else None,
        driver=driver,
        torch=torch.__version__,
        cuda=torch.version.cuda if device.type == "cuda" else None,
        neuron=neuron_version,
        cpu_model=cpu_model(),
        cpu_count=os.cpu_count() or 0,
        hostname_hash=hashlib.sha256(socket.gethostname().encode()).hexdigest()[:12],
        python=_platform.python_version(),
        compile_backend=compile_backend,
        precision=precision,
        tool_output=tools,
        **location_fields(),  # cloud instance type/region/zone and launch labels, from local sources only
    )
