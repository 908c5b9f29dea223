"""`accelpilot run serve`: the serving pilot (in-process under LoadGen, or an HTTP endpoint); parse, run, render."""

from __future__ import annotations

import shlex
import sys
from dataclasses import fields
from typing import TYPE_CHECKING, Any

import typer

from accelpilot.cli.app import run_app
from accelpilot.cli.common import console, err_console, print_json
from accelpilot.pilot.serve.base import DEFAULT_SLO_MS, ServeConfig
from accelpilot.redact import redact_command

if TYPE_CHECKING:
    from accelpilot.pilot.result import PilotResult


def _command_line() -> str:
    if sys.argv[1:3] == ["run", "serve"]:
        return redact_command(shlex.join(["accelpilot", *sys.argv[1:]]))
    return "accelpilot run serve"


def _ms(v: object) -> str:
    return "-" if v is None else f"{float(v):,.2f}"  # type: ignore[arg-type]


def _render_endpoint_extras(result: PilotResult) -> None:
    """The sweep, its operating point and output parity (report/serving.py formats the same rows)."""
    # rich here, not at the top: every command imports this module to register it (issue 10's speed)
    from rich.markup import escape
    from rich.table import Table

    from accelpilot.report.serving import operating_point_text, parity_rows, sweep_rows

    rows = sweep_rows(result)
    if rows:
        t = Table(title="sweep")
        for col in ("load", "req/s", "goodput req/s", "goodput share", "TTFT p99 ms", "E2E p99 ms", "errors"):
            t.add_column(col, justify="left" if col == "load" else "right")
        for row in rows:
            t.add_row(*(escape(c) for c in row))
        console.print(t)
    op = operating_point_text(result)
    if op:
        console.print(escape(op))
    par = parity_rows(result)
    if par:
        t = Table(title="output parity")
        t.add_column("measure")
        t.add_column("value", justify="right")
        for a, b in par:
            t.add_row(escape(a), escape(b))
        console.print(t)


def render_summary(result: PilotResult, path: str) -> None:
    """One screen: per-scenario latencies and rates, then what the bill will read."""
    # rich here, not at the top: every command imports this module to register it (issue 10's speed)
    from rich.table import Table

    s = result.serving
    p = result.platform
    d = result.details
    if "scenarios" in d:
        t = Table(
            title=f"serving pilot: {result.workload.name} on {p.device_name or p.device} ({p.precision})",
            caption=f"written to {path}",
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
            title=f"endpoint pilot: {result.workload.name} at {result.config.get('endpoint')}",
            caption=f"written to {path}",
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
            f"requests {d.get('requests')}, succeeded {d.get('succeeded')}, errors {d.get('errors')} "
            f"(timeouts {d.get('timeouts')}), {d.get('errors_by_kind') or ''}"
        )
        _render_endpoint_extras(result)
    if s is not None:
        peak = "-" if s.peak_qps_under_slo is None else f"{s.peak_qps_under_slo:,.2f} req/s"
        share = "-" if s.goodput_share is None else f"{s.goodput_share:.1%}"
        tpr = "-" if s.tokens_per_request is None else f"{s.tokens_per_request:.1f}"
        idle = "-" if s.idle_fraction is None else f"{s.idle_fraction:.0%}"
        console.print(
            f"[bold]for the bill:[/bold] peak under SLO {peak} ({s.scenario}, SLO {s.slo_ms} ms), "
            f"goodput share {share}, tokens/request {tpr}, idle {idle}, errors {s.errors}, rejected {s.rejected}"
        )
    for e in result.errors[:5]:
        console.print(f"[red]error:[/red] {e}")


# One source for defaults: every option's default is read from ServeConfig, never written twice.
_D: dict[str, Any] = {f.name: f.default for f in fields(ServeConfig)}


