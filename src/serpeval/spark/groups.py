"""What each Spark task runs: one group of queries through the local machinery.

Spark co-groups the run rows and the judgments of a group of queries (a hash bucket of the
query id, so a query never straddles two groups) and hands them to :func:`evaluate_group`
as two Arrow tables. The function builds :class:`~serpeval.core.data.Qrels` and
:class:`~serpeval.core.data.Run`, ranks them with :func:`serpeval.ranking.rank` and computes
every measure with its one kernel: exactly what :func:`serpeval.evaluate` does, so every
registered measure works on Spark with no Spark-specific code per measure.

It returns one Arrow table (schema :meth:`GroupPlan.schema`) holding three kinds of rows:

* ``kind="query"``: one per evaluated query and run, the value of every measure in
  columns ``m0, m1, ...`` (in the order of :attr:`GroupPlan.measures`);
* ``kind="stats"``: one per run and group, the :class:`~serpeval.ranking.Coverage`
  counters of the group (they add up over groups), the parts of the run's and the
  judgments' content signatures (they add up too: computed in the same pass, no second
  read of the data) and the ids of its missing queries;
* ``kind="error"``: a :class:`~serpeval.core.errors.SerpevalError` found in the group (a null
  id, a NaN score, a document retrieved or judged twice), raised again on the driver with
  the same class. Raising inside a Spark task would reach the user as a Java stack trace.

This module imports no pyspark: it is a plain Arrow-in, Arrow-out function, tested
without Spark.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from serpeval.core.data import GradeKind, Qrels, Run, grades_of_kind
from serpeval.core.duplicates import find_duplicate
from serpeval.core.errors import DuplicateError, InputError, ParseError, SerpevalError
from serpeval.core.fingerprints import finish_signature, signature_part
from serpeval.core.ties import check_ties
from serpeval.measures import parse_measures
from serpeval.ranking import Coverage, QrelsIndex, index_qrels, rank

if TYPE_CHECKING:
    from serpeval.measures import Measure
    from serpeval.ranking import Missing

__all__ = ["COUNTERS", "ERROR", "QUERY", "SIGNATURE_PARTS", "STATS", "GroupPlan", "evaluate_group",
           "signature_from_sums"]

QUERY, STATS, ERROR = "query", "stats", "error"

#: The integer counters of :class:`Coverage`; each adds up over query groups.
COUNTERS: tuple[str, ...] = tuple(f.name for f in fields(Coverage) if f.type in ("int", int))

#: The content signatures' parts (:func:`~serpeval.core.fingerprints.signature_part`) of the
#: group's run rows and judgments: each 64-bit sum of row hashes as its high and low 32 bits
#: (so that Spark adds them up over groups in ``bigint`` without overflow), and the rows.
SIGNATURE_PARTS: tuple[str, ...] = ("run_sig_hi", "run_sig_lo", "run_sig_rows",
                                    "qrels_sig_hi", "qrels_sig_lo", "qrels_sig_rows")


def signature_columns(part: tuple[int, int]) -> tuple[int, int, int]:
    """``(total >> 32, total & 0xFFFFFFFF, rows)`` of a :func:`signature_part`."""
    total, rows = part
    return total >> 32, total & 0xFFFFFFFF, rows


def signature_from_sums(high: int, low: int, rows: int) -> str:
    """The content signature from the sums over groups of :func:`signature_columns`:
    ``(high * 2^32 + low) mod 2^64`` is the sum of all row hashes."""
    return finish_signature(((high << 32) + low) % (1 << 64), rows)


@dataclass(frozen=True)
class GroupPlan:
    """Everything a task needs besides its rows (small, pickled into every task).

    Attributes:
        measures: canonical measure names, in output order.
        runs: the run names; a group evaluates every one of them, also those with no rows
            in the group (their judged queries there are missing).
        missing: ``skip`` or ``zero``; ``error`` is decided on the driver from the counts.
        depth, judged_only, float32_scores, ties, grades: as in :func:`serpeval.evaluate`.
        run_labels: how error messages name each run (a path, ``run DataFrame``), in the
            order of ``runs``; ``qrels_label`` names the qrels.
    """

    measures: tuple[str, ...]
    runs: tuple[str, ...] = ("run",)
    missing: Missing = "skip"
    depth: int | None = None
    judged_only: bool = False
    float32_scores: bool = False
    run_labels: tuple[str, ...] = ("run DataFrame",)
    ties: str = "trec_eval"
    qrels_label: str = "qrels DataFrame"
    grades: GradeKind = "int"

    @cached_property
    def parsed(self) -> tuple[Measure, ...]:
        """The bound measures (parsed once per task process)."""
        return parse_measures(list(self.measures))

    def schema(self) -> pa.Schema:
        """The Arrow schema of :func:`evaluate_group`'s output."""
        return pa.schema(
            [("kind", pa.string()), ("run", pa.string()), ("query_id", pa.string())]
            + [(f"m{i}", pa.float64()) for i in range(len(self.measures))]
            + [(name, pa.int64()) for name in COUNTERS + SIGNATURE_PARTS]
            + [("missing_ids", pa.list_(pa.string())), ("error_type", pa.string()),
               ("message", pa.string())]
        )


