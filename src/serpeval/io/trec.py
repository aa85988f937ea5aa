"""TREC qrels (``qid iter docid rel``) and run (``qid Q0 docid rank score tag``) files.

Two parsers, one behaviour:

* a fast path: Arrow's multithreaded CSV reader on single-space separated files (what
  nearly every tool writes);
* a careful path, used when the fast path cannot read the file (tabs, runs of spaces,
  leading blanks, CRLF mixed with extra columns, ``#`` comments, bad values): split each
  line on any whitespace and give a precise ``path:line`` error for anything malformed.

Both give identical rows (a property test checks it). Rules, following trec_eval:

* any whitespace separates fields; blank lines are skipped and counted;
* lines whose first non-blank character is ``#`` are comments, skipped and counted
  (trec_eval 10.0 accepts them in runs; pass ``comments=False`` to refuse them as 9.0.8 does);
* runs: fields after the 6th are ignored, as are the ``iter`` and ``rank`` columns; the
  run tag reported is the one of the last line (trec_eval's ``runid``);
* qrels: exactly 4 fields and an integer grade;
* ids are opaque byte strings (UTF-8): ``003`` and ``3`` are different queries;
* ``.gz`` files are decompressed, ``-`` reads standard input.
"""

from __future__ import annotations

import gzip
import io
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from serpeval.data import Qrels, Run
from serpeval.errors import DuplicateError, EmptyInputError, ParseError

__all__ = ["read_trec_qrels", "read_trec_run", "write_trec_qrels", "write_trec_run"]

RUN_COLUMNS = "qid Q0 docid rank score tag"
QRELS_COLUMNS = "qid iter docid rel"
_RUN_NAMES = ["query_id", "iter", "doc_id", "rank", "score", "tag"]
_QRELS_NAMES = ["query_id", "iter", "doc_id", "relevance"]
_BLOCK_SIZE = 1 << 24


# ----------------------------------------------------------------------------- sources


def read_source(source: str | Path | bytes | IO[bytes]) -> tuple[bytes, str]:
    """Return the bytes of ``source`` (decompressed if ``.gz``) and a label for messages."""
    if isinstance(source, bytes):
        data, label = source, "<bytes>"
    elif hasattr(source, "read"):
        raw = source.read()  # type: ignore[union-attr]
        data = raw.encode() if isinstance(raw, str) else raw
        label = str(getattr(source, "name", "<stream>"))
    elif str(source) == "-":
        data, label = sys.stdin.buffer.read(), "<stdin>"
    else:
        path = Path(source)
        label = str(source)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise ParseError(f"{label}: no such file. Check the path.") from None
        except IsADirectoryError:
            raise ParseError(f"{label}: is a directory, expected a file.") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise ParseError(f"{label}: looks gzip-compressed but cannot be read: {exc}") from None
    return data, label


def _content_lines(data: bytes, comments: bool) -> Iterator[tuple[int, bytes]]:
    """Yield ``(physical line number, line)`` for every non-blank, non-comment line."""
    for number, line in enumerate(data.split(b"\n"), start=1):
        stripped = line.strip()
        if not stripped or (comments and stripped.startswith(b"#")):
            continue
        yield number, line


def physical_line(data: bytes, row: int, comments: bool = True) -> int:
    """Return the 1-based physical line number of data row ``row`` (0-based)."""
    for i, (number, _line) in enumerate(_content_lines(data, comments)):
        if i == row:
            return number
    return -1


def _count_skipped(data: bytes, rows: int) -> int:
    """Number of physical lines that are not data rows (blank lines and comments)."""
    n_lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    return n_lines - rows


def _show(line: bytes, limit: int = 120) -> str:
    text = line.decode("utf-8", "replace").rstrip("\r")
    return repr(text if len(text) <= limit else text[:limit] + "...")


# ----------------------------------------------------------------------------- fast path


def _fast_table(data: bytes, names: list[str], types: dict[str, pa.DataType]) -> pa.Table | None:
    """Parse single-space separated ``data`` with Arrow, or return None if it does not fit."""
    carriage_returns = data.count(b"\r")
    if carriage_returns and carriage_returns != data.count(b"\r\n"):
        return None  # a lone CR is whitespace for trec_eval but a line break for Arrow
    read = pacsv.ReadOptions(column_names=names, block_size=_BLOCK_SIZE)
    parse = pacsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False)
    convert = pacsv.ConvertOptions(column_types=types, include_columns=list(types))
    try:
        table = pacsv.read_csv(pa.py_buffer(data), read_options=read, parse_options=parse,
                               convert_options=convert)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows and pc.any(pc.starts_with(table["query_id"], "#")).as_py():
        return None  # comment lines: let the careful path skip and count them
    return table


# ----------------------------------------------------------------------------- careful path


