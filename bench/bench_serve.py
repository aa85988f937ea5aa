"""Load benchmark of ``serpeval serve`` (issue 31): added latency at a fixed request rate, and
events/s into each store.

Usage::

    python bench/bench_serve.py [--rate 100 --rate 500] [--seconds 10] [--events 50000]
                                [--postgres postgresql://postgres@127.0.0.1:5432/test] [--aa 0]
                                [--stores-only]

**Latency.** Two servers run as subprocesses (uvicorn, one process each) over Cranfield with
the same two embedded BM25 engines (defaults vs k1=1.2,b=0.3):

- *bare*: a minimal Starlette app that calls both engines as serve does (inline, one after
  the other) and returns A's list: the HTTP stack plus the backends' own work, nothing else;
- *serve*: ``serpeval serve`` (team draft, replayable coins, the impression logged to DuckDB
  by the group-commit writer, Prometheus metrics).

An open-loop client sends ``GET /search`` at a fixed rate (request i at t0 + i/rate, random
Cranfield topics) and records each latency from the scheduled send time (no coordinated
omission). Added latency = serve's percentile minus bare's, per pair of consecutive runs; the
median over ``--repeat`` pairs is quoted. The engines' own time, called
in-process, is printed for reference. The client shares the machine's cores with the servers.

**Events.** ``EventStore.write`` of batches of 1,000 validated events (one committed
transaction each), per store (PostgreSQL also in batches of 5,000), with the CPU per event of
the writer and of the PostgreSQL backend process (load-independent, unlike the rate); and
``POST /events`` through serve, batches of 500 from 8 concurrent clients.

**A/A** (``--aa N``): N A/A experiments through the app (identical rankers, random clicks);
the share the analysis calls significant (about 5% expected).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("SERPEVAL_DATA", ROOT.parent / "shared" / "data"))
CRANFIELD = DATA / "cranfield"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bare_server(port: int) -> None:
    """The baseline: both engines called as serve calls them (inline, one after the other),
    A's list returned, nothing else."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from serpeval.engines.embedded import EmbeddedIndex

    index = EmbeddedIndex.build(CRANFIELD / "corpus.jsonl")
    a, b = index.engine(), index.engine(k1=1.2, b=0.3)

    async def search(request: Any) -> Any:
        q = request.query_params["q"]
        hits_a = a.search(q, 10)
        b.search(q, 10)
        return JSONResponse({"hits": [{"id": h.doc_id} for h in hits_a]})

    async def healthz(request: Any) -> Any:
        return JSONResponse({"status": "ok"})

    app = Starlette(routes=[Route("/search", search), Route("/healthz", healthz)])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def start(argv: list[str], port: int) -> subprocess.Popen[bytes]:
    import httpx

    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"server {argv} did not start")


async def _http_get(pool: list[Any], host: str, port: int, request: bytes) -> int:
    """One GET on an idle keep-alive connection (a new one if none is idle); the status code."""
    reader, writer = pool.pop() if pool else await asyncio.open_connection(host, port)
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = 0
    for line in head.split(b"\r\n"):
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    await reader.readexactly(length)
    pool.append((reader, writer))
    return status


async def open_loop(url: str, rate: float, seconds: float, queries: list[str]) -> dict[str, float]:
    """Requests at a fixed rate (request i sent at t0 + i/rate whatever the earlier ones do),
    each latency counted from its scheduled send time (no coordinated omission). A minimal
    HTTP/1.1 client on keep-alive connections (asyncio streams, uvloop where installed): about
    a tenth of httpx's CPU per request, which matters when client and servers share 2 cores."""
    import random
    import urllib.parse

    host, port = url.removeprefix("http://").split(":")
    rnd = random.Random(1)
    requests = [(f"GET /search?{urllib.parse.urlencode({'q': rnd.choice(queries), 'user': f'u{i % 500}'})} "
                 f"HTTP/1.1\r\nHost: {host}\r\n\r\n").encode() for i in range(1000)]
    latencies: list[float] = []
    errors = 0
    pool: list[Any] = []
    for request in requests[:50]:  # warm-up, and 50 connections ready
        await _http_get(pool, host, int(port), request)
    pool += [await asyncio.open_connection(host, int(port)) for _ in range(32)]
    n = int(rate * seconds)
    t0 = time.perf_counter() + 0.1

    async def one(i: int) -> None:
        nonlocal errors
        scheduled = t0 + i / rate
        delay = scheduled - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        try:
            if await _http_get(pool, host, int(port), requests[i % len(requests)]) != 200:
                errors += 1
        except (OSError, asyncio.IncompleteReadError, ValueError):
            errors += 1
        latencies.append(time.perf_counter() - scheduled)

    await asyncio.gather(*(one(i) for i in range(n)))
    elapsed = time.perf_counter() - t0
    for _, writer in pool:
        writer.close()
    latencies.sort()

    def pct(p: float) -> float:
        return 1000 * latencies[min(len(latencies) - 1, int(p * len(latencies)))]

    return {"requests": n, "achieved/s": n / elapsed, "p50 ms": pct(0.5), "p90 ms": pct(0.9), "p99 ms": pct(0.99),
            "errors": errors}