def evaluate_group(run: pa.Table, qrels: pa.Table, plan: GroupPlan) -> pa.Table:
    """Evaluate the queries of one group.

    Args:
        run: columns ``query_id`` (string), ``doc_id`` (string), ``score`` (float64) and,
            when several runs are evaluated, ``run`` (string). Other columns are ignored.
        qrels: columns ``query_id``, ``doc_id`` and ``relevance`` (int64, or float64 with
            integral values).
        plan: the measures and options.

    Returns:
        A table with :meth:`GroupPlan.schema`: per-query rows, one stats row per run, or a
        single error row.
    """
    try:
        judgments = _qrels(qrels, plan.qrels_label, plan.grades)
        index = index_qrels(judgments)
        _refuse_duplicate_judgments(judgments, plan.qrels_label)
        qrels_part = signature_columns(signature_part(judgments.query_ids, judgments.doc_ids, judgments.relevance))
        parts = [_evaluate_run(index, name, _run_rows(run, name, label), plan, qrels_part)
                 for name, label in zip(plan.runs, plan.run_labels, strict=True)]
    except SerpevalError as exc:
        return _error_table(exc, plan)
    return pa.concat_tables(table for part in parts for table in part)


# ----------------------------------------------------------------------------- inputs


def _qrels(table: pa.Table, label: str, kind: GradeKind = "int") -> Qrels:
    """Qrels from the group's judgments, refusing nulls and what is not a grade
    (:func:`serpeval.core.data.check_grades`: 2.5, NaN, infinity, beyond ±(2^53 - 1); with
    ``kind="float"``, :func:`~serpeval.core.data.check_float_grades`: NaN, infinity, beyond)."""
    _refuse_nulls(table, ("query_id", "doc_id", "relevance"), label)

    def where(i: int) -> str:
        return (f"{label}: the relevance of document {table['doc_id'][i].as_py()!r} for query "
                f"{table['query_id'][i].as_py()!r}")

    grades = grades_of_kind(table["relevance"], where, kind)
    return Qrels(table["query_id"], table["doc_id"], grades, source=label, grades=kind)


def _refuse_duplicate_judgments(qrels: Qrels, label: str) -> None:
    """Refuse a (query, doc) judged twice (:func:`find_duplicate` screens by hash first)."""
    first, _second = find_duplicate(qrels.query_ids, qrels.doc_ids)
    if first >= 0:
        raise DuplicateError(
            f"{label}: document {qrels.doc_ids[first].as_py()!r} is judged twice for query "
            f"{qrels.query_ids[first].as_py()!r}. Keep one judgment per (query, document)."
        )


