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

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from serpeval.core.data import Qrels, Run
from serpeval.core.errors import ParseError
from serpeval.core.subtopics import SubtopicQrels
from serpeval.io.inputs import Input, open_input
from serpeval.io.subtopics import as_subtopic_qrels, read_subtopic_qrels
from serpeval.io.tables import qrels_from_dict, qrels_from_table, run_from_dict, run_from_table
from serpeval.io.trec import read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run

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

_TABLE_SUFFIXES = (".parquet", ".pq", ".jsonl", ".json", ".csv", ".tsv")


def _is_table(source: object) -> bool:
    if not isinstance(source, (str, Path)) or str(source) == "-":
        return False
    return Path(source).name.lower().removesuffix(".gz").endswith(_TABLE_SUFFIXES)


def _open(source: str | Path | bytes | IO[bytes]) -> tuple[Input, bool]:
    """The opened input, and whether it is a table (by its name, or Parquet by its bytes)."""
    opened = open_input(source)
    return opened, _is_table(source) or opened.parquet


@contextmanager
def _values_fit(label: str) -> Iterator[None]:
    """Arrow's refusal to convert a column (a uint64 beyond int64, ...) as a ParseError naming
    the file."""
    import pyarrow as pa

    try:
        yield
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError) as exc:
        detail = " ".join(str(exc).split())
        raise ParseError(f"{label}: a column cannot be read as ids or numbers ({detail}).") from None


def read_qrels(source: str | Path | bytes | IO[bytes]) -> Qrels:
    """Read qrels from a TREC, JSONL, JSON or Parquet file (or ``-`` for stdin)."""
    opened, table_input = _open(source)
    if table_input:
        from serpeval.io.tables import read_qrels_table

        with _values_fit(opened.label):
            return read_qrels_table(opened)
    return read_trec_qrels(opened)


def read_run(
    source: str | Path | bytes | IO[bytes], *, name: str | None = None, comments: bool = True
) -> Run:
    """Read a run from a TREC, JSONL, JSON or Parquet file (or ``-`` for stdin)."""
    opened, table_input = _open(source)
    if table_input:
        from serpeval.io.tables import read_run_table
        from serpeval.io.trec import run_name_of

        with _values_fit(opened.label):
            return read_run_table(opened, name or run_name_of(opened.label))
    return read_trec_run(opened, name=name, comments=comments)

def as_qrels(obj: Any) -> Qrels:
    """Turn a path, ``{qid: {docid: grade}}``, a DataFrame or an Arrow table into Qrels.
    Subtopic qrels become their topical view (each document's highest grade over its
    subtopics, :meth:`SubtopicQrels.topical`), as every non-diversity measure sees them."""
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, SubtopicQrels):
        return obj.topical()
    if isinstance(obj, (str, Path)):
        return read_qrels(obj)
    if isinstance(obj, Mapping):
        return qrels_from_dict(obj)
    return qrels_from_table(obj)


def as_run(obj: Any, name: str | None = None) -> Run:
    """Turn a path, ``{qid: {docid: score}}``, a DataFrame or an Arrow table into a Run."""
    if isinstance(obj, Run):
        return obj if name is None else obj.renamed(name)
    if isinstance(obj, (str, Path)):
        return read_run(obj, name=name)
    if isinstance(obj, Mapping):
        return run_from_dict(obj, name=name or "run")
    return run_from_table(obj, name=name or "run")
