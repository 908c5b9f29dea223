"""The serving part of a report: latency and goodput against load, the operating point, output parity.

Read from an endpoint result's ``details`` (``sweep``, ``operating_point``, ``parity``), all measured by
``accelpilot run serve --endpoint``; rows are pre-formatted strings so the Markdown and HTML renderers agree.
"""

from __future__ import annotations

from typing import Any

from accelpilot.pilot.result import PilotResult
from accelpilot.report.model import Chart, Series


def _load_axis(points: list[dict[str, Any]]) -> tuple[str, str] | None:
    """Which load the sweep varied: ("concurrency", label) or ("request_rate", label)."""
    if all(isinstance(p.get("concurrency"), int) for p in points):
        return "concurrency", "concurrent clients"
    if all(isinstance(p.get("request_rate"), (int, float)) for p in points):
        return "request_rate", "offered requests/s"
    return None


def _sweep(res: PilotResult) -> list[dict[str, Any]]:
    pts = res.details.get("sweep") if res.kind == "serving" else None
    return [p for p in pts if isinstance(p, dict)] if isinstance(pts, list) else []


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _fmt(v: Any, spec: str = ",.2f") -> str:
    n = _num(v)
    return "-" if n is None else format(n, spec)


def sweep_charts(path: str, res: PilotResult) -> list[Chart]:
    """Goodput and p99 latencies against load for one platform, the operating point marked."""
    pts = _sweep(res)
    axis = _load_axis(pts) if len(pts) > 1 else None
    if axis is None:
        return []
    key, label = axis
    xs = [float(p[key]) for p in pts]
    op = res.details.get("operating_point")
    markers = [(float(op[key]), "operating point")] if isinstance(op, dict) and _num(op.get(key)) is not None else []
    note = f"measured: {len(pts)} loads in {path}"

    def series(name: str, get: Any) -> Series:
        pairs = [(x, _num(get(p))) for x, p in zip(xs, pts, strict=True)]
        return Series(name=name, x=[x for x, y in pairs if y is not None], y=[y for _, y in pairs if y is not None])

    goodput = Chart(
        id="serve-goodput",
        title=f"{platform_name(res)}: goodput and throughput against load",
        type="line",
        x_label=label,
        y_label="requests/s",
        series=[
            series("goodput (all SLOs met)", lambda p: p.get("goodput_qps")),
            series("successful requests", lambda p: p.get("request_throughput")),
        ],
        note=note,
        x_log=key == "concurrency",
        markers=markers,
    )
    latency = Chart(
        id="serve-latency",
        title=f"{platform_name(res)}: p99 latency against load",
        type="line",
        x_label=label,
        y_label="ms",
        series=[
            series("TTFT p99", lambda p: (p.get("ttft_ms") or {}).get("p99")),
            series("TPOT p99", lambda p: (p.get("tpot_ms") or {}).get("p99")),
            series("E2E p99", lambda p: (p.get("e2e_ms") or {}).get("p99")),
        ],
        note=note,
        x_log=key == "concurrency",
        markers=markers,
    )
    return [c for c in (goodput, latency) if any(s.x for s in c.series)]


SWEEP_HEAD = ["load", "req/s", "goodput req/s", "goodput share", "TTFT p99 ms", "E2E p99 ms", "errors", "requests"]


def platform_name(res: PilotResult) -> str:
    """What a section or a legend calls a result: ``--platform`` when given (a GPU and a Neuron server of one
    model told apart), else the device, then the model."""
    p = res.platform
    declared = (p.tool_output.get("client") or {}).get("declared_platform") if isinstance(p.tool_output, dict) else None
    name = declared or p.device_name or p.device
    return name if name == res.workload.name or not res.workload.name else f"{name} · {res.workload.name}"


def _p99(p: dict[str, Any], key: str) -> str:
    v = _fmt((p.get(key) or {}).get("p99"))
    n = p.get("succeeded")
    return f"{v} (n={n})" if v != "-" and isinstance(n, int) and n < FEW else v


FEW = 100  # a percentile of fewer requests carries its sample size


def sweep_rows(res: PilotResult) -> list[list[str]]:
    """One row per load (SWEEP_HEAD), each carrying its own load; a p99 of fewer than 100 requests says n."""
    return [
        [
            str(p.get("load", "")),
            _fmt(p.get("request_throughput")),
            _fmt(p.get("goodput_qps")),
            _fmt(p.get("goodput_share"), ".1%"),
            _p99(p, "ttft_ms"),
            _p99(p, "e2e_ms"),
            str(p.get("errors", "")),
            str(p.get("requests", "")),
        ]
        for p in _sweep(res)
    ]