def run_async(coroutine: Any) -> Any:
    """``asyncio.run`` on uvloop where it is installed (the client's CPU per request halves)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)


def engines_direct(queries: list[str]) -> dict[str, float]:
    from serpeval.engines.embedded import EmbeddedIndex

    index = EmbeddedIndex.build(CRANFIELD / "corpus.jsonl")
    a, b = index.engine(), index.engine(k1=1.2, b=0.3)
    times = []
    for q in queries * 2:
        t = time.perf_counter()
        a.search(q, 10)
        b.search(q, 10)
        times.append(time.perf_counter() - t)
    times.sort()
    return {"p50 ms": 1000 * times[len(times) // 2], "p99 ms": 1000 * times[int(0.99 * len(times))]}


def in_process(queries: list[str], n: int, tmp: Path) -> dict[str, float]:
    """serve's own work per request without HTTP or queueing: the app called through httpx's
    ASGI transport, one request at a time, minus the same engine calls made directly; CPU
    seconds per request of the whole app (thread time of this process)."""
    import httpx

    from serpeval.serve.app import create_app
    from serpeval.serve.backends import build_backends
    from serpeval.serve.config import quick_config

    config = quick_config(str(CRANFIELD / "corpus.jsonl"), "k1=1.2,b=0.3", str(tmp / "inproc.duckdb"))
    backends = build_backends(config)
    app = create_app(config, backends)

    async def run() -> tuple[list[float], float]:
        transport = httpx.ASGITransport(app=app)
        async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport,
                                                                       base_url="http://b") as client:
            for q in queries[:20]:
                await client.get("/search", params={"q": q})
            times = []
            cpu = time.process_time()
            for i in range(n):
                t = time.perf_counter()
                await client.get("/search", params={"q": queries[i % len(queries)], "user": f"u{i % 100}"})
                times.append(time.perf_counter() - t)
            return times, (time.process_time() - cpu) / n

    served, cpu = asyncio.run(run())
    direct = []
    for i in range(n):
        q = queries[i % len(queries)]
        t = time.perf_counter()
        backends[0].engine.search(q, 10)
        backends[1].engine.search(q, 10)
        direct.append(time.perf_counter() - t)
    served.sort()
    direct.sort()

    def pct(values: list[float], p: float) -> float:
        return 1000 * values[min(len(values) - 1, int(p * len(values)))]

    return {"serve p50 ms": pct(served, 0.5), "serve p99 ms": pct(served, 0.99), "engines p50 ms": pct(direct, 0.5),
            "engines p99 ms": pct(direct, 0.99), "added p50 ms": pct(served, 0.5) - pct(direct, 0.5),
            "CPU ms per request": 1000 * cpu}


def event_batches(n: int, batch: int, prefix: str) -> list[Any]:
    from serpeval.online.events.schema import validate_events

    out = []
    for start in range(0, n, batch):
        out.append(validate_events([{"action_name": "click", "event_id": f"{prefix}{i}", "query_id": f"q{i % 997}",
                                     "client_id": "bench", "timestamp": "2026-12-05T01:00:00Z",
                                     "event_attributes": {"position": {"ordinal": 1 + i % 10}}}
                                    for i in range(start, min(n, start + batch))], max_batch=batch))
    return out


def _process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used, from /proc (Linux; the PostgreSQL backend)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def store_rate(target: str, n: int, batch: int = 1000) -> dict[str, float]:
    """Events/s through ``EventStore.write`` in batches, with the CPU per event of this process
    and (PostgreSQL on this machine) of the server backend: the CPU figures hardly depend on the
    machine's load, the rate does."""
    from serpeval.online.events.store import open_store

    batches = event_batches(n, batch, "s")
    store = open_store(target)
    pid = store._con.info.backend_pid if store.kind == "postgresql" else None
    server0 = _process_cpu_s(pid) if pid else 0.0
    cpu0, t = time.process_time(), time.perf_counter()
    for b in batches:
        store.write([], b)
    elapsed = time.perf_counter() - t
    out = {"events/s": n / elapsed, "client CPU us/event": 1e6 * (time.process_time() - cpu0) / n}
    if pid:
        out["server CPU us/event"] = 1e6 * (_process_cpu_s(pid) - server0) / n
    store.close()
    return out


def _fmt(result: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:,.0f}" if v >= 100 else f"{k} {v:.1f}" for k, v in result.items())


