"""Hand-worked examples for every core measure, with the arithmetic in the comments.

One query, judgments: a=3, b=0, c=1, d=2, e=-1 (pooled but unjudged), g=1 (never retrieved).
Ranking (by score): a, b, x (not judged), c, e, d  ->  grades 3, 0, -, 1, unj, 2.
Relevant (grade >= 1): a, c, d, g  ->  R = 4.  Judged non-relevant: b  ->  N = 1.
"""

from __future__ import annotations

import math

import pytest

import serpeval
from serpeval.core.errors import InvalidParameterError, MissingQueriesWarning

QRELS = {"q": {"a": 3, "b": 0, "c": 1, "d": 2, "e": -1, "g": 1}}
RUN = {"q": {"a": 6.0, "b": 5.0, "x": 4.0, "c": 3.0, "e": 2.0, "d": 1.0}}
L2 = math.log2


def value(measure: str) -> float:
    return serpeval.evaluate(QRELS, RUN, [measure]).runs[0].values[0, 0]


@pytest.mark.parametrize(
    ("measure", "expected"),
    [
        ("P@1", 1 / 1),                       # a
        ("P@5", 2 / 5),                       # a, c among a b x c e
        ("P@10", 3 / 10),                     # 3 relevant retrieved, padded to 10
        ("P(rel=2)@5", 1 / 5),                # only a has grade >= 2 in the top 5
        ("R@5", 2 / 4),                       # 2 of R = 4
        ("R@10", 3 / 4),                      # g is never retrieved
        ("AP", (1 / 1 + 2 / 4 + 3 / 6) / 4),  # precision at ranks 1, 4, 6; divided by R = 4
        ("AP@4", (1 / 1 + 2 / 4) / 4),        # still divided by R
        ("RR", 1.0),
        ("RR(rel=2)", 1.0),
        ("Rprec", 2 / 4),                     # top R = 4: a b x c -> 2 relevant
        ("SetP", 3 / 6), ("SetR", 3 / 4),
        ("SetF", 2 * (3 / 6) * (3 / 4) / ((3 / 6) + (3 / 4))),
        ("SetF(beta=2)", 5 * (3 / 6) * (3 / 4) / (4 * (3 / 6) + (3 / 4))),
        ("Success@1", 1.0), ("Success(rel=3)@1", 1.0), ("Success(rel=3)@0", None),
        ("NumRet", 6), ("NumRel", 4), ("NumRelRet", 3),
        # Judged@k (ir_measures): docs in the qrels in the top k, divided by min(k, 6 retrieved):
        # x is not in the qrels; e (grade -1) is listed, so judged; a short ranking is not padded
        ("Judged@3", 2 / 3), ("Judged@5", 4 / 5), ("Judged@10", 5 / 6), ("Judged", 5 / 6),
        # bpref: a (no nonrel above) -> 1; c (b above) -> 1 - min(1,4)/min(1,4) = 0; d -> 0
        ("Bpref", (1 + 0 + 0) / 4),
        # DCG linear: 3/log2(2) + 1/log2(5) + 2/log2(7)
        ("DCG", 3 / L2(2) + 1 / L2(5) + 2 / L2(7)),
        ("DCG@3", 3.0),
        ("DCG(gain=exp)@10", 7 / L2(2) + 1 / L2(5) + 3 / L2(7)),
        # ideal (linear): 3, 2, 1, 1 (g counts although never retrieved), 0 ...
        ("nDCG", (3 + 1 / L2(5) + 2 / L2(7)) / (3 + 2 / L2(3) + 1 / L2(4) + 1 / L2(5))),
        ("nDCG@3", 3 / (3 + 2 / L2(3) + 1 / L2(4))),
        ("nDCG(gain=exp)@5", (7 + 1 / L2(5)) / (7 + 3 / L2(3) + 1 / L2(4) + 1 / L2(5))),
        # ir_measures' and ranx's measures (issue 17)
        ("NumQ", 1),
        ("Hits@3", 1), ("Hits", 3), ("Hits(rel=2)@10", 2),               # a | a c d | a d
        ("F@5", 2 * (2 / 5) * (2 / 4) / (2 / 5 + 2 / 4)),               # top 5 holds a, c: P 2/5, R 2/4
        ("F(beta=2)@5", 5 * (2 / 5) * (2 / 4) / (4 * (2 / 5) + 2 / 4)),
        # SDCG@k: scaled gains over the DCG of k docs of gain 1; max_rel=1: a, c, d have gain 1
        ("SDCG@4", (1 + 1 / L2(5)) / (1 + 1 / L2(3) + 1 / L2(4) + 1 / L2(5))),
        ("SDCG(max_rel=3)@4", (1 + (1 / 3) / L2(5)) / (1 + 1 / L2(3) + 1 / L2(4) + 1 / L2(5))),
        # min_rel=1, max_rel=3: a -> 1, c -> 0, d -> 1/2 (rank 6)
        ("SDCG(min_rel=1,max_rel=3)@10", (1 + 0.5 / L2(7)) / sum(1 / L2(i + 1) for i in range(1, 11))),
        # ir_measures' RBP(rel=k): binary gains; scale=grade: the grades themselves (ranx)
        ("RBP(p=0.8,rel=1)", 0.2 * (1 + 0.8**3 + 0.8**5)),              # a, c, d at ranks 1, 4, 6
        ("RBP(p=0.8,rel=2)", 0.2 * (1 + 0.8**5)),                       # a, d
        ("RBP(p=0.5,scale=grade)", 0.5 * (3 + 1 * 0.5**3 + 2 * 0.5**5)),
        ("rbp.5-l2", 0.5 * (3 + 2 * 0.5**5)),
        # judged_only: x and e removed, ranks closed up: a b c d -> relevant at 1, 3, 4
        ("AP(judged_only=True)", (1 / 1 + 2 / 3 + 3 / 4) / 4),
        ("P(judged_only=True)@3", 2 / 3),
        ("nDCG(judged_only=True)@10", (3 + 1 / L2(4) + 2 / L2(5)) / (3 + 2 / L2(3) + 1 / L2(4) + 1 / L2(5))),
        ("IPrec@0.5", 2 / 4),  # (long)(0.5 * 4 + 0.9) = 2 of R = 4: best precision from c (rank 4) on
    ],
)
def test_hand_worked(measure: str, expected: float | None) -> None:
    if expected is None:
        with pytest.raises(InvalidParameterError, match="cutoff"):
            value(measure)
        return
    assert value(measure) == pytest.approx(expected, rel=1e-12)


