"""Diversity measures: serpeval against pyndeval 0.0.8 (NIST ndeval 4.5's C code), side by side.

Usage::

    python bench/diversity_speed.py [--queries 2000] [--docs 500] [--repeats 3]
        [--results bench/results/diversity_speed.md]

A deterministic generated collection (seed 17): Q queries, each with 3-9 subtopics and
~120 judged documents relevant to 1-5 of them (grades 0-2), ~350 subtopic judgments a query
(700k for 2,000 queries); a run of D documents a query with distinct scores (half of the judged
documents among them). The nine measures ndeval prints at one cutoff:
alpha_nDCG@20, alpha_DCG@20, ERR_IA@20, nERR_IA@20, P_IA@20, StRecall@20, NRBP, nNRBP, AP_IA.

Both start from in-memory data in their own input shape (pyndeval: a list of ``SubtopicQrel``
and ``(query, doc, score)`` tuples, grouped by query; serpeval: Arrow tables) and the timing includes building
their indexes (pyndeval's ``RelevanceEvaluator``; serpeval's ``SubtopicQrels`` and ranking),
i.e. one evaluation from scratch. The script checks that the per-query values are equal
(scores are untied, so the two order runs alike), then reports the median wall time of
``--repeats`` runs of each, alternating, and the ratio pyndeval / serpeval (> 1: serpeval
faster). The machine is shared and noisy: quote medians, rerun when in doubt.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

OURS = ["alpha_nDCG@20", "alpha_DCG@20", "ERR_IA@20", "nERR_IA@20", "P_IA@20", "StRecall@20", "NRBP", "nNRBP",
        "AP_IA"]
THEIRS = ["alpha-nDCG@20", "alpha-DCG@20", "ERR-IA@20", "nERR-IA@20", "P-IA@20", "strec@20", "NRBP", "nNRBP",
          "MAP-IA"]


def generate(n_queries: int, n_docs: int, seed: int = 17) -> tuple[list[tuple[str, str, str, int]],
                                                                   list[tuple[str, str, float]]]:
    """Subtopic qrels rows ``(qid, subtopic, doc, grade)`` and run rows ``(qid, doc, score)``."""
    rng = random.Random(seed)
    qrels: list[tuple[str, str, str, int]] = []
    run: list[tuple[str, str, float]] = []
    for q in range(n_queries):
        qid = f"q{q}"
        subtopics = [str(s + 1) for s in range(rng.randint(3, 9))]
        judged = [f"clueweb09-en{q:04d}-{d:05d}" for d in range(rng.randint(100, 140))]
        for d in judged:
            for s in rng.sample(subtopics, min(len(subtopics), rng.randint(1, 5))):
                qrels.append((qid, s, d, rng.choice([0, 0, 1, 1, 2])))
        retrieved = rng.sample(judged, len(judged) // 2)
        retrieved += [f"u{q}-{d}" for d in range(n_docs - len(retrieved))]
        scores = rng.sample(range(10 * n_docs), len(retrieved))  # distinct: no ties
        run.extend((qid, d, s / 1000.0) for d, s in zip(retrieved, scores, strict=True))
    return qrels, run


def serpeval_values(qrels_table, run_table) -> dict[tuple[str, str], float]:
    import serpeval
    from serpeval.io import as_run, as_subtopic_qrels

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = serpeval.evaluate(as_subtopic_qrels(qrels_table), as_run(run_table), OURS)
    (one,) = result.runs
    out = {}
    for i, name in enumerate(OURS):
        for qid, value in zip(one.query_ids.tolist(), one.column(i).tolist(), strict=True):
            out[(name, qid)] = value
    return out


def pyndeval_values(qrels_rows, run_rows) -> dict[tuple[str, str], float]:
    import pyndeval

    evaluator = pyndeval.RelevanceEvaluator(qrels_rows, THEIRS)
    out = {}
    for record in evaluator.evaluate_iter(run_rows):
        for ours, theirs in zip(OURS, THEIRS, strict=True):
            out[(ours, record["query_id"])] = record[theirs]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--docs", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--results", help="also write the table to this markdown file")
    args = parser.parse_args()

    import pyarrow as pa
    import pyndeval

    qrels, run = generate(args.queries, args.docs)
    qrels_rows = [pyndeval.SubtopicQrel(q, s, d, g) for q, s, d, g in qrels]
    qrels_table = pa.table({"query_id": [r[0] for r in qrels], "subtopic_id": [r[1] for r in qrels],
                            "doc_id": [r[2] for r in qrels], "relevance": [r[3] for r in qrels]})
    run_table = pa.table({"query_id": [r[0] for r in run], "doc_id": [r[1] for r in run],
                          "score": [r[2] for r in run]})

    ours = serpeval_values(qrels_table, run_table)  # warm-up, and the equality check
    theirs = pyndeval_values(qrels_rows, run)
    if ours.keys() != theirs.keys() or any(ours[k] != v for k, v in theirs.items() if v == v):
        raise SystemExit("serpeval and pyndeval disagree")
    times: dict[str, list[float]] = {"serpeval": [], "pyndeval": []}
    for _ in range(args.repeats):
        for name, call in (("serpeval", lambda: serpeval_values(qrels_table, run_table)),
                           ("pyndeval", lambda: pyndeval_values(qrels_rows, run))):
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    ours_s, theirs_s = statistics.median(times["serpeval"]), statistics.median(times["pyndeval"])
    lines = [
        f"# Diversity measures: serpeval vs pyndeval 0.0.8 ({args.queries:,} queries x {args.docs} docs, "
        f"{len(qrels):,} subtopic judgments, 9 measures)",
        "",
        f"{len(theirs):,} per-query values, all equal (bit for bit; nNRBP's nan on queries without relevant "
        "judgments excepted). Median of "
        f"{args.repeats} runs, seconds (each run from in-memory data, indexes built).",
        "",
        "| tool | median s | runs |",
        "| --- | --- | --- |",
        f"| serpeval | {ours_s:.2f} | {', '.join(f'{t:.2f}' for t in times['serpeval'])} |",
        f"| pyndeval | {theirs_s:.2f} | {', '.join(f'{t:.2f}' for t in times['pyndeval'])} |",
        "",
        f"pyndeval / serpeval = {theirs_s / ours_s:.2f} (> 1: serpeval faster)",
    ]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.results:
        Path(args.results).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
