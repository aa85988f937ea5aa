"""The README's breakdown of a real TREC comparison by number of relevant documents.

Robust04, BM25 against BM25+RM3 (the runs in ``../shared/data/trec/robust04``), nDCG@10 and
AP, broken down into quartiles of the number of relevant documents per topic
(``groups="builtin:relevant"``): per-group Δ, its t interval, the paired t-test on the
group's topics, Holm across the 4 groups, and the interaction test (does the effect
differ between groups?). Also the error rate the correction buys: the same 4 groups in
an A/A setting (each topic's two scores swapped at random) over ``--replicates`` draws.

    python bench/segments_trec.py [--replicates 400]

The per-group numbers are checked by ``tests/comparison/test_segments.py::test_readme_robust04_breakdown``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("SERPEVAL_DATA", HERE.parent.parent / "shared" / "data")) / "trec" / "robust04"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=400)
    args = parser.parse_args()

    import serpeval
    from serpeval.comparison.segments import Groups, group_tests, resolve_groups

    c = serpeval.compare(DATA / "qrels.txt.gz", [DATA / "runs" / "bm25.run.gz", DATA / "runs" / "bm25-rm3.run.gz"],
                         ["nDCG@10", "AP"], groups="builtin:relevant", rng=0)
    s = c.segments
    print(f"{'measure':8} {'group':16} {'n':>3} {'delta':>8} {'95% CI':>20} {'p':>8} {'p Holm':>8}")
    for r in s.rows:
        print(f"{r.measure:8} {r.group:16} {r.queries:3d} {r.delta:+8.4f} [{r.ci_low:+.4f}, {r.ci_high:+.4f}] "
              f"{r.p_value:8.4f} {r.p_value_corrected:8.4f}")
    for i in s.interactions:
        print(f"interaction {i.measure}: F = {i.statistic:.3f}, permutation p = {i.p_value:.4f}, "
              f"ANOVA p = {i.p_anova:.2e}")

    # A/A on the same topics and groups: each topic's pair of nDCG@10 scores is swapped at
    # random, so the per-topic delta gets a random sign and "no difference" is true.
    matrix, _ = Groups.membership(resolve_groups("builtin:relevant", query_ids=c.query_ids,
                                                 qrels=DATA / "qrels.txt.gz"), c.query_ids)
    rng = np.random.default_rng(0)
    a, b = c.values[0, 0], c.values[1, 0]
    holm = none = 0
    for _ in range(args.replicates):
        swap = rng.random(len(a)) < 0.5
        p, corrected, *_ = group_tests(np.where(swap, b, a), np.where(swap, a, b), matrix)
        none += bool(np.nanmin(p) <= 0.05)
        holm += bool(np.nanmin(corrected) <= 0.05)
    print(f"A/A over {args.replicates} random swaps, 4 groups: any group significant "
          f"{none / args.replicates:.3f} uncorrected, {holm / args.replicates:.3f} with Holm")


if __name__ == "__main__":
    main()
