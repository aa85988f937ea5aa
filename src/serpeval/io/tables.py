"""Qrels and runs from tables: dicts, JSONL, JSON, CSV, TSV, Parquet, Arrow, pandas and polars.

Column names are matched case-insensitively against common aliases:

========== ==========================================================
role       accepted names
========== ==========================================================
query      ``query_id qid q_id query topic topic_id``
document   ``doc_id docid docno doc document_id pid did``
score      ``score sim similarity``
relevance  ``relevance rel label grade judgment rating``
========== ==========================================================

CSV and TSV files have a header line; every column is read as text (ids are opaque: ``007``
stays ``007``) and the relevance and score columns are then read as numbers, an error naming
``path:line``. Quepid's ratings CSV (``query,docid,rating``) reads as qrels whose query ids
are the ``query`` column. A JSON file in the shape of Elasticsearch's / OpenSearch's
``_rank_eval`` request (``{"requests": [{"id": ..., "ratings": [{"_id": ..., "rating": ...}]}]}``)
reads as qrels: the request ids are the query ids.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa

from serpeval.core.data import (
    GradeKind,
    Qrels,
    Run,
    check_scores,
    grades_of_kind,
    qrels_from_nested,
    refuse_boolean_grades,
    run_from_nested,
)
from serpeval.core.duplicates import find_duplicate
from serpeval.core.errors import DuplicateError, EmptyInputError, InputError, ParseError
from serpeval.core.strict_json import quote
from serpeval.io.inputs import Input, open_input
from serpeval.io.jsonl import JsonObjects, key_path, load_json, not_an_id, repeated_key
from serpeval.io.reading import ALIASES, DECIMAL, Rows, find_column, no_nulls, read_parquet, utf8_text

__all__ = [
    "qrels_from_dict",
    "qrels_from_table",
    "read_qrels_table",
    "read_run_table",
    "read_table",
    "refuse_boolean_relevance",
    "run_from_dict",
    "run_from_table",
]

def to_arrow(obj: Any, label: str) -> pa.Table:
    """A pandas or polars DataFrame, an Arrow table or a dict of columns as an Arrow table."""
    if isinstance(obj, pa.Table):
        return obj
    module = type(obj).__module__.split(".")[0]
    try:
        if module == "polars":
            return obj.to_arrow()
        if module == "pandas":
            return pa.Table.from_pandas(obj, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError) as exc:
        raise InputError(
            f"{label}: the DataFrame cannot be read as columns of one type each: {exc}. "
            "Give every column one type (numbers or text)."
        ) from None
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    raise InputError(
        f"{label}: cannot read a {type(obj).__name__}; expected a path, a dict "
        "{query_id: {doc_id: value}}, a pandas or polars DataFrame, or an Arrow table."
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
    """Build a :class:`Run` from a DataFrame or Arrow table with query, doc and score columns.

    Scores follow :func:`serpeval.core.data.check_scores`: numbers, NaN refused with its row.
    """
    return _run(to_arrow(obj, label), name, Rows(label), query_col, doc_col, score_col)


def _run(table: pa.Table, name: str, rows: Rows, query_col: str | None = None,
         doc_col: str | None = None, score_col: str | None = None) -> Run:
    label = rows.label
    q = find_column(table, "query_id", label, query_col)
    d = find_column(table, "doc_id", label, doc_col)
    s = find_column(table, "score", label, score_col)
    for column, role in ((q, "query id"), (d, "doc id"), (s, "score")):
        no_nulls(column, role, rows)
    if len(s) == 0:
        raise EmptyInputError(f"{label}: the run has no rows.")
    scores = check_scores(s, rows.at)
    return Run(q, d, scores, name=name, source=label, source_kind="table")


def qrels_from_table(
    obj: Any,
    *,
    label: str = "<table>",
    query_col: str | None = None,
    doc_col: str | None = None,
    relevance_col: str | None = None,
    grades: GradeKind = "int",
) -> Qrels:
    """Build :class:`Qrels` from a DataFrame or Arrow table with query, doc, relevance columns.

    Grades follow :func:`serpeval.core.data.check_grades`: integers (``2.0`` is 2) within
    ``±(2^53 - 1)``; ``2.5``, NaN, infinity and larger values are refused with their row, and so
    is a bool column (``True`` is not read as 1), as in a file. With ``grades="float"``
    (:func:`serpeval.core.data.check_float_grades`) any finite real grade within that range is
    taken; NaN and infinity are still refused with their row.
    """
    return _qrels(to_arrow(obj, label), Rows(label), query_col, doc_col, relevance_col, grades)


def _qrels(table: pa.Table, rows: Rows, query_col: str | None = None, doc_col: str | None = None,
           relevance_col: str | None = None, grades: GradeKind = "int") -> Qrels:
    label = rows.label
    q = find_column(table, "query_id", label, query_col)
    d = find_column(table, "doc_id", label, doc_col)
    r = find_column(table, "relevance", label, relevance_col)
    refuse_boolean_relevance(table, r, rows, relevance_col)
    for column, role in ((q, "query id"), (d, "doc id"), (r, "relevance")):
        no_nulls(column, role, rows)
    if len(r) == 0:
        raise EmptyInputError(f"{label}: the qrels have no rows.")
    checked = grades_of_kind(r, rows.at, grades)
    qrels = Qrels(q, d, checked, source=label, grades=grades)  # ids become strings there
    _refuse_duplicate_judgments(qrels, rows)
    return qrels


def _refuse_duplicate_judgments(qrels: Qrels, rows: Rows) -> None:
    first, second = qrels.find_duplicate()
    if first >= 0:
        raise DuplicateError(
            f"{rows.at(second)}: document {qrels.doc_ids[second].as_py()!r} is judged twice for query "
            f"{qrels.query_ids[second].as_py()!r} (first at {rows.short(first)})."
        )


def run_from_dict(scores: Mapping[str, Mapping[str, float]], *, name: str = "run") -> Run:
    """Build a :class:`Run` from ``{query_id: {doc_id: score}}`` (scores as :func:`run_from_table`)."""
    return run_from_nested(scores, name, "<dict>", json_keys=False)


def qrels_from_dict(judgments: Mapping[str, Mapping[str, float]], *, grades: GradeKind = "int") -> Qrels:
    """Build :class:`Qrels` from ``{query_id: {doc_id: grade}}`` (grades as :func:`qrels_from_table`;
    ``True``/``False`` is refused, although ``bool`` is an ``int`` in Python)."""
    return qrels_from_nested(judgments, "<dict>", json_keys=False, grades=grades)


def _refuse_bad_ids(fields: dict[str, list[Any]], numbers: list[int], label: str) -> None:
    """Refuse, naming ``path:line``, a JSON-lines or CSV row whose query id or doc id (in the
    column :func:`~serpeval.io.reading.find_column` would take) is not an id: ``""`` or blank text (it would be
    evaluated as a query or document named ``""``), ``true``/``false``, a list or an object
    (which would be turned into the text ``true`` or ``[1, 2]``). Ids are non-blank text or
    numbers; null is refused later, with the count of rows missing it."""
    names = {name.lower(): name for name in fields}
    for role in ("query_id", "doc_id"):
        key = next((names[a] for a in ALIASES[role] if a in names), None)
        if key is None:
            continue
        for i, value in enumerate(fields[key]):
            found = not_an_id(value)
            if found is None:
                continue
            what = role.replace("_", " ")
            raise ParseError(f"{label}:{numbers[i]}: the {what} ({key!r}) is {found}; every line needs a "
                             f"{what}. Ids are text or numbers.")


def refuse_boolean_relevance(table: pa.Table, column: pa.ChunkedArray, rows: Rows, given: str | None) -> None:
    """A relevance column of ``true``/``false`` is refused, in a file (Parquet, JSON lines) as in
    an Arrow table or a pandas or polars DataFrame (:func:`~serpeval.core.data.refuse_boolean_grades`,
    the one rule), naming the column: ``given``, else the alias :func:`find_column` took."""
    kind = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
    if not pa.types.is_boolean(kind):
        return
    names = {name.lower(): name for name in table.column_names}
    name = next(names[alias.lower()] for alias in ((given,) if given else ALIASES["relevance"])
                if alias.lower() in names)
    refuse_boolean_grades(column, rows.at, column=name)


def _check_json_entries(data: dict[str, Any], label: str) -> None:
    """Refuse, in a ``{query_id: {doc_id: value}}`` JSON file, an empty or blank query or doc
    id, naming its key path (a ``true``/``false`` grade is refused by
    :func:`~serpeval.core.data.qrels_from_nested`)."""
    for q, inner in data.items():
        if not q or q.isspace():
            raise ParseError(f"{label}: key [{quote(q)}]: the query id is empty; every query needs an id.")
        if not isinstance(inner, dict):
            continue  # refused by the reader with the type it found
        for d in inner:
            if not d or d.isspace():
                raise ParseError(f"{label}: key [{quote(q)}][{quote(d)}]: the doc id is empty; every "
                                 "document needs an id.")


# ----------------------------------------------------------------------------- files


class TableFile(NamedTuple):
    """What :func:`read_table` read: the table (or JSON dict), the blank lines skipped (JSON
    lines), the physical line number of every row (JSON lines; None otherwise), and the
    input's name for messages."""

    data: pa.Table | dict[str, Any]
    skipped: int
    lines: list[int] | None
    label: str


