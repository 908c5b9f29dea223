"""Is the endpoint client the bottleneck? accelpilot's streaming client vs a bare httpx keep-alive streaming loop.

A loopback server in its own process answers every request at once with a canned OpenAI-style stream
(``--tokens`` token events, a usage event, ``[DONE]``) on kept-alive connections, counting the connections it
accepts. In the same run, alternating rounds, the same number of requests at the same closed-loop concurrency go
through
  - the reference: a bare ``httpx.AsyncClient.stream`` loop, its pool sized to the concurrency and kept alive,
    counting token events in the raw bytes (no parsing at all: the least a streaming client can do), and
  - accelpilot: ``run_endpoint`` (the real path: SSE parsing, per-token timestamps, deadline, size bound, salted
    requests, the unmeasured warm-up, the result).
Two references, each round: ``per_stream`` (each concurrent stream its own client with one kept-alive connection,
the layout accelpilot's closed loop uses, so the ratio is the client's own overhead) and ``shared_pool`` (one
httpx pool of ``--concurrency`` connections, whose pool bookkeeping grows with the square of the pool).
Printed: achieved requests/s and tokens/s of each (median of the rounds), their ratio (target >= 0.95), the
connections the server accepted per round for each, the client CPU per request (process time of this process /
requests; the server runs in another process), and the host load (``uptime``) next to the ratio.

    PYTHONPATH=src python3 benchmarks/endpoint_client.py [--requests 500] [--concurrency 32] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import statistics
import subprocess
import time
from typing import Any

import httpx


def _canned(tokens: int) -> bytes:
    events = b"".join(
        b"data: " + json.dumps({"choices": [{"index": 0, "text": f"t{i} "}]}).encode() + b"\n\n" for i in range(tokens)
    )
    events += b"data: " + json.dumps({"choices": [], "usage": {"completion_tokens": tokens}}).encode() + b"\n\n"
    events += b"data: [DONE]\n\n"
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: "
        + str(len(events)).encode()
        + b"\r\n\r\n"
    )
    return head + events


def _serve(port_q: mp.Queue, tokens: int, conns: Any) -> None:  # type: ignore[type-arg]
    body = _canned(tokens)
    models = json.dumps({"data": [{"id": "bench"}]}).encode()
    models_resp = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
        len(models),
        models,
    )

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with conns.get_lock():
            conns.value += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                n = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        n = int(line.split(b":")[1])
                if n:
                    await reader.readexactly(n)
                writer.write(models_resp if head.startswith(b"GET") else body)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        srv = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
        port_q.put(srv.sockets[0].getsockname()[1])
        await srv.serve_forever()

    asyncio.run(main())


async def _bare(url: str, n: int, conc: int, per_stream: bool = False) -> tuple[float, int]:
    """The reference: the least a streaming client must do. ``per_stream``: each concurrent stream its own client
    with one kept-alive connection, as accelpilot's closed loop does; else one pool of ``conc`` connections."""
    tokens = 0
    nxt = 0
    payload = {"model": "bench", "prompt": "hello", "max_tokens": 16, "stream": True}
    k = 1 if per_stream else conc
    limits = httpx.Limits(max_connections=k, max_keepalive_connections=k)
    ctx = httpx.create_ssl_context()  # one CA bundle load, shared: as accelpilot's clients share theirs
    clients = [httpx.AsyncClient(limits=limits, verify=ctx) for _ in range(conc if per_stream else 1)]

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal nxt, tokens
        while nxt < n:
            nxt += 1
            async with client.stream("POST", url, json=payload) as resp:
                async for chunk in resp.aiter_bytes():  # no parsing at all: count token events in the bytes
                    tokens += chunk.count(b'"text"')

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(clients[j % len(clients)]) for j in range(conc)))
    wall = time.perf_counter() - t0
    for c in clients:
        await c.aclose()
    return wall, tokens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    from accelpilot.pilot.serve.base import ServeConfig
    from accelpilot.pilot.serve.endpoint import run_endpoint

    q: mp.Queue = mp.Queue()  # type: ignore[type-arg]
    conns = mp.Value("i", 0)
    server = mp.Process(target=_serve, args=(q, args.tokens, conns), daemon=True)
    server.start()
    try:
        port = q.get(timeout=30)
        url = f"http://127.0.0.1:{port}/v1/completions"
        layouts = ("per_stream", "shared_pool")
        ref: dict[str, dict[str, list[Any]]] = {k: {"rps": [], "tps": [], "cpu": [], "conns": []} for k in layouts}
        ours_rps: list[float] = []
        ours_tps: list[float] = []
        ours_cpu: list[float] = []
        ours_conns: list[int] = []

        def accepted() -> int:
            with conns.get_lock():
                n, conns.value = conns.value, 0
            return int(n)

        asyncio.run(_bare(url, 50, 4))  # warm both paths (imports, first connections) outside the timed rounds

        def bare() -> None:
            for layout in layouts:
                accepted()
                c0 = time.process_time()
                wall, tokens = asyncio.run(_bare(url, args.requests, args.concurrency, layout == "per_stream"))
                ref[layout]["cpu"].append((time.process_time() - c0) / args.requests)
                ref[layout]["rps"].append(args.requests / wall)
                ref[layout]["tps"].append(tokens / wall)
                ref[layout]["conns"].append(accepted())

        for r in range(args.rounds):
            if r % 2 == 0:  # alternate which goes first, so a drift of the shared host hits both alike
                bare()

            cfg = ServeConfig(
                endpoint=url,
                num_requests=args.requests,
                concurrency=args.concurrency,
                max_tokens=args.tokens,
                model_name="bench",
                store_outputs=False,
            ).validate()
            accepted()
            res = run_endpoint(cfg)
            ours_conns.append(accepted())
            assert res.serving is not None and res.serving.errors == 0, res.details.get("first_errors")
            # the client's own CPU over the measured requests (the warm-up and result building excluded)
            ours_cpu.append(res.details["client"]["client_cpu_ms_per_request"] / 1e3)
            ours_rps.append(float(res.figures["endpoint.request_throughput"].value))
            ours_tps.append(float(res.figures["endpoint.output_token_throughput"].value))
            if r % 2 == 1:
                bare()
        med = statistics.median
        out: dict[str, Any] = {
            "requests": args.requests,
            "concurrency": args.concurrency,
            "tokens_per_request": args.tokens,
            "rounds": args.rounds,
            "accelpilot_req_per_s": round(med(ours_rps), 1),
            "accelpilot_token_per_s": round(med(ours_tps), 1),
            "accelpilot_client_cpu_ms_per_request": round(med(ours_cpu) * 1e3, 3),
            "accelpilot_connections_per_round": ours_conns,
            "accelpilot_warmup_requests_per_round": args.concurrency,
        }
        for layout in layouts:  # per_stream: the same connection layout as accelpilot (its overhead proper)
            rf = ref[layout]
            out[f"reference_{layout}"] = {
                "req_per_s": round(med(rf["rps"]), 1),
                "token_per_s": round(med(rf["tps"]), 1),
                "client_cpu_ms_per_request": round(med(rf["cpu"]) * 1e3, 3),
                "connections_per_round": rf["conns"],
                "ratio_req_per_s": round(med(ours_rps) / med(rf["rps"]), 3),
                "ratio_token_per_s": round(med(ours_tps) / med(rf["tps"]), 3),
                # the bare loop's CPU per request over accelpilot's (1.0: no overhead)
                "ratio_client_cpu": round(med(rf["cpu"]) / med(ours_cpu), 3),
                "rounds_req_per_s": [round(x, 1) for x in rf["rps"]],
            }
        out["accelpilot_rounds_req_per_s"] = [round(x, 1) for x in ours_rps]
        out["target_ratio"] = 0.95  # against reference_per_stream
        out["uptime"] = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
        print(json.dumps(out, indent=2))
    finally:
        server.terminate()
        server.join(5)


if __name__ == "__main__":
    main()
