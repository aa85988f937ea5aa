"""RBPResid adds its unjudged docs' weights in rank order (trec_eval's m_rbp_resid.c loop),
whatever the number of queries evaluated together.

The kernel summed a (ranks x queries) matrix down its columns; with one query NumPy sums the
single contiguous column pairwise instead of row after row, so the same query got a value
differing in its last bits depending on whether it was evaluated alone (a streamed piece,
a one-query run) or with others (dl19-passage query 1133167: 0.005944121278554397 alone,
0.005944121278554394 among the 43).
"""

from __future__ import annotations

import warnings

from serpeval import evaluate
from serpeval.core.errors import MissingQueriesWarning


def _sequential_resid(grades: list[int | None], p: float) -> float:
    """trec_eval's loop: p^n + (1 - p) * (sum in rank order of p^(i-1) over the unjudged
    docs), p^(i-1) by repeated multiplication; 0 when no retrieved doc is unjudged."""
    weight, total, unjudged = 1.0, 0.0, False
    for g in grades:
        if g is None or g < 0:
            total += weight
            unjudged = True
        weight *= p
    return weight + (1 - p) * total if unjudged else 0.0


def _query(n: int, seed: int) -> tuple[dict[str, int], dict[str, float], list[int | None]]:
    """n ranked docs (scores n..1), about two thirds unjudged, the others graded 0..2."""
    qrels, run, grades = {}, {}, []
    for i in range(n):
        doc = f"d{i:04d}"
        run[doc] = float(n - i)
        if (i * 7 + seed) % 3 == 0:
            qrels[doc] = (i + seed) % 3
            grades.append(qrels[doc])
        else:
            grades.append(None)
    return qrels, run, grades


def test_one_query_alone_or_among_others_is_the_rank_order_sum() -> None:
    queries = {f"q{s}": _query(300 + 17 * s, s) for s in range(4)}
    qrels = {q: judged for q, (judged, _, _) in queries.items()}
    run = {q: ranked for q, (_, ranked, _) in queries.items()}
    together = evaluate(qrels, run, ["RBPResid"]).per_query("run", "RBPResid")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        for q, (_, _, grades) in queries.items():
            want = _sequential_resid(grades, 0.9)
            alone = evaluate({q: qrels[q]}, {q: run[q]}, ["RBPResid"]).per_query("run", "RBPResid")[q]
            assert alone == want, q  # bit for bit: before the fix, the pairwise sum differed
            assert together[q] == want, q
