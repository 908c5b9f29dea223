"""Several runs of one option, combined: an olympic mean per figure, written as one result the bill can price.

Three or more runs: drop the highest and the lowest, mean the rest; two: their mean; one: itself. Only runs
alike are combined: the same checksum standing as the best run (a verified run never averages with an unverified
copy) and the same world size (a 2-rank throughput is not a 16-rank one). The combined result is the best run's
fingerprint with the combined figures, ``details.combined`` naming every run and, per figure, the per-run values
and the runs dropped. It is written beside the runs as ``<option>.combined.json``, which ``gather_results`` never
reads back as a run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accelpilot.collect.read import Collected
from accelpilot.errors import InputFileError
from accelpilot.pilot.result import PilotResult, measured_topology

COMBINED_SUFFIX = ".combined.json"
TRAINING = ("tokens_per_s", "samples_per_s", "time_to_target_s")
SERVING = ("peak_qps_under_slo", "goodput_qps", "goodput_share", "tokens_per_request", "idle_fraction")


def olympic(values: list[float]) -> tuple[float, list[int]]:
    """(combined value, indices dropped): olympic mean of three or more, plain mean of two."""
    if len(values) < 3:
        return sum(values) / len(values), []
    order = sorted(range(len(values)), key=lambda i: values[i])
    dropped = [order[0], order[-1]]
    kept = [values[i] for i in order[1:-1]]
    return sum(kept) / len(kept), sorted(dropped)


@dataclass(slots=True)
class Combined:
    result: PilotResult
    runs: list[Path]  # the runs combined, best first
    method: str  # "olympic mean" or "mean"
    dropped: dict[str, list[Path]]  # per figure, the runs left out of the mean
    not_combined: list[tuple[Path, str]] = field(default_factory=list)


def _alike(best: Collected, c: Collected) -> str | None:
    if c.checksum != best.checksum:
        return f"{c.checksum} while the best run is {best.checksum}"
    w, wb = measured_topology(c.result).world_size, measured_topology(best.result).world_size
    if w != wb:
        return f"world size {w}, the best run's is {wb}"
    return None


def _figures(summary: Any, names: tuple[str, ...], pool: list[Collected], part: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        runs = [(c, getattr(getattr(c.result, part), name, None)) for c in pool]
        got = [(c, float(v)) for c, v in runs if v is not None]
        if len(got) < 2:
            continue
        value, drop = olympic([v for _, v in got])
        out[name] = {
            "value": value,
            "runs": {str(c.path): v for c, v in got},
            "dropped": [str(got[i][0].path) for i in drop],
        }
    return out


def combine_runs(runs: list[Collected]) -> Combined | None:
    """The combination of an option's runs (best first, as ``match_results`` orders them); None below two alike."""
    best = runs[0]
    pool = [best]
    skipped: list[tuple[Path, str]] = []
    for c in runs[1:]:
        why = _alike(best, c)
        if why:
            skipped.append((c.path, why))
        else:
            pool.append(c)
    if len(pool) < 2:
        return None
    res = best.result
    part = "training" if res.kind == "training" else "serving"
    names = TRAINING if part == "training" else SERVING
    figs = _figures(getattr(res, part), names, pool, part)
    if getattr(res, part) is None or not figs:
        return None
    method = "olympic mean" if len(pool) >= 3 else "mean"
    update: dict[str, Any] = {k: v["value"] for k, v in figs.items()}
    src = f"{method} of {len(pool)} runs (collect)"
    if part == "training" and res.training is not None:
        t = [c.result.training for c in pool if c.result.training is not None]
        update["runs"] = sum(x.runs for x in t)
        update["accepted_runs"] = sum(x.accepted_runs for x in t)
    summary = getattr(res, part).model_copy(update=update)
    figures = dict(res.figures)
    for k, v in figs.items():
        if k in figures:
            value = type(figures[k].value)(repr(v["value"]))
            figures[k] = figures[k].model_copy(update={"value": value, "source": src})
    details = dict(res.details)
    details["combined"] = {
        "method": method,
        "runs": [str(c.path) for c in pool],
        "figures": figs,
        "not_combined": [{"file": str(p), "why": w} for p, w in skipped],
    }
    errors = [e for c in pool for e in c.result.errors]
    accepted = None if res.accepted is None else any(c.result.accepted for c in pool)
    combined = res.model_copy(
        update={
            part: summary,
            "figures": figures,
            "details": details,
            "errors": errors,
            "accepted": accepted,
            "command": f"accelpilot collect: {method} of {len(pool)} runs; each run's command is in its own file",
        }
    )
    dropped = {k: [Path(p) for p in v["dropped"]] for k, v in figs.items()}
    return Combined(PilotResult.model_validate(combined.model_dump()), [c.path for c in pool], method, dropped, skipped)


def combined_path(option: str, folder: Path) -> Path:
    slug = re.sub(r"[^a-z0-9]+", "-", option.lower()).strip("-") or "option"
    return folder / f"{slug}{COMBINED_SUFFIX}"


def write_combined(combo: Combined, option: str, folder: Path, verified: bool = True) -> Path:
    """Write the combination beside the runs, with a ``.sha256`` like the pilot's own results when the runs
    were verified (a combination of unverified runs gets none: a checksum must not launder them)."""
    import hashlib

    from accelpilot.pilot.result import write_result

    path = combined_path(option, folder)
    try:
        write_result(combo.result, path)
        side = path.with_name(path.name + ".sha256")
        if not verified:
            side.unlink(missing_ok=True)
            return path
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        side.write_text(f"{digest}  {path.name}\n", encoding="utf-8")
    except OSError as exc:
        raise InputFileError(
            f"cannot write the combination of {len(combo.runs)} runs ({exc.strerror})",
            file=str(path),
            fix="copy the results into a writable folder and collect from there",
        ) from None
    return path
