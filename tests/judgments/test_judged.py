"""Graded@k and Unjudged@k per run and query, the pool still needed, and the unequal-judging warning."""

from __future__ import annotations

import pytest

from serpeval.core.data import Qrels, Run
from serpeval.evaluation.evaluate import evaluate
from serpeval.judgments.judged import judged, judged_gaps

QRELS = Qrels.from_dict({"q1": {"a": 1, "b": 0, "c": -1}, "q2": {"x": 2}})
OLD = Run.from_dict({"q1": {"a": 3, "b": 2, "c": 1}, "q2": {"x": 2, "y": 1}}, name="old")
NEW = Run.from_dict({"q1": {"n": 3, "a": 2, "m": 1}, "q2": {"z": 2, "w": 1}}, name="new")


def test_judged_rates_per_run_and_query() -> None:
    rates = judged(QRELS, [OLD, NEW], [2, 3])
    # Graded@k: grade >= 0 in the top k, over k.
    # old: q1 top 2 a b graded (2/2), top 3 adds c (grade -1: not graded) -> 2/3;
    #      q2 top 2 x graded, y not -> 1/2; top 3 empty rank -> 1/3.
    # new: q1 n a m -> 1/2, 1/3; q2 z w -> 0, 0.
    rows = {r["run"]: r for r in rates.to_dicts()}
    assert rows["old"]["Graded@2"] == pytest.approx((1 + 1 / 2) / 2)
    assert rows["old"]["Graded@3"] == pytest.approx((2 / 3 + 1 / 3) / 2)
    assert rows["new"]["Graded@2"] == pytest.approx((1 / 2 + 0) / 2)
    assert rows["new"]["Unjudged@2"] == pytest.approx(1 - 0.25)
    per_query = {(r["run"], r["query_id"]): r["Graded@3"] for r in rates.to_dicts(per_query=True)}
    assert per_query[("new", "q1")] == pytest.approx(1 / 3)
    # Pool still needed at depth 2: q1 n (new), q2 y, z, w -> 4; at depth 3 adds c, m -> 6.
    assert rates.pool_needed == (4, 6)


def test_one_name_one_meaning() -> None:
    """The workflow's columns are the measures of the same names. Unjudged@3 is trec_eval's unj
    (the empty rank of old's q2 counts as judged): old q1 a b c -> c (-1) = 1/3, q2 x y _ -> y = 1/3,
    mean 1/3 (the old column, 1 - padded judged share, said (1/3 + 2/3) / 2 = 0.5). No column is
    called Judged@k: that name is ir_measures' measure (here 1.0 for old at 3: every retrieved
    document of q1 is listed, c with -1 too, and x of q2 is)."""
    rates = judged(QRELS, [OLD, NEW], [2, 3])
    rows = {r["run"]: r for r in rates.to_dicts()}
    assert rows["old"]["Unjudged@3"] == pytest.approx(1 / 3)
    assert not any(key.startswith("Judged@") for row in rates.to_dicts(True) for key in row)
    measures = ["Graded@2", "Unjudged@2", "Graded@3", "Unjudged@3"]
    res = evaluate(QRELS, [OLD, NEW], measures)
    for run in ("old", "new"):
        assert {m: rows[run][m] for m in measures} == pytest.approx(res.means(run))
    per_query = {(r["run"], r["query_id"]): r for r in rates.to_dicts(per_query=True)}
    for run in res.runs:
        for qid, values in zip(run.query_ids.tolist(), run.values.tolist(), strict=True):
            assert [per_query[(run.name, qid)][m] for m in measures] == pytest.approx(values)
    assert evaluate(QRELS, OLD, ["Judged@3"]).means("old")["Judged@3"] == pytest.approx((3 / 3 + 1 / 2) / 2)


