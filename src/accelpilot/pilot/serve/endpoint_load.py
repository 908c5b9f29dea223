"""The loads of an endpoint run, and what each measured point sends so that no cache has seen it.

A server's prefix cache answers a prompt it has seen from memory: resending the same requests at every point of a
sweep measures the cache from the second point on (issue 30: cold 0.27 req/s, warm 5.44 req/s at the same load).
So each measured point gets requests of its own: a salt (a short, distinct line put before every prompt of that
point) unless ``--cache warm`` asks for the warm cache on purpose. An unmeasured warm-up, salted apart from every
point, comes first: it opens the pool's connections and brings the server past its first-request costs.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from accelpilot.pilot.serve.base import ServeConfig
from accelpilot.pilot.serve.endpoint_http import RequestRecord, make_client, one_request, payload
from accelpilot.pilot.serve.requests import RequestSpec

DEFAULT_RATE_CONNECTIONS = 100  # open-loop arrivals: at most this many requests in flight share the pool


@dataclass(slots=True, frozen=True)
class LoadPoint:
    """One load of a run: a closed loop of ``concurrency`` clients, arrivals at ``rate``, or a trace replay."""

    concurrency: int | None = None
    rate: float | None = None
    arrival: str = "poisson"  # poisson or fixed, for a rate
    trace: bool = False

    def label(self) -> str:
        if self.trace:
            return "trace replay"
        if self.rate is not None:
            return f"{'Poisson' if self.arrival == 'poisson' else 'fixed-rate'} {self.rate:g} req/s"
        return f"concurrency {self.concurrency or 1}"


def load_points(cfg: ServeConfig) -> list[LoadPoint]:
    """The loads to run, lowest first: a sweep gives several, anything else one."""
    if cfg.trace:
        return [LoadPoint(trace=True)]
    if cfg.request_rate is not None:
        rates = cfg.request_rate if isinstance(cfg.request_rate, tuple) else (cfg.request_rate,)
        return [LoadPoint(rate=r, arrival=cfg.arrival) for r in sorted(rates)]
    cons = cfg.concurrency if isinstance(cfg.concurrency, tuple) else (cfg.concurrency or 1,)
    return [LoadPoint(concurrency=c) for c in sorted(cons)]


def pool_size(point: LoadPoint) -> int:
    """Connections for a point: one per concurrent stream (closed loop), else a bounded pool for arrivals."""
    if point.concurrency is not None and not point.trace and point.rate is None:
        return point.concurrency
    return DEFAULT_RATE_CONNECTIONS


def run_nonce(cfg: ServeConfig, compared_nonce: str | None = None) -> str:
    """The run's salt root: ``--cache-salt`` if given, else the compared run's (so parity compares answers to the
    very same prompts), else fresh random hex (so a rerun is cold too)."""
    return cfg.cache_salt or compared_nonce or secrets.token_hex(4)


def point_salt(nonce: str, index: int, cache: str) -> str:
    """The line before every prompt of point ``index``: what differs comes first, so two points share at most the
    bracket as a cached prefix. The warm cache on purpose shares one salt across points."""
    return f"[warm {nonce}] " if cache == "warm" else f"[p{index} {nonce}] "


def warmup_salt(nonce: str, index: int) -> str:
    """The warm-up's own salt: it never primes a measured request's prefix."""
    return f"[w{index} {nonce}] "


@dataclass(slots=True)
class Drive:
    records: list[RequestRecord]
    wall_s: float
    cpu_s: float  # this process's CPU time over the point (the client's own cost)
    warm_records: list[RequestRecord] = field(default_factory=list)  # the unmeasured warm-up, on the same pool

    @property
    def connections(self) -> int:
        """Distinct connections (client addresses) the measured requests used."""
        return len({r.connection for r in self.records if r.connection})

    def pool_use(self, pool: int, closed_loop: bool) -> dict[str, Any]:
        """Connections the pool opened against streams it carried (warm-up included), and who kept them alive:
        a server that closes the connection after each stream (llama.cpp's server does) costs every request a
        connect (and a TLS handshake over https) whatever the client does, so it is measured, never assumed."""
        sent = [r for r in (*self.warm_records, *self.records) if r.status is not None or r.new_connection]
        n, opened = len(sent), sum(1 for r in sent if r.new_connection)
        out: dict[str, Any] = {"streams": n, "connections_opened": opened, "pool_size": pool}
        if not sent:
            out["keep_alive"] = "no request reached the server"
        elif opened < n:
            out["keep_alive"] = f"kept alive: {opened} connection(s) carried {n} streams" + (
                " (the server closed some after their stream)" if closed_loop and opened > pool else ""
            )
        elif closed_loop and n > pool:  # a closed loop's next request always finds a connection just freed
            out["keep_alive"] = (
                f"the server closed the connection after every stream ({n} streams, {opened} connections): "
                "each request paid a TCP connect, and a TLS handshake over https"
            )
        else:  # arrivals: a request may have come while every connection was busy
            out["keep_alive"] = (
                f"every stream opened a connection ({n} streams): the server closed each after its stream, or no "
                "connection was free when a request came"
            )
        return out


async def _drive(
    cfg: ServeConfig,
    url: str,
    api: str,
    model: str,
    reqs: list[RequestSpec],
    point: LoadPoint,
    salt: str,
    transport: httpx.AsyncBaseTransport | None,
    warmup: list[RequestSpec],
    warmup_salt: str,
) -> Drive:
    bodies = [payload(api, model, s, cfg.output_control, salt) for s in reqs]
    chars = [s.chars() for s in reqs]
    conc = point.concurrency or 1
    deadline = cfg.request_timeout_s
    records: list[RequestRecord | None] = [None] * len(reqs)
    closed_loop = point.rate is None and not point.trace
    # A closed loop gives each concurrent stream a client of its own with one kept-alive connection: httpcore's
    # shared pool rescans every connection against every other on each request (O(pool^2): at concurrency 32
    # it was ~40% of the client's CPU, and grows with the square of the concurrency). Arrivals share one pool.
    n_clients = min(conc, max(len(reqs), len(warmup), 1)) if closed_loop else 1
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                make_client(
                    connections=1 if closed_loop else pool_size(point),
                    timeout_s=cfg.request_timeout_s,
                    api_key=cfg.api_key,
                    http=cfg.http,
                    transport=transport,
                )
            )
            for _ in range(n_clients)
        ]
        warm: list[RequestRecord] = []
        if warmup:  # unmeasured, at this point's concurrency: opens the pool, passes first-request costs
            wb = [payload(api, model, s, cfg.output_control, warmup_salt) for s in warmup]
            k = min(len(wb), conc if closed_loop else pool_size(point))
            for i in range(0, len(wb), k):
                warm += await asyncio.gather(
                    *(one_request(clients[j % n_clients], url, api, b, deadline) for j, b in enumerate(wb[i : i + k]))
                )

        async def fire(i: int, client: httpx.AsyncClient) -> None:
            records[i] = await one_request(client, url, api, bodies[i], deadline, chars[i])

        cpu0 = time.process_time()
        t0 = time.perf_counter()
        if not closed_loop:
            rng = random.Random(cfg.seed)
            tasks = []
            for i, spec in enumerate(reqs):
                if point.trace:
                    delay = (spec.at_s or 0.0) - (time.perf_counter() - t0)
                    if delay > 0:
                        await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(fire(i, clients[0])))
                if not point.trace and i + 1 < len(reqs) and point.rate is not None:
                    gap = rng.expovariate(point.rate) if point.arrival == "poisson" else 1.0 / point.rate
                    await asyncio.sleep(gap)
            await asyncio.gather(*tasks)
        else:
            nxt = 0

            async def worker(client: httpx.AsyncClient) -> None:
                nonlocal nxt
                while nxt < len(reqs):
                    i = nxt
                    nxt += 1
                    await fire(i, client)

            await asyncio.gather(*(worker(clients[j]) for j in range(min(conc, len(reqs)))))
        wall = time.perf_counter() - t0
        cpu = time.process_time() - cpu0
    return Drive([r if r is not None else RequestRecord(error="not sent") for r in records], wall, cpu, warm)


def drive(
    cfg: ServeConfig,
    url: str,
    api: str,
    model: str,
    reqs: list[RequestSpec],
    point: LoadPoint,
    salt: str = "",
    transport: httpx.AsyncBaseTransport | None = None,
    warmup: list[RequestSpec] | None = None,
    warmup_salt: str = "",
) -> Drive:
    """Send ``reqs`` at ``point`` (after the ``warmup`` requests, unmeasured) and time them."""
    return asyncio.run(_drive(cfg, url, api, model, reqs, point, salt, transport, warmup or [], warmup_salt))


def warmup_count(cfg: ServeConfig, point: LoadPoint) -> int:
    """Unmeasured requests before a point: ``--warmup-requests``, else one per concurrent stream."""
    if cfg.warmup_requests is not None:
        return cfg.warmup_requests
    return point.concurrency if point.concurrency is not None and point.rate is None and not point.trace else 1


def cache_facts(cfg: ServeConfig, nonce: str, points: list[LoadPoint], distinct: bool = False) -> dict[str, Any]:
    """What the result states about caches: how each point's requests differ, and what was sent unmeasured."""
    cold = cfg.cache == "cold"
    if distinct:
        method = (
            "distinct samples per point: each measured point sends request-file rows no other point sends, each "
            "also after that point's salt line (so a rerun is cold too)"
        )
    elif cold:
        method = "a distinct salt line before every prompt of each measured point: no point reuses another's prefix"
        if cfg.requests_file and len(points) > 1:
            method += (
                f" (the request file has fewer distinct rows than {len(points)} points x {cfg.num_requests} "
                "requests, so the points share the rows underneath their salts)"
            )
    else:
        method = "the same salted requests at every point after a warm-up pass: the warm prefix cache, on purpose"
    return {
        "mode": cfg.cache,
        "method": method,
        "distinct_samples_per_point": distinct,
        "salts": [point_salt(nonce, i, cfg.cache).strip() for i in range(len(points))],
        "warmup_requests": [warmup_count(cfg, p) for p in points],
        "warmup": (
            "unmeasured, before each point, salted apart from every measured request, at the point's concurrency"
            if cold
            else "unmeasured: every request once, with the salt the points then resend"
        ),
    }
