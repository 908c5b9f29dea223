"""Build the report's content (report/model.py) from data already read: scenario, bill, decision, log, results.

No file is read here; ``accelpilot.procedure`` reads and checks the inputs, then calls ``build_report``.
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import numpy as np

from accelpilot.bill.model import Bill, OptionBill, payback_curve, per_output_name
from accelpilot.bill.scenario import Scenario
from accelpilot.bill.sweep import F64, Coeffs, cost_per_accepted_run
from accelpilot.decide.portability import LogView, family_of
from accelpilot.decide.verdict import Decision
from accelpilot.figures import Figure, FigureRef, fig_ref
from accelpilot.pilot.result import PilotResult, measured_topology
from accelpilot.report import serving
from accelpilot.report.model import (
    Chart,
    ClaimView,
    ComparisonView,
    LineItemView,
    OptionView,
    PilotFigure,
    PilotView,
    Report,
    SampleSummary,
    ScenarioInfo,
    Series,
)

MAX_CDF_POINTS = 200
MAX_CDF_CHARTS_PER_RESULT = 4


def _f(f: Figure | None, label: str | None = None) -> FigureRef | None:
    return None if f is None else fig_ref(f, label)


def option_view(o: OptionBill, baseline: str) -> OptionView:
    return OptionView(
        name=o.name,
        pricing=o.pricing,
        instance=o.instance,
        accelerator=o.accelerator,
        accelerator_count=o.accelerator_count,
        family=family_of(o.accelerator, o.instance),
        is_baseline=o.name == baseline,
        measured=o.measured,
        result_file=o.result_file,
        hours_per_run=_f(o.hours_per_run),
        cost_per_run=_f(o.cost_per_run),
        accepted_share=fig_ref(o.accepted_share),
        cost_per_accepted_run=_f(o.cost_per_accepted_run),
        cost_per_1k_accepted_requests=_f(o.cost_per_1k_accepted_requests),
        cost_per_million_accepted_tokens=_f(o.cost_per_million_accepted_tokens),
        monthly_cost=fig_ref(o.monthly_cost),
        one_off_cost=fig_ref(o.one_off_cost),
        maintenance_per_month=fig_ref(o.maintenance_per_month),
        total_36_months=fig_ref(o.total_36_months),
        line_items=[LineItemView(name=li.name, per=li.per, figure=fig_ref(li.figure)) for li in o.line_items],
        notes=list(o.notes),
    )


def payback_chart(bill: Bill) -> Chart | None:
    comps = bill.comparisons
    if not comps:
        return None
    unit = "run" if bill.workload == "training" else "month"
    by_name = {o.name: o for o in bill.options}
    curves = [payback_curve(c, by_name[c.baseline], by_name[c.candidate], bill.runs_per_month) for c in comps]
    series = [
        Series(
            name=f"{comps[0].baseline} (baseline)",
            x=[float(p[0]) for p in curves[0]],
            y=[float(p[1]) for p in curves[0]],
            style="--",
        )
    ]
    markers: list[tuple[float, str]] = []
    for c, curve in zip(comps, curves, strict=True):
        series.append(Series(name=c.candidate, x=[float(p[0]) for p in curve], y=[float(p[2]) for p in curve]))
        if c.break_even_runs is not None and bill.workload == "training":
            markers.append((float(c.break_even_runs), f"break-even: {c.candidate}"))
        elif c.break_even_months is not None and bill.workload == "serving":
            markers.append((float(c.break_even_months), f"break-even: {c.candidate}"))
    return Chart(
        id="payback",
        title=f"Payback: cumulative cost by {unit}, porting included",
        type="line",
        x_label=f"{unit}s",
        y_label=f"cumulative cost ({bill.currency})",
        series=series,
        markers=markers,
        note="derived from the bill: one-off porting plus cost per accepted run (and maintenance) for each run",
    )


def tco_chart(bill: Bill) -> Chart:
    return Chart(
        id="tco36",
        title="36-month cost by option (porting and maintenance included)",
        type="bar",
        x_label="option",
        y_label=f"{bill.currency} over 36 months",
        series=[
            Series(name=o.name, x=[float(i)], y=[float(o.total_36_months.value)], style="bar")
            for i, o in enumerate(bill.options)
        ],
        note="derived from the bill",
    )


def _all_in(o: OptionBill, u: F64 | float, r: F64 | float, months: int) -> F64:
    """Cost per accepted run (the lead's vectorised sweep) with porting spread over the horizon and maintenance
    shared by the month's runs."""

    k = Coeffs.of(o, day_rate=0.0)
    return cost_per_accepted_run(k, u, r) + (o.sweep_coefficients.get("one_off", 0.0) / months + k.maint) / r


def sensitivity_charts(bill: Bill) -> list[Chart]:
    """Cost per accepted run against utilisation and against runs per month (training options)."""
    opts = [o for o in bill.options if o.sweep_coefficients and o.sweep_coefficients.get("accepted")]
    if not opts:
        return []
    months = bill.months
    r0 = float(bill.runs_per_month)
    u = np.linspace(0.2, 1.0, 33)
    r = np.unique(np.concatenate([np.geomspace(max(r0 / 10, 0.1), r0 * 10, 33), [r0]]))
    su, sr = [], []
    for o in opts:
        u0 = o.sweep_coefficients["u0"]
        su.append(Series(name=o.name, x=u.tolist(), y=np.asarray(_all_in(o, u, r0, months), dtype=float).tolist()))
        sr.append(Series(name=o.name, x=r.tolist(), y=np.asarray(_all_in(o, u0, r, months), dtype=float).tolist()))
    note = (
        f"derived: (a/u + b + c/r) / accepted share from each option's bill, plus porting spread over {months} months "
        "and maintenance shared by the month's runs"
    )
    return [
        Chart(
            id="sensitivity-utilisation",
            title=f"All-in cost per accepted run against utilisation (at {r0:g} runs/month)",
            type="line",
            x_label="utilisation (share of paid time doing useful work)",
            y_label=f"{bill.currency} per accepted run",
            series=su,
            note=note,
        ),
        Chart(
            id="sensitivity-runs",
            title="All-in cost per accepted run against runs per month (at each option's utilisation)",
            type="line",
            x_label="runs per month",
            y_label=f"{bill.currency} per accepted run",
            series=sr,
            note=note,
            x_log=True,
            markers=[(r0, "scenario")],
        ),
    ]


def serving_volume_chart(bill: Bill) -> Chart | None:
    """Cost per 1,000 accepted requests against monthly volume, per option (issue 10, section 4): where the
    curves cross, one way of buying stops winning (serverless against always-on, one fleet against another)."""
    from accelpilot.bill.fleet import cost_per_1k_curve

    opts = [o for o in bill.options if o.fleet_curve]
    if bill.workload != "serving" or not opts:
        return None
    now = max(float(o.accepted_requests_per_month.value) for o in opts if o.accepted_requests_per_month)
    v = np.geomspace(max(now / 100, 1000.0), now * 10, 49).tolist()
    series = [Series(name=o.name, x=v, y=cost_per_1k_curve(o.fleet_curve, v)) for o in opts]
    return Chart(
        id="serving-volume",
        title="Cost per 1,000 accepted requests against monthly volume",
        type="line",
        x_label="requests per month",
        y_label=f"{bill.currency} per 1,000 accepted requests",
        series=series,
        note="derived: each option's fleet sized from its peak rate and [traffic] at each volume "
        "(instances rounded up, headroom kept), extras and support included",
        x_log=True,
        markers=[(now, "scenario")],
    )


def _is_time_series(name: str) -> bool:
    return name.endswith("_s") or "latency" in name or name.endswith("_ms")


def _cdf(name: str, values: list[float]) -> Series:
    arr = np.sort(np.asarray([v for v in values if math.isfinite(v)], dtype=float))
    n = len(arr)
    scale = 1000.0 if not name.endswith("_ms") else 1.0
    if n > MAX_CDF_POINTS:
        q = np.linspace(0, 1, MAX_CDF_POINTS)
        xs = np.quantile(arr, q)
        ys = q
    else:
        xs = arr
        ys = np.arange(1, n + 1) / n
    return Series(name=name, x=(xs * scale).tolist(), y=np.asarray(ys, dtype=float).tolist())


def _per_world(res: PilotResult, key: str) -> dict[int, float]:
    """``{world size: value}`` of the figures ``{key}_world{N}`` a distributed training pilot wrote."""
    out = {}
    for name, f in res.figures.items():
        tail = name.removeprefix(f"{key}_world")
        if name.startswith(f"{key}_world") and tail.isdigit():
            out[int(tail)] = float(f.value)
    return dict(sorted(out.items()))


def scaling_charts(path: str, res: PilotResult) -> list[Chart]:
    """Throughput, scaling efficiency and communication share against world size, when several were measured."""
    tok = _per_world(res, "tokens_per_s")
    if len(tok) < 2:
        return []
    series = [Series(name="measured tokens/s (all ranks)", x=[float(w) for w in tok], y=list(tok.values()))]
    if 1 in tok:
        series.append(
            Series(name="linear from world size 1", x=[float(w) for w in tok], y=[w * tok[1] for w in tok], style="--")
        )
    charts = [
        Chart(
            id="scaling-throughput",
            title="training throughput against world size",
            type="line",
            x_label="world size (processes)",
            y_label="tokens/s",
            series=series,
            note=f"measured: tokens_per_s_world* in {path}",
        )
    ]
    eff, comm = _per_world(res, "scaling_efficiency"), _per_world(res, "comm_share")
    if eff and 1 in tok:
        eff = {1: 1.0, **eff}  # world size 1 is the reference: 1 by definition, so the line has a start
    shares = []
    if eff:
        shares.append(
            Series(name="scaling efficiency (vs world size 1)", x=[float(w) for w in eff], y=list(eff.values()))
        )
    if comm:
        shares.append(
            Series(name="communication share of step", x=[float(w) for w in comm], y=list(comm.values()), style="--")
        )
    if shares:
        charts.append(
            Chart(
                id="scaling-efficiency",
                title="scaling efficiency and communication share against world size",
                type="line",
                x_label="world size (processes)",
                y_label="share",
                series=shares,
                note=f"derived from the measured throughputs and step times in {path}",
            )
        )
    return charts


def throughput_basis(res: PilotResult) -> str:
    """One line saying what a training result's tokens/s counts: all ranks of its world size, on N accelerators."""
    if res.kind != "training":
        return ""
    t = measured_topology(res)
    return (
        f"tokens/s and samples/s are the sum over all {t.world_size} rank(s) ({t.nnodes} node(s) x "
        f"{t.nproc_per_node} per node) on {t.accelerators:g} accelerator(s)"
        + (f", {t.devices_per_accelerator} device(s) per accelerator" if t.devices_per_accelerator > 1 else "")
        + "; *_per_accelerator figures divide by the accelerators"
        + ("" if res.topology is not None else " (read from the config of a result written before topology)")
    )


def pilot_view(
    path: str, res: PilotResult, priced_by: list[str], beside: bool, unverified: str | None = None
) -> PilotView:
    """``unverified``: why the bill priced this file as unverified; its own "measured" figures are shown so too."""
    src = f"pilot result {path}"
    figs = []
    for key, f in res.figures.items():
        ref = fig_ref(f)
        if not ref.source:
            ref = ref.model_copy(update={"source": src})
        if unverified and ref.kind == "measured":
            ref = ref.model_copy(update={"kind": "unverified", "source": f"{ref.source}, UNVERIFIED: {unverified}"})
        figs.append(PilotFigure(key=key, figure=ref.model_copy(update={"label": ref.label or key})))
    samples: list[SampleSummary] = []
    charts: list[Chart] = []
    for name, vals in res.samples.items():
        finite = [float(v) for v in vals if isinstance(v, (int, float)) and math.isfinite(float(v))]
        if not finite:
            continue
        arr = np.asarray(finite)
        samples.append(
            SampleSummary(
                name=name,
                n=len(finite),
                p50=float(np.percentile(arr, 50)),
                p90=float(np.percentile(arr, 90)),
                p99=float(np.percentile(arr, 99)),
            )
        )
        if _is_time_series(name) and len(finite) >= 5 and len(charts) < MAX_CDF_CHARTS_PER_RESULT:
            unit = "ms"
            charts.append(
                Chart(
                    id=f"cdf-{len(charts)}",
                    title=f"{name}: CDF of {len(finite)} raw samples",
                    type="step",
                    x_label=unit,
                    y_label="share of samples ≤ x",
                    series=[_cdf(name, finite)],
                    note=f"measured: raw samples in {path}",
                )
            )
    charts = serving.sweep_charts(path, res) + charts  # latency and goodput against load come first
    charts += scaling_charts(path, res)  # training: throughput and efficiency against world size
    p = res.platform
    platform = {
        k: v
        for k, v in p.model_dump(mode="json").items()
        if k
        in (
            "device",
            "device_type",
            "device_name",
            "device_count",
            "accelerator",
            "torch",
            "cuda",
            "neuron",
            "cpu_model",
            "cpu_count",
            "compile_backend",
            "precision",
            "driver",
        )
        and v not in (None, "", 0)
    }
    return PilotView(
        path=path,
        kind=res.kind,
        family=family_of(p.accelerator, None, p.device_type or p.device),
        platform=platform,
        workload=res.workload.name,
        workload_factory=res.workload.factory,
        command=res.command,
        created=res.created.isoformat(timespec="seconds"),
        accepted=res.accepted,
        throughput_basis=throughput_basis(res),
        figures=figs,
        samples=samples,
        charts=charts,
        errors=list(res.errors),
        priced_by=priced_by,
        shown_beside=beside,
        sweep_rows=serving.sweep_rows(res),
        operating_point=serving.notes_text(res),
        parity_rows=serving.parity_rows(res),
    )


def build_report(
    scenario: Scenario,
    bill: Bill,
    decision: Decision,
    log: LogView | None = None,
    results: list[tuple[str, PilotResult]] | None = None,
    beside: list[tuple[str, PilotResult]] | None = None,
    title: str | None = None,
    notes: list[str] | None = None,
) -> Report:
    """Assemble the report. ``results`` measure the scenario's workload; ``beside`` are other measurements shown."""
    from accelpilot import __version__
    from accelpilot.decide import exit_cost as et

    pilots = []
    for group, is_beside in ((results or [], False), (beside or [], True)):
        for path, res in group:
            mine = [o for o in bill.options if o.result_file and Path(o.result_file) == Path(path)]
            why = next((o.result_unverified for o in mine if o.result_unverified), None)
            pilots.append(pilot_view(path, res, [o.name for o in mine], is_beside, why))
    charts = [c for c in [payback_chart(bill), tco_chart(bill), serving_volume_chart(bill)] if c is not None]
    charts += sensitivity_charts(bill)
    compared = serving.compared_goodput_chart([*(results or []), *(beside or [])])
    if compared is not None:
        charts.append(compared)
    comps = [
        ComparisonView(
            baseline=c.baseline,
            candidate=c.candidate,
            saving_per_run=_f(c.saving_per_run),
            saving_percent=None if c.saving_percent is None else float(c.saving_percent),
            saving_per_month=_f(c.saving_per_month),
            one_off_cost=fig_ref(c.one_off_cost),
            break_even_runs=c.break_even_runs,
            break_even_months=None if c.break_even_months is None else float(c.break_even_months),
        )
        for c in bill.comparisons
    ]
    used = bill.claims_in_arithmetic()
    claims = [
        ClaimView(
            id=c.id,
            vendor=c.vendor,
            text=c.text,
            value=None if c.value is None else float(c.value),
            unit=c.unit,
            as_of=c.as_of.isoformat(),
            source=c.source,
            used_in_arithmetic=c.id in used,
        )
        for c in bill.vendor_claims
    ]
    assumptions = [
        f"Exit test: effort class 'hours' = {et.EFFORT_DAYS['hours']} engineer-day, "
        f"'days' = {et.EFFORT_DAYS['days']}, 'weeks' = {et.EFFORT_DAYS['weeks']}"
        f" per finding; re-validation on the destination = {et.REVALIDATION_DAYS} engineer-days; one engineer, "
        f"{et.DAYS_PER_WEEK} days a week.",
        "Leaving Neuron: every finding that concerns the Neuron target is assumed to need the same work again; "
        "leaving a GPU option for another GPU site: only operational, container and data-movement findings count.",
        "Sensitivity: porting is spread evenly over the scenario's horizon; maintenance is shared by the month's runs.",
    ]
    return Report(
        title=title or f"accelpilot report: {scenario.name}",
        generated=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        accelpilot_version=__version__,
        scenario=ScenarioInfo(
            name=scenario.name,
            path=scenario.path,
            description=scenario.description,
            workload=scenario.workload,
            currency=scenario.currency,
            runs_per_month=float(scenario.volumes.runs_per_month),
            requests_per_month=None
            if scenario.volumes.requests_per_month is None
            else float(scenario.volumes.requests_per_month),
            months=scenario.volumes.months,
            day_rate=float(scenario.engineering.day_rate),
            target_platform=scenario.gates.target_platform,
            per_output_name=per_output_name(scenario.workload),
        ),
        decision=decision,
        options=[option_view(o, bill.baseline) for o in bill.options],
        comparisons=comps,
        charts=charts,
        pilots=pilots,
        portability=log,
        vendor_claims=claims,
        catalog_files=list(bill.catalog_files),
        assumptions=assumptions,
        notes=list(notes or []),
    )
