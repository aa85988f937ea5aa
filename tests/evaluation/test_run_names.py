"""Runs whose names collide get distinct display names, even when a run's own name looks
like a numbered one (``bm25``, ``bm25#2``, ``bm25``: the third became ``bm25#2`` too, and
``res["bm25#2"]`` returned the second run's numbers for the third)."""

from __future__ import annotations

from serpeval import evaluate
from serpeval.evaluation.results import unique_names
from serpeval.io import as_run

QRELS = {"q1": {"a": 1, "b": 0}}


def test_numbered_names_already_taken_are_skipped() -> None:
    assert unique_names(["bm25", "bm25", "dense"]) == ["bm25", "bm25#2", "dense"]
    assert unique_names(["bm25", "bm25#2", "bm25"]) == ["bm25", "bm25#2", "bm25#3"]
    assert unique_names(["bm25", "bm25", "bm25#2"]) == ["bm25", "bm25#3", "bm25#2"]


def test_each_run_is_found_under_its_own_name() -> None:
    runs = [as_run({"q1": {"a": 2.0, "b": 1.0}}, name="bm25"),   # a first: RR 1
            as_run({"q1": {"a": 1.0, "b": 2.0}}, name="bm25#2"),  # a second: RR 1/2
            as_run({"q1": {"b": 2.0}}, name="bm25")]              # a not retrieved: RR 0
    res = evaluate(QRELS, runs, ["RR"])
    assert len(set(res.run_names)) == 3
    assert [res.aggregate(name, "RR") for name in res.run_names] == [1.0, 0.5, 0.0]