def test_warning_when_judged_rates_differ() -> None:
    results = evaluate(QRELS, [OLD, NEW], ["P@2", "AP"])
    gaps = judged_gaps(QRELS, [OLD, NEW], results, threshold=0.05)
    # P@2 at depth 2: old 0.75, new 0.25 (50 points); AP at the longest ranking, 3:
    # old (2/3 + 1/3) / 2 = 0.5, new (1/3 + 0) / 2 = 1/6.
    assert [(g.depth, g.measures) for g in gaps] == [(2, ("P@2",)), (3, ("AP",))]
    assert gaps[0].best == ("old", 0.75)
    assert gaps[0].worst == ("new", 0.25)
    message = gaps[0].message()
    assert "differs by 50.0 points" in message
    assert "judged_only" in message
    assert "favours old" in message
    assert judged_gaps(QRELS, [OLD, NEW], results, threshold=0.6) == []  # 50 points < 60
    condensed = evaluate(QRELS, [OLD, NEW], ["P@2"], judged_only=True)
    assert judged_gaps(QRELS, [OLD, NEW], condensed) == []  # already condensed lists


def test_short_rankings_alone_raise_no_warning() -> None:
    """SHORT retrieves 1 judged document per query, LONG 3 judged ones: Judged@10 is 0.1 and
    0.3 (the empty ranks count as unjudged), but every document either run retrieved is
    judged, so no judging could change a score and there is no warning. A judging gap
    among the retrieved documents is still found over the depth both runs reach: HOLES
    (LONG with its third document unjudged on q1) is judged (2/3 + 1) / 2 = 5/6 of its top 3
    against LONG's 1 (16.7 points apart); against SHORT, which stops at rank 1, the runs are
    compared over that 1 rank, where both are fully judged (issue 27, item 6)."""
    qrels = Qrels.from_dict({"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"a": 1, "b": 1, "c": 0}})
    short = Run.from_dict({"q1": {"a": 1}, "q2": {"b": 1}}, name="short")
    long_ = Run.from_dict({q: {"a": 3, "b": 2, "c": 1} for q in ("q1", "q2")}, name="long")
    results = evaluate(qrels, [short, long_], ["P@10"])
    rates = judged(qrels, [short, long_], 10)
    assert (rates.mean("short", 10), rates.mean("long", 10)) == (pytest.approx(0.1), pytest.approx(0.3))
    assert rates.mean_of_retrieved("short", 10) == rates.mean_of_retrieved("long", 10) == 1.0
    assert judged_gaps(qrels, [short, long_], results) == []
    holes = Run.from_dict({"q1": {"a": 3, "b": 2, "x": 1}, "q2": {"a": 3, "b": 2, "c": 1}}, name="holes")
    assert judged_gaps(qrels, [short, holes], evaluate(qrels, [short, holes], ["P@10"])) == []
    gaps = judged_gaps(qrels, [long_, holes], evaluate(qrels, [long_, holes], ["P@10"]))
    assert [(g.depth, g.best, g.worst) for g in gaps] == [(3, ("long", 1.0), ("holes", pytest.approx(5 / 6)))]
    assert "top 3 (the depth every run reaches; P@10 looks to 10)" in gaps[0].message()


def test_judged_gaps_do_not_repeat_the_evaluations_missing_query_warning() -> None:
    """judged_gaps() evaluates the runs again: the judged query q3 that both runs lack was
    reported by the evaluation the caller made; the check adds no second warning. judged()
    keeps each run's coverage (what ``serpeval judged`` turns into a note)."""
    import warnings

    from serpeval.core.errors import MissingQueriesWarning

    qrels = Qrels.from_dict({"q1": {"a": 1, "b": 0, "c": -1}, "q2": {"x": 2}, "q3": {"v": 1}})
    with pytest.warns(MissingQueriesWarning):
        results = evaluate(qrels, [OLD, NEW], ["P@2"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gaps = judged_gaps(qrels, [OLD, NEW], results)
    assert [str(w.message) for w in caught] == []
    assert [g.depth for g in gaps] == [2]
    with pytest.warns(MissingQueriesWarning):
        rates = judged(qrels, [OLD, NEW], 2)
    assert [(c.run, c.missing, c.judged_queries) for c in rates.coverage] == [("old", ("q3",), 3), ("new", ("q3",), 3)]