def test_err_cascade_arithmetic() -> None:
    # R(g) = (2^g - 1) / 16: a -> 7/16, b -> 0, x -> 0, c -> 1/16, e -> 0, d -> 3/16
    r_a, r_c, r_d = 7 / 16, 1 / 16, 3 / 16
    expected = r_a / 1 + (1 - r_a) * r_c / 4 + (1 - r_a) * (1 - r_c) * r_d / 6
    assert value("ERR") == pytest.approx(expected, rel=1e-12)
    assert value("ERR@3") == pytest.approx(r_a, rel=1e-12)
    # max_grade=3: R(g) = (2^g - 1) / 8
    r_a, r_c, r_d = 7 / 8, 1 / 8, 3 / 8
    expected = r_a + (1 - r_a) * r_c / 4 + (1 - r_a) * (1 - r_c) * r_d / 6
    assert value("ERR(max_grade=3)") == pytest.approx(expected, rel=1e-12)


def test_infap_arithmetic() -> None:
    # j = 0 (a): +1.
    # j = 3 (c): above are a (rel), b (nonrel), x (not in pool, ignored): rel=1, nonrel=1, unj=0
    #   1/4 + (3/4) * ((1 + 1 + 0)/3) * ((1 + e) / (1 + 1 + 2e))
    # j = 5 (d): rel=2 (a, c), nonrel=1 (b), unjudged=1 (e):
    #   1/6 + (5/6) * ((2 + 1 + 1)/5) * ((2 + e) / (2 + 1 + 2e))
    e = 1e-5
    c = 1 / 4 + (3 / 4) * (2 / 3) * ((1 + e) / (2 + 2 * e))
    d = 1 / 6 + (5 / 6) * (4 / 5) * ((2 + e) / (3 + 2 * e))
    assert value("infAP") == pytest.approx((1 + c + d) / 4, rel=1e-12)


def test_query_without_relevant_docs_counts_as_zero_in_the_mean() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 0}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 1.0}}
    res = serpeval.evaluate(qrels, run, ["AP", "nDCG@10", "P@1"])
    assert res.means("run") == {"AP": 0.5, "nDCG@10": 0.5, "P@1": 0.5}


def test_missing_query_policies() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}}
    with pytest.warns(MissingQueriesWarning, match=r"1 of 2 judged queries have no results"):
        skipped = serpeval.evaluate(qrels, run, ["AP"])
    assert skipped.means("run") == {"AP": 1.0}
    assert serpeval.evaluate(qrels, run, ["AP"], missing="zero").means("run") == {"AP": 0.5}


def test_compat_arithmetic() -> None:
    # Ideal ranking: a (3), d (2), c (1, retrieved), g (1); R = 4, D = max(6 retrieved, 4) = 6.
    # Overlap of the top i of ranking and ideal: a from depth 1, c from max(4, 3) = 4, d from
    # max(6, 2) = 6  ->  O = 1, 1, 1, 2, 2, 3; the ideal with itself: min(i, 4) = 1, 2, 3, 4, 4, 4.
    p = 0.8
    overlap, best = [1, 1, 1, 2, 2, 3], [1, 2, 3, 4, 4, 4]
    rbo = sum(p ** (i - 1) * o / i for i, o in enumerate(overlap, 1))
    ideal = sum(p ** (i - 1) * o / i for i, o in enumerate(best, 1))
    assert value("Compat(p=0.8)") == pytest.approx(rbo / ideal, rel=1e-12)
    weights = sum(p ** (i - 1) for i in range(1, 7))
    assert value("Compat(p=0.8,normalize=False)") == pytest.approx(rbo / weights, rel=1e-12)
