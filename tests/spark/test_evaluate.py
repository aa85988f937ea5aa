"""serpeval.spark.evaluate on local-mode Spark equals the local path, for every registered measure.

Per-query values must agree to 1e-12 (the kernels are the same; only the grouping of
queries, and so the floating-point sums running over neighbouring queries, differs),
aggregates to 1e-12 relative, coverage exactly.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

pytest.importorskip("pyspark", reason="serpeval.spark needs pyspark (pip install '.[test]')")

from serpeval.core import errors
from serpeval.core.data import Qrels, Run
from serpeval.evaluation.evaluate import DEFAULT_MEASURES
from serpeval.evaluation.evaluate import evaluate as local_evaluate
from serpeval.io import read_qrels, read_run
from serpeval.spark import evaluate


def frame(spark, table: pa.Table):
    return spark.createDataFrame(table)


def local(qrels: pa.Table, runs: dict[str, pa.Table], measures, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", errors.MissingQueriesWarning)
        return local_evaluate(
            Qrels(qrels["query_id"], qrels["doc_id"], qrels["relevance"].to_numpy()),
            {
                name: Run(t["query_id"], t["doc_id"], t["score"].to_numpy(), name=name)
                for name, t in runs.items()
            },
            measures,
            **options,
        )


def assert_same(spark_results, expected) -> None:
    """Per-query values to 1e-12, aggregates to 1e-12 relative, coverage exactly."""
    assert spark_results.run_names == expected.run_names
    assert expected.runs, "nothing to compare"
    assert expected.measures, "nothing to compare"
    assert [str(m) for m in spark_results.measures] == [str(m) for m in expected.measures]
    collected = spark_results.to_local()
    assert collected.settings.qrels_signature == expected.settings.qrels_signature  # added up over groups
    for want, got in zip(expected.runs, collected.runs, strict=True):
        assert (got.signature, got.qrels_signature) == (want.signature, want.qrels_signature)
        assert len(want.signature) == 16
        assert got.coverage == want.coverage
        assert got.query_ids.tolist() == want.query_ids.tolist()
        assert len(want.query_ids) > 0
        np.testing.assert_allclose(got.values, want.values, rtol=0, atol=1e-12)
        for i, measure in enumerate(expected.measures):
            local_value = measure.aggregate(want.column(i))
            spark_value = spark_results.aggregate(want.name, measure)
            assert math.isclose(spark_value, local_value, rel_tol=1e-12, abs_tol=1e-12) or (
                math.isnan(spark_value) and math.isnan(local_value)
            ), (str(measure), spark_value, local_value)
    spark_results.unpersist()


#: Every how-many-th query of a real collection the Spark comparison keeps. robust04's 311k
#: judgments (1,250 a query) cost the test JVM ~4.5 s of CPU to shuffle and hand to Python,
#: against ~1 s for dl19-passage's 9k. Every 4th of its 249 judged queries, each whole (all
#: its judgments and results), plus every query on one side only (the run's unjudged one):
#: the same kernels on the same kinds of real queries, several buckets of many queries each,
#: at a quarter of the rows.
SAMPLED = {"robust04": 4}


def every_nth_query(qrels: Qrels, run: Run, n: int) -> tuple[Qrels, Run]:
    """Every ``n``-th query id (sorted) judged and retrieved, and every query found on one side
    only; each kept query with all its rows."""
    q, r = qrels.to_arrow(), run.to_arrow()
    judged, retrieved = set(q["query_id"].to_pylist()), set(r["query_id"].to_pylist())
    keep = pa.array(sorted(judged & retrieved)[::n] + sorted(judged ^ retrieved))
    q, r = q.filter(pc.is_in(q["query_id"], keep)), r.filter(pc.is_in(r["query_id"], keep))
    return (Qrels(q["query_id"], q["doc_id"], q["relevance"].to_numpy()),
            Run(r["query_id"], r["doc_id"], r["score"].to_numpy(), name=run.name))


def parquet_frame(spark, table: pa.Table, path):
    """``table`` as Spark reads it from a Parquet file (its schema given: no inference job).

    For the real collections' tens of thousands of rows: a DataFrame made from Arrow is a
    local relation whose rows Spark's optimizer and adaptive execution evaluate and hash on
    the driver at every planning (~0.7 s of CPU an evaluation for robust04's sample)."""
    import pyarrow.parquet as pq
    from pyspark.sql.pandas.types import from_arrow_schema

    pq.write_table(table, path)
    return spark.read.schema(from_arrow_schema(table.schema)).parquet(str(path))


@pytest.mark.parametrize(
    ("collection", "run_file"),
    [
        ("robust04", "bm25.run.gz"),
        ("dl19-passage", "bm25-default.run.gz"),
    ],
)
def test_every_measure_equals_the_local_path_on_real_runs(
    spark, trec, registry_measures, collection, run_file, tmp_path
) -> None:
    folder = trec / collection
    qrels_path = next(p for p in folder.iterdir() if p.name.startswith("qrels.txt"))
    qrels, run = read_qrels(qrels_path), read_run(folder / "runs" / run_file)
    if collection in SAMPLED:
        qrels, run = every_nth_query(qrels, run, SAMPLED[collection])
    expected = local_evaluate(qrels, run, registry_measures)
    results = evaluate(
        parquet_frame(spark, qrels.to_arrow(), tmp_path / "qrels.parquet"),
        parquet_frame(spark, run.to_arrow(), tmp_path / "run.parquet"),
        registry_measures,
        name=run.name,
    )
    assert_same(results, expected)
    assert results.to_dicts()[0]["queries"] == len(expected.runs[0].query_ids)


OPTIONS = [
    {},
    {"missing": "zero"},
    {"depth": 5},
    {"judged_only": True},
    {"float32_scores": True},
    {"missing": "zero", "depth": 3, "judged_only": True, "float32_scores": True},
]


@pytest.mark.parametrize(
    "options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults"
)
def test_every_measure_equals_the_local_path_with_ties_and_every_option(
    spark, registry_measures, tied, options
) -> None:
    qrels, run = tied
    expected = local(qrels, {"tied": run}, registry_measures, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", errors.MissingQueriesWarning)
        results = evaluate(
            frame(spark, qrels),
            frame(spark, run),
            registry_measures,
            name="tied",
            buckets=3,
            **options,
        )
    assert_same(results, expected)
    coverage = results["tied"].coverage
    assert coverage.missing == ("q45", "q46", "q47", "q48", "q49")
    assert coverage.unjudged_queries == 10
    assert coverage.ties > 0


def test_several_runs_in_one_pass_by_dict_and_by_run_column(spark, tied) -> None:
    qrels, run = tied
    shifted = run.set_column(2, "score", pc.negate(run["score"]))
    measures = ["nDCG@10", "AP", "NumRet", "GMAP"]
    expected = local(qrels, {"a": run, "b": shifted}, measures, missing="zero")
    by_dict = evaluate(
        frame(spark, qrels),
        {"a": frame(spark, run), "b": frame(spark, shifted)},
        measures,
        missing="zero",
    )
    assert_same(by_dict, expected)
    stacked = pa.concat_tables(
        [
            run.append_column("system", pa.array(["a"] * run.num_rows)),
            shifted.append_column("system", pa.array(["b"] * run.num_rows)),
        ]
    )
    by_column = evaluate(
        frame(spark, qrels), frame(spark, stacked), measures, run_col="system", missing="zero"
    )
    assert_same(by_column, expected)


def test_column_names_are_configurable_and_ids_may_be_integers(spark) -> None:
    # From Arrow (a local relation in the JVM): a DataFrame of Python rows is read by Python
    # workers each time a job scans it (~0.8 s of CPU an evaluation here, for six rows).
    qrels = frame(spark, pa.table({"user_id": pa.array([1, 1, 2], pa.int64()), "item": ["a", "b", "c"],
                                   "label": pa.array([2, 0, 1], pa.int32())}))
    run = frame(spark, pa.table({"user_id": pa.array([1, 1, 2], pa.int64()), "item": ["a", "b", "x"],
                                 "pred": pa.array([3, 5, 1], pa.int32())}))
    assert [f.simpleString() for f in qrels.schema] + [f.simpleString() for f in run.schema] == [
        "user_id:bigint", "item:string", "label:int", "user_id:bigint", "item:string", "pred:int"]
    results = evaluate(
        qrels, run, ["P@1", "RR"], query_col="user_id", doc_col="item", score_col="pred"
    )  # the grade column is found by its alias, label
    # query 1: b (5) ranks above a (3) and only a is relevant: P@1 0, RR 1/2.
    # query 2: the one retrieved doc is not judged: P@1 0, RR 0.
    assert results.means() == {"P@1": 0.0, "RR": 0.25}
    rows = sorted(tuple(r) for r in results.per_query.collect())
    assert rows == [("run", "1", 0.0, 0.5), ("run", "2", 0.0, 0.0)]
    results.unpersist()


def test_column_names_with_dots_and_backticks_are_read_as_names(spark) -> None:
    """F.col("q.id") reads a field id of a struct q: an AnalysisException with a Java trace."""
    qrels = frame(spark, pa.table({"q.id": ["q1", "q1"], "d`oc": ["a", "b"], "re.l": pa.array([1, 0])}))
    run = frame(spark, pa.table({"q.id": ["q1", "q1", "q1"], "d`oc": ["a", "b", "a"], "s.c": [1.0, 2.0, 3.0],
                                 "r.n": ["x", "x", "y"]}))
    results = evaluate(qrels, run, ["P@1", "RR"], query_col="q.id", doc_col="d`oc", score_col="s.c",
                       relevance_col="re.l", run_col="r.n")
    assert results.aggregates == {"x": {"P@1": 0.0, "RR": 0.5}, "y": {"P@1": 1.0, "RR": 1.0}}
    results.unpersist()


def test_a_boolean_relevance_column_is_refused_as_locally(spark) -> None:
    table = pa.table({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [True, False]})
    with pytest.raises(errors.ParseError, match=r"expected an integer grade \(0, 1, 2, \.\.\.\)\. Write the grades "
                                                r"as numbers \(true as 1, false as 0\)\."):
        local_evaluate(table, pa.table({"query_id": ["q1"], "doc_id": ["a"], "score": [1.0]}), ["AP"])
    run = frame(spark, pa.table({"query_id": ["q1"], "doc_id": ["a"], "score": [1.0]}))
    with pytest.raises(errors.ParseError, match=r"^qrels DataFrame: the relevance column 'relevance' holds true/"
                                                r"false; expected an integer grade .*\(true as 1, false as 0\)\.$"):
        evaluate(frame(spark, table), run, ["AP"])


def test_run_names_equal_as_text_are_refused(spark, tied) -> None:
    """{1: df, "1": df} made one run '1' whose docs were 'retrieved twice'."""
    qrels, run = (frame(spark, t) for t in tied)
    with pytest.raises(errors.InvalidParameterError,
                       match=r"^run DataFrame: the keys 1 and '1' both name run '1' \(run names are text\); "
                             r"give each run a distinct name\.$"):
        evaluate(qrels, {1: run, "1": run}, ["AP"])  # type: ignore[dict-item]


def test_missing_queries_warn_or_raise_as_locally(spark, tied) -> None:
    qrels, run = tied
    with pytest.warns(errors.MissingQueriesWarning, match=r"run 'run': 5 of 50 judged queries"):
        results = evaluate(frame(spark, qrels), frame(spark, run))  # the default measures
    assert [str(m) for m in results.measures] == list(DEFAULT_MEASURES)
    assert results.means() == pytest.approx(
        local(qrels, {"run": run}, DEFAULT_MEASURES).means("run"), rel=1e-12
    )
    results.unpersist()
    with pytest.raises(
        errors.MissingQueriesError,
        match=(
            r"^run DataFrame: 5 judged queries have no results in run 'run': 'q45', 'q46', 'q47', "
            r"'q48', 'q49'\. Use missing='skip'"
        ),
    ):
        evaluate(frame(spark, qrels), frame(spark, run), ["AP"], missing="error")


@pytest.mark.parametrize("missing", ["skip", "zero", "error"])
def test_a_run_with_no_judged_query_is_refused_as_locally(spark, missing: str) -> None:
    """Not NaN aggregates (skip) or a row of zeros (zero): the local path's error."""
    qrels = pa.table({"query_id": ["301", "ü-7"], "doc_id": ["a", "b"], "relevance": [1, 2]})
    run = pa.table({"query_id": ["1030303", "1030303"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    with pytest.raises(errors.NothingEvaluatedError) as local_error:
        local(qrels, {"run": run}, ["AP"], missing=missing)
    assert "judge 2 queries (e.g. '301', 'ü-7')" in str(local_error.value)
    with pytest.raises(
        errors.NothingEvaluatedError,
        match=r"^run DataFrame: no judged query has results in run 'run', so nothing can be "
        r"evaluated: the qrels \(qrels DataFrame\) judge 2 queries \(e\.g\. '301', 'ü-7'\) and the "
        r"run has results for 1 query, none of them judged\.",
    ):
        evaluate(frame(spark, qrels), frame(spark, run), ["AP"], missing=missing)


def test_duplicates_are_refused_where_the_local_path_refuses_them(spark, tied) -> None:
    qrels, run = tied
    q2 = run.filter(pc.equal(run["query_id"], "q2")).sort_by(
        [("score", "descending"), ("doc_id", "descending")]
    )
    top, bottom = q2.slice(0, 1), q2.slice(q2.num_rows - 1, 1)
    with pytest.raises(
        errors.DuplicateError,
        match=(rf"^run DataFrame: document '{top['doc_id'][0]}' is retrieved twice for query 'q2'"),
    ):
        evaluate(
            frame(spark, qrels), frame(spark, pa.concat_tables([run, top])), ["AP"], missing="zero"
        )
    # A duplicate below the depth cut, or in a query without judgments, is no error (trec_eval).
    below = pa.concat_tables(
        [run, bottom, run.filter(pc.equal(run["query_id"], "q55")).slice(0, 1)]
    )
    results = evaluate(frame(spark, qrels), frame(spark, below), ["AP"], missing="zero", depth=2)
    assert_same(results, local(qrels, {"run": below}, ["AP"], missing="zero", depth=2))


@pytest.mark.parametrize(
    ("edit", "error", "message"),
    [
        (
            lambda q, r: (q, r.set_column(1, "doc_id", pa.array([None] * r.num_rows, pa.string()))),
            errors.InputError,
            r"run DataFrame: at least \d+ row\(s\) have no doc id \(null\)",
        ),
        (
            lambda q, r: (q, r.set_column(2, "score", pa.array([float("nan")] * r.num_rows))),
            errors.ParseError,
            r"run DataFrame: the score of document .* is NaN",
        ),
        (
            lambda q, r: (pa.concat_tables([q, q]), r),
            errors.DuplicateError,
            r"qrels DataFrame: document '.*' is judged twice for query",
        ),
        (
            lambda q, r: (q, r.slice(0, 0)),
            errors.EmptyInputError,
            r"^run DataFrame: the run has no rows",
        ),
        (
            lambda q, r: (q.slice(0, 0), r),
            errors.EmptyInputError,
            r"^qrels DataFrame: the qrels have no rows",
        ),
    ],
)
def test_bad_rows_raise_the_local_error_class_on_the_driver(
    spark, tied, edit, error, message
) -> None:
    qrels, run = edit(*tied)
    with pytest.raises(error, match=message):
        evaluate(frame(spark, qrels), frame(spark, run), ["AP"], missing="zero")


def test_bad_columns_and_options_are_refused_before_any_spark_job(spark, tied) -> None:
    qrels, run = (frame(spark, t) for t in tied)
    with pytest.raises(
        errors.InputError,
        match=(
            r"^run DataFrame: no score column; expected 'points', found columns query_id, doc_id, "
            r"score\. Pass score_col='<column name>'\.$"
        ),
    ):
        evaluate(qrels, run, ["AP"], score_col="points")
    with pytest.raises(errors.ParseError, match=r"the score column 'doc_id' has type string"):
        evaluate(qrels, run, ["AP"], score_col="doc_id")
    with pytest.raises(
        errors.InputError,
        match=(
            r"^qrels DataFrame: the query_id column 'query_id' has type double; expected strings"
        ),
    ):
        evaluate(
            spark.createDataFrame([(1.5, "a", 1)], "query_id double, doc_id string, relevance int"),
            run,
            ["AP"],
        )
    with pytest.raises(errors.InputError, match=r"^run DataFrame: no column 'system' \(run_col\)"):
        evaluate(qrels, run, ["AP"], run_col="system")
    with pytest.raises(errors.InvalidParameterError, match=r"name and run_col exclude each other"):
        evaluate(qrels, run, ["AP"], run_col="system", name="bm25")
    for option in ({"run_col": "system"}, {"name": "bm25"}):
        with pytest.raises(errors.InvalidParameterError, match=r"names its runs by its keys"):
            evaluate(qrels, {"bm25": run}, ["AP"], **option)
    with pytest.raises(errors.InvalidParameterError, match="missing must be one of"):
        evaluate(qrels, run, ["AP"], missing="ignore")  # type: ignore[arg-type]
    with pytest.raises(errors.InvalidParameterError, match="buckets must be a positive integer"):
        evaluate(qrels, run, ["AP"], buckets=0)
    with pytest.raises(errors.UnknownMeasureError):
        evaluate(qrels, run, ["nDGC@10"])
    with pytest.raises(errors.InputError, match="expected a Spark DataFrame, found dict"):
        evaluate(qrels, {"q1": {"d1": 1.0}}, ["AP"])  # type: ignore[arg-type]


def test_per_query_frame_has_canonical_measure_names_and_json_export(spark, tied) -> None:
    qrels, run = tied
    results = evaluate(
        frame(spark, qrels), frame(spark, run), ["ndcg_cut_10", "P(rel=2)@5"], missing="zero"
    )
    assert results.per_query.columns == ["run", "query_id", "nDCG@10", "P(rel=2)@5"]
    payload = results.to_json_dict(per_query=True)
    assert payload["measures"] == ["nDCG@10", "P(rel=2)@5"]
    assert payload["results"][0]["queries"] == 50
    assert payload["coverage"][0]["missing"] == ["q45", "q46", "q47", "q48", "q49"]
    assert len(payload["per_query"]) == 50
    assert any("count as 0" in rule for rule in payload["rules"])
    results.unpersist()


def test_spark_aggregates_cover_every_aggregate_kind(registry_measures) -> None:
    from serpeval.spark.evaluate import _AGGREGATES

    assert {m.spec.aggregate for m in registry_measures} <= set(_AGGREGATES)
