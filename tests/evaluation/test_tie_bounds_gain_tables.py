"""tie_summary's ``bounds``: pessimistic and optimistic bound every order of the ties only
when the gains follow the grades (optimistic puts the higher grade first).

With a custom gains table that ranks a lower grade above a higher one (``gains=1:5;2:1``),
or gives grade 3 its base gain 3 below grade 2's 9 (trec_eval's own example
``ndcg.1=3,2=9``), the two policies are two orders among many: ``bounds`` was True for them,
and the report called them bounds.
"""

from __future__ import annotations

import pytest

from serpeval import parse_measure
from serpeval.evaluation.ties import _gains_follow_grades, tie_summary


def test_an_inverted_gain_table_is_not_a_bound() -> None:
    # a (grade 1, gain 5) and b (grade 2, gain 1) tie. nDCG@1: the ideal's first gain is 5.
    #   order a, b: 5/5 = 1;   order b, a: 1/5 = 0.2.
    # optimistic (higher grade first: b) gives 0.2, the lowest; pessimistic (a first) 1.0.
    s = tie_summary({"q": {"a": 1.0, "b": 1.0}}, {"q": {"a": 1, "b": 2}},
                    ["nDCG(gains=1:5;2:1)@1", "nDCG@1"], k=1)
    inverted, plain = s.ranges
    assert (inverted.pessimistic, inverted.expected, inverted.optimistic) == pytest.approx((1.0, 0.6, 0.2))
    assert inverted.bounds is False
    # linear gains: b (2) first is the best order, 2/2 = 1; a first: 1/2
    assert (plain.pessimistic, plain.optimistic) == pytest.approx((0.5, 1.0))
    assert plain.bounds is True
    # the report's note says why they are not bounds: here the gains table, not the measure
    from serpeval.report.ties import render_ties

    text = render_ties(s, "csv")
    notes = render_ties(s, "table")
    assert "nDCG(gains=1:5;2:1)@1: moving a higher grade up can lower the value" in " ".join(notes.split())
    assert "a gains table whose gains do not grow with the grade" in " ".join(notes.split())
    assert "moving a higher grade" not in text  # csv: the rows only


@pytest.mark.parametrize(("name", "ordered"), [
    ("nDCG@10", True),
    ("nDCG(gains=1:1;2:2.5;3:3)@10", True),  # 0, 1, 2.5, 3, then 4, 5...
    ("nDCG(gains=1:1;2:3;3:7)@10", False),   # grade 4 keeps gain 4 < 7
    ("nDCG(gain=exp,gains=2:2)@10", True),    # 0, 1, 2, 7 (grade 3: 2^3 - 1)
    ("RBP(gains=1:1;2:3)", True),
    ("nDCG(gains=1:5;2:1)@10", False),
    ("ndcg.1=3,2=9", False),                  # grade 3 keeps gain 3 < 9
    ("nDCG(gains=0:2)", False),               # a judged 0 above an unjudged doc (both grade 0 to the policies)
    ("nDCG(gains=2:-1)", False),
])
def test_gain_tables_that_keep_the_grade_order(name: str, ordered: bool) -> None:
    assert _gains_follow_grades(parse_measure(name)) is ordered
