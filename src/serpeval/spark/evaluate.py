"""``serpeval.spark.evaluate(qrels_df, run_df, measures)``: the local evaluation, partitioned.

How it works:

1. The run and the qrels are normalised (:mod:`serpeval.spark.frames`) and every row gets
   a bucket, ``pmod(xxhash64(query_id), buckets)``: all rows of a query share a bucket.
2. ``run.groupBy(bucket).cogroup(qrels.groupBy(bucket)).applyInArrow(...)`` hands each
   bucket's rows to :func:`serpeval.spark.groups.evaluate_group`, which runs
   :func:`serpeval.ranking.rank` and the measure kernels of the local path on many queries
   at once (one Python call per bucket, not per query).
3. The output (per-query values, per-bucket coverage counters, errors) is persisted and
   summarised in one Spark job: aggregates as each measure's spec says, coverage sums,
   errors. Errors are raised on the driver with their serpeval class.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

import serpeval.core.errors as errors_module
from serpeval.core import sparkconf
from serpeval.core.data import GradeKind, check_grade_kind
from serpeval.core.errors import (
    EmptyInputError,
    InputError,
    InvalidParameterError,
    SerpevalError,
)
from serpeval.core.ties import TiePolicy, check_ties
from serpeval.evaluation.evaluate import DEFAULT_MEASURES
from serpeval.evaluation.results import Settings
from serpeval.measures import Measure, parse_measures
from serpeval.measures.propensity import weight_key
from serpeval.measures.spec import GMEAN_FLOOR
from serpeval.ranking import (
    MISSING_POLICIES,
    Coverage,
    Missing,
    missing_queries_error,
    missing_queries_warning,
    require_evaluated,
)
from serpeval.spark.frames import SparkSource, qrels_frame, run_frame, unwrap
from serpeval.spark.groups import (
    COUNTERS,
    ERROR,
    QUERY,
    SIGNATURE_PARTS,
    STATS,
    GroupPlan,
    evaluate_group,
    signature_from_sums,
)
from serpeval.spark.results import SparkResults, SparkRunResult

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column

__all__ = ["check_options", "evaluate"]

RANK_REFUSED = ("ties='rank' reads the rank column of a TREC run file, which the Spark backend does not keep "
                "(it evaluates DataFrames by query groups); use the local backend (serpeval.evaluate, or serpeval "
                "evaluate without --backend spark), or another tie policy.")
RUN_LABEL = "run DataFrame"
QRELS_LABEL = "qrels DataFrame"


def evaluate(
    qrels: DataFrame | SparkSource,
    run: DataFrame | SparkSource | Mapping[str, DataFrame | SparkSource],
    measures: str | Measure | Iterable[str | Measure] = DEFAULT_MEASURES,
    *,
    query_col: str | None = None,
    doc_col: str | None = None,
    score_col: str | None = None,
    relevance_col: str | None = None,
    run_col: str | None = None,
    name: str | None = None,
    missing: Missing = "skip",
    depth: int | None = None,
    judged_only: bool = False,
    float32_scores: bool = False,
    buckets: int | None = None,
    ties: TiePolicy = "trec_eval",
    grades: GradeKind = "int",
) -> SparkResults:
    """Evaluate runs held in Spark DataFrames; the same numbers as :func:`serpeval.evaluate`.

    Args:
        qrels: judgments, columns ``query_id, doc_id, relevance`` (names configurable).
        run: system output, columns ``query_id, doc_id, score``; or ``{name: DataFrame}``
            for several runs, evaluated in one pass against the same qrels.
        measures: names in any supported dialect (``nDCG@10``, ``ndcg_cut_10``, ``MAP``);
            by default those of :func:`serpeval.evaluate`.
        query_col, doc_col, score_col, relevance_col: column names; by default the names
            the local readers accept (``query_id``/``qid``/``topic``..., ``doc_id``/
            ``docno``/``pid``..., ``score``/``sim``, ``relevance``/``rel``/``label``...).
        run_col: a column of ``run`` (one DataFrame) that names the run of each row:
            evaluates every run in it (one extra Spark job lists the names).
        name: the run's name when ``run`` is one DataFrame without ``run_col`` (default
            ``run``).
        missing: judged queries absent from a run: ``"skip"`` (warning with the count),
            ``"zero"`` or ``"error"``.
        depth: keep only the top ``depth`` docs per query (trec_eval ``-M``).
        judged_only: drop unjudged docs before measuring (trec_eval ``-J``).
        float32_scores: compare scores as 32-bit floats (trec_eval 9.0.8 / pytrec_eval).
        buckets: number of query groups, each evaluated by one vectorized Python call
            (default ``spark.sql.shuffle.partitions``). Every group's rows must fit in a
            Python worker's memory: aim for at most a few million rows per group.
        ties: the tie policy (see :func:`serpeval.evaluate`); every query is ranked whole in
            one group, so each policy gives the local values. ``"rank"`` is refused: it reads
            a TREC run file's rank column, which the Spark backend does not keep.
        grades: ``"float"`` takes fractional grades (any finite real, as
            :func:`serpeval.evaluate`'s ``grades``); the default refuses them in the tasks.

    Returns:
        :class:`~serpeval.spark.results.SparkResults`: ``per_query`` (a persisted Spark
        DataFrame), aggregates and coverage.

    Raises:
        InvalidParameterError: a bad option (``ties="rank"`` too), or ``run_col`` / ``name`` where
            they do not apply, or two runs whose names are equal as text.
        InputError: a missing column or a column of the wrong type; null ids or scores.
        ParseError: NaN scores, fractional grades.
        DuplicateError: a doc retrieved twice for one query, or judged twice.
        MissingQueriesError: ``missing="error"`` and judged queries are absent.
        NothingEvaluatedError: no judged query has results in a run (any ``missing``).
        EmptyInputError: no qrels rows, or no rows in a run.
    """
    parsed = parse_measures(measures)
    scored = [str(m) for m in parsed if weight_key(m) is not None]
    if scored:  # their weights need the whole qrels (label frequencies), not one group's
        raise InputError(f"{scored[0]} is computed by the local backend only (its propensities come from the "
                         "whole qrels); evaluate it with serpeval.evaluate.")
    check_options(missing, depth, buckets)
    ties = check_ties(ties)
    if ties == "rank":
        raise InvalidParameterError(RANK_REFUSED)
    qrels_df, qrels_label, qrels_source = unwrap(qrels, QRELS_LABEL)
    judgments = qrels_frame(qrels_df, label=qrels_label, query_col=query_col, doc_col=doc_col,
                            relevance_col=relevance_col)
    rows, run_names, run_labels = _run_rows(run, run_col, name, query_col, doc_col, score_col)
    spark = qrels_df.sparkSession
    sparkconf.use_running_python(_context(spark))
    plan = GroupPlan(
        measures=tuple(str(m) for m in parsed), runs=run_names,
        missing="zero" if missing == "zero" else "skip", depth=depth, judged_only=judged_only,
        float32_scores=float32_scores, run_labels=run_labels, qrels_label=qrels_label, ties=ties,
        grades=check_grade_kind(grades),
    )
    n_buckets = buckets or int(spark.conf.get("spark.sql.shuffle.partitions") or 200)
    bucket = F.pmod(F.xxhash64("query_id"), F.lit(n_buckets))
    raw = _grouped(rows, judgments, plan, bucket).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        summaries = _summarise(raw, parsed)
        _raise_errors(summaries)
        results = _results(summaries, parsed, plan, missing)
    except BaseException:
        raw.unpersist()
        raise
    settings = Settings(
        missing=missing, depth=depth, judged_only=judged_only, float32_scores=float32_scores,
        qrels=qrels_label, qrels_skipped_lines=qrels_source.skipped_lines if qrels_source else 0, ties=ties,
        qrels_signature=results[0].qrels_signature if results else "", grades=plan.grades,
    )
    per_query = raw.where(f"kind = '{QUERY}'").selectExpr(  # few calls into the JVM, whatever the measures
        "run", "query_id", *(f"m{i}" for i in range(len(parsed)))
    ).toDF("run", "query_id", *(str(m) for m in parsed))
    return SparkResults(parsed, per_query, results, settings, raw)


# ----------------------------------------------------------------------------- inputs


def _context(spark: Any) -> Any:
    """The session's SparkContext; None on Spark Connect, whose client has none."""
    try:
        return spark.sparkContext
    except Exception:  # pyspark.errors.PySparkNotImplementedError (Connect), or its AttributeError
        return None


def check_options(missing: str, depth: int | None, buckets: int | None) -> None:
    """Refuse a bad ``missing``, ``depth`` or ``buckets`` (run before any Spark job, and by the
    command line before a session starts)."""
    if missing not in MISSING_POLICIES:
        raise InvalidParameterError(
            f"missing must be one of {', '.join(MISSING_POLICIES)}; got {missing!r}."
        )
    for option, value in (("depth", depth), ("buckets", buckets)):
        bad = isinstance(value, bool) or not isinstance(value, int) or value < 1
        if value is not None and bad:
            raise InvalidParameterError(f"{option} must be a positive integer; got {value!r}.")


def _run_rows(
    run: Any, run_col: str | None, name: str | None, query_col: str | None,
    doc_col: str | None, score_col: str | None,
) -> tuple[DataFrame, tuple[str, ...], tuple[str, ...]]:
    """The rows of every run (with a ``run`` column when there are several), the run
    names in order, and how error messages name each run."""
    columns = {"query_col": query_col, "doc_col": doc_col, "score_col": score_col}
    if isinstance(run, Mapping) and (run_col is not None or name is not None):
        raise InvalidParameterError(
            f"{RUN_LABEL}: run_col and name apply to one DataFrame; {{name: DataFrame}} names "
            "its runs by its keys."
        )
    if run_col is not None and name is not None:
        raise InvalidParameterError(
            f"{RUN_LABEL}: name and run_col exclude each other; with run_col the runs are named "
            f"by the values of column {run_col!r}."
        )
    if isinstance(run, Mapping):
        if not run:
            raise InputError(
                f"{RUN_LABEL}: no runs given; pass a DataFrame or {{name: DataFrame}}."
            )
        _refuse_same_names(list(run))
        frames, labels = [], []
        for run_name, value in run.items():
            frame, label, _ = unwrap(value, f"{RUN_LABEL} {run_name!r}")
            rows = run_frame(frame, label=label, **columns)
            frames.append(rows.withColumn("run", F.lit(str(run_name))))
            labels.append(label)
        union = frames[0]
        for frame in frames[1:]:
            union = union.unionByName(frame)
        return union, tuple(str(n) for n in run), tuple(labels)
    frame, label, source = unwrap(run, RUN_LABEL)
    if run_col is None:
        display = name or (source.name if source else "run")
        return run_frame(frame, label=label, **columns), (display,), (label,)
    rows = run_frame(frame, label=label, run_col=run_col, **columns)
    found = [r[0] for r in rows.select("run").distinct().collect()]
    if None in found:
        raise InputError(f"{label}: some rows have no run name (null in column {run_col!r}).")
    names = sorted(found)
    return rows, tuple(names), tuple(f"{label} (run {n!r})" for n in names)


def _refuse_same_names(keys: list[Any]) -> None:
    """Refuse keys of ``{name: DataFrame}`` that name one run once made text (``1`` and
    ``"1"``): their rows would be evaluated as one run."""
    seen: dict[str, Any] = {}
    for key in keys:
        if str(key) in seen:
            raise InvalidParameterError(
                f"{RUN_LABEL}: the keys {seen[str(key)]!r} and {key!r} both name run {str(key)!r} "
                "(run names are text); give each run a distinct name."
            )
        seen[str(key)] = key


# ----------------------------------------------------------------------------- the job


def _grouped(run: DataFrame, qrels: DataFrame, plan: GroupPlan, key: Column) -> DataFrame:
    """The output rows of :func:`evaluate_group` for every group of queries.

    ``key`` is a function of ``query_id`` alone (so a query never straddles two groups):
    a hash bucket in :func:`evaluate`; ``bench/bench_spark.py`` also tries the query id
    itself (one Python call per query) to show why buckets are used.
    """
    def apply(run_table: pa.Table, qrels_table: pa.Table) -> pa.Table:
        return evaluate_group(run_table, qrels_table, plan)

    with sparkconf.pandas_advisory_ignored():  # Arrow only: PySpark 4.3's pandas 3 advice does not apply
        return (run.withColumn("group", key).groupBy("group")
                .cogroup(qrels.withColumn("group", key).groupBy("group"))
                .applyInArrow(apply, schema=from_arrow_schema(plan.schema())))


_AGGREGATES = {
    # Spark's form of serpeval.measures.spec.aggregate (tests check they agree), as Spark SQL
    # over a column expression. Nulls (rows that are not per-query values) must stay out:
    # greatest() would replace them.
    "mean": "avg({0})",
    "sum": "sum({0})",
    "gmean": f"exp(avg(CASE WHEN {{0}} IS NOT NULL THEN ln(greatest({{0}}, {GMEAN_FLOOR!r}D)) END))",
}


def _aggregate(how: str, column: str) -> str:
    if how not in _AGGREGATES:
        raise InvalidParameterError(f"no Spark form of the {how!r} aggregate.")
    return _AGGREGATES[how].format(column)


def _summarise(raw: DataFrame, measures: tuple[Measure, ...]) -> list[dict[str, Any]]:
    """One Spark job: per run, aggregates, coverage counters, missing ids and errors.

    The aggregates are written in Spark SQL (one ``expr`` each): building them from
    ``pyspark.sql.functions`` took ~5 calls into the JVM per measure (~0.15 s of CPU for 66
    measures); the expressions, and so the plan and the numbers, are the same."""
    def where(kind: str, value: str) -> str:
        return f"CASE WHEN kind = '{kind}' THEN {value} END"

    columns = [f"count({where(QUERY, '1')}) AS queries"]
    columns += [f"{_aggregate(m.spec.aggregate, where(QUERY, f'm{i}'))} AS m{i}" for i, m in enumerate(measures)]
    columns += [f"sum({where(STATS, c)}) AS {c}" for c in COUNTERS + SIGNATURE_PARTS]
    columns += [
        f"flatten(collect_list({where(STATS, 'missing_ids')})) AS missing_ids",
        f"collect_list({where(ERROR, 'struct(error_type, message)')}) AS errors",
    ]
    aggregated = raw.groupBy("run").agg(*(F.expr(c) for c in columns))
    return [row.asDict(recursive=True) for row in aggregated.collect()]


def _raise_errors(summaries: list[dict[str, Any]]) -> None:
    found = sorted((e["message"], e["error_type"]) for s in summaries for e in s["errors"])
    if not found:
        return
    message, kind = found[0]
    cls = getattr(errors_module, kind, None)
    if not (isinstance(cls, type) and issubclass(cls, SerpevalError)):
        cls = InputError
    more = f" ({len(found) - 1} more error(s) in other query groups.)" if len(found) > 1 else ""
    raise cls(message + more)


def _results(summaries: list[dict[str, Any]], measures: tuple[Measure, ...],
             plan: GroupPlan, missing: str) -> tuple[SparkRunResult, ...]:
    by_run = {s["run"]: s for s in summaries if s["run"] is not None}
    judged = max((s["judged_queries"] or 0 for s in by_run.values()), default=0)
    if judged == 0:
        raise EmptyInputError(f"{plan.qrels_label}: the qrels have no rows.")
    results = []
    for name, label in zip(plan.runs, plan.run_labels, strict=True):
        s = by_run[name]
        if not s["run_queries"]:
            raise EmptyInputError(f"{label}: the run has no rows.")
        coverage = Coverage(run=name, missing=tuple(sorted(s["missing_ids"])),
                            missing_policy=missing, **{c: int(s[c] or 0) for c in COUNTERS})
        require_evaluated(coverage, label, qrels=plan.qrels_label)
        _report_missing(coverage, missing, label)
        aggregates = {str(m): _number(s[f"m{i}"]) for i, m in enumerate(measures)}
        run_sig, qrels_sig = (signature_from_sums(*(int(s[f"{who}_sig_{part}"] or 0) for part in ("hi", "lo", "rows")))
                              for who in ("run", "qrels"))
        results.append(SparkRunResult(name, int(s["queries"]), aggregates, coverage, run_sig, qrels_sig))
    return tuple(results)


def _report_missing(coverage: Coverage, missing: str, label: str) -> None:
    """The local path's warning (``skip``) or error (``error``) for absent judged queries."""

    if not coverage.missing:
        return
    if missing == "error":
        raise missing_queries_error(label, coverage.run, coverage.missing)
    if missing == "skip":
        warnings.warn(missing_queries_warning(coverage), stacklevel=4)


def _number(value: Any) -> float:
    return float("nan") if value is None else float(value)