def _careful_run(data: bytes, label: str, comments: bool) -> tuple[list[str], list[str], list[float], list[int]]:
    qids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    lines: list[int] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        fields = line.split()
        if not fields:
            continue
        if fields[0].startswith(b"#"):
            if comments:
                continue
            raise ParseError(
                f"{label}:{number}: '#' comment lines are not allowed in this mode "
                f"(trec_eval 9.0.8 rejects them); found {_show(line)}. Remove the line."
            )
        if len(fields) < 6:
            hint = " Is the run tag missing?" if len(fields) == 5 else ""
            raise ParseError(
                f"{label}:{number}: expected 6 columns ({RUN_COLUMNS}), found {len(fields)}: "
                f"{_show(line)}.{hint}"
            )
        try:
            score = float(fields[4])
        except ValueError:
            raise ParseError(
                f"{label}:{number}: expected a number in column 5 (score), found "
                f"{fields[4].decode('utf-8', 'replace')!r} in {_show(line)}. Is a column missing or swapped?"
            ) from None
        try:
            qids.append(fields[0].decode("utf-8"))
            docs.append(fields[2].decode("utf-8"))
        except UnicodeDecodeError:
            raise ParseError(f"{label}:{number}: ids must be UTF-8 text; found {_show(line)}.") from None
        scores.append(score)
        lines.append(number)
    return qids, docs, scores, lines


def _careful_qrels(data: bytes, label: str) -> tuple[list[str], list[str], list[int], list[int]]:
    qids: list[str] = []
    docs: list[str] = []
    grades: list[int] = []
    lines: list[int] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) != 4:
            hint = ""
            if len(fields) == 6:
                hint = " This looks like a run line; are the qrels and run arguments swapped?"
            elif len(fields) == 3:
                hint = " Is the iteration column (usually 0 or Q0) missing?"
            raise ParseError(
                f"{label}:{number}: expected 4 columns ({QRELS_COLUMNS}), found {len(fields)}: "
                f"{_show(line)}.{hint}"
            )
        try:
            grade = int(fields[3])
        except ValueError:
            raise ParseError(
                f"{label}:{number}: expected an integer relevance grade in column 4, found "
                f"{fields[3].decode('utf-8', 'replace')!r} in {_show(line)}."
            ) from None
        try:
            qids.append(fields[0].decode("utf-8"))
            docs.append(fields[2].decode("utf-8"))
        except UnicodeDecodeError:
            raise ParseError(f"{label}:{number}: ids must be UTF-8 text; found {_show(line)}.") from None
        grades.append(grade)
        lines.append(number)
    return qids, docs, grades, lines


# ----------------------------------------------------------------------------- readers


def _last_tag(data: bytes, comments: bool) -> str:
    """The run tag (6th field) of the last content line, as trec_eval reports it."""
    end = len(data)
    while end > 0:
        start = data.rfind(b"\n", 0, end - 1) + 1
        line = data[start:end]
        fields = line.split()
        if fields and not (comments and fields[0].startswith(b"#")) and len(fields) >= 6:
            return fields[5].decode("utf-8", "replace")
        end = start - 1 if start > 0 else 0
        if start == 0:
            break
    return ""


def read_trec_run(
    source: str | Path | bytes | IO[bytes],
    *,
    name: str | None = None,
    comments: bool = True,
) -> Run:
    """Read a TREC run file ``qid Q0 docid rank score tag``.

    Args:
        source: a path (``.gz`` is decompressed), ``"-"`` for standard input, bytes, or a
            binary file object.
        name: display name; defaults to the file name without ``.gz``/``.txt``/``.run``.
        comments: skip ``#`` comment lines (trec_eval 10.0). ``False`` refuses them (9.0.8).

    Raises:
        ParseError: a malformed line (``path:line``, what was expected and found).
        EmptyInputError: the file has no data lines.
    """
    data, label = read_source(source)
    table = _fast_table(data, _RUN_NAMES, {"query_id": pa.string(), "doc_id": pa.string(),
                                           "score": pa.float64()})
    if table is not None:
        qids, docs, scores = table["query_id"], table["doc_id"], table["score"].to_numpy()
        skipped = _count_skipped(data, table.num_rows)
    else:
        q, d, s, _lines = _careful_run(data, label, comments)
        qids, docs, scores = pa.array(q, pa.string()), pa.array(d, pa.string()), np.array(s, dtype=np.float64)
        skipped = _count_skipped(data, len(s))
    if len(scores) == 0:
        raise EmptyInputError(
            f"{label}: the run has no data lines; expected lines '{RUN_COLUMNS}'."
        )
    bad = np.flatnonzero(np.isnan(scores))
    if bad.size:
        number = physical_line(data, int(bad[0]), comments)
        raise ParseError(
            f"{label}:{number}: the score is NaN; scores must be numbers (NaN has no rank). "
            f"{bad.size} line(s) have a NaN score."
        )
    tag = _last_tag(data, comments)
    if name is None:
        name = _stem(label)
    return Run(qids, docs, scores, name=name, tag=tag or name, source=label, skipped_lines=skipped,
               source_kind="trec")


