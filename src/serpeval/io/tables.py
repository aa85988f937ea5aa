"""Qrels and runs from tables: dicts, JSONL, JSON, Parquet, Arrow, pandas and polars.

Column names are matched case-insensitively against common aliases:

========== ==========================================================
role       accepted names
========== ==========================================================
query      ``query_id qid q_id query topic topic_id``
document   ``doc_id docid docno doc document_id pid did``
score      ``score sim similarity``
relevance  ``relevance rel label grade judgment``
========== ==========================================================
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from serpeval.data import Qrels, Run
from serpeval.errors import DuplicateError, EmptyInputError, InputError, ParseError

if TYPE_CHECKING:
    from serpeval.io.inputs import Input

__all__ = [
    "qrels_from_dict",
    "qrels_from_table",
    "read_table",
    "run_from_dict",
    "run_from_table",
]

ALIASES: dict[str, tuple[str, ...]] = {
    "query_id": ("query_id", "qid", "q_id", "query", "topic", "topic_id"),
    "doc_id": ("doc_id", "docid", "docno", "doc", "document_id", "pid", "did"),
    "score": ("score", "sim", "similarity"),
    "relevance": ("relevance", "rel", "label", "grade", "judgment"),
}


def _to_arrow(obj: Any, label: str) -> pa.Table:
    if isinstance(obj, pa.Table):
        return obj
    module = type(obj).__module__.split(".")[0]
    if module == "polars":
        return obj.to_arrow()
    if module == "pandas":
        return pa.Table.from_pandas(obj, preserve_index=False)
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    raise InputError(
        f"{label}: cannot read a {type(obj).__name__}; expected a path, a dict "
        "{query_id: {doc_id: value}}, a pandas or polars DataFrame, or an Arrow table."
    )


def _column(table: pa.Table, role: str, label: str, given: str | None = None) -> pa.ChunkedArray:
    names = {name.lower(): name for name in table.column_names}
    wanted = (given,) if given else ALIASES[role]
    for alias in wanted:
        if alias.lower() in names:
            column = table[names[alias.lower()]]
            if role in ("query_id", "doc_id"):
                _check_ids(column, names[alias.lower()], role, label)
            return column
    raise InputError(
        f"{label}: no {role} column; expected one of {', '.join(wanted)}, found columns "
        f"{', '.join(table.column_names) or '(none)'}. Rename the column or pass its name."
    )


def _check_ids(column: pa.ChunkedArray, name: str, role: str, label: str) -> None:
    """Ids are text (UTF-8) or scalars cast to text; refuse lists, structs, maps and bytes
    that are not UTF-8."""
    kind = column.type
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    what = f"{label}: the {role.replace('_', ' ')} column {name!r}"
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_fixed_size_binary(kind):
        for row, value in enumerate(column.to_pylist()):
            try:
                if value is not None:
                    value.decode("utf-8")
            except UnicodeDecodeError:
                raise ParseError(f"{what}: row {row + 1}: {value[:40]!r} is not UTF-8 text; ids must "
                                 "be text.") from None
        return
    if pa.types.is_nested(kind):  # list, struct, map, union
        raise ParseError(f"{what} has type {column.type}; expected text or integers.")


def _no_nulls(column: pa.ChunkedArray, role: str, label: str) -> None:
    if column.null_count:
        first = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError(
            f"{label}: row {first + 1}: the {role} is missing (null); "
            f"{column.null_count} row(s) have no {role}. Fill or drop them."
        )


def run_from_table(
    obj: Any,
    *,
    name: str = "run",
    label: str = "<table>",
    query_col: str | None = None,
    doc_col: str | None = None,
    score_col: str | None = None,
) -> Run:
    """Build a :class:`Run` from a DataFrame or Arrow table with query, doc and score columns."""
    table = _to_arrow(obj, label)
    q = _column(table, "query_id", label, query_col)
    d = _column(table, "doc_id", label, doc_col)
    s = _column(table, "score", label, score_col)
    for column, role in ((q, "query id"), (d, "doc id"), (s, "score")):
        _no_nulls(column, role, label)
    if not (pa.types.is_floating(s.type) or pa.types.is_integer(s.type)):
        raise ParseError(f"{label}: the score column has type {s.type}; expected numbers.")
    scores = s.cast(pa.float64()).to_numpy()
    if len(scores) == 0:
        raise EmptyInputError(f"{label}: the run has no rows.")
    nan = np.flatnonzero(np.isnan(scores))
    if nan.size:
        raise ParseError(f"{label}: row {nan[0] + 1}: the score is NaN; scores must be numbers.")
    return Run(q, d, scores, name=name, source=label, source_kind="table")


def qrels_from_table(
    obj: Any,
    *,
    label: str = "<table>",
    query_col: str | None = None,
    doc_col: str | None = None,
    relevance_col: str | None = None,
) -> Qrels:
    """Build :class:`Qrels` from a DataFrame or Arrow table with query, doc, relevance columns."""
    table = _to_arrow(obj, label)
    q = _column(table, "query_id", label, query_col)
    d = _column(table, "doc_id", label, doc_col)
    r = _column(table, "relevance", label, relevance_col)
    for column, role in ((q, "query id"), (d, "doc id"), (r, "relevance")):
        _no_nulls(column, role, label)
    if pa.types.is_floating(r.type):
        values = r.to_numpy()
        bad = np.flatnonzero(values != np.round(values))
        if bad.size:
            raise ParseError(
                f"{label}: row {bad[0] + 1}: relevance {float(values[bad[0]])!r} is not an integer grade."
            )
        grades = values.astype(np.int64)
    elif pa.types.is_integer(r.type) or pa.types.is_boolean(r.type):
        grades = r.cast(pa.int64()).to_numpy()
    else:
        raise ParseError(f"{label}: the relevance column has type {r.type}; expected integers.")
    if len(grades) == 0:
        raise EmptyInputError(f"{label}: the qrels have no rows.")
    qrels = Qrels(q, d, grades, source=label)  # ids become strings there
    _refuse_duplicate_judgments(qrels, label)
    return qrels


def _refuse_duplicate_judgments(qrels: Qrels, label: str) -> None:
    from serpeval.io.trec import find_duplicate

    first, second = find_duplicate(qrels.query_ids, qrels.doc_ids)
    if first >= 0:
        raise DuplicateError(
            f"{label}: row {second + 1}: document {qrels.doc_ids[second].as_py()!r} is judged "
            f"twice for query {qrels.query_ids[second].as_py()!r} (first at row {first + 1})."
        )


def _check_number(value: Any, where: str, integer: bool) -> None:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if integer and isinstance(value, bool):
        ok = True
    if not ok or (isinstance(value, float) and math.isnan(value)):
        kind = "an integer grade" if integer else "a numeric score"
        raise ParseError(f"{where}: expected {kind}, found {value!r}.")
    if integer and isinstance(value, (float, np.floating)) and value != int(value):
        raise ParseError(f"{where}: expected an integer grade, found {value!r}.")


def _flatten(nested: Mapping[str, Mapping[str, Any]], value: str, integer: bool
             ) -> tuple[list[str], list[str], list[Any]]:
    """Query ids, doc ids and values of ``{query_id: {doc_id: value}}``, each value checked."""
    qids: list[str] = []
    docs: list[str] = []
    values: list[Any] = []
    for q, inner in nested.items():
        if not isinstance(inner, Mapping):
            raise InputError(f"<dict>: query {q!r}: expected {{doc_id: {value}}}, found {type(inner).__name__}.")
        for d, v in inner.items():
            _check_number(v, f"<dict>: query {q!r}, doc {d!r}", integer=integer)
            qids.append(str(q))
            docs.append(str(d))
            values.append(int(v) if integer else float(v))
    if not values:
        kind = "qrels have" if integer else "run has"
        raise EmptyInputError(f"<dict>: the {kind} no (query, doc, {value}) entries.")
    return qids, docs, values


def run_from_dict(scores: Mapping[str, Mapping[str, float]], *, name: str = "run") -> Run:
    """Build a :class:`Run` from ``{query_id: {doc_id: score}}``."""
    qids, docs, values = _flatten(scores, "score", integer=False)
    return Run(pa.array(qids, pa.string()), pa.array(docs, pa.string()), np.array(values),
               name=name, source="<dict>")


def qrels_from_dict(judgments: Mapping[str, Mapping[str, int]]) -> Qrels:
    """Build :class:`Qrels` from ``{query_id: {doc_id: grade}}``."""
    qids, docs, grades = _flatten(judgments, "grade", integer=True)
    return Qrels(pa.array(qids, pa.string()), pa.array(docs, pa.string()),
                 np.array(grades, dtype=np.int64), source="<dict>")


def read_table(path: str | Path | Input) -> tuple[pa.Table | dict[str, Any], int]:
    """Read ``.parquet``, ``.jsonl`` (one object per line) or ``.json`` (dict of dicts).

    The format comes from the name (``.gz`` stripped); Parquet is also recognised by its
    bytes (``<(cat run.parquet)``). Any input :func:`~serpeval.io.inputs.open_input` takes
    works: gzip (also ``.parquet.gz``), standard input, pipes and FIFOs (read once).
    Returns the table (or the JSON dict) and the number of blank lines skipped (JSONL).

    Raises:
        ReadError: the file cannot be read, or is not the Parquet file its name says.
        ParseError: invalid JSON or text that is not UTF-8 (naming the line).
    """
    from serpeval.io.inputs import open_input

    opened = open_input(path)
    label = opened.label
    name = Path(label).name.lower().removesuffix(".gz")
    if opened.parquet or name.endswith((".parquet", ".pq")):
        return _read_parquet(opened), 0
    data = opened.read()
    text = _utf8(data, label)
    if name.endswith(".json"):
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParseError(f"{label}:{exc.lineno}: invalid JSON: {exc.msg}.") from None
        if not isinstance(loaded, dict):
            raise ParseError(f"{label}: expected a JSON object {{query_id: {{doc_id: value}}}}.")
        return loaded, 0
    rows: list[dict[str, Any]] = []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    blank = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            blank += 1
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ParseError(f"{label}:{number}: invalid JSON ({exc.msg}): {line[:80]!r}.") from None
        if not isinstance(row, dict):
            raise ParseError(f"{label}:{number}: expected a JSON object per line, found {type(row).__name__}.")
        rows.append(row)
    if not rows:
        raise EmptyInputError(f"{label}: no JSON lines.")
    keys = {k for row in rows for k in row}
    columns = {k: [row.get(k) for row in rows] for k in keys}
    try:
        return pa.table(columns), blank
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise ParseError(f"{label}: the JSON lines have inconsistent value types: {exc}.") from None


def _utf8(data: bytes, label: str) -> str:
    """``data`` as text (a UTF-8 byte-order mark is dropped); an error names the line and column."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ParseError(
            f"{label}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at column {column}); "
            "save the file as UTF-8."
        ) from None


def _read_parquet(opened: Input) -> pa.Table:
    """A Parquet file by path (memory-mapped), or from the bytes of a pipe or a ``.gz``."""
    import pyarrow.parquet as pq

    from serpeval.errors import OutOfMemoryError, ReadError

    try:
        if opened.path is not None:
            return pq.read_table(opened.path)
        return pq.read_table(pa.BufferReader(opened.read()))
    except MemoryError:
        raise OutOfMemoryError(f"out of memory while reading {opened.label}.") from None
    except (pa.ArrowException, OSError) as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise ReadError(
            f"{opened.label}: not a readable Parquet file ({detail}). Is it truncated, or another "
            "format under a .parquet name?"
        ) from None
