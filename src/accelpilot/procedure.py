"""The whole chain, scan -> pilot -> bill -> decide -> report, and the one place that reads its input files.

``make_report`` (``accelpilot report``) reads and checks the scenario, catalog, log and pilot results, then hands
plain data to bill/, decide/ and report/build.py; nothing below it reads a result file: the results the scenario's
options name are read here once (``read_option_results``) and handed to the bill. All validation happens
before anything is written: a newer result schema, a result of the wrong kind for the scenario, or an option
with neither a result nor assumed hours each stops with one line naming the file and the fix.

``run_procedure`` (``accelpilot pilot``) runs the whole procedure on one machine. The pilots run as child
processes (``python -m accelpilot run train|serve``) so a crash or an out-of-memory in a user's workload cannot
take the report down with it, and each writes its result file atomically. Inputs the report rests on are kept
under ``OUT/inputs/`` so ``accelpilot report`` can rebuild it without running anything.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from accelpilot.bill.compute import make_bill
from accelpilot.bill.model import Bill
from accelpilot.bill.scenario import Scenario, load_scenario
from accelpilot.catalog import load_catalog
from accelpilot.decide import decide
from accelpilot.decide.portability import LogView, read_log, view_log
from accelpilot.errors import InputFileError, Interrupted, UserError
from accelpilot.evidence.read import read_evidence
from accelpilot.pilot.result import PilotResult, read_result
from accelpilot.report.build import build_report
from accelpilot.report.model import Report
from accelpilot.result_files import read_option_results

# Small, fast settings for the CPU: the procedure must finish in about two minutes on two cores.
# The quality target is loose (eval loss 3.6 on the tiny GPT, about 70 steps) so three time-to-target runs fit.
CPU_TRAIN_ARGS = ("--steps", "6", "--warmup", "2", "--runs", "3", "--target-loss", "3.6", "--eval-every", "5")
CPU_SERVE_ARGS = ("--duration-s", "2", "--num-samples", "64", "--buckets", "32,64")
CHILD_TIMEOUT_S = 1800  # a hung pilot must not hang the procedure


# --- reading the inputs: the procedure reads files, the layers below receive data ---------------------------


def read_checked_result(path: Path | str, sc: Scenario) -> PilotResult:
    """A result passed to measure the scenario's workload: it must be of the scenario's kind."""
    return read_result(
        path,
        kind=sc.workload,
        who=f"scenario {sc.path or sc.name!r}",
        kind_fix=f'pass a {sc.workload} pilot result, or set workload = "{{found}}" in the scenario',
    )


def _same(a: str | Path, b: str | Path) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return str(a) == str(b)


def priced_results(
    bill: Bill, have: Sequence[tuple[str, PilotResult]], read: Mapping[str, PilotResult] | None = None
) -> list[tuple[str, PilotResult]]:
    """The result files the bill priced that are not among ``have``: they are evidence for the gates too.
    ``read``: those already read for the bill (read_option_results), not read again."""
    out: list[tuple[str, PilotResult]] = []
    for o in bill.options:
        if o.result_file and not any(_same(o.result_file, p) for p, _ in [*have, *out]):
            res = (read or {}).get(o.result_file)
            out.append((o.result_file, res if res is not None else read_result(o.result_file)))
    return out


def make_report(
    scenario: Path | str | Scenario,
    results: Sequence[Path | str] = (),
    scan_log: Path | str | LogView | None = None,
    catalog: Sequence[Path | str] = (),
    beside: Sequence[tuple[str, PilotResult]] = (),
    loaded_results: Sequence[tuple[str, PilotResult]] = (),
    notes: Sequence[str] = (),
    evidence: Sequence[Path | str] = (),
) -> Report:
    """Scenario + results + log + catalog -> Report. ``beside``: other measurements shown but not checked.
    ``evidence``: AWS CLI JSON files read beside the scenario's ``[evidence] files`` (capacity gate)."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    cat = load_catalog(list(catalog))
    checked: list[tuple[str, PilotResult]] = list(loaded_results)
    for p in results:
        checked.append((str(p), read_checked_result(p, sc)))
    log: LogView | None
    log = scan_log if scan_log is None or isinstance(scan_log, LogView) else read_log(scan_log)
    ev = read_evidence([*(sc.resolve(f) for f in sc.evidence.files), *map(Path, evidence)])
    priced = read_option_results(sc)  # each result the options name, read once and handed to the bill
    bill = make_bill(sc, cat, ev, results=priced)
    checked += priced_results(bill, checked, priced)  # the results the scenario names are shown too
    shown_beside = [(p, r) for p, r in beside if not any(_same(p, q) for q, _ in checked)]
    decision = decide(sc, bill, log, results=checked + shown_beside, catalog=cat, evidence=ev)
    return build_report(sc, bill, decision, log, results=checked, beside=shown_beside, notes=list(notes))


