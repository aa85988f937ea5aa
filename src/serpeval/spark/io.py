"""Read runs and qrels through Spark: TREC text, JSON lines or Parquet, local or object storage.

The format comes from the path as for the local readers: ``.parquet``/``.pq`` (a file or a
dataset folder), ``.jsonl``, anything else is TREC text (``.gz`` is decompressed by Spark).
TREC lines follow the local reader's rules: any whitespace separates fields, a byte order
mark starting a line is removed, blank and ``#`` comment lines are skipped and counted,
runs need at least 6 fields (``iter``, ``rank`` and the tag are ignored), qrels exactly 4
with an integer grade. A TREC file is checked in one Spark job before evaluation
(malformed lines are refused with an example); Spark does not know line numbers, so the
message shows the line's text instead.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from serpeval.core.data import GradeKind, check_grade_kind
from serpeval.core.errors import EmptyInputError, ParseError
from serpeval.io.trec import QRELS_COLUMNS, RUN_COLUMNS, run_name_of
from serpeval.spark.frames import SparkSource

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["input_format", "read_qrels", "read_run"]


def read_run(spark: SparkSession, path: str, *, name: str | None = None) -> SparkSource:
    """Read a run (TREC ``qid Q0 docid rank score tag``, JSON lines or Parquet) with Spark."""
    display = name or run_name_of(path.rstrip("/"))
    table = _read_table(spark, path)
    if table is not None:
        return SparkSource(table, path, display)
    lines, fields, content = _lines(spark, path)
    score = fields[4].try_cast("double")
    frame = lines.where(content).select(
        fields[0].alias("query_id"), fields[2].alias("doc_id"), score.alias("score"))
    valid = (F.size(fields) >= 6) & score.isNotNull()
    skipped = _check_lines(lines, content, valid, path, RUN_COLUMNS, "run")
    return SparkSource(frame, path, display, skipped)


def read_qrels(spark: SparkSession, path: str, *, grades: GradeKind = "int") -> SparkSource:
    """Read qrels (TREC ``qid iter docid rel``, JSON lines or Parquet) with Spark; with
    ``grades="float"`` a TREC grade is read as a double (pass the same ``grades`` to
    :func:`serpeval.spark.evaluate`, whose tasks check each grade)."""
    table = _read_table(spark, path)
    if table is not None:
        return SparkSource(table, path, "qrels")
    lines, fields, content = _lines(spark, path)
    grade = fields[3].try_cast("double" if check_grade_kind(grades) == "float" else "bigint")
    frame = lines.where(content).select(
        fields[0].alias("query_id"), fields[2].alias("doc_id"), grade.alias("relevance"))
    valid = (F.size(fields) == 4) & grade.isNotNull()
    skipped = _check_lines(lines, content, valid, path, QRELS_COLUMNS, "qrels",
                           "real grade" if grades == "float" else "integer grade")
    return SparkSource(frame, path, "qrels", skipped)


def input_format(path: str) -> str:
    """``parquet``, ``jsonl`` or ``trec`` by the path's suffix (no Spark needed: the CLI checks
    every input before a session starts). A ``.json`` file is a ParseError: that format is
    read by the local backend only."""
    suffixes = PurePosixPath(path.rstrip("/").lower().removesuffix(".gz")).suffixes
    if suffixes[-1:] in ([".parquet"], [".pq"]):
        return "parquet"
    if suffixes[-1:] == [".jsonl"]:
        return "jsonl"
    if suffixes[-1:] == [".json"]:
        raise ParseError(f"{path}: {{query_id: {{doc_id: value}}}} JSON is read by the local "
                         "backend only; use JSON lines (.jsonl), Parquet or TREC text with Spark.")
    return "trec"


def _read_table(spark: SparkSession, path: str) -> DataFrame | None:
    """Parquet or JSON lines by the path's suffix; None for TREC text."""
    fmt = input_format(path)
    if fmt == "parquet":
        return spark.read.parquet(path)
    if fmt == "jsonl":
        return spark.read.json(path)
    return None


def _lines(spark: SparkSession, path: str) -> tuple[DataFrame, Column, Column]:
    """The text lines, each line's whitespace-separated fields, and which lines hold data."""
    lines = spark.read.text(path)
    # A byte order mark starting a line is removed, as by the local reader (Hadoop's line
    # reader drops only the one at the start of a file; `cat` puts others at line starts).
    unmarked = F.regexp_replace(F.col("value"), "^\ufeff", "")
    stripped = F.regexp_replace(unmarked, r"^\s+|\s+$", "")
    fields = F.split(stripped, r"\s+")
    content = (stripped != "") & ~stripped.startswith("#")
    return lines, fields, content


def _check_lines(lines: DataFrame, content: Column, valid: Column, path: str,
                 columns: str, what: str, grade: str = "integer grade") -> int:
    """One Spark job: count skipped and malformed lines; refuse malformed ones."""
    bad = content & ~valid
    row = lines.agg(
        F.count("*").alias("lines"),
        F.count_if(~content).alias("skipped"),
        F.count_if(bad).alias("bad"),
        F.first(F.when(bad, F.col("value")), ignorenulls=True).alias("example"),
    ).collect()[0]
    if row["bad"]:
        raise ParseError(
            f"{path}: {row['bad']} line(s) are not '{columns}' lines with a numeric "
            f"{'score' if what == 'run' else grade}, e.g. {row['example']!r}. "
            "The local backend (serpeval evaluate without --backend spark) names the line numbers."
        )
    if row["lines"] == row["skipped"]:
        raise EmptyInputError(f"{path}: the {what} has no data lines; expected lines '{columns}'.")
    return int(row["skipped"])
