"""ties="expected" for Hits, Judged and NCG without a cutoff (the whole ranking read as a set),
and for the counting measures Hits@k, Judged@k, Graded@k, Unjudged@k and RelP@k (linear).

Hits (relevant docs retrieved), Judged (share of the retrieved docs in the qrels) and NCG
(gain retrieved over all judged gain) do not depend on the order of the ranked docs when
they take no cutoff, so their expectation over the orders of the ties is their value under
any order. They were enumerated like the order-dependent measures, and refused as soon as a
query had more than 50,000 arrangements of its tie groups (TREC DL 2019's BM25 run with its
scores rounded to 2 decimals: "Hits would need 264,607,329 orders ... of query '183378'").
"""

from __future__ import annotations

import pytest

from serpeval import evaluate
from serpeval.measures import REGISTRY
from serpeval.measures.expected import method

# One query: 40 docs sharing one score (20 relevant grade 1, 10 judged 0, 10 unjudged), then
# 3 docs below them, and 2 judged docs never retrieved.
QRELS = {"q": {**{f"r{i:02d}": 1 for i in range(20)}, **{f"n{i:02d}": 0 for i in range(10)},
               "below1": 2, "below2": -1, "unret1": 3, "unret2": 1}}
RUN = {"q": {**{f"r{i:02d}": 5.0 for i in range(20)}, **{f"n{i:02d}": 5.0 for i in range(10)},
             **{f"u{i:02d}": 5.0 for i in range(10)}, "below1": 1.0, "below2": 0.5, "below3": 0.25}}
# By hand, under any order:
#   Hits = relevant retrieved = 20 (r00..r19) + 1 (below1, grade 2) = 21;
#   Judged = docs in the qrels / retrieved = (20 + 10 + 2) / 43 (below2's -1 is listed);
#   NCG = gain retrieved / all judged gain = (20 * 1 + 2) / (20 + 2 + 3 + 1) = 22 / 26.
HAND = {"Hits": 21.0, "Judged": 32 / 43, "NCG": 22 / 26}


@pytest.mark.parametrize("name", sorted(HAND))
def test_whole_ranking_is_order_free_under_expected(name: str) -> None:
    # C(40; 20, 10, 10) arrangements of the tied group's grades: far above 50,000.
    got = evaluate(QRELS, RUN, [name], ties="expected").per_query("run", name)["q"]
    assert got == pytest.approx(HAND[name], rel=1e-12)
    assert evaluate(QRELS, RUN, [name]).per_query("run", name)["q"] == pytest.approx(HAND[name], rel=1e-12)


def test_with_a_cutoff_hits_and_judged_have_a_closed_form() -> None:
    # The top 5 are 5 of the 40 tied docs, each of them any of the 40 with the same chance:
    #   Hits@5 = 5 * 20/40 = 2.5 relevant docs;  Judged@5 = 5 * 30/40 / min(5, 43) = 0.75;
    #   Graded@5 = the same 3.75 / 5;  Unjudged@5 = 5 * 10/40 / 5 = 0.25;
    #   RelP@5 = 2.5 / min(5, R = 23) = 0.5.
    # They were enumerated group by group, and refused here (the group's arrangements of
    # grades are far more than 50,000).
    got = evaluate(QRELS, RUN, ["Hits@5", "Judged@5", "Graded@5", "Unjudged@5", "RelP@5"], ties="expected")
    assert got.means("run") == pytest.approx({"Hits@5": 2.5, "Judged@5": 0.75, "Graded@5": 0.75,
                                              "Unjudged@5": 0.25, "RelP@5": 0.5}, rel=1e-12)
    # NCG@5 reads the grades of the top 5 together: still enumerated, so refused, not guessed
    with pytest.raises(Exception, match="too many to enumerate"):
        evaluate(QRELS, RUN, ["NCG@5"], ties="expected")


def test_method_says_so() -> None:
    assert "without a cutoff exact as it is" in method(REGISTRY["NCG"])
    for name in ("Hits", "Judged", "Graded", "Unjudged", "RelP"):
        assert "closed form" in method(REGISTRY[name])
