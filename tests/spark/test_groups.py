"""The per-group function that Spark tasks run, called directly on Arrow tables (no Spark).

Splitting a collection into query groups and evaluating each group must give the local
path's per-query values, and coverage counters that add up to the local coverage.
"""

from __future__ import annotations

import warnings

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

pytest.importorskip("pyspark", reason="serpeval.spark needs pyspark (pip install '.[test]')")

from serpeval.core.data import Qrels, Run
from serpeval.core.errors import MissingQueriesWarning
from serpeval.evaluation.evaluate import evaluate as local_evaluate
from serpeval.spark.groups import COUNTERS, SIGNATURE_PARTS, GroupPlan, evaluate_group, signature_from_sums


def split(table: pa.Table, groups: int) -> list[pa.Table]:
    """The rows of ``table`` in ``groups`` groups by a hash of the query id (like Spark's)."""
    codes = np.array([sum(q.encode()) % groups for q in table["query_id"].to_pylist()])
    return [table.filter(pa.array(codes == g)) for g in range(groups)]


def local(qrels: pa.Table, run: pa.Table, measures: list, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)  # q45..q49 are missing
        return local_evaluate(
            Qrels(qrels["query_id"], qrels["doc_id"], qrels["relevance"].to_numpy()),
            Run(run["query_id"], run["doc_id"], run["score"].to_numpy()),
            measures,
            **options,
        )


@pytest.mark.parametrize("options", [{}, {"missing": "zero", "depth": 4, "judged_only": True}])
def test_groups_add_up_to_the_local_evaluation(tied, registry_measures, options) -> None:
    qrels, run = tied
    plan = GroupPlan(
        measures=tuple(map(str, registry_measures)),
        missing=options.get("missing", "skip"),
        depth=options.get("depth"),
        judged_only=options.get("judged_only", False),
    )
    out = pa.concat_tables(
        evaluate_group(r, q, plan) for r, q in zip(split(run, 3), split(qrels, 3), strict=True)
    )
    assert set(out["kind"].to_pylist()) == {"query", "stats"}
    rows = out.filter(pc.equal(out["kind"], "query")).sort_by("query_id")
    stats = out.filter(pc.equal(out["kind"], "stats"))
    expected = local(qrels, run, registry_measures, **options).runs[0]
    assert rows["query_id"].to_pylist() == expected.query_ids.tolist()
    values = np.column_stack([rows[f"m{i}"].to_numpy() for i in range(len(registry_measures))])
    np.testing.assert_allclose(values, expected.values, rtol=0, atol=1e-12)
    for name in COUNTERS:
        assert pc.sum(stats[name]).as_py() == getattr(expected.coverage, name), name
    missing = sorted(q for ids in stats["missing_ids"].to_pylist() for q in ids)
    assert missing == list(expected.coverage.missing) == ["q45", "q46", "q47", "q48", "q49"]
    # the signature parts, added up over the groups as Spark adds them, give the local signatures
    sums = {name: pc.sum(stats[name]).as_py() for name in SIGNATURE_PARTS}
    assert signature_from_sums(sums["run_sig_hi"], sums["run_sig_lo"], sums["run_sig_rows"]) == expected.signature
    assert signature_from_sums(sums["qrels_sig_hi"], sums["qrels_sig_lo"],
                               sums["qrels_sig_rows"]) == expected.qrels_signature
    assert expected.signature != expected.qrels_signature
    assert len(expected.signature) == 16


def test_a_group_without_run_rows_counts_its_judged_queries_as_missing(tied) -> None:
    qrels, run = tied
    plan = GroupPlan(measures=("P@5", "NumRel"), missing="zero")
    out = evaluate_group(run.slice(0, 0), qrels.filter(pc.equal(qrels["query_id"], "q1")), plan)
    by_kind = {kind: out.filter(pc.equal(out["kind"], kind)) for kind in ("query", "stats")}
    assert by_kind["query"]["query_id"].to_pylist() == ["q1"]
    assert by_kind["query"]["m0"].to_pylist() == [0.0]  # an empty ranking under missing="zero"
    assert by_kind["stats"]["missing_ids"].to_pylist() == [["q1"]]
    assert by_kind["stats"]["judged_queries"].to_pylist() == [1]


