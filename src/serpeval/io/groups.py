"""Read query groups (segments): which queries belong to which group.

Formats, chosen by the file:

- TSV (default): ``qid<TAB>group`` per line; a query may appear on several lines (it is in
  several groups); blank lines and ``#`` comments are skipped; a line ``qid<TAB>`` with an
  empty group, a line without a tab or with more than two fields and a repeated
  ``(qid, group)`` pair are errors naming ``path:line``.
- JSONL (first line starts with ``{``): one object per line with an id (``query_id``,
  ``qid``, ``_id``, ``id``) and ``group`` (a string) or ``groups`` (a list of strings); or,
  with ``column=``, that field.
- A column of a Parquet / JSONL table (``column=``): the query column (``query_id``,
  ``qid``...) and the named column; a list-valued column puts a query in several groups.
  A TSV file has no named columns: ``column=`` with one is refused (it used to be ignored).

Lines of text end at LF, CRLF or a lone CR, and a byte order mark starting a line is removed
(:func:`serpeval.io.reading.text_lines`). Query ids of a Parquet table are read as the qrels
and run readers read them (a float column's ``301.0`` is query ``301``). Null or empty values
put the query in no group (counted in :attr:`GroupPairs.empty`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from serpeval.core.errors import DuplicateError, EmptyInputError, InputError, ParseError
from serpeval.io.inputs import open_input
from serpeval.io.jsonl import ID_KEYS, JsonObjects, not_an_id
from serpeval.io.reading import check_ids, read_parquet, text_lines, utf8_text

__all__ = ["GroupPairs", "read_groups"]



@dataclass(frozen=True)
class GroupPairs:
    """``(query id, group)`` memberships read from a file.

    Attributes:
        query_ids, groups: one entry per membership (a query in two groups appears twice).
        source: the file, for messages.
        empty: rows whose group value was null or empty (the query is in no group).
    """

    query_ids: tuple[str, ...]
    groups: tuple[str, ...]
    source: str
    empty: int = 0


def read_groups(path: str | Path, column: str | None = None) -> GroupPairs:
    """The memberships in ``path`` (see the module docstring).

    Raises:
        InputError: unreadable file, or ``column`` absent (the message lists the columns).
        ParseError: a bad line, naming ``path:line``.
        DuplicateError: the same ``(query, group)`` twice.
        EmptyInputError: no membership at all.
    """
    opened = open_input(path, what="groups file")
    label = opened.label
    name = Path(label).name.lower().removesuffix(".gz")
    if opened.parquet or name.endswith((".parquet", ".pq")):
        pairs = _from_table(opened, column, label)
    else:
        pairs = _from_text(utf8_text(opened.read(), label, "groups file"), column, label)
    if not pairs.query_ids:
        raise EmptyInputError(f"{label}: no query groups found (expected lines 'qid<TAB>group', JSON "
                              "objects with an id and 'group'/'groups', or a column named with "
                              "--group-column).")
    return pairs


def _values(value: Any) -> list[str]:
    """The groups of one cell: a string, a number, a list of them; None/empty -> none."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    text = str(value).strip()
    return [text] if text else []


def _collect(rows: list[tuple[int, str | None, Any]], label: str, unit: str) -> GroupPairs:
    """Memberships from ``(line or row number, qid, cell)`` (``unit``: ``line`` or ``row``);
    duplicates are errors."""
    qids: list[str] = []
    groups: list[str] = []
    seen: dict[tuple[str, str], int] = {}
    empty = 0
    for number, qid, cell in rows:
        where = f"{label}:{number}" if unit == "line" else f"{label}: row {number}"
        if qid is None:
            raise ParseError(f"{where}: the query id is missing (null); every row needs a query id.")
        if not qid.strip():
            raise ParseError(f"{where}: the query id is empty.")
        values = _values(cell)
        if not values:
            empty += 1
        for group in values:
            key = (qid, group)
            if key in seen:
                raise DuplicateError(f"{where}: query {qid!r} is listed in group {group!r} "
                                     f"again (first on {unit} {seen[key]}); list each membership once.")
            seen[key] = number
            qids.append(qid)
            groups.append(group)
    return GroupPairs(tuple(qids), tuple(groups), label, empty)


