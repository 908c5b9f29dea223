"""The one reader of the result files a scenario's options name (the procedure's, and the bill command's).

Kept apart from procedure.py so that ``accelpilot bill`` reads its results without importing decide/ and report/.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from accelpilot.bill.scenario import Scenario
from accelpilot.errors import InputFileError
from accelpilot.pilot.result import PilotResult, read_result


def _check_sidecar(path: Path, who: str) -> None:
    """A result whose ``.sha256`` is there but does not match was edited after the run: never priced as measured.

    No sidecar says nothing (a local ``run train --out`` writes none); ``result_unverified`` accepts it knowingly.
    """
    side = path.with_name(path.name + ".sha256")
    try:
        recorded = side.read_text(encoding="utf-8").split()[0].lower() if side.is_file() else None
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if recorded else None
    except (OSError, UnicodeDecodeError, IndexError):
        return  # read_result says what is wrong with the result itself; an unreadable sidecar proves nothing
    if recorded and recorded != digest:
        raise InputFileError(
            f"{who}'s result does not match its .sha256 (edited after the run): it cannot be priced as measured",
            file=str(path),
            fix="copy the result again, or run `accelpilot collect --accept-unverified` to price it as unverified",
        )


def read_option_results(sc: Scenario) -> dict[str, PilotResult]:
    """Every result file the scenario's options name, each read once, by resolved path: the bill prices them
    from this (it reads no file). An option's result must be of the scenario's kind; a spot restart_result is
    any result holding an interruption's figures."""
    out: dict[str, PilotResult] = {}
    for o in sc.options:
        if o.result is not None and not o.result_unverified:
            _check_sidecar(sc.resolve(o.result), f"option {o.name!r}")
        if o.result is not None and str(sc.resolve(o.result)) not in out:
            path = sc.resolve(o.result)
            out[str(path)] = read_result(
                path,
                kind=sc.workload,
                who=f"option {o.name!r}",
                kind_fix=f'point the option at a {sc.workload} pilot result, or set workload = "{{found}}" in the '
                "scenario",
            )
        if o.scaling_result is not None and str(sc.resolve(o.scaling_result)) not in out:
            out[str(sc.resolve(o.scaling_result))] = read_result(
                sc.resolve(o.scaling_result), kind="training", who=f"option {o.name!r} scaling_result"
            )
        restart = o.spot.restart_result if o.spot is not None else None
        if restart is not None and str(sc.resolve(restart)) not in out:
            out[str(sc.resolve(restart))] = read_result(sc.resolve(restart))
    return out
