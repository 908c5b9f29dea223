"""`accelpilot run serve`: the serving pilot (in-process under LoadGen, or an HTTP endpoint); parse, run, render."""

from __future__ import annotations

import inspect
import shlex
import sys
from dataclasses import fields
from typing import TYPE_CHECKING, Any, get_type_hints

import typer

from accelpilot.cli.app import run_app
from accelpilot.cli.common import console, err_console, print_json
from accelpilot.pilot.serve.base import ServeConfig
from accelpilot.redact import redact_command

if TYPE_CHECKING:
    from accelpilot.pilot.result import PilotResult


def _command_line() -> str:
    if sys.argv[1:3] == ["run", "serve"]:
        return redact_command(shlex.join(["accelpilot", *sys.argv[1:]]))
    return "accelpilot run serve"


def slo_text(result: PilotResult) -> str:
    """The SLOs goodput was judged against, as given ("no SLO given" rather than "SLO None ms")."""
    c = result.config
    parts = [
        f"{name} {float(c[key]):g} ms"
        for key, name in (("slo_ms", "E2E"), ("slo_ttft_ms", "TTFT"), ("slo_tpot_ms", "TPOT"))
        if isinstance(c.get(key), (int, float))
    ]
    if not parts and result.serving is not None and result.serving.slo_ms is not None:
        parts = [f"{result.serving.slo_ms:g} ms"]
    return "SLO " + ", ".join(parts) if parts else "no SLO given: every successful request counts"


def _ms(v: object) -> str:
    return "-" if v is None else f"{float(v):,.2f}"  # type: ignore[arg-type]


def _render_endpoint_extras(result: PilotResult) -> None:
    """The sweep, its operating point and output parity (report/serving.py formats the same rows)."""
    # rich here, not at the top: every command imports this module to register it (issue 10's speed)
    from rich.table import Table

    from accelpilot.report.serving import SWEEP_HEAD, operating_point_text, parity_rows, sweep_rows
    from accelpilot.termtext import cell

    rows = sweep_rows(result)
    if rows:
        t = Table(title="sweep")
        for col in SWEEP_HEAD:
            t.add_column(col, justify="left" if col == "load" else "right")
        for row in rows:
            t.add_row(*(cell(c) for c in row))
        console.print(t)
    op = operating_point_text(result)
    if op:
        console.print(cell(op))
    par = parity_rows(result)
    if par:
        t = Table(title="output parity")
        t.add_column("measure")
        t.add_column("value", justify="right")
        for a, b in par:
            t.add_row(cell(a), cell(b))
        console.print(t)


def render_summary(result: PilotResult, path: str) -> None:
    """One screen: per-scenario latencies and rates, then what the bill will read."""
    # rich here, not at the top: every command imports this module to register it (issue 10's speed)
    from rich.table import Table

    from accelpilot.termtext import cell

    s = result.serving
    p = result.platform
    d = result.details
    if "scenarios" in d:
        t = Table(
            title=cell(f"serving pilot: {result.workload.name} on {p.device_name or p.device} ({p.precision})"),
            caption=cell(f"written to {path}"),
        )
        for col in ("scenario", "rate q/s", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "goodput", "idle", "valid"):
            t.add_column(col, justify="left" if col == "scenario" else "right")
        for name, sc in d["scenarios"].items():
            lat = sc.get("latency_ms", {})
            share = sc.get("goodput_share")
            idle = sc.get("idle_fraction")
            t.add_row(
                name if name != "peak" else "server @ peak",
                f"{sc['throughput_qps']:,.1f}",
                _ms(lat.get("p50")),
                _ms(lat.get("p90")),
                _ms(lat.get("p99")),
                _ms(lat.get("p99.9")),
                "-" if share is None else f"{share:.1%}",
                "-" if idle is None else f"{idle:.0%}",
                {True: "VALID", False: "INVALID", None: "-"}[sc.get("loadgen_valid")],
            )
        console.print(t)
        eng = d.get("engine", {})
        first: dict[str, Any] = next(iter(d["scenarios"].values()), {})
        pad = first.get("padding", {})
        eff = pad.get("padding_efficiency")
        console.print(
            f"engine: {eng.get('mode')}, buckets {eng.get('buckets')}, {d.get('compiles', 0)} compiled shape(s), "
            f"build {float(result.figures['compile_s_total'].value):.2f} s"
            + (f", padding efficiency {eff:.0%}" if eff is not None else "")
        )
    else:
        t = Table(
            title=cell(
                f"endpoint pilot: {result.workload.name} on {p.device_name or p.device} "
                f"at {result.config.get('endpoint')}"
            ),
            caption=cell(f"written to {path}"),
        )
        for col in ("metric", "p50 ms", "p90 ms", "p99 ms", "mean ms"):
            t.add_column(col, justify="left" if col == "metric" else "right")
        for m in ("ttft", "tpot", "itl", "e2e"):
            f = result.figures
            t.add_row(
                m.upper(),
                *(
                    _ms(f[k].value) if (k := f"endpoint.{m}_{q}_ms") in f else "-"
                    for q in ("p50", "p90", "p99", "mean")
                ),
            )
        console.print(t)
        console.print(
            cell(
                f"requests {d.get('requests')}, succeeded {d.get('succeeded')}, errors {d.get('errors')} "
                f"(timeouts {d.get('timeouts')}), {d.get('errors_by_kind') or ''}"
            )
        )
        if d.get("sample_note"):
            console.print(cell(f"percentiles {d['sample_note']}"))
        cache: dict[str, Any] = d["cache"] if isinstance(d.get("cache"), dict) else {}
        client: dict[str, Any] = d["client"] if isinstance(d.get("client"), dict) else {}
        if cache or client:
            console.print(
                cell(
                    f"cache: {cache.get('mode', '-')} ({cache.get('method', '')}); connections "
                    f"{client.get('connections', '-')}, HTTP {','.join(client.get('http_version') or []) or '-'}, "
                    f"client CPU {_ms(client.get('client_cpu_ms_per_request'))} ms/request"
                )
            )
        _render_endpoint_extras(result)
    if s is not None:
        peak = "-" if s.peak_qps_under_slo is None else f"{s.peak_qps_under_slo:,.2f} req/s"
        share = "-" if s.goodput_share is None else f"{s.goodput_share:.1%}"
        tpr = "-" if s.tokens_per_request is None else f"{s.tokens_per_request:.1f}"
        idle = "-" if s.idle_fraction is None else f"{s.idle_fraction:.0%}"
        console.print(
            f"[bold]for the bill:[/bold] peak under SLO {peak} ({s.scenario}, {slo_text(result)}), "
            f"goodput share {share}, tokens/request {tpr}, idle {idle}, errors {s.errors}, rejected {s.rejected}"
        )
    for e in result.errors[:5]:
        console.print(f"[red]error:[/red] {cell(e)}")


