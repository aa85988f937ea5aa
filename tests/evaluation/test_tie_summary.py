"""``tie_summary`` (issue 29 item 1): tie counts against a hand count, and the ranges against
evaluate() under each policy."""

from __future__ import annotations

import pytest

from serpeval import evaluate
from serpeval.evaluation.ties import tie_summary
from serpeval.measures import REGISTRY

RUN = {
    "q1": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 2.0, "e": 1.0, "f": 1.0},  # groups {b,c,d} (rank 2), {e,f} (rank 5)
    "q2": {"x": 1.0, "y": 0.0, "z": -0.0},  # 0.0 and -0.0 tie: {y,z} at rank 2
    "q3": {"u": 5.0, "v": 4.0},
}
QRELS = {"q1": {"c": 1, "f": 2, "a": 0}, "q2": {"z": 1}, "q3": {"v": 1}}


def test_counts() -> None:
    s = tie_summary(RUN, k=2)
    assert (s.queries, s.rows, s.tie_groups, s.tied_rows, s.tied_queries) == (3, 11, 3, 7, 2)
    assert s.tied_queries_top_k == 2  # q1's group starts at rank 2, q2's at rank 2
    assert tie_summary(RUN, k=1).tied_queries_top_k == 0
    assert s.sizes == ((2, 2), (3, 1))
    assert (s.largest, s.largest_query) == (3, "q1")
    assert s.ranges == ()
    assert s.to_dicts()[0]["tied_queries_top_2"] == 2


def test_ranges_match_each_policy() -> None:
    measures = ["AP", "nDCG@3", "ERR@3"]
    s = tie_summary(RUN, QRELS, measures)
    for r in s.ranges:
        for policy in ("trec_eval", "pessimistic", "expected", "optimistic"):
            assert getattr(r, policy) == evaluate(QRELS, RUN, [r.measure], ties=policy).aggregate("run", r.measure)
        assert r.pessimistic <= r.expected <= r.optimistic
        lo = evaluate(QRELS, RUN, [r.measure], ties="pessimistic").per_query("run", r.measure)
        hi = evaluate(QRELS, RUN, [r.measure], ties="optimistic").per_query("run", r.measure)
        spread = {q: hi[q] - lo[q] for q in lo}
        assert r.max_range == pytest.approx(max(spread.values()))
        assert r.mean_range == pytest.approx(sum(spread.values()) / 3)
        assert r.max_range_query == max(spread, key=lambda q: spread[q])
    assert s.evaluated_queries == 3
    assert [r.bounds for r in s.ranges] == [True, True, "swap_improves" in REGISTRY["ERR"].properties]


def test_k_must_be_positive() -> None:
    from serpeval.core.errors import OptionError

    with pytest.raises(OptionError, match="k must be an integer >= 1"):
        tie_summary(RUN, k=0)


def test_a_judged_query_the_run_lacks_is_warned_once_and_kept_in_the_coverage() -> None:
    """Four evaluations (trec_eval and the three policies) of one run: one warning, not four;
    the coverage (what ``serpeval ties`` turns into its note) names the query."""
    import warnings

    from serpeval.core.errors import MissingQueriesWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = tie_summary(RUN, {**QRELS, "q4": {"w": 1}}, ["RR"])
    assert [w.category for w in caught] == [MissingQueriesWarning]
    assert "1 of 4 judged queries have no results" in str(caught[0].message)
    assert s.coverage is not None
    assert s.coverage.missing == ("q4",)
    assert s.evaluated_queries == 3
    assert tie_summary(RUN, QRELS, ["RR"]).coverage.missing == ()
    assert tie_summary(RUN).coverage is None