def _run_rows(table: pa.Table, name: str, label: str) -> Run:
    """The rows of run ``name`` in this group, refusing nulls and NaN scores."""
    if "run" in table.column_names:
        table = table.filter(pc.equal(table["run"], name))
    _refuse_nulls(table, ("query_id", "doc_id", "score"), label)
    scores = table["score"].to_numpy()
    nan = np.flatnonzero(np.isnan(scores))
    if nan.size:
        raise ParseError(
            f"{label}: the score of document {table['doc_id'][int(nan[0])].as_py()!r} for query "
            f"{table['query_id'][int(nan[0])].as_py()!r} is NaN (at least {nan.size} such "
            "row(s)); scores must be numbers (NaN has no rank)."
        )
    return Run(table["query_id"], table["doc_id"], scores, name=name, source=label,
               source_kind="table")


def _refuse_nulls(table: pa.Table, columns: tuple[str, ...], label: str) -> None:
    for column in columns:
        values = table[column]
        if values.null_count:
            row = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
            query = table["query_id"][row].as_py()
            example = f" (e.g. a row of query {query!r})" if query is not None else ""
            role = column.replace("_", " ")
            raise InputError(
                f"{label}: at least {values.null_count} row(s) have no {role} (null){example}. "
                "Fill or drop them before evaluating."
            )


# ----------------------------------------------------------------------------- evaluation


def _evaluate_run(
    index: QrelsIndex, name: str, run: Run, plan: GroupPlan, qrels_part: tuple[int, int, int] = (0, 0, 0)
) -> list[pa.Table]:
    try:
        rankings = rank(index, run, missing=plan.missing, depth=plan.depth,
                        judged_only=plan.judged_only, float32_scores=plan.float32_scores,
                        ties=check_ties(plan.ties))
    except DuplicateError as refused:
        raise DuplicateError(
            f"{run.source}: document {refused.doc!r} is retrieved twice for query {refused.query!r}. "
            "trec_eval refuses such runs; keep one row per (query, document), e.g. with "
            "dropDuplicates on the query and doc columns."
        ) from None
    n = rankings.n_queries
    values = [m.compute(rankings) for m in plan.parsed]
    per_query = {
        "kind": pa.repeat(pa.scalar(QUERY), n),
        "run": pa.repeat(pa.scalar(name), n),
        "query_id": pa.array(rankings.query_ids, type=pa.string()),
        **{f"m{i}": pa.array(column, type=pa.float64()) for i, column in enumerate(values)},
    }
    run_part = signature_columns(signature_part(run.query_ids, run.doc_ids, run.scores))
    stats = _stats_row(rankings.coverage, plan, run_part + qrels_part)
    return [_complete(per_query, n, plan), stats]


def _stats_row(coverage: Coverage, plan: GroupPlan, signature: tuple[int, ...] = (0,) * 6) -> pa.Table:
    """The group's coverage counters of one run, its signature parts (:data:`SIGNATURE_PARTS`;
    every run's row carries the group's judgments' part) and missing query ids."""
    row = {
        "kind": [STATS],
        "run": [coverage.run],
        **{name: [getattr(coverage, name)] for name in COUNTERS},
        **{name: [value] for name, value in zip(SIGNATURE_PARTS, signature, strict=True)},
        "missing_ids": pa.array([list(coverage.missing)], type=pa.list_(pa.string())),
    }
    return _complete(row, 1, plan)


def _error_table(exc: SerpevalError, plan: GroupPlan) -> pa.Table:
    return _complete({"kind": [ERROR], "error_type": [type(exc).__name__], "message": [str(exc)]},
                     1, plan)


def _complete(columns: dict[str, Any], n: int, plan: GroupPlan) -> pa.Table:
    """A table with the full output schema: the given columns, nulls elsewhere."""
    schema = plan.schema()
    arrays = []
    for f in schema:
        value = columns.get(f.name)
        if value is None:
            arrays.append(pa.nulls(n, type=f.type))
        elif isinstance(value, pa.Array):
            arrays.append(value)
        else:
            arrays.append(pa.array(value, type=f.type))
    return pa.Table.from_arrays(arrays, schema=schema)

