"""Log pilot results as MLflow runs: params (platform, workload, config), one metric per figure, artifacts.

MLflow is optional (``accelpilot[tracking]``). Runs are written through ``MlflowClient`` (no global active
run). A result already exported to the experiment (same content hash in the ``accelpilot.sha256`` tag) is
not logged twice.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelpilot.checksum import sidecar_status
from accelpilot.errors import ConfigError, InputFileError
from accelpilot.pilot.result import PilotResult, measured_topology, read_result
from accelpilot.redact import redact_text, redact_url

MAX_PARAM_CHARS = 6000  # MLflow's limit on a param value
_BAD_KEY = re.compile(r"[^A-Za-z0-9_\-. /]")


@dataclass(slots=True)
class Exported:
    path: Path
    run_id: str
    status: str  # "logged" or "already exported"


def _key(k: str) -> str:
    return _BAD_KEY.sub("_", k)[:250]


def flatten(prefix: str, data: Any, out: dict[str, str]) -> dict[str, str]:
    """Nested dicts -> ``a.b.c`` params; lists and long values as JSON, cut to MLflow's limit."""
    if isinstance(data, dict):
        for k, v in data.items():
            flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif data is not None:
        text = data if isinstance(data, str) else json.dumps(data, default=str)
        out[_key(prefix)] = text[:MAX_PARAM_CHARS]
    return out


def result_params(res: PilotResult) -> dict[str, str]:
    plat = res.platform.model_dump(mode="json")
    plat.pop("tool_output", None)  # nvidia-smi / neuron-ls output: an artifact, not a param
    params: dict[str, str] = {}
    flatten("platform", plat, params)
    flatten("workload", res.workload.model_dump(mode="json"), params)
    flatten("config", res.config, params)
    if res.kind == "training":  # what the throughput counts: the one meaning the bill and the report use
        flatten("topology", measured_topology(res).model_dump(mode="json"), params)
    params["kind"] = res.kind
    return params


def result_metrics(res: PilotResult) -> dict[str, float]:
    """A metric per figure; a training throughput of all ranks also per accelerator (older results lack it)."""
    metrics = {_key(name): float(f.value) for name, f in res.figures.items()}
    tr = res.training
    if res.kind == "training" and tr is not None and tr.tokens_per_s and "tokens_per_s_per_accelerator" not in metrics:
        metrics["tokens_per_s_per_accelerator"] = tr.tokens_per_s / measured_topology(res).accelerators
    return metrics


def export_results(
    paths: list[Path], tracking_uri: str, experiment: str = "accelpilot", report_dir: Path | None = None
) -> list[Exported]:
    try:
        from mlflow.entities import Metric, Param
        from mlflow.exceptions import MlflowException
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise ConfigError(
            "MLflow is not installed", field="export mlflow", fix="pip install 'accelpilot[tracking]'"
        ) from None
    for name in ("mlflow", "alembic"):  # their INFO lines ("Creating initial MLflow database tables") are noise here
        logging.getLogger(name).setLevel(logging.WARNING)
    if report_dir is not None and not report_dir.is_dir():
        raise InputFileError("not a report folder", file=str(report_dir), field="--report")
    results = []
    for p in paths:  # read and check everything before logging anything
        res = read_result(p)
        digest = hashlib.sha256(p.read_bytes()).hexdigest()
        results.append((p, res, digest, sidecar_status(p, digest)))
    shown = redact_url(tracking_uri)  # a URI with a password or token never reaches an error line
    try:
        with _ctrl_c_between_runs() as stopped:
            client = MlflowClient(tracking_uri=tracking_uri)
            exp = client.get_experiment_by_name(experiment)
            exp_id = exp.experiment_id if exp is not None else client.create_experiment(experiment)
            out: list[Exported] = []
            for path, res, digest, checksum in results:
                if stopped:
                    raise KeyboardInterrupt
                # Only a FINISHED run counts as exported: one left FAILED (or RUNNING by a killed process) is retried.
                seen = client.search_runs(
                    [exp_id],
                    filter_string=f"tags.`accelpilot.sha256` = '{digest}' and attributes.status = 'FINISHED'",
                    max_results=1,
                )
                if seen:
                    out.append(Exported(path, seen[0].info.run_id, "already exported"))
                    continue
                out.append(_log_one(client, exp_id, path, res, (digest, checksum), report_dir, Metric, Param))
            if stopped:
                raise KeyboardInterrupt
        return out
    except MlflowException as exc:
        msg = redact_text(str(exc.message if hasattr(exc, "message") else exc).splitlines()[0])
        raise ConfigError(
            f"MLflow refused ({shown}): {msg}", field="--tracking-uri", fix="check the tracking URI"
        ) from None
    except (OSError, ValueError, TypeError, KeyError, ImportError) as exc:
        # A broken store: a file where its folder should be, a read-only folder, a URI no store understands.
        first = (str(exc).splitlines() or [""])[0]
        raise ConfigError(
            f"cannot use the tracking store {shown}: {type(exc).__name__}: {redact_text(first)}",
            field="--tracking-uri",
            fix="give a writable folder (file:///path) or sqlite:///path/mlflow.db, or a reachable server",
        ) from None


@contextlib.contextmanager
def _ctrl_c_between_runs() -> Iterator[list[int]]:
    """Ctrl-C noted, and acted on once the store is open and between runs. Raised wherever it lands, it was lost
    when it landed in a garbage collector callback of SQLAlchemy's ("Exception ignored in ..."): exit 0."""
    stopped: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, _frame: stopped.append(signum))
    except ValueError:  # not the main thread: leave signals alone
        previous = None
    try:
        yield stopped
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _log_one(
    client: Any,
    exp_id: str,
    path: Path,
    res: PilotResult,
    sums: tuple[str, tuple[str, str]],
    report_dir: Path | None,
    Metric: Any,
    Param: Any,
) -> Exported:
    """Create one run and fill it; any failure after the run exists ends it FAILED (never left RUNNING), so a
    later export retries it instead of answering "already exported"."""
    stamp = int(res.created.timestamp() * 1000)
    digest, (checksum, why) = sums
    tags = {
        "accelpilot.sha256": digest,
        # As collect says it: a result whose .sha256 is missing or does not match is not a measurement to trust.
        "accelpilot.checksum": checksum if checksum == "verified" else f"unverified: {why}",
        "accelpilot.kind": res.kind,
        "accelpilot.command": res.command[:5000],
        "accelpilot.accepted": str(res.accepted),
    }
    for name, f in res.figures.items():
        tags[_key(f"figure.{name}")] = f"{f.unit} {f.kind.value}: {f.label or name}"[:5000]
    run = client.create_run(exp_id, start_time=stamp, tags=tags, run_name=Path(res.default_filename()).stem)
    rid = run.info.run_id
    try:
        params = [Param(k, v) for k, v in result_params(res).items()]
        metrics = [Metric(k, v, stamp, 0) for k, v in result_metrics(res).items()]
        for i in range(0, max(len(params), len(metrics)), 100):  # MLflow's batch limits
            client.log_batch(rid, metrics=metrics[i : i + 100], params=params[i : i + 100])
        client.log_artifact(rid, str(path), "result")
        if report_dir is not None:
            client.log_artifacts(rid, str(report_dir), "report")
        client.set_terminated(rid, status="FINISHED", end_time=stamp)
    except BaseException:  # Ctrl-C included
        with contextlib.suppress(Exception):
            client.set_terminated(rid, status="FAILED")
        raise
    return Exported(path, rid, "logged")
