"""The judgments workflow on Robust04 (the numbers in docs/judgments.md).

pool -> judge (the assessor simulated by the real Robust04 qrels) -> evaluate, for every
pooling method at the same budget; then a new run left out of the pool, its judged rate,
the warning and condensed lists; then ``diff`` of the two runs. Needs the shared data
(``SERPEVAL_DATA`` or ``../shared/data``); takes a few seconds.

    python bench/judgments_workflow.py
"""

from __future__ import annotations

import os
from pathlib import Path

from serpeval.evaluation.evaluate import evaluate
from serpeval.io import read_qrels, read_run
from serpeval.judgments.diff import diff_runs
from serpeval.judgments.judged import judged, judged_gaps
from serpeval.judgments.pool import pool

DATA = Path(os.environ.get("SERPEVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
ROBUST = DATA / "trec" / "robust04"
MEASURES = ["P@10", "nDCG@10", "AP"]


def means(qrels, runs, **options) -> dict[str, dict[str, float]]:
    results = evaluate(qrels, runs, MEASURES, **options)
    return {name: results.means(name) for name in results.run_names}


def main() -> None:
    full = read_qrels(ROBUST / "qrels.txt.gz")
    bm25 = read_run(ROBUST / "runs" / "bm25.run.gz")
    rm3 = read_run(ROBUST / "runs" / "bm25-rm3.run.gz")
    runs = [bm25, rm3]
    reference = means(full, runs)
    print("## full qrels")
    print(f"{len(full):,} judgments; " + "; ".join(
        f"{name}: " + ", ".join(f"{m} {v:.4f}" for m, v in values.items()) for name, values in reference.items()))

    print("\n## pools of bm25 + bm25-rm3, budget 5,000 (20 per query on average), depth 100")
    print("| method | pooled | relevant found | rm3 - bm25: P@10 | nDCG@10 | AP |")
    print("|---|---:|---:|---:|---:|---:|")
    full_delta = {m: reference["bm25-rm3"][m] - reference["bm25"][m] for m in MEASURES}
    print("| (full qrels) | | | " + " | ".join(f"{full_delta[m]:+.4f}" for m in MEASURES) + " |")
    for method in ("depth", "rrf", "rbp", "mtf"):
        options = {"depth": 100, "budget": 5000}
        p = pool(runs, method=method, oracle=full, **options)  # type: ignore[arg-type]
        found = p.summary()["relevant found (oracle)"]
        pooled = means(p.to_qrels(), runs)
        delta = {m: pooled["bm25-rm3"][m] - pooled["bm25"][m] for m in MEASURES}
        print(f"| {method} | {len(p):,} | {found:,} | " + " | ".join(f"{delta[m]:+.4f}" for m in MEASURES) + " |")

    print("\n## a new run left out of the pool: depth-10 pool of bm25 only")
    only_bm25 = pool([bm25], method="depth", depth=10, oracle=full).to_qrels()
    rates = judged(only_bm25, runs, [10])
    for row in rates.to_dicts():
        print(f"{row['run']}: Graded@10 {row['Graded@10']:.4f}")
    # serpeval judged's note (over the queries with judgments) and what serpeval pool --qrels asks
    # for (every query the runs answer, so also the queries the qrels never judged)
    print(f"a depth-10 pool of these runs needs {rates.pool_needed[0]:,} more judgments (serpeval judged)")
    follow_up = pool(runs, method="depth", depth=10, qrels=only_bm25)
    judged_queries = set(only_bm25.query_ids.to_pylist())
    outside = [q for q in follow_up.to_qrels().query_ids.to_pylist() if q not in judged_queries]
    unjudged = sorted(set(outside))
    print(f"serpeval pool --depth 10 --qrels asks for {len(follow_up):,}: {len(follow_up) - len(outside):,} in "
          f"queries with judgments, {len(outside):,} in {len(unjudged)} without ({', '.join(unjudged)})")
    results = evaluate(only_bm25, runs, MEASURES)
    for gap in judged_gaps(only_bm25, runs, results):
        print(gap.message())
    print("| qrels | bm25 P@10 | bm25-rm3 P@10 | rm3 - bm25 P@10 | nDCG@10 | AP |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, values in (("full", reference), ("bm25 pool", means(only_bm25, runs)),
                          ("bm25 pool, judged only", means(only_bm25, runs, judged_only=True))):
        d = {m: values["bm25-rm3"][m] - values["bm25"][m] for m in MEASURES}
        print(f"| {label} | {values['bm25']['P@10']:.4f} | {values['bm25-rm3']['P@10']:.4f} | "
              + " | ".join(f"{d[m]:+.4f}" for m in MEASURES) + " |")

    print("\n## diff bm25 vs bm25-rm3 (k = 10, p = 0.9)")
    summary = diff_runs(bm25, rm3, qrels=only_bm25).summary()
    print(", ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in summary.items()))


if __name__ == "__main__":
    main()