def read_qrels_table(path: str | Path | Input, *, grades: GradeKind = "int") -> Qrels:
    """Qrels from a ``.parquet``, ``.jsonl`` or ``.json`` file; errors name path:line (JSON
    lines), the row (Parquet) or the key path (JSON). ``grades="float"`` takes fractional grades."""
    table = read_table(path)
    label = table.label
    if isinstance(table.data, dict) and isinstance(table.data.get("requests"), list):
        qrels = _rank_eval_qrels(table.data["requests"], label, grades)
    elif isinstance(table.data, dict):
        _check_json_entries(table.data, label)
        qrels = qrels_from_nested(table.data, label, json_keys=True, grades=grades)
    else:
        qrels = _qrels(table.data, Rows(label, table.lines), grades=grades)
    return Qrels(qrels.query_ids, qrels.doc_ids, qrels.relevance, source=label, skipped_lines=table.skipped,
                 grades=grades)


def _rank_eval_qrels(requests: list[Any], label: str, grades_kind: GradeKind = "int") -> Qrels:
    """Qrels from the ``requests`` of an Elasticsearch/OpenSearch ``_rank_eval`` body: each
    request's ``id`` is the query id, each of its ``ratings`` a ``{"_id": doc, "rating": grade}``."""
    qids: list[str] = []
    docs: list[str] = []
    grades: list[Any] = []
    where: list[str] = []
    for i, request in enumerate(requests):
        at = f"{label}: requests[{i}]"
        if not isinstance(request, dict) or "id" not in request or not isinstance(request.get("ratings"), list):
            raise ParseError(f"{at}: expected an object with an \"id\" and a \"ratings\" list, as in a "
                             "_rank_eval request.")
        for j, rating in enumerate(request["ratings"]):
            if not isinstance(rating, dict) or "_id" not in rating:
                raise ParseError(f"{at}.ratings[{j}]: expected an object with \"_id\" and \"rating\".")
            if rating.get("rating") is None:
                raise ParseError(f"{at}.ratings[{j}]: document {rating['_id']!r} has no rating (null); "
                                 "fill in the grade or drop the entry.")
            for key, value in (("id", request["id"]), ("_id", rating["_id"])):
                if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
                    where_ = at if key == "id" else f"{at}.ratings[{j}]"
                    raise ParseError(f"{where_}: the {quote(key)} is {quote(value)[:60]}; expected an id "
                                     "(non-empty text or an integer).")
            qids.append(str(request["id"]))
            docs.append(str(rating["_id"]))
            grades.append(rating["rating"])
            where.append(f"{at}.ratings[{j}]")
    if not grades:
        raise EmptyInputError(f"{label}: the _rank_eval requests hold no ratings.")
    refuse_boolean_grades(grades, where.__getitem__)
    checked = grades_of_kind(grades, where.__getitem__, grades_kind)
    qrels = Qrels(pa.array(qids, pa.string()), pa.array(docs, pa.string()), checked, source=label,
                  grades=grades_kind)

    first, second = find_duplicate(qrels.query_ids, qrels.doc_ids)
    if first >= 0:
        raise DuplicateError(f"{where[second]}: document {docs[second]!r} is rated twice for request "
                             f"{qids[second]!r} (first at {where[first]}).")
    return qrels