def _from_text(text: str, column: str | None, label: str) -> GroupPairs:
    lines = [(n, line) for n, line in enumerate(text_lines(text), 1)
             if line.strip() and not line.strip().startswith("#")]
    rows: list[tuple[int, str | None, Any]] = []
    jsonl = bool(lines) and lines[0][1].lstrip().startswith("{") and "\t" not in lines[0][1]
    if column is not None and not jsonl:
        raise InputError(f"{label}: no column {column!r} (--group-column): a TSV groups file has no named "
                         "columns, each line is 'query_id<TAB>group'. Drop --group-column, or give a JSONL "
                         "or Parquet file with that column.")
    parse = JsonObjects()
    for number, line in lines:
        if jsonl:
            rows.append(_json_row(parse(line, f"{label}:{number}", "an id and a group"), column, label, number))
            continue
        if "\t" not in line:
            raise ParseError(f"{label}:{number}: expected 'query_id<TAB>group', found no tab in "
                             f"{line.strip()[:60]!r}.")
        qid, group = line.split("\t", 1)
        if column is None and "\t" in group.strip():
            raise ParseError(f"{label}:{number}: expected 'query_id<TAB>group', found "
                             f"{line.strip().count(chr(9)) + 1} tab-separated fields in {line.strip()[:60]!r}; "
                             "list each group of a query on its own line.")
        if not group.strip():
            raise ParseError(f"{label}:{number}: query {qid.strip()!r} has an empty group; give a "
                             "group name after the tab or drop the line.")
        rows.append((number, qid.strip(), group.strip()))
    return _collect(rows, label, "line")


def _json_row(record: dict[str, Any], column: str | None, label: str, number: int) -> tuple[int, str, Any]:
    qid = next((record[k] for k in ID_KEYS if k in record), None)
    keys = (column,) if column else ("group", "groups")
    present = [k for k in keys if k in record]
    if qid is None or not present:
        want = f"the column {column!r} (--group-column)" if column else "'group' or 'groups'"
        raise ParseError(f"{label}:{number}: a line needs an id ({', '.join(ID_KEYS)}) and {want}; "
                         f"found the columns {', '.join(record) or 'none'}.")
    found = not_an_id(qid)
    if found is not None:
        raise ParseError(f"{label}:{number}: the query id is {found}; every line needs a query id. Ids are "
                         "text or numbers.")
    return number, str(qid), record[present[0]]


def _from_table(opened: Any, column: str | None, label: str) -> GroupPairs:
    table = read_parquet(opened)
    names = {n.lower(): n for n in table.column_names}
    qcol = next((names[k] for k in ("query_id", "qid", "q_id", "query", "topic", "topic_id") if k in names),
                None)
    want = column or next((names[k] for k in ("group", "groups") if k in names), None)
    if qcol is None or want is None or want not in table.column_names:
        wanted = f"the column {column!r} (--group-column)" if column else "a group column (group, groups)"
        raise InputError(f"{label}: a groups table needs a query id column (query_id, qid, ...) and "
                         f"{wanted}; columns: {', '.join(table.column_names)}.")
    ids = table.column(qcol)
    check_ids(ids, qcol, "query_id", label)  # text or numbers; not lists, not true/false
    # ids as the qrels and run readers make them (an Arrow cast): a float column (pandas writes
    # one for integer ids with a gap) holds 301.0, which is query '301', not '301.0'
    qids = (ids if pa.types.is_string(ids.type) else ids.cast(pa.string())).to_pylist()
    cells = table.column(want).to_pylist()
    rows = [(i + 1, q, c) for i, (q, c) in enumerate(zip(qids, cells, strict=True))]
    return _collect(rows, f"{label} (column {want!r})", "row")
