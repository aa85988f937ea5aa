"""Spark backend: time and peak memory of ``serpeval.spark.evaluate`` on generated runs,
against the local path, and how the time grows with the number of queries.

Data: ``--docs`` retrieved docs per query (distinct ids, scores with 2 decimals, so some
ties), 5 judgments per query (3 retrieved, 2 not; grades 0-3), every 50th query unjudged;
written once as Parquet, one file per 500,000 queries, under ``bench/.data/spark/`` (a run
of N queries reads the first N / 500,000 files). Measures: nDCG@10, AP, P@10, R@100, RR.

Every measurement runs in a fresh process; this parent samples the resident memory of that
process tree every 0.1 s (Python driver, its JVM, Spark's Python workers) and reports the
peaks. Spark runs in local mode on all cores of this machine (``local[2]`` here); its time
covers reading the Parquet files, the shuffle, the kernels and the aggregates, not the
session start (reported apart). The local path's time covers reading the same Parquet files
and evaluating.

    python bench/bench_spark.py --queries 500000 1000000 2000000 3500000 5000000 --docs 10
    python bench/bench_spark.py --groups --queries 50000 --docs 10   # buckets vs per query
    python bench/bench_spark.py --local-only --queries 500000 1000000 2000000 3500000 5000000

Writes ``bench/results/spark_<docs>docs.md`` (or ``spark_groups.md``) and prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import psutil
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data" / "spark"
RESULTS = HERE / "results"
CHUNK = 500_000
JUDGED = 5
MEASURES = ["nDCG@10", "AP", "P@10", "R@100", "RR"]


# ----------------------------------------------------------------------------- data


def chunk_paths(queries: int, docs: int, chunk: int = CHUNK) -> tuple[list[str], list[str]]:
    """Parquet files (qrels, run) holding the first ``queries`` queries, generated if needed."""
    if queries % chunk:
        raise SystemExit(f"--queries must be multiples of {chunk:,}")
    folder = DATA / (f"{docs}docs" if chunk == CHUNK else f"{docs}docs_{chunk}")
    qrels, run = [], []
    for i in range(queries // chunk):
        q, r = (
            folder / f"qrels.parquet/part-{i:03d}.parquet",
            folder / f"run.parquet/part-{i:03d}.parquet",
        )
        if not (q.exists() and r.exists()):
            _write_chunk(i, docs, chunk, q, r)
        qrels.append(str(q))
        run.append(str(r))
    return qrels, run


def _ids(prefix: str, numbers: np.ndarray) -> pa.Array:
    return pc.binary_join_element_wise(prefix, pa.array(numbers.astype(str)), "")


def _write_chunk(index: int, docs: int, chunk: int, qrels_path: Path, run_path: Path) -> None:
    rng = np.random.default_rng(index)
    first = index * chunk
    queries = np.arange(first, first + chunk)
    pool = 5_000_000
    steps = rng.integers(1, pool // docs, size=(chunk, docs)).cumsum(axis=1)
    doc_numbers = (rng.integers(0, pool, size=(chunk, 1)) + steps) % pool  # distinct per query
    scores = np.round(rng.random((chunk, docs)) * 10.0, 2)
    run = pa.table(
        {
            "query_id": _ids("q", np.repeat(queries, docs)),
            "doc_id": _ids("d", doc_numbers.ravel()),
            "score": scores.ravel(),
        }
    )
    judged = queries % 50 != 0
    retrieved = doc_numbers[judged][:, : JUDGED - 2]
    unretrieved = pool + np.arange(2 * judged.sum()).reshape(-1, 2)  # never retrieved
    judged_docs = np.concatenate([retrieved, unretrieved], axis=1)
    qrels = pa.table(
        {
            "query_id": _ids("q", np.repeat(queries[judged], JUDGED)),
            "doc_id": _ids("d", judged_docs.ravel()),
            "relevance": rng.choice(4, size=judged_docs.size, p=[0.5, 0.25, 0.15, 0.1]),
        }
    )
    for path, table in ((qrels_path, qrels), (run_path, run)):
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, path)


# ----------------------------------------------------------------------------- children

LOCAL = """
import json, sys, time
import pyarrow.parquet as pq
from serpeval.evaluation.evaluate import evaluate
from serpeval.io.tables import qrels_from_table, run_from_table
t0 = time.perf_counter()
spec = json.loads(sys.argv[1])
qrels = qrels_from_table(pq.read_table(spec["qrels"]))
run = run_from_table(pq.read_table(spec["run"]))
t1 = time.perf_counter()
res = evaluate(qrels, run, spec["measures"])
t2 = time.perf_counter()
print(json.dumps({"read": t1 - t0, "evaluate": t2 - t1, "seconds": t2 - t0,
                  "queries": len(res.runs[0].query_ids), "means": res.means("run")}))