def read_run_table(path: str | Path | Input, name: str) -> Run:
    """A run from a ``.parquet``, ``.jsonl`` or ``.json`` file (errors as :func:`read_qrels_table`)."""
    table = read_table(path)
    label = table.label
    if isinstance(table.data, dict):
        _check_json_entries(table.data, label)
        run = run_from_nested(table.data, name, label, json_keys=True)
    else:
        run = _run(table.data, name, Rows(label, table.lines))
    return Run(run.query_ids, run.doc_ids, run.scores, name=name, source=label,
               skipped_lines=table.skipped, source_kind="table")


def read_table(path: str | Path | Input) -> TableFile:
    """Read ``.parquet``, ``.jsonl`` (one object per line) or ``.json`` (dict of dicts).

    The format comes from the name (``.gz`` stripped); Parquet is also recognised by its
    bytes (``<(cat run.parquet)``). Any input :func:`~serpeval.io.inputs.open_input` takes
    works: gzip (also ``.parquet.gz``), standard input, pipes and FIFOs (read once).

    A byte order mark starting a line of JSON lines is removed, as in TREC files (``cat`` of
    files saved by Windows editors puts one at the start of later lines). JSON that repeats a
    key in one object is refused (a JSON reader would keep only the last
    value, silently). In JSON lines a field keeps one type (numbers, text, ...) across lines;
    an integer too large for int64 is read as the float it stands for, as JSON numbers are
    (the grade check then refuses it; a score keeps it); ids are read as text when their
    types mix (numbers and text); an id that is empty or blank, ``true``/``false``, a list or
    an object is refused (:func:`_refuse_bad_ids`), and so are JSON nested deeper than the
    reader follows and lone surrogate escapes (:func:`~serpeval.io.jsonl.load_json`). Two
    columns whose names differ only in case (or a CSV header naming one twice) are refused
    when one of them is read.

    Raises:
        ReadError: the file cannot be read, or is not the Parquet file its name says.
        ParseError: invalid JSON or text that is not UTF-8 (naming the line), or one of the
            values above.
    """
    opened = open_input(path)
    label = opened.label
    name = Path(label).name.lower().removesuffix(".gz")
    if opened.parquet or name.endswith((".parquet", ".pq")):
        return TableFile(read_parquet(opened), 0, None, label)
    text = utf8_text(opened.read(), label)
    if name.endswith((".csv", ".tsv")):
        return _read_delimited(text, label, "\t" if name.endswith(".tsv") else ",")
    if name.endswith(".json"):
        if not text.strip():
            raise EmptyInputError(f"{label}: the file is empty; expected a JSON object "
                                  "{query_id: {doc_id: value}}.")
        loaded, marked = load_json(text, label)
        if not isinstance(loaded, dict):
            hint = (" A list of records is JSON lines: write one object per line to a .jsonl file."
                    if isinstance(loaded, list) else "")
            raise ParseError(f"{label}: expected a JSON object {{query_id: {{doc_id: value}}}}, found "
                             f"{'null' if loaded is None else _kind(loaded)}.{hint}")
        if marked:
            _refuse_repeated_keys(loaded, label)
        return TableFile(loaded, 0, None, label)
    rows: list[dict[str, Any]] = []
    numbers: list[int] = []  # the line of each row
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    blank = 0
    parse = JsonObjects()  # one decoder for every line
    for number, line in enumerate(lines, start=1):
        line = line.removeprefix("\ufeff")  # a byte order mark starting a line, as in TREC files
        if not line.strip():
            blank += 1
            continue
        row = parse(line, f"{label}:{number}", "a row's fields")
        rows.append(row)
        numbers.append(number)
    if not rows:
        raise EmptyInputError(f"{label}: no JSON lines.")
    keys = dict.fromkeys(k for row in rows for k in row)
    fields = {k: [row.get(k) for row in rows] for k in keys}
    _refuse_bad_ids(fields, numbers, label)
    columns = {k: _jsonl_column(k, values, label, numbers) for k, values in fields.items()}
    return TableFile(pa.table(columns), blank, numbers, label)


