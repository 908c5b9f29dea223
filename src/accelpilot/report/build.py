"""From files to a report: read and check every input, price, decide, assemble. No pilot is run here.

All validation happens before anything is written: a newer result schema, a result of the wrong kind for the
scenario, or an option with neither a result nor assumed hours each stops with one line naming the file and
the fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from accelpilot.bill.compute import make_bill
from accelpilot.bill.scenario import Scenario, load_scenario
from accelpilot.catalog import load_catalog
from accelpilot.decide import decide
from accelpilot.decide.portability import LogView, read_log
from accelpilot.errors import InputFileError
from accelpilot.pilot.result import PilotResult, read_result
from accelpilot.report.model import Report, build_report


def read_checked_result(path: Path | str, sc: Scenario) -> PilotResult:
    """A result passed to measure the scenario's workload: it must be of the scenario's kind."""
    res = read_result(path)
    if res.kind != sc.workload:
        raise InputFileError(
            f"a {res.kind} result, but scenario {sc.path or sc.name!r} prices a {sc.workload} workload",
            file=str(path),
            field="kind",
            fix=f'pass a {sc.workload} pilot result, or set workload = "{res.kind}" in the scenario',
        )
    return res


def _same(a: str | Path, b: str | Path) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return str(a) == str(b)


def make_report(
    scenario: Path | str | Scenario,
    results: Sequence[Path | str] = (),
    scan_log: Path | str | LogView | None = None,
    catalog: Sequence[Path | str] = (),
    beside: Sequence[tuple[str, PilotResult]] = (),
    loaded_results: Sequence[tuple[str, PilotResult]] = (),
    notes: Sequence[str] = (),
) -> Report:
    """Scenario + results + log + catalog -> Report. ``beside``: other measurements shown but not checked."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    cat = load_catalog(list(catalog))
    checked: list[tuple[str, Any]] = list(loaded_results)
    for p in results:
        checked.append((str(p), read_checked_result(p, sc)))
    log: LogView | None
    log = scan_log if scan_log is None or isinstance(scan_log, LogView) else read_log(scan_log)
    bill = make_bill(sc, cat)
    for o in bill.options:  # the results the scenario names are shown too
        if o.result_file and not any(_same(o.result_file, p) for p, _ in checked):
            checked.append((o.result_file, read_result(o.result_file)))
    shown_beside = [(p, r) for p, r in beside if not any(_same(p, q) for q, _ in checked)]
    decision = decide(sc, bill, log, results=checked + shown_beside, catalog=cat)
    return build_report(sc, bill, decision, log, results=checked, beside=shown_beside, notes=list(notes))
