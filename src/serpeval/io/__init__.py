"""Readers and writers for qrels and runs.

:func:`read_qrels` and :func:`read_run` choose the format from the file name: ``.parquet``,
``.jsonl``, ``.json`` (``{query_id: {doc_id: value}}``), ``.csv`` and ``.tsv`` (a header line),
anything else is TREC text, unless
its bytes are Parquet's; gzip is decompressed in every case (recognised by its magic bytes),
``-`` reads standard input, and pipes and FIFOs (``<(zcat run.gz)``) are read once
(:mod:`serpeval.io.inputs`).

Layer: io. May import core only (never ranking or anything above).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from serpeval.core.data import GradeKind, Qrels, Run, check_grade_kind
from serpeval.core.subtopics import SubtopicQrels
from serpeval.io.reading import open_source, values_fit
from serpeval.io.subtopics import as_subtopic_qrels, read_subtopic_qrels
from serpeval.io.tables import (
    qrels_from_dict,
    qrels_from_table,
    read_qrels_table,
    read_run_table,
    run_from_dict,
    run_from_table,
)
from serpeval.io.trec import read_trec_qrels, read_trec_run, run_name_of, write_trec_qrels, write_trec_run

__all__ = [
    "as_qrels",
    "as_run",
    "as_subtopic_qrels",
    "qrels_from_dict",
    "qrels_from_table",
    "read_qrels",
    "read_run",
    "read_subtopic_qrels",
    "read_trec_qrels",
    "read_trec_run",
    "run_from_dict",
    "run_from_table",
    "write_trec_qrels",
    "write_trec_run",
]

def read_qrels(source: str | Path | bytes | IO[bytes], *, grades: GradeKind = "int") -> Qrels:
    """Read qrels from a TREC, JSONL, JSON or Parquet file (or ``-`` for stdin).

    ``grades="float"`` takes fractional grades (any finite real number; see
    ``docs/how-to/fractional-grades.md``); the default refuses them, naming the line."""
    check_grade_kind(grades)
    opened, table_input = open_source(source)
    if table_input:
        with values_fit(opened.label):
            return read_qrels_table(opened, grades=grades)
    return read_trec_qrels(opened, grades=grades)


def read_run(
    source: str | Path | bytes | IO[bytes], *, name: str | None = None, comments: bool = True
) -> Run:
    """Read a run from a TREC, JSONL, JSON or Parquet file (or ``-`` for stdin)."""
    opened, table_input = open_source(source)
    if table_input:
        with values_fit(opened.label):
            return read_run_table(opened, name or run_name_of(opened.label))
    return read_trec_run(opened, name=name, comments=comments)

def as_qrels(obj: Any, grades: GradeKind | None = None) -> Qrels:
    """Turn a path, ``{qid: {docid: grade}}``, a DataFrame or an Arrow table into Qrels.
    Subtopic qrels become their topical view (each document's highest grade over its
    subtopics, :meth:`SubtopicQrels.topical`), as every non-diversity measure sees them.

    ``grades`` is the grade type: None keeps a :class:`Qrels`' own and reads anything else
    as ``"int"``; ``"float"`` takes fractional grades (a :class:`Qrels` with integer grades
    becomes float, exactly); ``"int"`` refuses them."""
    if grades is not None:
        check_grade_kind(grades)
    if isinstance(obj, SubtopicQrels):
        obj = obj.topical()
    if isinstance(obj, Qrels):
        return obj if grades is None else obj.as_grades(grades)
    kind: GradeKind = grades or "int"
    if isinstance(obj, (str, Path)):
        return read_qrels(obj, grades=kind)
    if isinstance(obj, Mapping):
        return qrels_from_dict(obj, grades=kind)
    return qrels_from_table(obj, grades=kind)


def as_run(obj: Any, name: str | None = None) -> Run:
    """Turn a path, ``{qid: {docid: score}}``, a DataFrame or an Arrow table into a Run."""
    if isinstance(obj, Run):
        return obj if name is None else obj.renamed(name)
    if isinstance(obj, (str, Path)):
        return read_run(obj, name=name)
    if isinstance(obj, Mapping):
        return run_from_dict(obj, name=name or "run")
    return run_from_table(obj, name=name or "run")
