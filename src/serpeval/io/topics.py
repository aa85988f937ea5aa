"""Read query texts (topics), the files that reports show next to query ids.

Formats, chosen once per file by its first topic line (every line is then read in that
format, so a TSV query id may start with ``{``):

- TSV: ``qid<TAB>text`` per line (the format of ``shared/data/*/topics*.tsv``, Anserini's
  and ir_datasets' exports); blank lines and ``#`` comments are skipped.
- JSONL: one object per line with an id (``query_id``, ``qid``, ``_id`` or ``id``) and a
  text (``text``, ``query`` or ``title``), as BEIR's ``queries.jsonl``.

Either may be gzipped (recognised by its bytes) or come from a pipe. Lines end at LF, CRLF
or a lone CR (a query text may hold U+2028 or a form feed), and a byte order mark starting a
line is removed (:func:`serpeval.io.reading.text_lines`). Bad lines are errors naming
``path:line``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from serpeval.core.errors import DuplicateError, EmptyInputError, ParseError
from serpeval.io.inputs import read_input
from serpeval.io.jsonl import ID_KEYS, JsonObjects
from serpeval.io.reading import text_lines, utf8_text

__all__ = ["read_topics"]

TEXT_KEYS = ("text", "query", "title")


def read_topics(path: str | Path) -> dict[str, str]:
    """``{query_id: text}`` from a TSV or JSONL topics file (optionally ``.gz``).

    Raises:
        InputError: the file is missing or unreadable.
        ParseError: the file is not UTF-8 text, a line has no tab (TSV) or is not an object
            with an id and a text (JSONL), or its query id is empty.
        DuplicateError: a query id appears twice.
        EmptyInputError: the file holds no topics.
    """

    raw, label = read_input(path, what="topics file")  # a pipe or gzip too; errors name the path
    source = Path(label)
    text = utf8_text(raw, str(source), "topics file")
    topics: dict[str, str] = {}
    first_line: dict[str, int] = {}
    lines = [(number, line, line.strip()) for number, line in enumerate(text_lines(text), 1)]
    lines = [(n, line, stripped) for n, line, stripped in lines
             if stripped and not stripped.startswith("#")]
    jsonl = bool(lines) and _is_jsonl(lines[0][2])
    parse = JsonObjects()
    for number, line, stripped in lines:
        qid, query = _parse_json(parse(stripped, f"{source}:{number}", "an id and a text"), source, number) \
            if jsonl else _parse_tsv(line, source, number)
        if not qid.strip():
            raise ParseError(f"{source}:{number}: the query id is empty in {stripped[:60]!r}.")
        if qid in topics:
            raise DuplicateError(f"{source}:{number}: query {qid!r} appears again (first on line "
                                 f"{first_line[qid]}); each query needs one text.")
        topics[qid] = query
        first_line[qid] = number
    if not topics:
        raise EmptyInputError(f"{source}: no topics found (expected lines 'qid<TAB>text' or "
                              "JSON objects with an id and a text).")
    return topics


def _is_jsonl(first: str) -> bool:
    """Whether a topics file whose first topic line is ``first`` is JSONL: that line starts
    with ``{`` and is a JSON object, or (a broken JSON line, to be reported as such) has no
    tab. A TSV line ``{id}<TAB>text`` is neither."""
    if not first.startswith("{"):
        return False
    if "\t" not in first:
        return True
    try:
        return isinstance(json.loads(first), dict)
    except json.JSONDecodeError:
        return False


def _parse_tsv(line: str, source: Path, number: int) -> tuple[str, str]:
    if "\t" not in line:
        raise ParseError(f"{source}:{number}: expected 'query_id<TAB>text', found no tab in "
                         f"{line[:60]!r}.")
    qid, query = line.split("\t", 1)
    return qid.strip(), " ".join(query.split())


def _parse_json(record: dict[str, Any], source: Path, number: int) -> tuple[str, str]:
    qid = next((record[k] for k in ID_KEYS if k in record), None)
    query = next((record[k] for k in TEXT_KEYS if k in record), None)
    if qid is None or not isinstance(query, str):
        found = ", ".join(record) or "none"
        raise ParseError(f"{source}:{number}: a topic needs an id ({', '.join(ID_KEYS)}) and a "
                         f"text ({', '.join(TEXT_KEYS)}); found keys {found}.")
    return str(qid), " ".join(query.split())
