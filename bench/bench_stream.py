"""Streaming evaluation (``serpeval evaluate --stream``) against the in-memory path on a large run.

``python bench/bench_stream.py`` writes (once) a run of ``--lines`` lines (default 20M;
``--lines 200000000`` for the 200M-line target, ~7 GB) of ``--docs`` results per query
(default 10: the production shape), in two layouts: grouped by query, and not grouped
(each block of 100,000 queries written rank by rank, as a log written by time would be:
a query's lines are 100,000 lines apart). One query in ``--judged-every`` (default 10)
is judged, 6 judgments each (5 of them retrieved), grades 0-3. Data in ``bench/.data/``
(git-ignored).

Then it runs ``serpeval evaluate QRELS RUN -f json`` in fresh processes, in memory and with
``--stream``, on both layouts, and records wall and CPU seconds and the peak RSS
(``ru_maxrss`` of the finished child from ``wait4``: the true high-water mark), checks
that every variant prints the same means (exact decimal strings), and writes
``bench/results/stream.md`` (``--out``). ``--skip-memory`` leaves out the in-memory path
(for runs larger than the machine's memory).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data" / "stream"
POOL = 2_000_000
BLOCK = 100_000  # queries generated (and, ungrouped, interleaved) at a time


def _decimal(numbers: np.ndarray) -> pa.Array:
    return pc.cast(pa.array(numbers), pa.string())


def _write(table: pa.Table, handle) -> None:
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pacsv.write_csv(table, handle, write_options=options)


def generate(lines: int, docs: int, judged_every: int, layouts: tuple[str, ...] = ("grouped", "not grouped"),
             seed: int = 0) -> tuple[Path, Path, Path]:
    """Write qrels, a grouped and an ungrouped run (once; only the ``layouts`` asked for);
    return their paths."""
    stem = f"{lines}x{docs}j{judged_every}"
    qrels_path, grouped, ungrouped = (DATA / f"qrels_{stem}.txt", DATA / f"run_{stem}.txt",
                                      DATA / f"run_{stem}_ungrouped.txt")
    wanted = [p for p, layout in ((grouped, "grouped"), (ungrouped, "not grouped")) if layout in layouts]
    if qrels_path.exists() and all(p.exists() for p in wanted):
        return qrels_path, grouped, ungrouped
    DATA.mkdir(parents=True, exist_ok=True)
    null = os.devnull
    rng = np.random.default_rng(seed)
    queries = lines // docs
    with open(qrels_path, "wb") as fq, open(grouped if grouped in wanted else null, "wb") as fg, \
            open(ungrouped if ungrouped in wanted else null, "wb") as fu:
        for start in range(0, queries, BLOCK):
            n = min(BLOCK, queries - start)
            qnum = np.arange(start, start + n) + 1000
            steps = rng.integers(1, POOL // docs, size=(n, docs)).cumsum(axis=1)
            doc_numbers = (rng.integers(0, POOL, size=(n, 1)) + steps) % POOL
            scores = np.sort(rng.random((n, docs)) * 30.0, axis=1)[:, ::-1]
            run = pa.table({
                "q": _decimal(np.repeat(qnum, docs)),
                "it": pa.array(np.full(n * docs, "Q0")),
                "d": pc.binary_join_element_wise("D", _decimal(doc_numbers.ravel()), ""),
                "rank": np.tile(np.arange(1, docs + 1), n),
                "score": pc.round(pa.array(scores.ravel()), 6),
                "tag": pa.array(np.full(n * docs, "bench")),
            })
            if grouped in wanted:
                _write(run, fg)
            by_rank = np.arange(n * docs).reshape(n, docs).T.ravel()  # rank 1 of every query, then rank 2, ...
            if ungrouped in wanted:
                _write(run.take(pa.array(by_rank)), fu)
            judged = np.flatnonzero(qnum % judged_every == 0)
            if judged.size:
                retrieved = doc_numbers[judged, : min(5, docs)]
                extra = rng.integers(0, POOL, size=(judged.size, 1)) + POOL  # never retrieved
                picked = np.concatenate([retrieved, extra], axis=1)
                qrels = pa.table({
                    "q": _decimal(np.repeat(qnum[judged], picked.shape[1])),
                    "it": pa.array(np.full(picked.size, "0")),
                    "d": pc.binary_join_element_wise("D", _decimal(picked.ravel()), ""),
                    "rel": rng.choice(4, size=picked.size, p=[0.5, 0.25, 0.15, 0.1]),
                })
                _write(qrels, fq)
    return qrels_path, grouped, ungrouped


def spawn(argv: list[str]) -> tuple[float, float, float, str]:
    """Run ``argv``; wall seconds, CPU seconds, peak RSS (MB) of the child, its stdout."""
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=null,
                                env={**os.environ, "PYTHONPATH": str(HERE.parent / "src")})
        out = proc.stdout.read()  # type: ignore[union-attr]
        _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.decode()


def _means(output: str) -> str:
    """Means and coverage of ``-f json`` output, the run's name (the file's) left out."""
    payload = json.loads(output)
    rows = [{k: v for k, v in row.items() if k != "run"} for row in payload["results"] + payload["coverage"]]
    return json.dumps(rows, sort_keys=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=20_000_000)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--judged-every", type=int, default=10)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--layout", choices=("both", "grouped", "not grouped"), default="both",
                        help="which file layouts to write and evaluate (200M lines: one at a time, 7.3 GB each)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "stream.md")
    args = parser.parse_args()
    t0 = time.perf_counter()
    layouts = ("grouped", "not grouped") if args.layout == "both" else (args.layout,)
    qrels, grouped, ungrouped = generate(args.lines, args.docs, args.judged_every, layouts)
    print(f"data ready in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    base = [sys.executable, "-m", "serpeval", "evaluate", str(qrels)]
    rows = []
    outputs = {}
    for layout, run in (("grouped", grouped), ("not grouped", ungrouped)):
        if layout not in layouts:
            continue
        for mode in (["in memory"] if not args.skip_memory else []) + ["--stream"]:
            argv = [*base, str(run), "-f", "json"] + (["--stream"] if mode == "--stream" else [])
            wall, cpu, peak, out = spawn(argv)
            outputs[(layout, mode)] = _means(out)
            rows.append((layout, mode, wall, cpu, peak))
            print(f"{layout:12} {mode:10} {wall:7.1f} s wall {cpu:7.1f} s CPU {peak:7.0f} MB", file=sys.stderr)
    same = len(set(outputs.values())) == 1
    size = (grouped if grouped.exists() else ungrouped).stat().st_size
    lines = [
        "# Streaming evaluation: `serpeval evaluate --stream` vs in memory",
        "",
        f"Run: {args.lines:,} lines ({size / 1e9:.2f} GB of text), {args.lines // args.docs:,} queries x "
        f"{args.docs} results; one query in {args.judged_every} judged, 6 judgments each "
        f"({qrels.stat().st_size / 1e6:.0f} MB of qrels). Default measures (nDCG@10, AP, P@10, R@100, RR).",
        "'not grouped': each block of 100,000 queries written rank by rank (a query's lines 100,000 "
        "lines apart), which `--stream` detects and partitions to temporary files first.",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs (shared with other jobs), Python "
        f"{platform.python_version()}; one fresh process each; peak = `ru_maxrss` from `wait4`.",
        f"Command: `python bench/bench_stream.py --lines {args.lines} --docs {args.docs}"
        f"{' --skip-memory' if args.skip_memory else ''}"
        f"{'' if args.layout == 'both' else ' --layout ' + repr(args.layout)}`.",
        "",
        "| file | path | wall s | CPU s | peak RSS MB |",
        "| --- | --- | ---: | ---: | ---: |",
        *[f"| {layout} | {mode} | {wall:.1f} | {cpu:.1f} | {peak:.0f} |" for layout, mode, wall, cpu, peak in rows],
        "",
        f"Identical output (means and coverage of `-f json`) across all variants: {'yes' if same else 'NO'}.",
        "",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    if not same:
        raise SystemExit("outputs differ")


if __name__ == "__main__":
    main()
