"""PilotResult: one JSON document per pilot run, per platform. The contract between pilot, bill and report.

Written atomically (temp file, fsync, rename) so a killed run never leaves half a file. Schema-versioned:
a reader refuses a newer major version with a clear line. No torch import here: the bill reads results
on a laptop without it.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from accelpilot.errors import InputFileError
from accelpilot.figures import Figure
from accelpilot.jsonfile import read_model

SCHEMA_VERSION = 1


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


class TrainingSummary(BaseModel):
    """What the bill needs from a training pilot; every number also sits in ``figures``."""

    model_config = ConfigDict(extra="allow")

    tokens_per_s: float | None = None
    samples_per_s: float | None = None
    time_to_target_s: float | None = None  # olympic mean over runs when runs >= 3
    target_loss: float | None = None
    runs: int = 0
    accepted_runs: int = 0  # runs that reached the target


class ServingSummary(BaseModel):
    """What the bill needs from a serving pilot."""

    model_config = ConfigDict(extra="allow")

    scenario: str = ""
    slo_ms: float | None = None
    peak_qps_under_slo: float | None = None  # highest rate whose p99 met the SLO (find-peak) or the measured rate
    goodput_qps: float | None = None
    goodput_share: float | None = None  # accepted / completed
    tokens_per_request: float | None = None  # output tokens (endpoint) or input tokens (embedding)
    idle_fraction: float | None = None
    errors: int = 0
    rejected: int = 0


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

    def default_filename(self) -> str:
        stamp = self.created.strftime("%Y%m%dT%H%M%SZ")
        wl = "".join(c if c.isalnum() else "-" for c in self.workload.name.lower())
        return f"{self.platform.slug()}-{wl}-{stamp}.json"


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


def read_result(path: Path | str, kind: str | None = None, who: str = "", kind_fix: str = "") -> PilotResult:
    """Read and validate a result file; every failure is one line naming the file and the fix.

    With ``kind``, a result of another kind is refused too: ``who`` ("option 'trn'") says what expected it and
    ``kind_fix`` how to mend it (``{found}`` stands for the kind found). The one reader of result files: the
    bill, the procedure and the CLI all come through here.
    """

    def newer_schema(data: dict[str, Any]) -> None:
        version = data.get("schema_version")
        if isinstance(version, int) and version > SCHEMA_VERSION:
            raise InputFileError(
                f"written by a newer accelpilot (schema {version}, this one reads {SCHEMA_VERSION})",
                file=str(path),
                field="schema_version",
                fix="upgrade accelpilot",
            )

    res = read_model(
        path,
        PilotResult,
        "result file",
        fix="re-run the pilot; result files are written atomically and never edited by hand",
        check=newer_schema,
    )
    if kind is not None and res.kind != kind:
        raise InputFileError(
            f"{who or 'this'} prices a {kind} workload but this is a {res.kind} result",
            file=str(path),
            field="kind",
            fix=(kind_fix or f"pass a {kind} pilot result").replace("{found}", res.kind),
        )
    return res
