"""Spark DataFrames in, normalised columns out: the checks that need only the schema.

A run becomes ``query_id string, doc_id string, score double`` and qrels become
``query_id string, doc_id string, relevance bigint`` (or ``double`` when the grades are
stored as floats: the tasks then check they are integers). Columns are found by the names
given, or else by the aliases the local table readers accept (:data:`serpeval.io.tables.ALIASES`,
ignoring case), so a Parquet file reads the same columns on both backends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from serpeval.core.errors import InputError, ParseError
from serpeval.io.tables import ALIASES

if TYPE_CHECKING:
    from pyspark.sql import Column

__all__ = ["SparkSource", "qrels_frame", "run_frame", "unwrap"]


@dataclass(frozen=True, eq=False)
class SparkSource:
    """A run or qrels DataFrame read from files by :mod:`serpeval.spark.io`.

    Attributes:
        frame: the DataFrame (``query_id, doc_id, score`` or ``query_id, doc_id, relevance``).
        source: the path it was read from (named in messages and reports).
        name: display name of a run (the file name without extensions).
        skipped_lines: blank and ``#`` comment lines the TREC reader skipped.
    """

    frame: DataFrame
    source: str
    name: str = "run"
    skipped_lines: int = 0


def _col(name: str) -> Column:
    """The column named ``name``, quoted: ``F.col("q.id")`` would read a field ``id`` of a
    struct ``q``."""
    return F.col("`" + name.replace("`", "``") + "`")


def _resolve(frame: DataFrame, role: str, given: str | None, label: str, option: str) -> str:
    names = {name.lower(): name for name in frame.columns}
    wanted = (given,) if given else ALIASES[role]
    for alias in wanted:
        if alias.lower() in names:
            return names[alias.lower()]
    raise InputError(
        f"{label}: no {role} column; expected {' or '.join(repr(w) for w in wanted)}, found "
        f"columns {', '.join(frame.columns) or '(none)'}. Pass {option}='<column name>'."
    )


def _id_column(frame: DataFrame, name: str, role: str, label: str) -> Column:
    kind = frame.schema[name].dataType
    if isinstance(kind, (T.StringType, T.VarcharType, T.CharType, T.IntegralType)):
        return _col(name).cast("string").alias(role)
    raise InputError(
        f"{label}: the {role} column {name!r} has type {kind.simpleString()}; expected strings "
        f"(or integers). Cast it, e.g. df.withColumn({name!r}, df[{name!r}].cast('string'))."
    )


def run_frame(frame: DataFrame, *, label: str, query_col: str | None = None,
              doc_col: str | None = None, score_col: str | None = None,
              run_col: str | None = None) -> DataFrame:
    """``query_id string, doc_id string, score double`` (and ``run string`` from ``run_col``)
    from a run DataFrame."""
    q = _resolve(frame, "query_id", query_col, label, "query_col")
    d = _resolve(frame, "doc_id", doc_col, label, "doc_col")
    s = _resolve(frame, "score", score_col, label, "score_col")
    kind = frame.schema[s].dataType
    if not isinstance(kind, T.NumericType):
        raise ParseError(f"{label}: the score column {s!r} has type {kind.simpleString()}; "
                         "expected numbers.")
    columns = [_id_column(frame, q, "query_id", label), _id_column(frame, d, "doc_id", label),
               _col(s).cast("double").alias("score")]
    if run_col is not None:
        if run_col not in frame.columns:
            raise InputError(f"{label}: no column {run_col!r} (run_col); found columns "
                             f"{', '.join(frame.columns)}.")
        columns.append(_col(run_col).cast("string").alias("run"))
    return frame.select(*columns)


def qrels_frame(frame: DataFrame, *, label: str, query_col: str | None = None,
                doc_col: str | None = None, relevance_col: str | None = None) -> DataFrame:
    """``query_id string, doc_id string, relevance bigint|double`` from a qrels DataFrame."""
    q = _resolve(frame, "query_id", query_col, label, "query_col")
    d = _resolve(frame, "doc_id", doc_col, label, "doc_col")
    r = _resolve(frame, "relevance", relevance_col, label, "relevance_col")
    kind = frame.schema[r].dataType
    if isinstance(kind, T.BooleanType):  # refused as by the local table readers
        raise ParseError(f"{label}: the relevance column {r!r} holds true/false; expected an integer "
                         "grade (0, 1, 2, ...). Write the grades as numbers (true as 1, false as 0).")
    if isinstance(kind, T.IntegralType):
        grade = _col(r).cast("bigint")
    elif isinstance(kind, (T.FractionalType,)):
        grade = _col(r).cast("double")  # the tasks refuse non-integral values
    else:
        raise ParseError(f"{label}: the relevance column {r!r} has type {kind.simpleString()}; "
                         "expected integer grades.")
    return frame.select(
        _id_column(frame, q, "query_id", label),
        _id_column(frame, d, "doc_id", label),
        grade.alias("relevance"),
    )


def unwrap(obj: Any, default_label: str) -> tuple[DataFrame, str, SparkSource | None]:
    """The DataFrame, its label for messages, and the :class:`SparkSource` it came in (if any)."""
    if isinstance(obj, SparkSource):
        return obj.frame, obj.source, obj
    if isinstance(obj, DataFrame):
        return obj, default_label, None
    raise InputError(f"{default_label}: expected a Spark DataFrame, found {type(obj).__name__}. "
                     "Use serpeval.evaluate for local data.")
