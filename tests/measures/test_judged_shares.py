"""The three coverage measures of the top k, one meaning each, with hand-worked values.

* ``Judged@k`` (ir_measures): documents in the top k that the qrels list, any grade, over
  ``min(k, retrieved)``;
* ``Unjudged@k`` (trec_eval 10.0's ``unj``): documents in the top k not in the qrels or with a
  negative grade, over ``k`` (empty ranks count as judged: "assumed irrelevant");
* ``Graded@k`` (the ``judged`` workflow's share): documents in the top k with a grade >= 0,
  over ``k`` (empty ranks are not graded, a negative grade, what ``pool`` writes for a row
  still to judge, is not a grade).

So ``Graded@k + Unjudged@k = min(k, retrieved) / k``, the rest being empty ranks.
"""

from __future__ import annotations

import pytest

import serpeval
from serpeval.core.data import Run
from serpeval.io import read_qrels
from serpeval.judgments.pool import pool
from serpeval.report.judging import judging_file

MEASURES = ["Judged@2", "Unjudged@2", "Graded@2", "Judged@5", "Unjudged@5", "Graded@5"]


def values(qrels: dict, run: dict) -> dict[str, dict[str, float]]:
    res = serpeval.evaluate(qrels, run, MEASURES)
    names = [str(m) for m in res.measures]
    return {q: dict(zip(names, row, strict=True))
            for q, row in zip(res.runs[0].query_ids.tolist(), res.runs[0].values.tolist(), strict=True)}


def test_issue_example_negative_grade() -> None:
    """q1 retrieves a (grade 1), c (grade -1: pooled but unjudged), x (not in the qrels).
    Judged@2: a, c listed -> 2 / min(2, 3) = 1.0 (ir_measures counts any qrels entry);
    Unjudged@2: c -> 1 / 2 = 0.5; Graded@2: a -> 1 / 2 = 0.5.
    Judged@5: a, c of min(5, 3) -> 2/3; Unjudged@5: c, x -> 2/5; Graded@5: a -> 1/5."""
    got = values({"q1": {"a": 1, "b": 0, "c": -1}}, {"q1": {"a": 3.0, "c": 2.0, "x": 1.0}})["q1"]
    assert got == pytest.approx({"Judged@2": 1.0, "Unjudged@2": 0.5, "Graded@2": 0.5,
                                 "Judged@5": 2 / 3, "Unjudged@5": 2 / 5, "Graded@5": 1 / 5})


def test_short_ranking_empty_ranks() -> None:
    """q2 retrieves only x (grade 2). Judged@5 = 1 / min(5, 1) = 1; Unjudged@5 = 0 / 5 (empty ranks
    count as judged in trec_eval); Graded@5 = 1 / 5 (empty ranks hold nothing graded):
    Graded + Unjudged = 1/5 = min(5, 1) / 5."""
    got = values({"q2": {"x": 2, "y": 0}}, {"q2": {"x": 1.0}})["q2"]
    assert (got["Judged@5"], got["Unjudged@5"], got["Graded@5"]) == (1.0, 0.0, pytest.approx(0.2))


def test_graded_plus_unjudged_is_the_retrieved_share() -> None:
    """Ids of mixed lengths and Unicode, several queries: Graded@k + Unjudged@k = min(k, n) / k."""
    qrels = {"tópico-1": {"doc-ü": 2, "d": 0, "long-document-id-0001": -1},
             "2": {"e": 1, "ff": -2}}
    run = {"tópico-1": {"doc-ü": 5.0, "long-document-id-0001": 4.0, "zz": 3.0, "d": 2.0},
           "2": {"ff": 1.0}}
    got = values(qrels, run)
    for q, n in (("tópico-1", 4), ("2", 1)):
        for k in (2, 5):
            assert got[q][f"Graded@{k}"] + got[q][f"Unjudged@{k}"] == pytest.approx(min(k, n) / k)
    # "2": ff has grade -2: listed (Judged@2 = 1/1), unjudged (1/2), not graded (0).
    assert (got["2"]["Judged@2"], got["2"]["Unjudged@2"], got["2"]["Graded@2"]) == (1.0, 0.5, 0.0)


def test_partly_filled_pool_counts_only_the_filled_rows(tmp_path) -> None:
    """pool writes -1 for every row to judge; two of the five rows are filled. Run A ranks q1 a b,
    q2 x y. Filled: (q1, a) = 1, (q2, x) = 0; still -1: (q1, b), (q1, d), (q2, y).
    Graded@2: q1 a -> 1/2, q2 x -> 1/2; Unjudged@2: b -> 1/2, y -> 1/2 (trec_eval: -1 is
    pooled but unjudged); Judged@2 (ir_measures, any qrels entry): 2/2 on both."""
    a = Run.from_dict({"q1": {"a": 3, "b": 2}, "q2": {"x": 2, "y": 1}}, name="A")
    b = Run.from_dict({"q1": {"d": 3}, "q2": {"x": 1}}, name="B")
    path = tmp_path / "to_judge.txt"
    path.write_text(judging_file(pool([a, b], method="depth", depth=2), "trec"))
    filled = {("q1", "a"): "1", ("q2", "x"): "0"}
    lines = [line.split() for line in path.read_text().splitlines()]
    path.write_text("".join(f"{q} 0 {d} {filled.get((q, d), g)}\n" for q, _, d, g in lines))
    res = serpeval.evaluate(read_qrels(path), a, ["Graded@2", "Unjudged@2", "Judged@2"])
    assert res.means("A") == pytest.approx({"Graded@2": 0.5, "Unjudged@2": 0.5, "Judged@2": 1.0})


def test_graded_needs_a_cutoff_and_is_listed() -> None:
    from serpeval.core.errors import InvalidParameterError
    from serpeval.measures import REGISTRY

    spec = REGISTRY.lookup("Graded")
    assert spec is not None
    assert spec.cutoff == "required"
    with pytest.raises(InvalidParameterError):
        serpeval.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["Graded"])