def test_a_group_without_judgments_counts_its_run_queries_as_ignored(tied) -> None:
    qrels, run = tied
    rows = run.filter(pc.equal(run["query_id"], "q55"))
    out = evaluate_group(rows, qrels.slice(0, 0), GroupPlan(measures=("AP",)))
    assert out["kind"].to_pylist() == ["stats"]
    assert out["unjudged_queries"].to_pylist() == [1]
    assert out["unjudged_rows"].to_pylist() == [rows.num_rows]
    assert out["evaluated"].to_pylist() == [0]


def test_every_run_of_the_plan_is_evaluated_in_every_group(tied) -> None:
    qrels, run = tied
    q1 = run.filter(pc.equal(run["query_id"], "q1"))
    both = q1.append_column("run", pa.array(["a"] * q1.num_rows))
    out = evaluate_group(
        both,
        qrels.filter(pc.equal(qrels["query_id"], "q1")),
        GroupPlan(measures=("AP",), runs=("a", "b"), run_labels=("a.run", "b.run")),
    )
    stats = out.filter(pc.equal(out["kind"], "stats")).sort_by("run")
    assert stats["run"].to_pylist() == ["a", "b"]
    assert stats["missing_ids"].to_pylist() == [[], ["q1"]]  # run b has no rows for q1


@pytest.mark.parametrize(
    ("mutate", "error_type", "message"),
    [
        (
            lambda run, qrels: (
                run.set_column(
                    1, "doc_id", pa.array([None, *run["doc_id"].to_pylist()[1:]], pa.string())
                ),
                qrels,
            ),
            "InputError",
            "run DataFrame: at least 1 row(s) have no doc id (null) (e.g. a row of query 'q1')",
        ),
        (
            lambda run, qrels: (
                run.set_column(2, "score", pa.array([np.nan, *run["score"].to_pylist()[1:]])),
                qrels,
            ),
            "ParseError",
            "run DataFrame: the score of document",
        ),
        (
            lambda run, qrels: (run, pa.concat_tables([qrels, qrels.slice(0, 1)])),
            "DuplicateError",
            "qrels DataFrame: document",
        ),
        (
            lambda run, qrels: (
                run,
                qrels.set_column(
                    2,
                    "relevance",
                    pa.array([0.5, *qrels["relevance"].to_pylist()[1:]], pa.float64()),
                ),
            ),
            "ParseError",
            "qrels DataFrame: the relevance of document",
        ),
    ],
)
def test_bad_rows_become_one_error_row(tied, mutate, error_type, message) -> None:
    qrels, run = tied
    one = lambda t: t.filter(pc.equal(t["query_id"], "q1"))  # noqa: E731
    bad_run, bad_qrels = mutate(one(run), one(qrels))
    out = evaluate_group(bad_run, bad_qrels, GroupPlan(measures=("AP",)))
    assert out["kind"].to_pylist() == ["error"]
    assert out["error_type"].to_pylist() == [error_type]
    assert out["message"][0].as_py().startswith(message)


def test_a_duplicate_doc_is_named_by_query_and_doc_not_by_row(tied) -> None:
    qrels, run = tied
    q2 = run.filter(pc.equal(run["query_id"], "q2"))
    doubled = pa.concat_tables([q2, q2.slice(3, 1)])
    out = evaluate_group(
        doubled, qrels.filter(pc.equal(qrels["query_id"], "q2")), GroupPlan(measures=("AP",))
    )
    doc = q2["doc_id"][3].as_py()
    assert out["message"].to_pylist() == [
        f"run DataFrame: document {doc!r} is retrieved twice for query 'q2'. trec_eval refuses "
        "such runs; keep one row per (query, document), e.g. with dropDuplicates on the query "
        "and doc columns."
    ]