# --- `accelpilot pilot`: run the pilots, then the same chain -----------------------------------------------


class PilotRunError(UserError):
    """A pilot child process failed; the message points at its log."""


def bundled_scenario() -> Path:
    """The seed's worked example shipped inside the package."""
    import accelpilot.bill as bill_pkg

    p = Path(bill_pkg.__file__).parent / "examples" / "worked-example.toml"
    if not p.exists():  # pragma: no cover - the package ships it
        raise InputFileError("the bundled worked example is missing", file=str(p), fix="reinstall accelpilot")
    return p


def reference_workloads() -> Path:
    """The package's own reference workload source, scanned when no --repo is given."""
    import accelpilot.pilot.workloads as wl

    return Path(wl.__file__).parent


@dataclass
class PilotPlan:
    repo: Path | None = None
    workload: str | None = None
    serve_workload: str | None = None
    scenario: Path | None = None
    results: list[Path] = field(default_factory=list)
    catalog: list[Path] = field(default_factory=list)
    device: str = "cpu"
    out: Path = Path("report")
    skip_train: bool = False
    skip_serve: bool = False
    skip_scan: bool = False


@dataclass
class PilotOutcome:
    paths: dict[str, Path]
    report: Report
    elapsed_s: float
    phases: dict[str, float]
    result_files: list[Path]
    scan_log: Path | None
    reproduce: str


