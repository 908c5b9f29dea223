"""PilotResult: one JSON document per pilot run, per platform. The contract between pilot, bill and report.

Written atomically (temp file, fsync, rename) so a killed run never leaves half a file. Schema-versioned:
a reader refuses a newer major version with a clear line. No torch import here: the bill reads results
on a laptop without it.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from accelpilot.errors import InputFileError
from accelpilot.figures import Figure
from accelpilot.jsonfile import check_header, read_model
from accelpilot.redact import redact_command

SCHEMA_VERSION = 1
MAX_NAME = 120  # characters of a result file name, well under the 255 bytes file systems allow


class Platform(BaseModel):
    """Fingerprint of where the pilot ran: enough to tell two platforms apart and to look up peaks."""

    model_config = ConfigDict(extra="allow")

    device: str  # torch device string as given: cpu, cuda, cuda:1, neuron, xla, mps
    device_type: str = ""  # cpu, cuda, neuron, xla, mps
    device_name: str = ""  # "NVIDIA H200", CPU model, ...
    device_count: int = 1
    accelerator: str | None = None  # catalog accelerator name (H100, H200, Trainium2...), None on CPU
    driver: str | None = None
    torch: str = ""
    cuda: str | None = None
    neuron: str | None = None
    cpu_model: str = ""
    cpu_count: int = 0
    hostname_hash: str = ""
    python: str = ""
    compile_backend: str = "eager"
    precision: str = "fp32"
    tool_output: dict[str, Any] = Field(default_factory=dict)  # nvidia-smi / neuron-ls JSON when present

    def slug(self) -> str:
        """Short file-name-safe platform name: ``cpu``, ``h200``, ``trainium2``."""
        base = (self.accelerator or self.device_type or self.device).lower()
        return "".join(c if c.isalnum() else "-" for c in base).strip("-") or "device"


class WorkloadInfo(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    factory: str = ""  # module:factory for user workloads, "builtin:<name>" for ours
    params: int | None = None
    config: dict[str, Any] = Field(default_factory=dict)


# Measured quantities cannot be negative (and shares stay within 0..1): a file that says otherwise was edited or
# written by a broken client, and pricing it gave a negative cost per accepted run. pydantic refuses it where the
# file is read, and the reader names the file and the field.
_NonNeg = Field(default=None, ge=0)
_Share = Field(default=None, ge=0, le=1)


class TrainingSummary(BaseModel):
    """What the bill needs from a training pilot; every number also sits in ``figures``."""

    model_config = ConfigDict(extra="allow")

    tokens_per_s: float | None = _NonNeg
    samples_per_s: float | None = _NonNeg
    time_to_target_s: float | None = _NonNeg  # olympic mean over runs when runs >= 3
    target_loss: float | None = None
    runs: int = Field(default=0, ge=0)
    accepted_runs: int = Field(default=0, ge=0)  # runs that reached the target

    @model_validator(mode="after")
    def _accepted_within_runs(self) -> TrainingSummary:
        if self.accepted_runs > self.runs:
            raise ValueError(f"accepted_runs ({self.accepted_runs}) is more than runs ({self.runs})")
        return self


class ServingSummary(BaseModel):
    """What the bill needs from a serving pilot."""

    model_config = ConfigDict(extra="allow")

    scenario: str = ""
    slo_ms: float | None = _NonNeg
    peak_qps_under_slo: float | None = _NonNeg  # highest rate whose p99 met the SLO (find-peak) or the measured rate
    goodput_qps: float | None = _NonNeg
    goodput_share: float | None = _Share  # accepted / completed
    tokens_per_request: float | None = _NonNeg  # output tokens (endpoint) or input tokens (embedding)
    idle_fraction: float | None = _Share
    errors: int = Field(default=0, ge=0)
    rejected: int = Field(default=0, ge=0)


class Topology(BaseModel):
    """How many devices, processes and nodes produced the throughput in ``training.tokens_per_s``.

    The one meaning of a measured throughput (issue 25): the figure is the sum over ``world_size`` ranks
    (``nnodes`` x ``nproc_per_node``), which drove ``accelerators`` catalog accelerators (GPUs, Trainium or
    Inferentia chips; a CPU process counts as one). The bill divides by ``accelerators`` before scaling to the
    devices it prices. ``devices_per_accelerator`` is how many torch devices one accelerator shows (2 NeuronCores
    per Trainium1 chip when one rank drives each core), so ``accelerators = world_size / devices_per_accelerator``.
    """

    model_config = ConfigDict(extra="allow")

    world_size: int = Field(default=1, ge=1)  # ranks whose throughput is summed
    nnodes: int = Field(default=1, ge=1)
    nproc_per_node: int = Field(default=1, ge=1)
    devices_per_accelerator: int = Field(default=1, ge=1)  # NeuronCores per chip when a rank drives one core
    accelerators: float = Field(default=1, gt=0)  # catalog accelerators the ranks ran on (chips, GPUs)


def measured_topology(res: PilotResult) -> Topology:
    """The topology behind a result's throughput; results written before ``topology`` existed are read from config.

    Older distributed results hold ``nnodes`` and ``nproc_per_node`` (an int, or a map of world size to it) in
    ``config``; their ``training.tokens_per_s`` is the throughput at the smallest world size measured.
    """
    if res.topology is not None:
        return res.topology
    cfg = res.config
    nnodes = int(cfg.get("nnodes") or 1)
    sizes = cfg.get("world_sizes")
    if isinstance(sizes, list) and sizes:
        world = int(min(sizes))
    elif cfg.get("world_size"):
        world = int(cfg["world_size"])
    else:
        per = cfg.get("nproc_per_node") or 1
        world = nnodes * int(per if not isinstance(per, dict) else min(int(v) for v in per.values()))
    world = max(world, 1)
    return Topology(world_size=world, nnodes=nnodes, nproc_per_node=max(world // nnodes, 1), accelerators=float(world))


class PilotResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    kind: Literal["training", "serving"]
    created: dt.datetime = Field(default_factory=lambda: dt.datetime.now(dt.timezone.utc))
    command: str = ""  # the exact command that reproduces this result
    platform: Platform
    workload: WorkloadInfo
    config: dict[str, Any] = Field(default_factory=dict)
    figures: dict[str, Figure] = Field(default_factory=dict)
    samples: dict[str, list[float]] = Field(default_factory=dict)  # raw samples behind percentiles
    training: TrainingSummary | None = None
    serving: ServingSummary | None = None
    accepted: bool | None = None  # met its quality target (training) or SLO share (serving)
    details: dict[str, Any] = Field(default_factory=dict)  # structured extras (profiler tables, LoadGen summary)
    errors: list[str] = Field(default_factory=list)  # runtime failures counted, not raised
    topology: Topology | None = None  # devices, ranks and nodes behind the throughput (None: one device, or old)

    @field_validator("command")
    @classmethod
    def _no_secrets(cls, v: str) -> str:
        """Every recorded command (training and serving, written or read) loses its credentials here."""
        return redact_command(v)

    def default_filename(self, unique: str = "") -> str:
        """``{platform}-{workload}-{UTC stamp}[-{unique}].json``, at most ``MAX_NAME`` characters.

        Names are bounded (a 300-character model id must not exceed the file system's 255 bytes) and
        ``unique`` tells apart two runs that end in the same second (see ``write_new_result``).
        """
        stamp = self.created.strftime("%Y%m%dT%H%M%SZ")
        wl = "".join(c if c.isalnum() else "-" for c in self.workload.name.lower())
        tail = f"-{stamp}" + (f"-{unique}" if unique else "") + ".json"
        head = f"{self.platform.slug()[:40]}-{wl}"[: MAX_NAME - len(tail)].rstrip("-")
        return head + tail


def result_json_schema() -> dict[str, Any]:
    return PilotResult.model_json_schema()


def write_result(result: PilotResult, path: Path | str) -> Path:
    """Write atomically: temp file in the same folder, fsync, rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = result.model_dump_json(indent=2)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(data)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_new_result(result: PilotResult, folder: Path | str) -> Path:
    """Write under a fresh name in ``folder``; never replaces a file, even one another run wrote just now.

    ``atomic.write_new_file`` links the temp file to its final name (``link`` fails when the name exists, unlike
    ``rename``), so two runs ending in the same second both keep their results; where the folder refuses hard
    links (bucket mounts) it claims the name and renames, or writes with a checksum. A failure raises
    WriteFailedError naming where the data is: the temp file, or a rescue copy in the system temp folder.
    """
    from accelpilot.atomic import WriteFailedError, write_new_file

    folder = Path(folder)
    data = result.model_dump_json(indent=2) + "\n"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return write_new_file(folder, lambda i: result.default_filename("" if i == 0 else secrets.token_hex(3)), data)
    except OSError as exc:
        kept = exc.kept if isinstance(exc, WriteFailedError) else None
        if kept is None:  # the folder took nothing: keep the measurement anyway, where the user can find it
            fd, rescue = tempfile.mkstemp(prefix="accelpilot-result-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
            kept = Path(rescue)
        raise WriteFailedError(exc, kept) from exc


def read_result(path: Path | str, kind: str | None = None, who: str = "", kind_fix: str = "") -> PilotResult:
    """Read and validate a result file; every failure is one line naming the file and the fix.

    With ``kind``, a result of another kind is refused too: ``who`` ("option 'trn'") says what expected it and
    ``kind_fix`` how to mend it (``{found}`` stands for the kind found). The one reader of result files: the
    bill, the procedure and the CLI all come through here.
    """

    def header(data: dict[str, Any]) -> None:
        # Kind and version before any field: a log or a newer file is named as such, not as a field error.
        check_header(data, path, "pilot result", SCHEMA_VERSION, kinds=("training", "serving"))

    res = read_model(
        path,
        PilotResult,
        "result file",
        fix="re-run the pilot; result files are written atomically and never edited by hand",
        check=header,
    )
    if kind is not None and res.kind != kind:
        raise InputFileError(
            f"{who or 'this'} prices a {kind} workload but this is a {res.kind} result",
            file=str(path),
            field="kind",
            fix=(kind_fix or f"pass a {kind} pilot result").replace("{found}", res.kind),
        )
    return res