def read_trec_qrels(source: str | Path | bytes | IO[bytes]) -> Qrels:
    """Read a TREC qrels file ``qid iter docid rel`` (the iter column is ignored).

    Raises:
        ParseError: a malformed line or a non-integer grade (``path:line``).
        DuplicateError: the same (query, document) is judged twice.
        EmptyInputError: the file has no data lines.
    """
    data, label = read_source(source)
    table = _fast_table(data, _QRELS_NAMES, {"query_id": pa.string(), "doc_id": pa.string(),
                                             "relevance": pa.int64()})
    if table is not None:
        qids, docs, grades = table["query_id"], table["doc_id"], table["relevance"].to_numpy()
        lines = None
    else:
        q, d, g, lines = _careful_qrels(data, label)
        qids, docs, grades = pa.array(q, pa.string()), pa.array(d, pa.string()), np.array(g, dtype=np.int64)
    if len(grades) == 0:
        raise EmptyInputError(
            f"{label}: the qrels have no data lines; expected lines '{QRELS_COLUMNS}'."
        )
    qrels = Qrels(qids, docs, grades, source=label, skipped_lines=_count_skipped(data, len(grades)))
    first, second = find_duplicate(qrels.query_ids, qrels.doc_ids)
    if first >= 0:
        if lines is not None:
            a, b = lines[first], lines[second]
        else:
            a, b = physical_line(data, first), physical_line(data, second)
        qid = qrels.query_ids[first].as_py()
        doc = qrels.doc_ids[first].as_py()
        raise DuplicateError(
            f"{label}:{b}: document {doc!r} is judged twice for query {qid!r} (first at line {a}). "
            "Keep one judgment per (query, document)."
        )
    return qrels


def find_duplicate(query_ids: pa.ChunkedArray, doc_ids: pa.ChunkedArray) -> tuple[int, int]:
    """Return the rows of the first duplicated (query, doc) pair, or ``(-1, -1)``.

    "First" means the duplicate whose second occurrence comes earliest in the input.
    """
    n = len(query_ids)
    if n < 2:
        return -1, -1
    order = pc.sort_indices(
        pa.table({"q": query_ids, "d": doc_ids, "i": np.arange(n)}),
        sort_keys=[("q", "ascending"), ("d", "ascending"), ("i", "ascending")],
    )
    q = query_ids.take(order)
    d = doc_ids.take(order)
    same = pc.and_(pc.equal(q[1:], q[:-1]), pc.equal(d[1:], d[:-1])).to_numpy(zero_copy_only=False)
    hits = np.flatnonzero(same)
    if hits.size == 0:
        return -1, -1
    idx = order.to_numpy()
    seconds = idx[hits + 1]
    k = int(np.argmin(seconds))
    return int(idx[hits[k]]), int(seconds[k])


def _stem(label: str) -> str:
    name = Path(label).name
    for suffix in (".gz", ".txt", ".trec", ".run", ".tsv", ".parquet", ".pq", ".jsonl", ".json"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name or label


# ----------------------------------------------------------------------------- writers


def _format_score(x: float) -> str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))


def write_trec_run(run: Run, target: str | Path | IO[str], tag: str | None = None) -> None:
    """Write ``run`` as ``qid Q0 docid rank score tag``, ranked by trec_eval's order."""
    from serpeval.ranking import rank_order

    order = rank_order(run)
    q = run.query_ids.take(order).to_pylist()
    d = run.doc_ids.take(order).to_pylist()
    s = run.scores[order]
    tag = tag or run.tag or run.name
    out = io.StringIO()
    rank = 0
    previous = None
    for qid, doc, score in zip(q, d, s.tolist(), strict=True):
        rank = rank + 1 if qid == previous else 1
        previous = qid
        out.write(f"{qid} Q0 {doc} {rank} {_format_score(score)} {tag}\n")
    _write_text(out.getvalue(), target)


def write_trec_qrels(qrels: Qrels, target: str | Path | IO[str]) -> None:
    """Write ``qrels`` as ``qid 0 docid rel``."""
    out = io.StringIO()
    for qid, doc, rel in zip(qrels.query_ids.to_pylist(), qrels.doc_ids.to_pylist(),
                             qrels.relevance.tolist(), strict=True):
        out.write(f"{qid} 0 {doc} {rel}\n")
    _write_text(out.getvalue(), target)


def _write_text(text: str, target: Any) -> None:
    if hasattr(target, "write"):
        target.write(text)
        return
    path = Path(target)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