"""

SPARK = """
import json, sys, time
t0 = time.perf_counter()
from pyspark.sql import SparkSession
spec = json.loads(sys.argv[1])
builder = SparkSession.builder.master(spec["master"])
for key, value in spec["conf"].items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
import serpeval.spark as sp
t1 = time.perf_counter()
if spec["mode"] == "evaluate":
    res = sp.evaluate(spark.read.parquet(*spec["qrels"]), spark.read.parquet(*spec["run"]),
                      spec["measures"], buckets=spec["buckets"])
    t2 = time.perf_counter()
    res.per_query.write.format("noop").mode("overwrite").save()
    t3 = time.perf_counter()
    out = {"start": t1 - t0, "seconds": t2 - t1, "per_query_write": t3 - t2,
           "queries": res.runs[0].queries, "means": res.means()}
else:  # the grouping stage alone, by hash bucket or by query id
    from pyspark.sql import functions as F
    from serpeval.spark.evaluate import _grouped
    from serpeval.spark.frames import qrels_frame, run_frame
    from serpeval.spark.groups import GroupPlan
    key = F.col("query_id") if spec["buckets"] == 0 else \\
        F.pmod(F.xxhash64("query_id"), F.lit(spec["buckets"]))
    raw = _grouped(run_frame(spark.read.parquet(*spec["run"]), label="run"),
                   qrels_frame(spark.read.parquet(*spec["qrels"]), label="qrels"),
                   GroupPlan(measures=tuple(spec["measures"])), key)
    raw.write.format("noop").mode("overwrite").save()
    out = {"start": t1 - t0, "seconds": time.perf_counter() - t1}
