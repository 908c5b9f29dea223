"""Is the endpoint client the bottleneck? accelpilot's streaming client vs a bare httpx async streaming loop.

A loopback server in its own process answers every request at once with a canned OpenAI-style stream
(``--tokens`` token events, a usage event, ``[DONE]``). In the same run, alternating rounds, the same number of
requests at the same closed-loop concurrency go through
  - the reference: a bare ``httpx.AsyncClient.stream`` loop counting token events in the raw bytes, and
  - accelpilot: ``run_endpoint`` (the real path: httpx-sse parsing, per-token timestamps, deadline, result).
Printed: achieved requests/s and tokens/s of each (median of the rounds), the ratio (target >= 0.9), and the
client CPU per request (process time of this process / requests; the server runs in another process).

    PYTHONPATH=src python3 benchmarks/endpoint_client.py [--requests 500] [--concurrency 32] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import statistics
import time

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


def _serve(port_q: mp.Queue, tokens: int) -> None:  # type: ignore[type-arg]
    body = _canned(tokens)
    models = json.dumps({"data": [{"id": "bench"}]}).encode()
    models_resp = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
        len(models),
        models,
    )

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
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


async def _bare(url: str, n: int, conc: int) -> tuple[float, int]:
    """The reference: the least a streaming client must do."""
    tokens = 0
    nxt = 0
    payload = {"model": "bench", "prompt": "hello", "max_tokens": 16, "stream": True}
    # the same pool as accelpilot (keep-alive for every worker), so the comparison is of the streaming path only
    limits = httpx.Limits(max_connections=max(100, conc), max_keepalive_connections=100)
    async with httpx.AsyncClient(limits=limits) as client:

        async def worker() -> None:
            nonlocal nxt, tokens
            while nxt < n:
                nxt += 1
                async with client.stream("POST", url, json=payload) as resp:
                    async for chunk in resp.aiter_bytes():  # no parsing at all: count token events in the bytes
                        tokens += chunk.count(b'"text"')

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(conc)))
        return time.perf_counter() - t0, tokens


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
    server = mp.Process(target=_serve, args=(q, args.tokens), daemon=True)
    server.start()
    try:
        port = q.get(timeout=30)
        url = f"http://127.0.0.1:{port}/v1/completions"
        ref_rps, ours_rps, ref_tps, ours_tps, ref_cpu, ours_cpu = [], [], [], [], [], []
        asyncio.run(_bare(url, 50, 4))  # warm both paths (imports, first connections) outside the timed rounds
        for r in range(args.rounds):
            if r % 2 == 0:  # alternate which goes first, so a drift of the shared host hits both alike
                c0 = time.process_time()
                wall, tokens = asyncio.run(_bare(url, args.requests, args.concurrency))
                ref_cpu.append((time.process_time() - c0) / args.requests)
                ref_rps.append(args.requests / wall)
                ref_tps.append(tokens / wall)

            cfg = ServeConfig(
                endpoint=url,
                num_requests=args.requests,
                concurrency=args.concurrency,
                max_tokens=args.tokens,
                model_name="bench",
                store_outputs=False,
            ).validate()
            c0 = time.process_time()
            res = run_endpoint(cfg)
            ours_cpu.append((time.process_time() - c0) / args.requests)
            assert res.serving is not None and res.serving.errors == 0, res.details.get("first_errors")
            ours_rps.append(float(res.figures["endpoint.request_throughput"].value))
            ours_tps.append(float(res.figures["endpoint.output_token_throughput"].value))
            if r % 2 == 1:
                c0 = time.process_time()
                wall, tokens = asyncio.run(_bare(url, args.requests, args.concurrency))
                ref_cpu.append((time.process_time() - c0) / args.requests)
                ref_rps.append(args.requests / wall)
                ref_tps.append(tokens / wall)
        med = statistics.median
        out = {
            "requests": args.requests,
            "concurrency": args.concurrency,
            "tokens_per_request": args.tokens,
            "rounds": args.rounds,
            "reference_req_per_s": round(med(ref_rps), 1),
            "accelpilot_req_per_s": round(med(ours_rps), 1),
            "ratio_req_per_s": round(med(ours_rps) / med(ref_rps), 3),
            "reference_token_per_s": round(med(ref_tps), 1),
            "accelpilot_token_per_s": round(med(ours_tps), 1),
            "ratio_token_per_s": round(med(ours_tps) / med(ref_tps), 3),
            "reference_client_cpu_ms_per_request": round(med(ref_cpu) * 1e3, 3),
            "accelpilot_client_cpu_ms_per_request": round(med(ours_cpu) * 1e3, 3),
            "target_ratio": 0.9,
            "rounds_req_per_s": {
                "reference": [round(x, 1) for x in ref_rps],
                "accelpilot": [round(x, 1) for x in ours_rps],
            },
        }
        print(json.dumps(out, indent=2))
    finally:
        server.terminate()
        server.join(5)


if __name__ == "__main__":
    main()