def _refuse_repeated_keys(loaded: dict[str, Any], label: str) -> None:
    repeated = repeated_key(loaded, [])
    if repeated is None:
        return
    path, key = repeated
    if not path:
        what = f"query {key!r} is listed twice at the top level; merge its two objects into one"
    elif len(path) == 1:
        what = f"document {key!r} is listed twice for query {path[0]!r}; keep one value"
    else:
        what = "keep one"
    raise DuplicateError(
        f"{label}: key {key_path(path, key)} appears twice (a JSON reader keeps only the last "
        f"value, silently): {what}."
    )


_ID_NAMES = frozenset(a.lower() for a in ALIASES["query_id"] + ALIASES["doc_id"])


def _jsonl_column(name: str, values: list[Any], label: str, lines: list[int]) -> pa.Array:
    """One field of every JSON line as an Arrow array (see :func:`read_table` for the rules)."""
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        pass
    if name.lower() in _ID_NAMES:  # ids are opaque text: 301 and "301a" can share a field
        # a number as the text Arrow's cast makes of it, as when the field holds only numbers
        # (301.0 is '301' in both; json.dumps would give '301.0' here and '301' there)
        return pa.array([v if v is None or isinstance(v, str) else _number_text(v) for v in values], pa.string())
    if all(v is None or _kind(v) == "a number" for v in values):  # integers beyond int64
        return pa.array([v if v is None else _as_float(v) for v in values], pa.float64())
    first = next(i for i, v in enumerate(values) if v is not None)
    other = next((i for i, v in enumerate(values) if v is not None and _kind(v) != _kind(values[first])), None)
    if other is None:  # one kind, but values a column cannot hold: [2**64], [1, "a"], {"a": 1} and {"a": "b"}
        raise ParseError(
            f"{label}:{lines[first]}: the {name!r} field holds values that cannot form one column (numbers "
            f"beyond 64 bits inside a list or an object, or members of several types): {_shown(values[first])}. "
            "Give the field one plain type in every line, or drop it."
        )
    raise ParseError(
        f"{label}:{lines[other]}: the {name!r} field holds {values[other]!r} ({_kind(values[other])}) but "
        f"line {lines[first]} holds {values[first]!r} ({_kind(values[first])}). Give the field one type "
        "in every line."
    )


