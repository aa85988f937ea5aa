"""Subtopic qrels (``qid subtopic docid rel``, NIST ndeval's format) from files and tables.

TREC text is read with the same two parsers as ordinary qrels (:mod:`serpeval.io.trec`:
Arrow's reader for single-spaced files, a careful line-by-line reader for the rest, errors
naming ``path:line``), keeping the second column as the subtopic id. Parquet, JSON lines
and DataFrames need a subtopic column, named (case-insensitively) one of
``subtopic_id subtopic iteration iter intent`` (``iteration`` is what ir_measures calls it).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

import numpy as np
import pyarrow as pa

from serpeval.core.data import check_grades
from serpeval.core.errors import EmptyInputError, InputError, ParseError
from serpeval.core.subtopics import SUBTOPIC_QRELS_COLUMNS, SubtopicQrels, subtopic_qrels_from_rows
from serpeval.io.inputs import Input
from serpeval.io.reading import (
    GRADE_SPELLINGS,
    INTEGER,
    Rows,
    find_column,
    no_nulls,
    open_source,
    show_line,
    values_fit,
)
from serpeval.io.tables import read_table, refuse_boolean_relevance, to_arrow
from serpeval.io.trec import Source, careful_rows, count_skipped, fast_table, grade_number, physical_line

__all__ = ["SUBTOPIC_ALIASES", "as_subtopic_qrels", "read_subtopic_qrels", "subtopic_qrels_from_table"]

SUBTOPIC_ALIASES = ("subtopic_id", "subtopic", "iteration", "iter", "intent")


def read_subtopic_qrels(source: str | Path | bytes | IO[bytes]) -> SubtopicQrels:
    """Read subtopic qrels ``qid subtopic docid rel`` from a TREC text, JSONL or Parquet file.

    Raises:
        ParseError: a malformed line or a non-integer grade (``path:line``).
        DuplicateError: the same (query, subtopic, document) is judged twice.
        EmptyInputError: the file has no data lines.
    """
    opened, table_input = open_source(source)
    if table_input:
        with values_fit(opened.label):
            table = read_table(opened)
        if isinstance(table.data, dict):
            raise ParseError(f"{table.label}: subtopic qrels cannot be a JSON object {{query: {{doc: grade}}}}; "
                             "give JSON lines or Parquet with query_id, subtopic_id, doc_id, relevance columns.")
        rows = Rows(table.label, table.lines)
        qrels = _from_table(table.data, rows)
        return SubtopicQrels(qrels.query_ids, qrels.subtopic_ids, qrels.doc_ids, qrels.relevance,
                             source=table.label, skipped_lines=table.skipped)
    return _read_trec(opened)


def _read_trec(opened: Input) -> SubtopicQrels:
    src = Source(opened)
    names = ["query_id", "subtopic_id", "doc_id", "relevance"]
    fast = fast_table(src, names, {"query_id": pa.string(), "subtopic_id": pa.string(),
                                    "doc_id": pa.string(), "relevance": GRADE_SPELLINGS}, number="relevance")
    lines: list[int] | None
    if fast is not None:
        table, skipped = fast
        q, s, d = table["query_id"], table["subtopic_id"], table["doc_id"]
        grades = check_grades(table["relevance"], lambda row: f"{src.label}:{physical_line(src.data, row)}")
        lines = None
    else:
        q_list, s_list, d_list, g_list, lines = _careful(src.data, src.label)
        q, s, d = (pa.array(x, pa.string()) for x in (q_list, s_list, d_list))
        grades = np.array(g_list, dtype=np.int64)
        skipped = count_skipped(src.data, len(g_list))
    if len(grades) == 0:
        raise EmptyInputError(f"{src.label}: the subtopic qrels have no data lines; expected lines "
                              f"'{SUBTOPIC_QRELS_COLUMNS}'.")
    qrels = SubtopicQrels(q, s, d, grades, source=src.label, skipped_lines=skipped)

    def where(row: int) -> str:
        return f"{src.label}:{lines[row] if lines is not None else physical_line(src.data, row)}"

    return qrels.check_unique(where)


def _careful(data: bytes, label: str) -> tuple[list[str], list[str], list[str], list[int], list[int]]:
    subtopics: list[str] = []

    def grade(number: int, line: bytes, fields: list[bytes]) -> int:
        if len(fields) != 4:
            hint = " This looks like a run line; are the qrels and run arguments swapped?" if len(fields) == 6 else ""
            raise ParseError(f"{label}:{number}: expected 4 columns ({SUBTOPIC_QRELS_COLUMNS}), found "
                             f"{len(fields)}: {show_line(line)}.{hint}")
        if not INTEGER.fullmatch(fields[3]):
            raise ParseError(
                f"{label}:{number}: expected an integer relevance grade in column 4, found "
                f"{fields[3].decode('utf-8', 'replace')!r} in {show_line(line)}. A grade is decimal digits "
                "with an optional sign."
            )
        try:
            subtopics.append(fields[1].decode("utf-8"))
        except UnicodeDecodeError:
            raise ParseError(f"{label}:{number}: ids must be UTF-8 text; found {show_line(line)}.") from None
        return int(check_grades([grade_number(fields[3])], lambda _: f"{label}:{number}")[0])

    qids, docs, grades, lines = careful_rows(data, label, True, grade)
    return qids, subtopics, docs, grades, lines


def subtopic_qrels_from_table(obj: Any, *, label: str = "<table>") -> SubtopicQrels:
    """:class:`SubtopicQrels` from a DataFrame or Arrow table with query, subtopic, doc and
    relevance columns (names as in :mod:`serpeval.io.tables`; the subtopic column one of
    :data:`SUBTOPIC_ALIASES`)."""
    return _from_table(to_arrow(obj, label), Rows(label))


def _from_table(table: pa.Table, rows: Rows) -> SubtopicQrels:
    label = rows.label
    names = {name.lower(): name for name in table.column_names}
    found = next((names[a] for a in SUBTOPIC_ALIASES if a in names), None)
    if found is None:
        raise InputError(
            f"{label}: no subtopic column; expected one of {', '.join(SUBTOPIC_ALIASES)}, found columns "
            f"{', '.join(table.column_names) or '(none)'}. Subtopic qrels have columns query_id, subtopic_id, "
            "doc_id, relevance."
        )
    s = table[found]
    q = find_column(table, "query_id", label)
    d = find_column(table, "doc_id", label)
    r = find_column(table, "relevance", label)
    refuse_boolean_relevance(table, r, rows, None)  # true/false is not a grade, as in ordinary qrels
    for column, role in ((q, "query id"), (s, "subtopic id"), (d, "doc id"), (r, "relevance")):
        no_nulls(column, role, rows)
    if len(r) == 0:
        raise EmptyInputError(f"{label}: the subtopic qrels have no rows.")
    grades = check_grades(r, rows.at)
    return SubtopicQrels(q, s, d, grades, source=label).check_unique(rows.at)


def as_subtopic_qrels(obj: Any) -> SubtopicQrels:
    """Turn a path, a DataFrame or Arrow table, or ``(qid, subtopic, docid, rel)`` tuples into
    :class:`SubtopicQrels`."""
    if isinstance(obj, SubtopicQrels):
        return obj
    if isinstance(obj, (str, Path)):
        return read_subtopic_qrels(obj)
    if isinstance(obj, dict):
        raise InputError("subtopic qrels cannot be a dict {query: {doc: grade}}: they need a subtopic per "
                         "judgment. Give (query_id, subtopic_id, doc_id, relevance) tuples, a DataFrame with "
                         "those columns, or a file.")
    if isinstance(obj, (list, tuple)) or (isinstance(obj, Iterable) and not hasattr(obj, "columns")
                                          and not isinstance(obj, pa.Table)):
        return subtopic_qrels_from_rows(obj)
    return subtopic_qrels_from_table(obj)
