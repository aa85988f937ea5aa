"""Deterministic synthetic qrels and runs at benchmark scale (TREC text files).

``python bench/data.py --queries 10000 --docs 1000`` writes ``bench/.data/run_10000x1000.txt``
(10M lines, ~360 MB) and ``bench/.data/qrels_10000x1000.txt`` once; later calls reuse them.
Doc ids look like MS MARCO's (``D`` + up to 7 digits), scores have 6 decimals; each query
has ``min(20, docs // 2)`` judgments among its retrieved docs plus ``min(10, max(1, docs // 10))``
random ones, grades 0-3: 30 per query (20 retrieved) for 10,000 x 1,000 ("M", the research
shape), 6 per query (5 retrieved) for 1,000,000 x 10 ("Q1M", the production shape: 10M run
lines, 6M qrels lines, ~400 MB + 120 MB).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"
POOL = 2_000_000


def paths(queries: int, docs: int) -> tuple[Path, Path]:
    return DATA / f"qrels_{queries}x{docs}.txt", DATA / f"run_{queries}x{docs}.txt"


def _write(table: pa.Table, path: Path) -> None:
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pacsv.write_csv(table, path, write_options=options)


def _decimal(numbers: np.ndarray) -> pa.Array:
    """Integers as decimal strings (Arrow's cast: no 84-byte NumPy unicode per value)."""
    return pc.cast(pa.array(numbers), pa.string())


def generate(queries: int, docs: int, seed: int = 0) -> tuple[Path, Path]:
    """Write the qrels and run for ``queries`` x ``docs`` (if not there yet); return their paths."""
    qrels_path, run_path = paths(queries, docs)
    if qrels_path.exists() and run_path.exists():
        return qrels_path, run_path
    DATA.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    # Distinct docs per query: a random start plus strictly positive steps spanning < POOL.
    steps = rng.integers(1, POOL // docs, size=(queries, docs)).cumsum(axis=1)
    doc_numbers = (rng.integers(0, POOL, size=(queries, 1)) + steps) % POOL
    ranked_docs = rng.permuted(doc_numbers, axis=1)
    scores = np.sort(rng.random((queries, docs)) * 30.0, axis=1)[:, ::-1]
    n = queries * docs
    run = pa.table({
        "q": _decimal(np.repeat(np.arange(1000, 1000 + queries), docs)),
        "it": pa.array(np.full(n, "Q0")),
        "d": pc.binary_join_element_wise("D", _decimal(ranked_docs.ravel()), ""),
        "rank": np.tile(np.arange(1, docs + 1), queries),
        "score": pc.round(pa.array(scores.ravel()), 6),
        "tag": pa.array(np.full(n, "bench")),
    })
    _write(run, run_path)
    from_run, random_ones = min(20, docs // 2), min(10, max(1, docs // 10))
    judged_from_run = np.take_along_axis(ranked_docs, rng.permuted(
        np.tile(np.arange(docs), (queries, 1)), axis=1)[:, :from_run], axis=1)
    extra = rng.integers(0, POOL, size=(queries, random_ones))
    judged = np.concatenate([judged_from_run, extra], axis=1)
    judged = np.sort(judged, axis=1)
    distinct = np.concatenate([np.ones((queries, 1), bool), judged[:, 1:] != judged[:, :-1]], axis=1).ravel()
    qrels = pa.table({
        "q": _decimal(np.repeat(np.arange(1000, 1000 + queries), judged.shape[1])[distinct]),
        "it": pa.array(np.full(distinct.sum(), "0")),
        "d": pc.binary_join_element_wise("D", _decimal(judged.ravel()[distinct]), ""),
        "rel": rng.choice(4, size=distinct.sum(), p=[0.5, 0.25, 0.15, 0.1]),
    })
    _write(qrels, qrels_path)
    return qrels_path, run_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    args = parser.parse_args()
    for path in generate(args.queries, args.docs):
        print(path)


if __name__ == "__main__":
    main()