def check_out(out: str) -> None:
    """``--out`` can take the result, checked before a single request is sent (issue 28): an existing file or an
    unwritable folder is refused now, not after the whole sweep. Nothing is created here (bad input leaves no
    folder behind); a missing folder is judged by the nearest folder that exists."""
    import os
    import tempfile
    from pathlib import Path

    from accelpilot.errors import InputFileError

    d = Path(out)

    def refuse(why: str, fix: str = "give a folder you can write to") -> InputFileError:
        return InputFileError(why, file=out, field="--out", fix=fix)

    if d.exists() and not d.is_dir():
        raise refuse("is a file, not a folder", "give a folder for the result (it is created when missing)")
    probe = d
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise refuse(f"{probe} is a file, not a folder")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".write-test-", dir=probe)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise refuse(f"cannot write results here ({exc.strerror or exc.__class__.__name__})") from None


def _options() -> list[inspect.Parameter]:
    """The `run serve` options, one per ServeConfig field declared with ``option`` (base.py), in field order."""
    hints = get_type_hints(ServeConfig)
    params = []
    for f in fields(ServeConfig):
        o = f.metadata.get("cli")
        if o is None:
            continue
        default = o.to_cli(f.default) if o.to_cli else f.default
        kw: dict[str, Any] = {"help": o.help}
        if o.envvar:
            kw.update(envvar=o.envvar, show_default=o.show_default)
        params.append(
            inspect.Parameter(
                f.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=typer.Option(default, *o.flags, **kw),
                annotation=o.cli_type or hints[f.name],
            )
        )
    params.append(
        inspect.Parameter(
            "out",
            inspect.Parameter.KEYWORD_ONLY,
            default=typer.Option("pilot-results", "--out", help="Folder for the result file."),
            annotation=str,
        )
    )
    params.append(
        inspect.Parameter(
            "as_json",
            inspect.Parameter.KEYWORD_ONLY,
            default=typer.Option(False, "--json", help="Print the result JSON on stdout only."),
            annotation=bool,
        )
    )
    return params


def config_from_options(values: dict[str, Any]) -> ServeConfig:
    """Option values -> a validated ServeConfig (each option parsed by its field's ``parse``)."""
    kw: dict[str, Any] = {}
    for f in fields(ServeConfig):
        o = f.metadata.get("cli")
        if o is None or f.name not in values:
            continue
        v = values[f.name]
        kw[f.name] = o.parse(v) if o.parse else v
    return ServeConfig(**kw, command=_command_line()).validate()


def serve(**values: Any) -> None:
    """Serve a model (or drive an endpoint) under MLPerf/vLLM load patterns; write one serving result."""
    from accelpilot.pilot.result import write_new_result
    from accelpilot.pilot.serve.runner import run_serve

    out: str = values.pop("out")
    as_json: bool = values.pop("as_json")
    cfg = config_from_options(values)
    check_out(out)  # before anything is measured: a full sweep must never end in "cannot write"

    def log(msg: str) -> None:
        err_console.log(msg)

    if err_console.is_terminal:
        with err_console.status("serving pilot") as status:

            def progress(msg: str) -> None:
                status.update(msg)
                log(msg)

            result = run_serve(cfg, progress)
    else:
        result = run_serve(cfg, log if not as_json else (lambda m: None))
    try:
        path = write_new_result(result, out)
    except OSError as exc:  # WriteFailedError: says where the measurement is kept
        from accelpilot.atomic import WriteFailedError
        from accelpilot.errors import InputFileError

        where = exc.where() if isinstance(exc, WriteFailedError) else "nothing was written"
        raise InputFileError(
            f"cannot write the result ({exc.strerror or exc.__class__.__name__}); {where}",
            file=str(out),
            field="--out",
            fix="free space or give a writable folder, then run again",
        ) from None
    if as_json:
        print_json(result.model_dump(mode="json"))
    else:
        render_summary(result, str(path))


serve.__signature__ = inspect.Signature(_options())  # type: ignore[attr-defined]
run_app.command("serve")(serve)
