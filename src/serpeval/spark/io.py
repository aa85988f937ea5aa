"""Read runs and qrels through Spark: TREC text, JSON lines or Parquet, local or object storage.

The format comes from the path as for the local readers: ``.parquet``/``.pq`` (a file or a
dataset folder), ``.jsonl``, anything else is TREC text (``.gz`` is decompressed by Spark).
TREC lines follow the local reader's rules: any whitespace separates fields, a byte order
mark starting a line is removed, blank and ``#`` comment lines are skipped and counted,
runs need at least 6 fields (``iter``, ``rank`` and the tag are ignored), qrels exactly 4
with an integer grade. A score (and a grade with ``grades="float"``) is a decimal number as
the local reader's ``float`` reads it (:data:`~serpeval.io.reading.DECIMAL`; Java's spellings
``1d``, ``1.5f``, ``0x1p3`` are refused), an integer grade decimal digits with an optional sign
(:data:`~serpeval.io.reading.INTEGER`). Query and doc ids must be UTF-8 text, as locally
(Spark's text reader keeps a line's bytes; its string functions would turn an invalid byte
into U+FFFD, so that ``caf\\xe8`` and ``caf\\xe9`` became one id). A TREC file is checked in
one Spark job before evaluation (malformed lines are refused with an example; a second job
runs only when some line is not UTF-8, to look at its ids); Spark does not know line
numbers, so the message shows the line's text instead.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame, DataFrameReader
from pyspark.sql import functions as F
from pyspark.sql import types as T

from serpeval.core.data import GradeKind, check_grade_kind
from serpeval.core.errors import EmptyInputError, ParseError
from serpeval.io.reading import DECIMAL, INTEGER, line_fields, show_line
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
    score = _number(fields[4], "double")
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
    grade = _number(fields[3], "double" if check_grade_kind(grades) == "float" else "bigint")
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
        reader = spark.read.option("columnNameOfCorruptRecord", _CORRUPT)
        table = reader.json(path)
        if _CORRUPT in table.columns:
            _refuse_corrupt(reader, table, path)
        return table
    return None


_CORRUPT = "_corrupt_record"  # where Spark's JSON reader puts a line that is not a JSON object


def _refuse_corrupt(reader: DataFrameReader, table: DataFrame, path: str) -> None:
    """Refuse a JSON lines file with a line that is not a JSON object, quoting it (Spark has
    no line numbers). Spark adds the column only when its schema inference met such a line.
    Spark refuses a query of raw JSON that reads the corrupt-record column only, so the file
    is read again with one more (absent, always null) column, which the query reads too."""
    probe = "_serpeval_probe"
    schema = T.StructType([*table.schema.fields, T.StructField(probe, T.StringType())])
    found = (reader.schema(schema).json(path).where(F.col(_CORRUPT).isNotNull())
             .select(_CORRUPT, probe).limit(1).collect())
    record = str(found[0][_CORRUPT]) if found else "?"
    raise ParseError(
        f"{path}: not valid JSON, or not a JSON object: {show_line(record.encode())}. "
        "The local backend (serpeval evaluate without --backend spark) names the line number."
    )


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


# The local grammars (Python's re syntax of these patterns is Java's too), anchored at the
# very end (Java's ``$`` would also match before a final U+2028 or U+0085).
_SPELLINGS = {
    "double": "(?i)^(?:" + DECIMAL.pattern.decode() + r")\z",
    "bigint": "^" + INTEGER.pattern.decode() + r"\z",
}


def _number(text: Column, kind: str) -> Column:
    """``text`` as a number when it is spelled as the local reader wants, else null.

    Spark's cast reads more than the local reader (Java's ``1d``, ``1.5f``, ``0x1p3``, and
    ``1.0`` as a bigint), so the spelling is checked first. A leading ``+`` is removed
    before a double is cast: Spark reads ``+nan`` as no number, the local reader as NaN
    (refused later as a NaN score, as locally)."""
    if kind == "double":
        text_ok = F.regexp_replace(text, r"^\+", "")
    else:
        text_ok = text
    return F.when(text.rlike(_SPELLINGS[kind]), text_ok.try_cast(kind))


def _ids_are_utf8(line: bytes | None) -> bool:
    """Whether the query and doc ids (fields 1 and 3) of a raw line are UTF-8, as the local
    reader requires (other fields, like the run tag, may hold any bytes there too)."""
    if line is None:
        return True
    fields = line_fields(bytes(line))
    try:
        for field in fields[0:1] + fields[2:3]:
            field.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _check_ids(lines: DataFrame, content: Column, path: str) -> None:
    """Refuse lines whose ids are not UTF-8 text (a second job, run only when some content
    line is not UTF-8: a Python check of its raw bytes, split as the local reader splits)."""
    # a plain Python UDF, said so: left to infer it from the type hints, pyspark 4.3 warns
    # that it cannot (the hints are strings here)
    check = F.udf(_ids_are_utf8, "boolean", useArrow=False)
    raw = lines.where(content & ~F.is_valid_utf8(F.col("value"))).select(
        F.col("value").cast("binary").alias("raw"))
    bad = ~check(F.col("raw"))
    row = raw.agg(F.count_if(bad).alias("bad"),
                  F.first(F.when(bad, F.col("raw")), ignorenulls=True).alias("example")).collect()[0]
    if row["bad"]:
        raise ParseError(
            f"{path}: {row['bad']} line(s) have a query or doc id that is not UTF-8 text, e.g. "
            f"{show_line(bytes(row['example']))}; ids must be UTF-8 text. "
            "The local backend (serpeval evaluate without --backend spark) names the line numbers."
        )


def _check_lines(lines: DataFrame, content: Column, valid: Column, path: str,
                 columns: str, what: str, grade: str = "integer grade") -> int:
    """One Spark job: count skipped and malformed lines; refuse malformed ones."""
    bad = content & ~valid
    row = lines.agg(
        F.count("*").alias("lines"),
        F.count_if(~content).alias("skipped"),
        F.count_if(bad).alias("bad"),
        F.first(F.when(bad, F.col("value")), ignorenulls=True).alias("example"),
        F.count_if(content & ~F.is_valid_utf8(F.col("value"))).alias("not_utf8"),
    ).collect()[0]
    if row["bad"]:
        raise ParseError(
            f"{path}: {row['bad']} line(s) are not '{columns}' lines with a numeric "
            f"{'score' if what == 'run' else grade}, e.g. {row['example']!r}. "
            "The local backend (serpeval evaluate without --backend spark) names the line numbers."
        )
    if row["not_utf8"]:
        _check_ids(lines, content, path)
    if row["lines"] == row["skipped"]:
        raise EmptyInputError(f"{path}: the {what} has no data lines; expected lines '{columns}'.")
    return int(row["skipped"])