print(json.dumps(out))
spark.stop()
"""


def run_child(code: str, spec: dict) -> dict:
    """Run ``code`` in a fresh Python; return its JSON output plus peak RSS (MB) by role."""
    process = subprocess.Popen(
        [sys.executable, "-c", code, json.dumps(spec)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peaks = {"driver": 0.0, "jvm": 0.0, "workers": 0.0, "total": 0.0}
    done = threading.Event()

    def sample() -> None:
        root = psutil.Process(process.pid)
        while not done.is_set():
            try:
                tree = [root, *root.children(recursive=True)]
                sizes = {"driver": 0.0, "jvm": 0.0, "workers": 0.0}
                for p in tree:
                    rss = p.memory_info().rss / 2**20
                    role = (
                        "driver"
                        if p.pid == root.pid
                        else "jvm"
                        if "java" in p.name()
                        else "workers"
                    )
                    sizes[role] += rss
                for role, size in sizes.items():
                    peaks[role] = max(peaks[role], size)
                peaks["total"] = max(peaks["total"], sum(sizes.values()))
            except psutil.Error:
                pass
            done.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = process.communicate()
    done.set()
    sampler.join()
    if process.returncode:
        raise SystemExit(f"child failed ({process.returncode}):\n{err[-3000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_mb"] = {k: round(v) for k, v in peaks.items()}
    return result


def spark_spec(
    args: argparse.Namespace, qrels: list[str], run: list[str], mode: str, buckets: int | None
) -> dict:
    return {
        "mode": mode,
        "master": args.master,
        "qrels": qrels,
        "run": run,
        "measures": MEASURES,
        "buckets": buckets,
        "conf": {
            "spark.driver.memory": args.driver_memory,
            "spark.sql.shuffle.partitions": str(args.partitions),
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.pyspark.python": sys.executable,
            "spark.pyspark.driver.python": sys.executable,
            "spark.local.dir": str(DATA / "tmp"),
        },
    }


def local_fits(done: list[dict], queries: int, args: argparse.Namespace) -> bool:
    """Whether the local path's peak memory, extrapolated linearly from the sizes measured so
    far, leaves 4 GB of the memory available now to the others sharing the machine."""
    if args.no_local:
        return False
    measured = [r for r in done if r["local_peak"] == r["local_peak"]]  # not NaN
    if not measured:
        return True
    per_query = max(r["local_peak"] / r["queries"] for r in measured)
    predicted, available = per_query * queries, psutil.virtual_memory().available / 2**20
    if predicted + 4096 < available:
        return True
    print(
        f"local path skipped at {queries:,} queries: predicted peak {predicted:,.0f} MB, "
        f"{available:,.0f} MB available",
        flush=True,
    )
    return False


def median_of(results: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in results)


def linear_fit(xs: np.ndarray, ys: np.ndarray) -> tuple[float, float, float]:
    """Least-squares slope and intercept of ``ys`` on ``xs``, and R^2."""
    slope, intercept = np.polyfit(xs, ys, 1)
    r2 = 1 - float(((ys - slope * xs - intercept) ** 2).sum() / ((ys - ys.mean()) ** 2).sum())
    return float(slope), float(intercept), r2


# ----------------------------------------------------------------------------- modes


def scaling(args: argparse.Namespace) -> str:
    rows, lines = [], []
    for queries in args.queries:
        qrels, run = chunk_paths(queries, args.docs)
        spark = [
            run_child(SPARK, spark_spec(args, qrels, run, "evaluate", args.buckets))
            for _ in range(args.repeat)
        ]
        local = (
            [
                run_child(LOCAL, {"qrels": qrels, "run": run, "measures": MEASURES})
                for _ in range(args.repeat)
            ]
            if local_fits(rows, queries, args)
            else []
        )
        diff = (
            max(
                (abs(spark[0]["means"][m] - local[0]["means"][m]) for m in MEASURES),
                default=float("nan"),
            )
            if local
            else float("nan")
        )
        row = {
            "queries": queries,
            "rows": queries * args.docs,
            "spark_s": median_of(spark, "seconds"),
            "spark_start_s": median_of(spark, "start"),
            "per_query_write_s": median_of(spark, "per_query_write"),
            "spark_peak": spark[-1]["peak_mb"],
            "spark_queries": spark[0]["queries"],
            "local_s": median_of(local, "seconds") if local else float("nan"),
            "local_read_s": median_of(local, "read") if local else float("nan"),
            "local_peak": local[-1]["peak_mb"]["total"] if local else float("nan"),
            "max_abs_diff": diff,
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    x = np.array([r["queries"] for r in rows], dtype=float) / 1e6
    y = np.array([r["spark_s"] for r in rows])
    lines.append(
        f"serpeval.spark.evaluate on local Spark ({args.master}, driver memory "
        f"{args.driver_memory}, {args.partitions} shuffle partitions, buckets "
        f"{args.buckets or args.partitions}) vs the local path; {args.docs} docs and "
        f"{JUDGED} judgments per query, measures {', '.join(MEASURES)}; median of "
        f"{args.repeat} fresh process(es) per size; machine: {os.cpu_count()} cores, "
        "shared with other work."
    )
    lines += [
        "",
        "| queries | run rows | Spark s | local s (read) | Spark peak MB: driver / JVM / "
        "workers / total | local peak MB | per-query write s | max abs diff of means |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        p = r["spark_peak"]
        ran = r["local_s"] == r["local_s"]  # not NaN: the local path ran
        local = f"{r['local_s']:.1f} ({r['local_read_s']:.1f})" if ran else "skipped (memory)"
        lines.append(
            f"| {r['queries']:,} | {r['rows']:,} | {r['spark_s']:.1f} | {local} | "
            f"{p['driver']} / {p['jvm']} / {p['workers']} / {p['total']} | "
            f"{r['local_peak'] if ran else '-'} | {r['per_query_write_s']:.1f} | "
            f"{r['max_abs_diff']:.1e} |"
        )
    lines.append("")
    start = statistics.median(r["spark_start_s"] for r in rows)
    lines.append(f"Spark session start (not included above): median {start:.1f} s.")
    fits = [("Spark", x, y)]
    ran = [r for r in rows if r["local_s"] == r["local_s"]]
    fits.append(
        (
            "local",
            np.array([r["queries"] for r in ran], dtype=float) / 1e6,
            np.array([r["local_s"] for r in ran]),
        )
    )
    for label, xs, ys in fits:
        if len(xs) >= 2:
            slope, intercept, r2 = linear_fit(xs, ys)
            lines.append(
                f"Linear fit of the {label} time: {slope:.1f} s per million queries "
                f"({slope / args.docs:.2f} s per million run rows) + {intercept:.1f} s, "
                f"R^2 = {r2:.4f}."
            )
    return "\n".join(lines) + "\n"


def local_only(args: argparse.Namespace) -> str:
    """The local path alone on the same files (to complete a Spark table whose local column
    was skipped for memory at the time)."""
    rows = []
    for queries in args.queries:
        if not local_fits(rows, queries, args):
            break
        qrels, run = chunk_paths(queries, args.docs)
        local = [
            run_child(LOCAL, {"qrels": qrels, "run": run, "measures": MEASURES})
            for _ in range(args.repeat)
        ]
        rows.append(
            {
                "queries": queries,
                "local_s": median_of(local, "seconds"),
                "local_read_s": median_of(local, "read"),
                "local_peak": local[-1]["peak_mb"]["total"],
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    lines = [
        f"The local path (serpeval.evaluation.evaluate after reading the Parquet files with PyArrow) "
        f"on the same files: {args.docs} docs and {JUDGED} judgments per query; median of "
        f"{args.repeat} fresh process(es) per size; machine: {os.cpu_count()} cores, "
        "shared with other work.",
        "",
        "| queries | run rows | local s | of which read s | peak MB |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r['queries']:,} | {r['queries'] * args.docs:,} | {r['local_s']:.1f} | "
        f"{r['local_read_s']:.1f} | {r['local_peak']:,} |"
        for r in rows
    ]
    if len(rows) >= 2:
        xs = np.array([r["queries"] for r in rows], dtype=float) / 1e6
        ys = np.array([r["local_s"] for r in rows])
        slope, intercept, r2 = linear_fit(xs, ys)
        lines += [
            "",
            f"Linear fit: {slope:.1f} s per million queries + {intercept:.1f} s, R^2 = {r2:.4f}.",
        ]
    return "\n".join(lines) + "\n"


def groups(args: argparse.Namespace) -> str:
    queries = args.queries[0]
    qrels, run = chunk_paths(queries, args.docs, chunk=queries)
    lines = [
        f"The grouping stage alone (read Parquet, shuffle, kernels; no aggregation) on "
        f"{queries:,} queries x {args.docs} docs, local Spark {args.master}, "
        f"{args.partitions} shuffle partitions; median of {args.repeat}.",
        "",
        "| grouping | Python calls | seconds |",
        "| --- | ---: | ---: |",
    ]
    for buckets in args.group_sizes:
        results = [
            run_child(SPARK, spark_spec(args, qrels, run, "groups", buckets))
            for _ in range(args.repeat)
        ]
        name = "one group per query" if buckets == 0 else f"{buckets} hash buckets"
        calls = queries if buckets == 0 else buckets
        lines.append(f"| {name} | {calls:,} | {median_of(results, 'seconds'):.1f} |")
        print(lines[-1], flush=True)
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, nargs="+", default=[500_000, 1_000_000])
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="4g")
    parser.add_argument("--partitions", type=int, default=32, help="spark.sql.shuffle.partitions")
    parser.add_argument(
        "--buckets", type=int, default=None, help="query groups (default: partitions)"
    )
    parser.add_argument("--no-local", action="store_true", help="skip the local path")
    parser.add_argument("--local-only", action="store_true", help="only the local path")
    parser.add_argument(
        "--groups", action="store_true", help="compare buckets with per-query groups"
    )
    parser.add_argument(
        "--group-sizes",
        type=int,
        nargs="+",
        default=[0, 4, 16, 64, 256, 1024],
        help="bucket counts to compare (0: one group per query)",
    )
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    if args.groups:
        text, name = groups(args), "spark_groups.md"
    elif args.local_only:
        text, name = local_only(args), f"spark_{args.docs}docs_local.md"
    else:
        text, name = scaling(args), f"spark_{args.docs}docs.md"
    output = args.output or RESULTS / name
    output.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