def _run_child(kind: str, args: list[str], results_dir: Path, log_file: Path) -> Path:
    """Run one pilot as a child process; return the result file it wrote."""
    before = set(results_dir.glob("*.json"))
    cmd = [sys.executable, "-m", "accelpilot", "run", kind, *args, "--out", str(results_dir)]
    with open(log_file, "w", encoding="utf-8") as fh:
        fh.write(" ".join(cmd) + "\n")
        fh.flush()
        try:
            proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=fh, check=False, timeout=CHILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise PilotRunError(
                f"the {kind} pilot did not finish within {CHILD_TIMEOUT_S} s and was stopped",
                file=str(log_file),
                fix="read the log; use smaller settings or pass --skip-" + kind,
            ) from None
    if proc.returncode != 0:
        tail = [ln.strip() for ln in log_file.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
        last = tail[-1] if tail else "no output"
        raise PilotRunError(
            f"the {kind} pilot failed (exit {proc.returncode}): {last}",
            file=str(log_file),
            fix="read the log, fix the workload or the options, or pass --skip-"
            + ("train" if kind == "train" else "serve"),
        )
    new = sorted(set(results_dir.glob("*.json")) - before, key=lambda p: p.stat().st_mtime)
    if not new:
        raise PilotRunError(f"the {kind} pilot wrote no result file", file=str(log_file), fix="read the log")
    return new[-1]


def run_procedure(plan: PilotPlan, progress: Callable[[str], None] = lambda m: None) -> PilotOutcome:
    """Scan, run the pilots, price against the scenario, decide and write the report directory.

    Ctrl-C stops it with ``Interrupted`` (exit 130) naming the step and the files kept; a write that fails
    (disk full, read-only) is one line naming the folder.
    """
    step = ["checking the inputs"]

    def track(m: str) -> None:
        step[0] = m
        progress(m)

    try:
        return _run_procedure(plan, track)
    except KeyboardInterrupt:
        inputs = plan.out / "inputs"
        kept = sorted(str(p) for p in inputs.rglob("*.json")) if inputs.is_dir() else []
        raise Interrupted(
            f"interrupted while {step[0]}; "
            + (f"kept {len(kept)} complete input file(s) under {inputs} ({', '.join(kept[:3])}); " if kept else "")
            + f"no new report was written: the report in {plan.out}, if any, is the previous one"
        ) from None
    except OSError as exc:
        # Inputs are read (and their errors named) before anything runs; an OSError now is a write under --out.
        raise InputFileError(
            f"cannot write ({exc.strerror or exc.__class__.__name__})",
            file=str(exc.filename or plan.out),
            field="--out",
            fix="free space or name a writable folder",
        ) from None


def _run_procedure(plan: PilotPlan, progress: Callable[[str], None]) -> PilotOutcome:
    from accelpilot.report.write import check_report_dir, write_report

    t0 = time.perf_counter()
    phases: dict[str, float] = {}
    scenario_path = plan.scenario or bundled_scenario()
    # Everything that can be checked without running anything is checked first.
    sc = load_scenario(scenario_path)
    others = [(str(p), read_checked_result(p, sc)) for p in plan.results]
    repo = plan.repo or reference_workloads()
    if not repo.exists():
        raise InputFileError(
            "no such file or directory", file=str(repo), field="--repo", fix="give the repository path"
        )
    check_report_dir(plan.out)  # a file, a foreign or read-only folder fails now, not after the pilots
    inputs = plan.out / "inputs"
    results_dir = inputs / "pilot-results"
    results_dir.mkdir(parents=True, exist_ok=True)

    scan_path_out: Path | None = None
    log = None
    if not plan.skip_scan:
        progress(f"scanning {repo}")
        t = time.perf_counter()
        from accelpilot.porting.scan import scan_path

        raw = scan_path(repo)
        scan_path_out = inputs / "portability-log.json"
        tmp = scan_path_out.with_suffix(".json.tmp")
        try:
            tmp.write_text(raw.model_dump_json(indent=2), encoding="utf-8")
            tmp.replace(scan_path_out)
        finally:
            tmp.unlink(missing_ok=True)  # a failed write (disk full) leaves no partial log
        log = view_log(raw, str(scan_path_out))
        phases["scan"] = time.perf_counter() - t

    local: list[Path] = []
    cpu = plan.device.split(":")[0] == "cpu"
    pilots = (
        ("train", "training", plan.skip_train, CPU_TRAIN_ARGS, plan.workload),
        ("serve", "serving", plan.skip_serve, CPU_SERVE_ARGS, plan.serve_workload),
    )
    for kind, noun, skip, cpu_args, workload in pilots:
        if skip:
            continue
        progress(f"{noun} pilot on {plan.device}")
        t = time.perf_counter()
        args = ["--device", plan.device, *(cpu_args if cpu else ())]
        if workload:
            args += ["--workload", workload]
        local.append(_run_child(kind, args, results_dir, inputs / f"{kind}.log"))
        phases[kind] = time.perf_counter() - t

    progress("pricing, gates and report")
    t = time.perf_counter()
    loaded = [(str(p), read_result(p)) for p in local]
    same = [(p, r) for p, r in loaded if r.kind == sc.workload]
    beside = [(p, r) for p, r in loaded if r.kind != sc.workload]
    reproduce = "accelpilot report --scenario " + str(scenario_path)
    for p, _ in [*others, *same]:
        reproduce += f" --results {p}"
    for p, _ in beside:
        reproduce += f" --beside {p}"
    if scan_path_out is not None:
        reproduce += f" --scan-log {scan_path_out}"
    for c in plan.catalog:
        reproduce += f" --catalog {c}"
    reproduce += f" --out {plan.out}"
    notes = [
        *(
            [
                "The local CPU training pilot uses small settings to finish quickly: "
                + " ".join(CPU_TRAIN_ARGS)
                + " (a loose quality target on the tiny GPT)."
            ]
            if cpu and not plan.skip_train
            else []
        ),
        f"Local pilots ran on {plan.device} and are shown as measured; they price an option only where the scenario "
        "names their result file. Rebuild this report without running anything: " + reproduce,
    ]
    if beside:
        notes.append(
            f"The scenario prices a {sc.workload} workload; the local "
            + ", ".join(r.kind for _, r in beside)
            + " pilot is shown beside the bill, not priced."
        )
    rep = make_report(
        sc,
        results=[],
        scan_log=log,
        catalog=plan.catalog,
        beside=beside,
        loaded_results=[*others, *same],
        notes=notes,
    )
    paths = write_report(rep, plan.out)
    phases["report"] = time.perf_counter() - t
    return PilotOutcome(
        paths=paths,
        report=rep,
        elapsed_s=time.perf_counter() - t0,
        phases=phases,
        result_files=[Path(p) for p, _ in loaded],
        scan_log=scan_path_out,
        reproduce=reproduce,
    )