async def http_events_rate(url: str, n: int) -> float:
    import httpx

    batches = []
    for start in range(0, n, 500):
        batches.append([{"action_name": "click", "event_id": f"h{i}", "query_id": "q",
                         "timestamp": "2026-12-05T01:00:00Z", "event_attributes": {"position": {"ordinal": 1}}}
                        for i in range(start, min(n, start + 500))])
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        sem = asyncio.Semaphore(8)

        async def post(b: list[Any]) -> None:
            async with sem:
                r = await client.post("/events", content=json.dumps(b), headers={"content-type": "application/json"})
                assert r.status_code == 200, r.text

        t = time.perf_counter()
        await asyncio.gather(*(post(b) for b in batches))
        return n / (time.perf_counter() - t)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, action="append", help="requests/s (repeatable; default 100 and 500)")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each app per rate (medians quoted)")
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--bare-server", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--aa", type=int, default=0, help="A/A runs to make (0: none)")
    parser.add_argument("--stores-only", action="store_true", help="only the EventStore.write rates")
    args = parser.parse_args()
    if args.bare_server:
        bare_server(args.bare_server)
        return
    queries = [line.split("\t", 1)[1] for line in (CRANFIELD / "topics.tsv").read_text().splitlines()]
    tmp = Path(tempfile.mkdtemp(prefix="bench_serve_"))
    print(f"# serve bench, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")
    if not args.stores_only:
        print("engines called in-process (A then B):", engines_direct(queries))
        print("serve in-process (ASGI transport, sequential, 1000 requests):",
              {k: round(v, 3) for k, v in in_process(queries, 1000, tmp).items()})
        bare_port, serve_port = free_port(), free_port()
        bare = start([sys.executable, __file__, "--bare-server", str(bare_port)], bare_port)
        serve = start([sys.executable, "-m", "serpeval", "serve", "--corpus", str(CRANFIELD / "corpus.jsonl"),
                       "--candidate", "k1=1.2,b=0.3", "--store", str(tmp / "events.duckdb"), "--port", str(serve_port),
                       "--deadline-ms", "2000"], serve_port)
        try:
            for rate in args.rate or [100.0, 500.0]:
                added: dict[str, list[float]] = {"p50 ms": [], "p99 ms": []}
                for _ in range(args.repeat):  # bare and serve alternate: the same conditions for both
                    results = {}
                    for name, port in (("bare", bare_port), ("serve", serve_port)):
                        result = run_async(open_loop(f"http://127.0.0.1:{port}", rate, args.seconds, queries))
                        results[name] = result
                        print(f"rate {rate:g}/s {name}: " + ", ".join(f"{k} {v:.2f}" for k, v in result.items()))
                    for key, values in added.items():
                        values.append(results["serve"][key] - results["bare"][key])
                print(f"rate {rate:g}/s added by serve, median of {args.repeat}: " + ", ".join(
                    f"{key} {statistics.median(v):+.2f} (range {min(v):+.2f} to {max(v):+.2f})"
                    for key, v in added.items()))
            rate = asyncio.run(http_events_rate(f"http://127.0.0.1:{serve_port}", args.events))
            print(f"POST /events through serve (DuckDB), batches of 500, 8 clients: {rate:,.0f} events/s")
        finally:
            for proc in (bare, serve):
                proc.terminate()
                proc.wait(30)
    print(f"EventStore.write DuckDB, batches of 1000: {_fmt(store_rate(str(tmp / 'direct.duckdb'), args.events))}")
    try:
        import psycopg

        schema = f"bench_{os.getpid()}"
        with psycopg.connect(args.postgres, autocommit=True) as admin:
            admin.execute(psycopg.sql.SQL("CREATE SCHEMA {}").format(psycopg.sql.Identifier(schema)))
        try:
            url = f"{args.postgres}?options=-csearch_path%3D{schema}"
            for batch in (1000, 5000):
                with psycopg.connect(url, autocommit=True) as admin:  # each run starts from empty tables
                    admin.execute("DROP TABLE IF EXISTS ubi_events, ubi_queries")
                print(f"EventStore.write PostgreSQL, batches of {batch}: {_fmt(store_rate(url, args.events, batch))}")
        finally:
            with psycopg.connect(args.postgres, autocommit=True) as admin:
                admin.execute(psycopg.sql.SQL("DROP SCHEMA {} CASCADE").format(psycopg.sql.Identifier(schema)))
    except Exception as exc:  # a machine without PostgreSQL
        print(f"PostgreSQL skipped: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    if args.aa:
        sys.path.insert(0, str(ROOT))
        from tests.serve.test_closed_loop import aa_positives

        corpus = tmp / "docs.jsonl"
        corpus.write_text("".join((CRANFIELD / "corpus.jsonl").read_text().splitlines(True)[:200]))
        from serpeval.engines.embedded import EmbeddedIndex

        positives = aa_positives(EmbeddedIndex.build(corpus).engine(), queries, args.aa, 150, tmp)
        print(f"A/A: {positives} positives in {args.aa} runs ({positives / args.aa:.1%}; 5% expected)")


if __name__ == "__main__":
    main()
