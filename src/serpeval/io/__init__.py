"""Readers and writers for qrels and runs.

:func:`read_qrels` and :func:`read_run` choose the format from the file name: ``.parquet``,
``.jsonl``, ``.json`` (``{query_id: {doc_id: value}}``), anything else is TREC text, unless
its bytes are Parquet's; gzip is decompressed in every case (recognised by its magic bytes),
``-`` reads standard input, and pipes and FIFOs (``<(zcat run.gz)``) are read once
(:mod:`serpeval.io.inputs`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from serpeval.data import Qrels, Run
from serpeval.errors import ParseError
from serpeval.io.inputs import Input, open_input
from serpeval.io.tables import qrels_from_dict, qrels_from_table, run_from_dict, run_from_table
from serpeval.io.trec import read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run

__all__ = [
    "qrels_from_dict",
    "qrels_from_table",
    "read_qrels",
    "read_run",
    "read_trec_qrels",
    "read_trec_run",
    "run_from_dict",
    "run_from_table",
    "write_trec_qrels",
    "write_trec_run",
]

_TABLE_SUFFIXES = (".parquet", ".pq", ".jsonl", ".json")


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
        from serpeval.io.tables import read_table

        label = opened.label
        table, blank = read_table(opened)
        with _values_fit(label):
            q = qrels_from_dict(table) if isinstance(table, dict) else qrels_from_table(table, label=label)
        return Qrels(q.query_ids, q.doc_ids, q.relevance, source=label, skipped_lines=blank)
    return read_trec_qrels(opened)


def read_run(
    source: str | Path | bytes | IO[bytes], *, name: str | None = None, comments: bool = True
) -> Run:
    """Read a run from a TREC, JSONL, JSON or Parquet file (or ``-`` for stdin)."""
    opened, table_input = _open(source)
    if table_input:
        from serpeval.io.tables import read_table
        from serpeval.io.trec import _stem

        label = opened.label
        display = name or _stem(label)
        table, blank = read_table(opened)
        with _values_fit(label):
            run = run_from_dict(table, name=display) if isinstance(table, dict) else \
                run_from_table(table, name=display, label=label)
        return Run(run.query_ids, run.doc_ids, run.scores, name=display, source=label,
                   skipped_lines=blank, source_kind="table")
    return read_trec_run(opened, name=name, comments=comments)
