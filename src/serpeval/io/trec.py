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
* gzip input is decompressed (recognised by its magic bytes), ``-`` reads standard input,
  and pipes (``<(zcat run.gz)``) and FIFOs are read once, never reopened.
"""

from __future__ import annotations

import gzip
import io
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from serpeval.data import Qrels, Run
from serpeval.errors import DuplicateError, EmptyInputError, ParseError
from serpeval.io.inputs import Input, open_input

__all__ = ["read_trec_qrels", "read_trec_run", "write_trec_qrels", "write_trec_run"]

RUN_COLUMNS = "qid Q0 docid rank score tag"
QRELS_COLUMNS = "qid iter docid rel"
_RUN_NAMES = ["query_id", "iter", "doc_id", "rank", "score", "tag"]
_QRELS_NAMES = ["query_id", "iter", "doc_id", "relevance"]
_BLOCK_SIZE = 1 << 24


# ----------------------------------------------------------------------------- sources


class Source:
    """A file, standard input, a pipe or bytes to parse, opened once (:mod:`serpeval.io.inputs`).

    A regular uncompressed file is handed to Arrow by path (no copy through Python); its
    bytes are read only when the careful parser or an error message needs them. Anything
    else (stdin, ``<(zcat run.gz)``, a FIFO, gzip) is read once into memory.
    """

    def __init__(self, source: str | Path | bytes | IO[bytes] | Input) -> None:
        opened = open_input(source)
        self.label = opened.label
        self.path = opened.path
        self._input = opened
        self._data = opened.data

    @property
    def data(self) -> bytes:
        """The (decompressed) bytes."""
        if self._data is None:
            self._data = self._input.read()
        return self._data

    def arrow_input(self) -> Any:
        """What Arrow's CSV reader should read: a plain file's stream, else a buffer.

        A stream without compression: given a path, Arrow would guess a codec from the
        name and fail on a plain file named ``.gz`` (gzip was already recognised by its bytes).
        """
        if self._data is None:
            return pa.input_stream(str(self.path), compression=None)
        return pa.py_buffer(self._data)

    def tail(self, size: int = 1 << 16) -> bytes:
        """The last ``size`` bytes (to find the run tag of the last line cheaply)."""
        if self._data is None and self.path is not None:
            with self.path.open("rb") as handle:
                handle.seek(0, 2)
                handle.seek(max(0, handle.tell() - size))
                return handle.read()
        return self.data[-size:]


def read_source(source: str | Path | bytes | IO[bytes] | Input) -> tuple[bytes, str]:
    """Return the bytes of ``source`` (decompressed if gzip) and a label for messages."""
    src = Source(source)
    return src.data, src.label


def _content_lines(data: bytes, comments: bool) -> Iterator[tuple[int, bytes]]:
    """Yield ``(physical line number, line)`` for every non-blank, non-comment line.

    Lines end at LF, CRLF or a lone CR (as Arrow's reader and Python's universal newlines).
    """
    for number, line in enumerate(data.splitlines(), start=1):
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


def _show(line: bytes, limit: int = 120) -> str:
    text = line.decode("utf-8", "replace").rstrip("\r")
    return repr(text if len(text) <= limit else text[:limit] + "...")


# ----------------------------------------------------------------------------- fast path


def _fast_table(
    source: Source, names: list[str], types: dict[str, pa.DataType], number: str
) -> tuple[pa.Table, int] | None:
    """Parse a single-space separated file with Arrow; None if it does not fit that shape.

    Returns the table and the number of blank lines skipped. Blank lines come back from
    Arrow as rows whose ``number`` column is null (no real row can have an empty field:
    that would need two adjacent separators, which Arrow reports as a wrong column count).
    Comment lines, tabs, runs of spaces, leading blanks and bad values all make Arrow
    fail or show up here, and the careful parser takes over.
    """
    read = pacsv.ReadOptions(column_names=names, block_size=_BLOCK_SIZE)
    parse = pacsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False,
                               ignore_empty_lines=False)
    convert = pacsv.ConvertOptions(column_types=types, include_columns=list(types))
    try:
        table = pacsv.read_csv(source.arrow_input(), read_options=read, parse_options=parse,
                               convert_options=convert)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    blank = table[number].null_count
    if blank:
        missing = table[number].is_null()
        if not pc.all(pc.equal(table["query_id"].filter(missing), "")).as_py():
            return None  # a real line whose number Arrow read as null ("nan", ...)
        table = table.filter(pc.invert(missing))
    if table.num_rows and pc.any(pc.starts_with(table["query_id"], "#")).as_py():
        return None  # comment lines: let the careful path skip and count them
    return table, blank


# ----------------------------------------------------------------------------- careful path


def _careful_rows(
    data: bytes, label: str, comments: bool, check: Any
) -> tuple[list[str], list[str], list[Any], list[int]]:
    """Split every content line on any whitespace; ``check(number, line, fields)`` validates
    the column count and returns the number in it (score or grade) or raises ParseError.

    Returns query ids, doc ids, the numbers and the physical line number of every row.
    """
    qids: list[str] = []
    docs: list[str] = []
    numbers: list[Any] = []
    lines: list[int] = []
    for number, line in enumerate(data.splitlines(), start=1):
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
        numbers.append(check(number, line, fields))
        try:
            qids.append(fields[0].decode("utf-8"))
            docs.append(fields[2].decode("utf-8"))
        except UnicodeDecodeError:
            raise ParseError(f"{label}:{number}: ids must be UTF-8 text; found {_show(line)}.") from None
        lines.append(number)
    return qids, docs, numbers, lines


def _careful_run(data: bytes, label: str, comments: bool) -> tuple[list[str], list[str], list[float], list[int]]:
    def score(number: int, line: bytes, fields: list[bytes]) -> float:
        if len(fields) < 6:
            hint = " Is the run tag missing?" if len(fields) == 5 else ""
            raise ParseError(
                f"{label}:{number}: expected 6 columns ({RUN_COLUMNS}), found {len(fields)}: "
                f"{_show(line)}.{hint}"
            )
        try:
            return float(fields[4])
        except ValueError:
            raise ParseError(
                f"{label}:{number}: expected a number in column 5 (score), found "
                f"{fields[4].decode('utf-8', 'replace')!r} in {_show(line)}. Is a column missing or swapped?"
            ) from None

    return _careful_rows(data, label, comments, score)


def _careful_qrels(data: bytes, label: str) -> tuple[list[str], list[str], list[int], list[int]]:
    def grade(number: int, line: bytes, fields: list[bytes]) -> int:
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
            return int(fields[3])
        except ValueError:
            raise ParseError(
                f"{label}:{number}: expected an integer relevance grade in column 4, found "
                f"{fields[3].decode('utf-8', 'replace')!r} in {_show(line)}."
            ) from None

    return _careful_rows(data, label, True, grade)


# ----------------------------------------------------------------------------- readers


def _last_tag(tail: bytes, comments: bool) -> str:
    """The run tag (6th field) of the last content line, as trec_eval reports it."""
    for line in reversed(tail.splitlines()):
        fields = line.split()
        if len(fields) >= 6 and not (comments and fields[0].startswith(b"#")):
            return fields[5].decode("utf-8", "replace")
    return ""


def _count_skipped(data: bytes, rows: int) -> int:
    """Number of physical lines that are not data rows (blank lines and comments)."""
    return len(data.splitlines()) - rows


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
    src = Source(source)
    fast = _fast_table(src, _RUN_NAMES, {"query_id": pa.string(), "doc_id": pa.string(),
                                         "score": pa.float64()}, number="score")
    if fast is not None:
        table, skipped = fast
        qids, docs, scores = table["query_id"], table["doc_id"], table["score"].to_numpy()
    else:
        q, d, s, _lines = _careful_run(src.data, src.label, comments)
        qids, docs, scores = pa.array(q, pa.string()), pa.array(d, pa.string()), np.array(s, dtype=np.float64)
        skipped = _count_skipped(src.data, len(s))
    if len(scores) == 0:
        raise EmptyInputError(
            f"{src.label}: the run has no data lines; expected lines '{RUN_COLUMNS}'."
        )
    bad = np.flatnonzero(np.isnan(scores))
    if bad.size:
        number = physical_line(src.data, int(bad[0]), comments)
        raise ParseError(
            f"{src.label}:{number}: the score is NaN; scores must be numbers (NaN has no rank). "
            f"{bad.size} line(s) have a NaN score."
        )
    tag = _last_tag(src.tail(), comments)
    if name is None:
        name = tag if tag and _unnamed(src.label) else _stem(src.label)
    return Run(qids, docs, scores, name=name, tag=tag or name, source=src.label,
               skipped_lines=skipped, source_kind="trec")


def read_trec_qrels(source: str | Path | bytes | IO[bytes]) -> Qrels:
    """Read a TREC qrels file ``qid iter docid rel`` (the iter column is ignored).

    Raises:
        ParseError: a malformed line or a non-integer grade (``path:line``).
        DuplicateError: the same (query, document) is judged twice.
        EmptyInputError: the file has no data lines.
    """
    src = Source(source)
    fast = _fast_table(src, _QRELS_NAMES, {"query_id": pa.string(), "doc_id": pa.string(),
                                           "relevance": pa.int64()}, number="relevance")
    if fast is not None:
        table, skipped = fast
        qids, docs, grades = table["query_id"], table["doc_id"], table["relevance"].to_numpy()
        lines = None
    else:
        q, d, g, lines = _careful_qrels(src.data, src.label)
        qids, docs, grades = pa.array(q, pa.string()), pa.array(d, pa.string()), np.array(g, dtype=np.int64)
        skipped = _count_skipped(src.data, len(g))
    if len(grades) == 0:
        raise EmptyInputError(
            f"{src.label}: the qrels have no data lines; expected lines '{QRELS_COLUMNS}'."
        )
    qrels = Qrels(qids, docs, grades, source=src.label, skipped_lines=skipped)
    first, second = find_duplicate(qrels.query_ids, qrels.doc_ids)
    if first >= 0:
        if lines is not None:
            a, b = lines[first], lines[second]
        else:
            a, b = physical_line(src.data, first), physical_line(src.data, second)
        qid = qrels.query_ids[first].as_py()
        doc = qrels.doc_ids[first].as_py()
        raise DuplicateError(
            f"{src.label}:{b}: document {doc!r} is judged twice for query {qid!r} (first at line {a}). "
            "Keep one judgment per (query, document)."
        )
    return qrels


def find_duplicate(query_ids: pa.ChunkedArray, doc_ids: pa.ChunkedArray) -> tuple[int, int]:
    """Return the rows of the first duplicated (query, doc) pair, or ``(-1, -1)``.

    "First" means the duplicate whose second occurrence comes earliest in the input. A
    cheap screen on 64-bit (query, doc) fingerprints finds the candidate rows; only those
    are compared as strings.
    """
    from serpeval._arrays import codes_in, fingerprint, pair_key, take

    n = len(query_ids)
    if n < 2:
        return -1, -1
    codes, _ = codes_in(query_ids)
    keys = pair_key(codes, fingerprint(doc_ids), inplace=True)
    ordered = np.sort(keys)
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    if repeated.size == 0:
        return -1, -1
    candidates = np.flatnonzero(np.isin(keys, repeated))
    first, second = _exact_duplicate(take(query_ids, candidates), take(doc_ids, candidates))
    if first < 0:
        return -1, -1  # fingerprint collision between different pairs
    return int(candidates[first]), int(candidates[second])


def _exact_duplicate(query_ids: pa.ChunkedArray, doc_ids: pa.ChunkedArray) -> tuple[int, int]:
    """:func:`find_duplicate` by sorting the strings (for the few candidate rows)."""
    n = len(query_ids)
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


def _unnamed(label: str) -> bool:
    """Standard input or a pipe (``<(zcat run.gz)`` is ``/dev/fd/63``): its name says nothing,
    the run tag names the run."""
    return label == "<stdin>" or re.fullmatch(r"/(dev|proc/(self|\d+))/fd/\d+", label) is not None


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
    """Write to a file object, or to a path atomically (``.gz``: gzip-compressed)."""
    from serpeval.io.outputs import write_bytes

    if hasattr(target, "write"):
        target.write(text)
        return
    data = text.encode("utf-8")
    write_bytes(target, gzip.compress(data) if Path(target).suffix == ".gz" else data)
