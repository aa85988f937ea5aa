"""Engines (issue 30): a 100-setting k1 x b sweep end to end, the HTTP path's throughput, and the
sweep's false-winner rate over many null repeats.

Usage::

    python bench/bench_engine.py [--collection cranfield|vaswani|both] [--http] [--null 1000]
                                 [--out bench/results/engine.md]

- **sweep**: ``serpeval.sweep`` over a 10 x 10 grid (k1 = 0.3..2.1, b = 0.1..1.0) plus the
  default baseline, k = 1000, nDCG@10, 5 folds, 1000 sign flips: index build, 101 retrievals,
  101 evaluations, the statistics. Targets: Cranfield <= 60 s, Vaswani <= 5 min (2 cores).
- **http**: queries per second of ``HttpEngine.fetch`` (Elasticsearch preset) against a local
  server (uvicorn, a raw ASGI app in another process answering a fixed ``_search`` body at once),
  one request per query (concurrency 32) and ``_msearch`` batches of 100. Target >= 500 q/s.
- **null**: the sweep's decision rule on ``--null`` seeded null sweeps (20 equivalent settings,
  100 queries; identical-plus-noise and shuffled): the share with a significant CV winner
  (target <= 5%, nominal 2.5%) and with a corrected in-sample winner; and a paired t interval on
  the out-of-fold differences, for comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("SERPEVAL_DATA", ROOT.parent / "shared" / "data"))
sys.path.insert(0, str(ROOT))


def bench_sweep(name: str) -> dict[str, object]:
    import serpeval

    folder = DATA / name
    k1 = ",".join(f"{x:.2f}" for x in np.linspace(0.3, 2.1, 10))
    b = ",".join(f"{x:.2f}" for x in np.linspace(0.1, 1.0, 10))
    start = time.perf_counter()
    result = serpeval.sweep(folder / "topics.tsv", folder / "qrels.trec", corpus=folder / "corpus.jsonl",
                            grid=[f"k1={k1}", f"b={b}"], measure="nDCG@10", k=1000)
    seconds = time.perf_counter() - start
    summary = result.summary()
    return {"collection": name, "settings": len(result.settings), "queries": len(result.query_ids),
            "seconds": round(seconds, 1), "selected": summary["selected"],
            "baseline_mean": round(summary["baseline_mean"], 4), "selected_mean": round(summary["selected_mean"], 4),
            "in_sample_gain": round(summary["in_sample_gain"], 4), "cv_gain": round(summary["cv_gain"], 4),
            "cv_ci": [round(v, 4) for v in summary["cv_ci"]], "kept": summary["kept"],
            "significant": summary["significant"]}


SERVER = textwrap.dedent('''
    import json, sys
    hits = [{"_index": "docs", "_id": f"d{i}", "_score": 10.0 - i / 10} for i in range(10)]
    one = {"took": 1, "timed_out": False, "hits": {"total": {"value": 10, "relation": "eq"}, "max_score": 10.0,
           "hits": hits}}
    single = json.dumps(one).encode()

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["path"].endswith("_msearch"):
            count = body.count(b"\\n") // 2
            data = json.dumps({"took": 1, "responses": [dict(one, status=200)] * count}).encode()
        else:
            data = single
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
        await send({"type": "http.response.body", "body": data})

    if __name__ == "__main__":
        import uvicorn
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="error", access_log=False)
''')


def bench_http(queries: int = 5000) -> list[dict[str, object]]:
    from serpeval.engines.http import http_engine

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = Path("/tmp/serpeval_bench_server.py")
    script.write_text(SERVER)
    server = subprocess.Popen([sys.executable, str(script), str(port)])
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.1)
        texts = [f"query number {i}" for i in range(queries)]
        rows = []
        for label, http in [("one request per query, concurrency 32", {"concurrency": 32}),
                            ("_msearch batches of 100, concurrency 4", {"concurrency": 4, "batch": 100})]:
            engine = http_engine({"preset": "elasticsearch", "url": f"http://127.0.0.1:{port}", "index": "docs",
                                  "http": http})
            engine.fetch([f"warm-up {i}" for i in range(200)], 10)   # connections open; no cache hit later
            start = time.perf_counter()
            fetched = engine.fetch(texts, 10)
            seconds = time.perf_counter() - start
            assert all(len(h or []) == 10 for h in fetched.hits)
            rows.append({"mode": label, "queries": queries, "seconds": round(seconds, 2),
                         "queries_per_s": round(queries / seconds), "requests": fetched.requests})
        return rows
    finally:
        server.terminate()
        server.wait()


def bench_null(repeats: int) -> list[dict[str, object]]:
    from serpeval.engines.sweep import select
    from serpeval.stats.paired import paired_t

    rows = []
    for shuffled in (False, True):
        rng = np.random.default_rng(20261205)
        cv = sample = naive = 0
        start = time.perf_counter()
        for r in range(repeats):
            base = rng.beta(2, 3, size=100)
            if shuffled:
                values = np.clip(base + rng.normal(0, 0.08, size=(20, 100)), 0, 1)
                scores = rng.permuted(values, axis=0)
            else:
                noise = rng.normal(0, 0.06, size=(20, 100))
                noise[0] = 0
                scores = base + noise
            result = select(scores, 0, folds=5, rng=r, permutations=1000)
            cv += result["significant"]
            sample += bool(result["in_sample_significant"])
            # the naive interval: paired t on the out-of-fold differences (same folds and choices)
            assignment = np.random.default_rng(r).permutation(100) % 5
            oof = np.array([scores[result["fold_choices"][assignment[q]], q] for q in range(100)])
            naive += paired_t(oof - scores[0]).ci_low > 0
        rows.append({"null": "shuffled settings" if shuffled else "baseline + mean-zero noise", "repeats": repeats,
                     "cv_winner": cv / repeats, "in_sample_winner": sample / repeats,
                     "naive_t_winner": naive / repeats, "seconds": round(time.perf_counter() - start, 1)})
    return rows


def table(rows: list[dict[str, object]]) -> str:
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(json.dumps(r[c]) if isinstance(r[c], list | bool) or r[c] is None else str(r[c])
                                for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", choices=("cranfield", "vaswani", "both", "none"), default="cranfield")
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--null", type=int, default=0, metavar="REPEATS")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    parts = [f"machine: {platform.platform()}, {os.cpu_count()} CPUs (shared), Python {platform.python_version()}, "
             f"numpy {np.__version__}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"]
    names = {"both": ["cranfield", "vaswani"], "none": []}.get(args.collection, [args.collection])
    if names:
        sweeps = [bench_sweep(n) for n in names]
        parts.append("## 100-setting k1 x b sweep, end to end\n\n" + table(sweeps))
    if args.http:
        parts.append("## HTTP path against an instant local server\n\n" + table(bench_http()))
    if args.null:
        parts.append("## False winners on null sweeps\n\n" + table(bench_null(args.null)))
    text = "\n\n".join(parts) + "\n"
    print(text)
    if args.out:
        with args.out.open("a") as handle:
            handle.write(text + "\n")


if __name__ == "__main__":
    main()