def _number_text(value: Any) -> str:
    """An id given as a JSON number, as text: an integer's digits, a float as Arrow casts it."""
    if isinstance(value, float):
        return str(pa.scalar(value, pa.float64()).cast(pa.string()).as_py())
    return json.dumps(value)


def _shown(value: Any) -> str:
    """A JSON value, shortened for a message."""
    text = quote(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "an object" if isinstance(value, dict) else "a list"


def _as_float(value: float) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


_NUMBER_NAMES = frozenset(a.lower() for a in ALIASES["relevance"] + ALIASES["score"])


def _read_delimited(text: str, label: str, delimiter: str) -> TableFile:
    """A CSV or TSV file with a header line: ids as text, grades and scores as numbers (an
    empty cell is null, refused later with its line); blank lines skipped and counted."""
    import csv

    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header: list[str] | None = None
    rows: list[list[str]] = []
    numbers: list[int] = []
    blank = 0
    for row in reader:
        if not any(cell.strip() for cell in row):
            blank += 1
            continue
        if header is None:
            header = [cell.strip() for cell in row]
            continue
        if len(row) != len(header):
            raise ParseError(f"{label}:{reader.line_num}: expected {len(header)} fields "
                             f"({', '.join(header)}), found {len(row)}: {delimiter.join(row)[:80]!r}.")
        rows.append(row)
        numbers.append(reader.line_num)
    if header is None or not rows:
        raise EmptyInputError(f"{label}: no rows below the header line.")
    cells = [[row[j].strip() for row in rows] for j in range(len(header))]
    _refuse_bad_ids(dict(zip(header, cells, strict=True)), numbers, label)  # a repeated name: see find_column
    columns = [_number_column(column, name, label, numbers) if name.lower() in _NUMBER_NAMES
               else pa.array(column, pa.string()) for name, column in zip(header, cells, strict=True)]
    return TableFile(pa.table(columns, names=header), blank, numbers, label)


#: A number as the TREC readers spell it (:data:`~serpeval.io.reading.DECIMAL`), as text.
_DECIMAL_TEXT = re.compile(DECIMAL.pattern.decode(), re.IGNORECASE)


def _number_column(cells: list[str], name: str, label: str, lines: list[int]) -> pa.Array:
    """Numbers of a CSV column (integers when they all are), spelled as in TREC files
    (:data:`~serpeval.io.reading.DECIMAL`: ``2``, ``-0.5``, ``1e-3``, ``inf``, ``nan``; the
    grade and score checks then refuse what they refuse); ``""`` is null."""
    values: list[float | int | None] = []
    for cell, line in zip(cells, lines, strict=True):
        if not cell:
            values.append(None)
            continue
        if not _DECIMAL_TEXT.fullmatch(cell):  # int() and float() also take 1_0 and non-ASCII digits
            raise ParseError(f"{label}:{line}: the {name!r} field is {cell!r}, not a number. Write grades "
                             "and scores as decimal numbers (2, -1, 0.5, 1e-3; not 0x10, 1_0 or 1,5).")
        try:
            values.append(int(cell))
        except ValueError:
            values.append(float(cell))
    if all(v is None or isinstance(v, int) for v in values) and \
            all(v is None or abs(v) <= 2**63 - 1 for v in values):
        return pa.array(values, pa.int64())
    return pa.array([None if v is None else _as_float(v) for v in values], pa.float64())