def sample_size_note(res: PilotResult) -> str:
    """One line under a serving result whose percentiles come from fewer than 100 requests ("" otherwise)."""
    note = res.details.get("sample_note") if res.kind == "serving" else None
    return f"Percentiles {note}." if isinstance(note, str) and note else ""


def cache_text(res: PilotResult) -> str:
    """How the run kept caches honest (or measured them on purpose), from the result; "" when not recorded."""
    c = res.details.get("cache") if res.kind == "serving" else None
    if not isinstance(c, dict):
        return ""
    warm = c.get("warmup_requests")
    return (
        f"Cache: {c.get('mode', '')}, {c.get('method', '')}; "
        f"warm-up {warm} request(s) per point, {c.get('warmup', '')}."
    )


def operating_point_text(res: PilotResult) -> str:
    """One sentence: the operating point, or why there is none ("" for results without one)."""
    if res.kind != "serving" or "operating_point" not in res.details:
        return ""
    op = res.details.get("operating_point")
    if not isinstance(op, dict):
        return "no load met the goodput share: no operating point (see the sweep)"
    share = _num(op.get("min_goodput_share"))
    return (
        f"operating point: {op.get('load', '')}: {_fmt(op.get('goodput_qps'))} req/s meeting every SLO, "
        f"goodput share {_fmt(op.get('goodput_share'), '.1%')}"
        + (f" (at least {share:.0%} required)" if share is not None else "")
    )


def parity_rows(res: PilotResult) -> list[list[str]]:
    """Output parity against the compared result: measure, value."""
    par = res.details.get("parity") if res.kind == "serving" else None
    if not isinstance(par, dict):
        return []
    cos = par.get("cosine") if isinstance(par.get("cosine"), dict) else {}
    rows = [
        ["compared with", f"{par.get('other_platform', '')} ({par.get('compared_to', '')})"],
        ["pairs compared", str(par.get("pairs", ""))],
        ["exact match", _fmt(par.get("exact_match_rate"), ".1%")],
        [f"first {par.get('first_n', '')} tokens identical", _fmt(par.get("first_n_match_rate"), ".1%")],
        [f"first {par.get('first_n', '')} tokens agreeing", _fmt(par.get("first_n_token_agreement"), ".1%")],
    ]
    if cos:
        rows.append(
            [
                f"cosine ({par.get('similarity_model', '')}) p5 / p50 / min",
                f"{_fmt(cos.get('p5'), '.3f')} / {_fmt(cos.get('p50'), '.3f')} / {_fmt(cos.get('min'), '.3f')}",
            ]
        )
    rows.append([f"accepted (exact or cosine ≥ {par.get('threshold', '')})", _fmt(par.get("accepted_share"), ".1%")])
    floor = par.get("floor") if isinstance(par.get("floor"), dict) else None
    if floor:
        rows.append(
            [
                f"noise floor: same platform twice ({floor.get('source', '')})",
                f"{_fmt(floor.get('accepted_share'), '.1%')} accepted of {floor.get('pairs', '')}",
            ]
        )
        rows.append(["disagreement above the floor", _fmt(par.get("disagreement_above_floor"), ".1%")])
    if par.get("threshold_note"):
        rows.append(["threshold", str(par["threshold_note"])])
    if par.get("note"):
        rows.append(["note", str(par["note"])])
    return rows


def compared_goodput_chart(results: list[tuple[str, PilotResult]]) -> Chart | None:
    """Every platform's goodput curve on one chart, when two or more results swept the same kind of load."""
    curves = []
    kinds = set()
    for path, res in results:
        pts = _sweep(res)
        axis = _load_axis(pts) if len(pts) > 1 else None
        if axis is None:
            continue
        kinds.add(axis)
        name = f"{platform_name(res)} ({path.rsplit('/', 1)[-1]})"
        ys = [(_num(p.get(axis[0])), _num(p.get("goodput_qps"))) for p in pts]
        curves.append(
            Series(
                name=name,
                x=[x for x, y in ys if x is not None and y is not None],
                y=[y for x, y in ys if x is not None and y is not None],
            )
        )
    if len(curves) < 2 or len(kinds) != 1:
        return None
    key, label = kinds.pop()
    return Chart(
        id="serve-goodput-compared",
        title="Goodput against load, every platform",
        type="line",
        x_label=label,
        y_label="requests/s meeting every SLO",
        series=curves,
        note="measured: the sweeps of the serving results given",
        x_log=key == "concurrency",
    )


def notes_text(res: PilotResult) -> str:
    """The lines under a serving result's sweep: its operating point, its sample size, its cache handling."""
    return " ".join(t for t in (operating_point_text(res), sample_size_note(res), cache_text(res)) if t)