@run_app.command("serve")
def serve(
    device: str = typer.Option(_D["device"], "--device", help="torch device: cpu, cuda, cuda:1, neuron, xla, mps."),
    workload: str = typer.Option(_D["workload"], "--workload", help="minilm (built in) or a user's module:factory."),
    scenario: list[str] = typer.Option(
        [",".join(_D["scenarios"])], "--scenario", help="singlestream, server, offline (repeat or comma list)."
    ),
    target_qps: float | None = typer.Option(
        _D["target_qps"], "--target-qps", help="Server rate (default: half the capacity)."
    ),
    slo_ms: float | None = typer.Option(
        _D["slo_ms"], "--slo-ms", help=f"Latency bound (default {DEFAULT_SLO_MS:g} ms in-process)."
    ),
    find_peak: bool = typer.Option(
        _D["find_peak"], "--find-peak", help="Search the highest Server rate whose p99 meets the SLO."
    ),
    buckets: str = typer.Option(
        ",".join(str(b) for b in _D["buckets"]), "--buckets", help="Sequence-length buckets requests are padded to."
    ),
    max_batch: int = typer.Option(_D["max_batch"], "--max-batch", help="Largest batch the dynamic batcher forms."),
    max_wait_ms: float = typer.Option(
        _D["max_wait_ms"], "--max-wait-ms", help="Longest a request waits for its batch to fill."
    ),
    duration_s: float = typer.Option(
        _D["duration_s"], "--duration-s", help="Minimum duration of each LoadGen scenario."
    ),
    precision: str | None = typer.Option(
        _D["precision"], "--precision", help="fp32, fp16, bf16 (default fp16 on CUDA)."
    ),
    num_samples: int = typer.Option(
        _D["num_samples"], "--num-samples", help="Distinct requests in the sample library."
    ),
    endpoint: str | None = typer.Option(_D["endpoint"], "--endpoint", help="OpenAI-compatible URL to drive instead."),
    model_name: str | None = typer.Option(_D["model_name"], "--model-name", help="Model name sent to the endpoint."),
    request_rate: str | None = typer.Option(
        _D["request_rate"], "--request-rate", help="Endpoint: arrivals per second; a list (1,2,4) is a sweep."
    ),
    concurrency: str | None = typer.Option(
        _D["concurrency"], "--concurrency", help="Endpoint: closed-loop clients (default 1); 1,2,4,8 is a sweep."
    ),
    arrival: str = typer.Option(_D["arrival"], "--arrival", help="Endpoint: poisson or fixed (for --request-rate)."),
    requests_file: str | None = typer.Option(
        _D["requests_file"], "--requests", help="Endpoint: JSONL/CSV of prompts or chat messages, sampled by --seed."
    ),
    input_len: str | None = typer.Option(
        _D["input_len"], "--input-len", help="Endpoint: synthetic prompt length: 128, 64-256 or a length,weight CSV."
    ),
    output_len: str | None = typer.Option(
        _D["output_len"], "--output-len", help="Endpoint: asked output length: 128, 64-256 or a length,weight CSV."
    ),
    tokenizer: str | None = typer.Option(
        _D["tokenizer"], "--tokenizer", help="Endpoint: tokenizer.json: lengths in tokens; counts without usage."
    ),
    output_control: str = typer.Option(
        _D["output_control"], "--output-control", help="Endpoint: enforce max_tokens with ignore_eos, min_tokens, none."
    ),
    trace: str | None = typer.Option(
        _D["trace"], "--trace", help="Endpoint: replay a JSONL/CSV trace of timestamp, input_len, output_len."
    ),
    min_goodput_share: float = typer.Option(
        _D["min_goodput_share"], "--min-goodput-share", help="Operating point: least share of requests meeting SLOs."
    ),
    compare_to: str | None = typer.Option(
        _D["compare_to"], "--compare-to", help="Endpoint: another serving result to compare answers with."
    ),
    parity_tokens: int = typer.Option(
        _D["parity_tokens"], "--parity-tokens", help="Parity: first N tokens compared word by word."
    ),
    parity_threshold: float = typer.Option(
        _D["parity_threshold"], "--parity-threshold", help="Parity: MiniLM cosine at which an answer is accepted."
    ),
    platform_note: str | None = typer.Option(
        _D["platform_note"], "--platform", help='Endpoint: what serves it, e.g. "inf2.48xlarge, vLLM-neuron 0.x".'
    ),
    store_outputs: bool = typer.Option(
        _D["store_outputs"], "--store-outputs/--no-store-outputs", help="Endpoint: keep answers (for --compare-to)."
    ),
    num_requests: int = typer.Option(_D["num_requests"], "--num-requests", help="Endpoint: requests to send."),
    max_tokens: int = typer.Option(_D["max_tokens"], "--max-tokens", help="Endpoint: output tokens per request."),
    slo_ttft_ms: float | None = typer.Option(
        _D["slo_ttft_ms"], "--slo-ttft-ms", help="Endpoint: TTFT bound for goodput."
    ),
    slo_tpot_ms: float | None = typer.Option(
        _D["slo_tpot_ms"], "--slo-tpot-ms", help="Endpoint: TPOT bound for goodput."
    ),
    request_timeout_s: float = typer.Option(
        _D["request_timeout_s"], "--request-timeout-s", help="Endpoint: deadline for each whole request."
    ),
    api_key: str | None = typer.Option(
        _D["api_key"],
        "--api-key",
        envvar="ACCELPILOT_API_KEY",
        show_default=False,
        help="Endpoint: bearer token for the server (or ACCELPILOT_API_KEY); recorded as ***.",
    ),
    seed: int = typer.Option(_D["seed"], "--seed", help="Seed for requests and arrival schedules."),
    out: str = typer.Option("pilot-results", "--out", help="Folder for the result file."),
    as_json: bool = typer.Option(False, "--json", help="Print the result JSON on stdout only."),
) -> None:
    """Serve a model (or drive an endpoint) under MLPerf/vLLM load patterns; write one serving result."""
    from accelpilot.pilot.result import write_new_result
    from accelpilot.pilot.serve.base import parse_buckets, parse_points, parse_scenarios
    from accelpilot.pilot.serve.runner import run_serve

    cfg = ServeConfig(
        device=device,
        workload=workload,
        scenarios=parse_scenarios(scenario),
        target_qps=target_qps,
        slo_ms=slo_ms,
        find_peak=find_peak,
        buckets=parse_buckets(buckets),
        max_batch=max_batch,
        max_wait_ms=max_wait_ms,
        duration_s=duration_s,
        precision=precision,
        num_samples=num_samples,
        seed=seed,
        endpoint=endpoint,
        model_name=model_name,
        request_rate=parse_points(request_rate, "--request-rate", float),
        concurrency=parse_points(concurrency, "--concurrency", int),
        arrival=arrival,
        requests_file=requests_file,
        input_len=input_len,
        output_len=output_len,
        tokenizer=tokenizer,
        output_control=output_control,
        trace=trace,
        min_goodput_share=min_goodput_share,
        compare_to=compare_to,
        parity_tokens=parity_tokens,
        parity_threshold=parity_threshold,
        platform_note=platform_note,
        store_outputs=store_outputs,
        num_requests=num_requests,
        max_tokens=max_tokens,
        slo_ttft_ms=slo_ttft_ms,
        slo_tpot_ms=slo_tpot_ms,
        request_timeout_s=request_timeout_s,
        api_key=api_key,
        command=_command_line(),
    ).validate()

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
