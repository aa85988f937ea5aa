"""TREC qrels (``qid iter docid rel``) and run (``qid Q0 docid rank score tag``) files.

Two parsers, one reading of the same bytes:

* a fast path (:func:`_fast_rows`): with the compiled kernels, serpeval's own reader
  (``core/_trec_reader.c``: one pass over the bytes, the columns written once, in place),
  which takes every file of plain data rows, whatever its whitespace, blank lines and
  comments; without them, Arrow's multithreaded CSV reader, used only for files that are
  provably single-space separated (:func:`_single_spaced`: no tab, vertical tab or form
  feed, no space next to another space or a line break, no byte order mark after the
  first line), which is what nearly every tool writes;
* a careful path for everything else (bad values, wrong column counts, ids that are not
  UTF-8, NaN scores, comments where they are refused): split each line on any whitespace
  and give a precise ``path:line`` error for anything malformed.

All give identical rows, blank-line counts and run tags for every input (the
differential tests in ``tests/differential`` force each over many file shapes). Rules,
following trec_eval:

* any ASCII whitespace (space, tab, vertical tab, form feed) separates fields; lines end at
  LF, CRLF or a lone CR; blank lines are skipped and counted;
* lines whose first non-blank character is ``#`` are comments, skipped and counted
  (trec_eval 10.0 accepts them in runs; pass ``comments=False`` to refuse them as 9.0.8 does);
* a UTF-8 byte order mark (``EF BB BF``) at the very start of a line is removed: Windows
  editors write one at the start of a file, and ``cat`` of such files puts one at the start
  of later lines. trec_eval reads bytes, so for it the mark is part of the first query id,
  which then matches no judgment (every measure of that query silently changes). A mark
  anywhere else (after leading blanks, inside or after an id) is part of the id, as for
  trec_eval;
* runs: fields after the 6th are ignored, as are the ``iter`` and ``rank`` columns; the
  run tag reported is the one of the last line (trec_eval's ``runid``); the score is a
  decimal number as C's ``strtod`` and Python's ``float`` read it (``1e-3``, ``.5``, ``+2``,
  ``inf``), without ``_`` digit separators (trec_eval's ``atof`` would stop at them);
* qrels: exactly 4 fields and an integer grade: optional sign and decimal digits, within
  ±(2^53 - 1) (no ``0x`` hexadecimal, no ``_``: trec_eval's ``atol`` would read ``0x10`` as 0
  and ``1_0`` as 1; ``2.5`` and ``2.0``, which ``atol`` reads as 2, are refused too: a grade
  is never cast);
* runs: a NaN score is refused; ``inf`` and ``1e400`` are infinite scores, as ``atof`` reads them;
* ids are opaque byte strings (UTF-8): ``003`` and ``3`` are different queries;
* gzip input is decompressed (recognised by its magic bytes), ``-`` reads standard input,
  and pipes (``<(zcat run.gz)``) and FIFOs are read once, never reopened.
"""

from __future__ import annotations

import gzip
import io
import locale
import math
import mmap
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from serpeval.core import native
from serpeval.core.data import (
    FLOAT_HINT,
    GradeKind,
    Qrels,
    Run,
    check_float_grades,
    check_grade_kind,
    check_grades,
    check_scores,
)
from serpeval.core.errors import DuplicateError, EmptyInputError, InputError, ParseError
from serpeval.core.strict_json import compact
from serpeval.io.inputs import Input, open_input
from serpeval.io.outputs import write_bytes
from serpeval.io.reading import (
    BOM,
    DECIMAL,
    GRADE_SPELLINGS,
    INTEGER,
    line_fields,
    refuse_utf16,
    show_line,
    unnamed_source,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["read_trec_qrels", "read_trec_run", "write_qrels", "write_trec_qrels", "write_trec_run"]

RUN_COLUMNS = "qid Q0 docid rank score tag"
QRELS_COLUMNS = "qid iter docid rel"
_RUN_NAMES = ["query_id", "iter", "doc_id", "rank", "score", "tag"]
_QRELS_NAMES = ["query_id", "iter", "doc_id", "relevance"]
_BLOCK_SIZE = 1 << 22  # Arrow's CSV blocks: 4 MiB keeps its transient memory low (16 MiB: +100 MB peak)


def grade_number(text: bytes) -> int | float:
    """The number a grade's digits (matched by ``INTEGER``) stand for, for the grade check:
    exact, or, beyond the digits Python's ``int()`` converts (4,300 by default), the float it
    stands for (infinity), which the check refuses as it refuses ``1e400``."""
    try:
        return int(text)
    except ValueError:
        return float(text)


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

    def plain_file(self) -> Path | None:
        """The path to read the bytes from a slice at a time, or None when they are (or must
        be) held in memory: standard input, a pipe, gzip."""
        return None if self._data is not None else self.path

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

    def single_spaced(self) -> bool:
        """:func:`_single_spaced` on the bytes (a plain file is read a slice at a time into one
        reused buffer: neither copied whole nor memory-mapped, which would count the whole
        file in the process's resident memory)."""
        path = self.plain_file()
        if path is None:
            return _single_spaced(self.data)
        with path.open("rb") as handle:
            return _single_spaced_slices(_slices(handle))

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
        fields = line_fields(line)
        if not fields or (comments and fields[0].startswith(b"#")):
            continue
        yield number, line


def read_trec_ranks(source: str | Path | bytes | IO[bytes] | Input, comments: bool = True
                    ) -> tuple[NDArray[np.int64], list[int]]:
    """The rank column (the 4th field) of a TREC run, one value per data row in file order,
    and the physical line numbers whose rank is missing or not an integer (their value is
    0). For the ``rank`` tie policy (:mod:`serpeval.ranking`), which alone reads the column.

    A single-spaced file is read by Arrow; any other (tabs, several spaces, comments) line
    by line.
    """
    src = Source(source)
    fast = fast_table(src, _RUN_NAMES, {"query_id": pa.string(), "rank": pa.int64()}, number="rank")
    if fast is not None:
        return fast[0]["rank"].to_numpy().astype(np.int64, copy=False), []
    ranks: list[int] = []
    bad: list[int] = []
    for number, line in _content_lines(src.data, comments):
        fields = line_fields(line)
        text = fields[3] if len(fields) > 3 else b""
        if INTEGER.fullmatch(text) and abs(int(text)) < 2**62:
            ranks.append(int(text))
        else:
            ranks.append(0)
            bad.append(number)
    return np.array(ranks, dtype=np.int64), bad


def physical_line(data: bytes, row: int, comments: bool = True) -> int:
    """Return the 1-based physical line number of data row ``row`` (0-based)."""
    for i, (number, _line) in enumerate(_content_lines(data, comments)):
        if i == row:
            return number
    return -1


# ----------------------------------------------------------------------------- fast path

_SLICE = 1 << 22  # bytes checked per step by _single_spaced (stays in the CPU cache)


def _single_spaced(data: bytes | mmap.mmap) -> bool:
    """True when Arrow's single-space split of ``data`` is the careful path's whitespace split.

    That holds when no line has an empty field or a separator other than one space: no
    tab, vertical tab or form feed anywhere; no space next to another space, a line break,
    or the start or end of the data; and no byte order mark at the start of a line other
    than the first (Arrow removes only that one). Blank lines are fine (Arrow gives them as
    empty rows). Without this check a line with a missing column and a doubled space
    (``q1 Q0  d1 1 2.0``) reads as an empty doc id with score 1.0, and a tab inside a field
    shifts the careful path's columns. Vectorized, a few hundredths of a second per 100 MB.
    """
    return _single_spaced_slices(data[start: start + _SLICE] for start in range(0, len(data), _SLICE))


def _slices(handle: IO[bytes]) -> Iterator[bytes | bytearray]:
    """The bytes of an open file, ``_SLICE`` at a time, read into one reused buffer (valid
    until the next one is asked for)."""
    buffer = bytearray(_SLICE)
    while True:
        size = handle.readinto(buffer)  # type: ignore[attr-defined]
        if not size:
            return
        yield buffer if size == len(buffer) else buffer[:size]


def _head_of_three(slices: Iterable[bytes | bytearray]) -> Iterator[bytes | bytearray]:
    """The same bytes, the first piece holding at least 3 of them (a whole byte order mark)."""
    head = b""
    pieces = iter(slices)
    for piece in pieces:
        head += bytes(piece)
        if len(head) >= len(BOM):
            break
    if head:
        yield head
    yield from pieces


def _single_spaced_slices(slices: Iterable[bytes | bytearray]) -> bool:
    """:func:`_single_spaced` over consecutive slices of the data.

    Inside a slice: tabs, vertical tabs, form feeds and marks are found with ``find``
    (memchr speed); neighbouring bytes <= 0x20 with three vectorized passes. Across a cut,
    the last 3 bytes before it and the first 3 after are checked together.
    """
    carry = b""  # the last 3 bytes so far (after a leading mark)
    first = True
    for piece in _head_of_three(slices):
        skip = 0
        if first:
            if piece[: len(BOM)] == BOM:
                skip = len(BOM)
            if len(piece) == skip:
                continue
            if piece[skip] == 0x20:
                return False
            first = False
        raw = np.frombuffer(piece, dtype=np.uint8)[skip:]
        if not _window_ok(carry + bytes(raw[:3])):
            return False
        if native.available():  # the same tests in one compiled pass
            if not native.single_spaced(raw):
                return False
        elif not _slice_single_spaced(piece, raw, skip):
            return False
        carry = (carry + bytes(raw[-3:]))[-3:]
    return not carry.endswith(b" ")


def _slice_single_spaced(piece: bytes | bytearray, raw: NDArray[np.uint8], skip: int) -> bool:
    """The tests of :func:`_single_spaced` inside one slice (``raw``: its bytes from ``skip``)."""
    if any(piece.find(other, skip) >= 0 for other in (b"\t", b"\x0b", b"\x0c")):
        return False
    low = raw <= 0x20  # whitespace and control bytes: two in a row are rare (CRLF aside)
    pair = low[1:] & low[:-1]
    if pair.any():
        pairs = np.flatnonzero(pair)
        if ((raw[pairs] == 0x20) | (raw[pairs + 1] == 0x20)).any():
            return False
    at = piece.find(BOM, skip + 1)
    while at >= 0:  # a mark after a line break: Arrow keeps it, the careful path removes it
        if piece[at - 1] in (0x0A, 0x0D):
            return False
        at = piece.find(BOM, at + 1)
    return True


def _window_ok(window: bytes) -> bool:
    """The checks of :func:`_single_spaced` on the few bytes around a cut between slices."""
    part = np.frombuffer(window, dtype=np.uint8)
    low = part <= 0x20
    pairs = np.flatnonzero(low[1:] & low[:-1])
    if pairs.size and ((part[pairs] == 0x20) | (part[pairs + 1] == 0x20)).any():
        return False
    marks = np.flatnonzero(part[1:-2] == BOM[0]) + 1
    if marks.size:
        line_start = (part[marks - 1] == 0x0A) | (part[marks - 1] == 0x0D)
        if (line_start & (part[marks + 1] == BOM[1]) & (part[marks + 2] == BOM[2])).any():
            return False
    return True


FastRows = tuple[pa.ChunkedArray, pa.ChunkedArray, "NDArray[Any]", int]
"""What a fast reader gives: query ids, doc ids, the scores or grades, the skipped lines."""


def _fast_rows(source: Source, run: bool, comments: bool) -> FastRows | None:
    """The rows of a run (``run``) or qrels file by a fast reader, or None when the file is
    one for the careful reader: serpeval's own reader where the kernels are built, else
    Arrow's (which takes fewer files)."""
    return (_native_rows if native.available() else _arrow_rows)(source, run, comments)


def _arrow_rows(source: Source, run: bool, comments: bool) -> FastRows | None:
    """The rows by Arrow's CSV reader (:func:`fast_table`), or None. ``comments`` needs no
    test here: a file with comment lines is never taken."""
    if run:
        fast = fast_table(source, _RUN_NAMES, {"query_id": pa.string(), "doc_id": pa.string(),
                                               "score": pa.float64()}, number="score")
    else:
        fast = fast_table(source, _QRELS_NAMES, {"query_id": pa.string(), "doc_id": pa.string(),
                                                 "relevance": GRADE_SPELLINGS}, number="relevance")
    if fast is None:
        return None
    table, skipped = fast
    number = table["score" if run else "relevance"]
    return table["query_id"], table["doc_id"], number.to_numpy(), skipped


def _native_rows(source: Source, run: bool, comments: bool) -> FastRows | None:
    """The rows by ``core/_trec_reader.c``, or None when it does not take a line.

    A plain file is read ``_SLICE`` bytes at a time into one buffer (a line cut by the end
    of a slice moves to its front), so the file is never held whole; a buffer in memory
    (standard input, gzip) is read at once. Scores beyond the reader's exact decimal fast
    path (over 19 significant digits, or a value outside m * 10^e with m <= 2^53 and |e| <= 22)
    are read with C's ``strtod``, so runs are taken only where the C locale's decimal point
    is ``.`` (Python leaves ``LC_NUMERIC`` as "C" unless a program changes it).
    """
    if run and locale.localeconv()["decimal_point"] != ".":
        return None
    path = source.plain_file()
    if path is None:
        data = source.data
        columns = native.TrecColumns(run, comments, len(data))
        if columns.feed(np.frombuffer(data, dtype=np.uint8), final=True) is None:
            return None
        return columns.finish()
    with path.open("rb", buffering=0) as handle:
        columns = native.TrecColumns(run, comments, os.fstat(handle.fileno()).st_size)
        buffer = np.empty(_SLICE, dtype=np.uint8)
        kept = 0  # bytes of a cut line at the front of the buffer
        while True:
            got = handle.readinto(buffer[kept:].data)
            end = kept + got
            used = columns.feed(buffer[:end], final=not got)
            if used is None:
                return None
            if not got:
                return columns.finish()
            kept = end - used
            if kept == len(buffer):  # one line longer than the buffer
                buffer = np.concatenate([buffer, np.empty_like(buffer)])
            else:
                buffer[:kept] = buffer[used:end]


def fast_table(
    source: Source, names: list[str], types: dict[str, pa.DataType], number: str, *, fractions: bool = False
) -> tuple[pa.Table, int] | None:
    """Parse a single-space separated file with Arrow; None if it does not fit that shape.

    Returns the table and the number of blank lines skipped. Only files that pass
    :func:`_single_spaced` are tried, so an empty query id can only be a blank line (Arrow
    gives those as rows of empty fields). Comment lines, bad values and anything Arrow
    refuses make this return None, and the careful parser takes over: it reads the same
    rows or names the bad line. The ``number`` column may be given as a dictionary of
    strings; it is then read with :func:`_integers` (with ``fractions``, :func:`_decimals`).
    """
    if not source.single_spaced():
        return None
    read = pacsv.ReadOptions(column_names=names, block_size=_BLOCK_SIZE)
    parse = pacsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False,
                               ignore_empty_lines=False)
    convert = pacsv.ConvertOptions(column_types=types, include_columns=list(types))
    try:
        table = pacsv.read_csv(source.arrow_input(), read_options=read, parse_options=parse,
                               convert_options=convert)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    blank_rows = pc.equal(table["query_id"], "")
    blank = pc.sum(blank_rows).as_py() or 0
    if blank:
        table = table.filter(pc.invert(blank_rows))
    if table[number].null_count:
        return None  # a value Arrow reads as null ("nan", "NA"): the careful path decides
    if table.num_rows and pc.any(pc.starts_with(table["query_id"], "#")).as_py():
        return None  # comment lines: let the careful path skip and count them
    if pa.types.is_dictionary(table.schema.field(number).type):
        grades = (_decimals if fractions else _integers)(table[number])
        if grades is None:
            return None
        table = table.set_column(table.schema.get_field_index(number), number, grades)
    return table, blank


def _integers(column: pa.ChunkedArray) -> pa.ChunkedArray | None:
    """Grades read as a dictionary of their spellings, as int64: each distinct spelling is
    checked once to be a decimal integer within 64 bits (Arrow's own integer parser also
    reads ``0x10``); None when one is not, and the careful path reads or refuses it."""
    chunks = []
    for chunk in column.chunks:
        # "" only comes from blank lines (their rows are gone; the spelling may remain).
        spellings = pc.if_else(pc.equal(chunk.dictionary, ""), "0", chunk.dictionary)
        if not pc.all(pc.match_substring_regex(spellings, INTEGER.pattern.decode().join("^$"))).as_py():
            return None
        try:  # Arrow's cast takes "-1" and "007" but not "+1"
            values = pc.cast(pc.replace_substring_regex(spellings, r"^\+", ""), pa.int64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None  # out of range: the careful path refuses it with the line number
        chunks.append(values.take(chunk.indices))
    return pa.chunked_array(chunks, pa.int64())


def _decimals(column: pa.ChunkedArray) -> pa.ChunkedArray | None:
    """Fractional grades read as a dictionary of their spellings, as float64: each distinct
    spelling is checked once to be a decimal number (:data:`DECIMAL`: ``2``, ``-0.5``,
    ``.25``, ``1e-3``, ``nan``, ``inf``; NaN and infinity are refused later, with their line);
    None when one is not, and the careful path names it."""
    chunks = []
    for chunk in column.chunks:
        spellings = pc.if_else(pc.equal(chunk.dictionary, ""), "0", chunk.dictionary)
        if not pc.all(pc.match_substring_regex(spellings, DECIMAL.pattern.decode().join("^$"),
                                               ignore_case=True)).as_py():
            return None
        values = pa.array([float(text) for text in spellings.to_pylist()], pa.float64())
        chunks.append(values.take(chunk.indices))
    return pa.chunked_array(chunks, pa.float64())


# ----------------------------------------------------------------------------- careful path


def careful_rows(
    data: bytes, label: str, comments: bool, check: Any
) -> tuple[list[str], list[str], list[Any], list[int]]:
    """Split every content line on any whitespace; ``check(number, line, fields)`` validates
    the column count and returns the number in it (score or grade) or raises ParseError.

    Returns query ids, doc ids, the numbers and the physical line number of every row.
    """
    refuse_utf16(data, label)  # (the fast readers refuse it: its mark is not UTF-8)
    qids: list[str] = []
    docs: list[str] = []
    numbers: list[Any] = []
    lines: list[int] = []
    for number, line in enumerate(data.splitlines(), start=1):
        fields = line_fields(line)
        if not fields:
            continue
        if fields[0].startswith(b"#"):
            if comments:
                continue
            raise ParseError(
                f"{label}:{number}: '#' comment lines are not allowed in this mode "
                f"(trec_eval 9.0.8 rejects them); found {show_line(line)}. Remove the line."
            )
        numbers.append(check(number, line, fields))
        try:
            qids.append(fields[0].decode("utf-8"))
            docs.append(fields[2].decode("utf-8"))
        except UnicodeDecodeError:
            raise ParseError(f"{label}:{number}: ids must be UTF-8 text; found {show_line(line)}.") from None
        lines.append(number)
    return qids, docs, numbers, lines


def _careful_run(data: bytes, label: str, comments: bool) -> tuple[list[str], list[str], list[float], list[int]]:
    def score(number: int, line: bytes, fields: list[bytes]) -> float:
        if len(fields) < 6:
            hint = ""
            if len(fields) == 4 and INTEGER.fullmatch(fields[3]):
                hint = " This looks like a qrels line; is a qrels file given as a run?"
            if len(fields) == 5:  # which column is missing: a number last, or a number before a tag
                if DECIMAL.fullmatch(fields[4]):
                    hint = " Is the run tag missing?"
                elif DECIMAL.fullmatch(fields[3]):
                    iteration = fields[1].upper() in (b"Q0", b"0")
                    hint = " Is the rank or the score missing?" if iteration else " Is the Q0 column missing?"
            raise ParseError(
                f"{label}:{number}: expected 6 columns ({RUN_COLUMNS}), found {len(fields)}: "
                f"{show_line(line)}.{hint}"
            )
        try:
            if b"_" in fields[4]:
                raise ValueError("no digit separators")  # Python's float() would accept 1_0
            return float(fields[4])
        except ValueError:
            raise ParseError(
                f"{label}:{number}: expected a number in column 5 (score), found "
                f"{fields[4].decode('utf-8', 'replace')!r} in {show_line(line)}. Is a column missing or swapped?"
            ) from None

    return careful_rows(data, label, comments, score)


def _four_columns(label: str, number: int, line: bytes, fields: list[bytes]) -> None:
    """Refuse a qrels line without exactly 4 fields, guessing why."""
    if len(fields) != 4:
        hint = ""
        if len(fields) == 6:
            hint = " This looks like a run line; are the qrels and run arguments swapped?"
        elif len(fields) == 3:
            hint = " Is the iteration column (usually 0 or Q0) missing?"
        raise ParseError(
            f"{label}:{number}: expected 4 columns ({QRELS_COLUMNS}), found {len(fields)}: "
            f"{show_line(line)}.{hint}"
        )


def _careful_qrels(data: bytes, label: str) -> tuple[list[str], list[str], list[int], list[int]]:
    def grade(number: int, line: bytes, fields: list[bytes]) -> int:
        _four_columns(label, number, line, fields)
        if not INTEGER.fullmatch(fields[3]):
            hint = FLOAT_HINT if DECIMAL.fullmatch(fields[3]) and math.isfinite(float(fields[3])) else ""
            raise ParseError(
                f"{label}:{number}: expected an integer relevance grade in column 4, found "
                f"{fields[3].decode('utf-8', 'replace')!r} in {show_line(line)}. A grade is decimal "
                f"digits with an optional sign (not 0x.., not 1_0){hint}."
            )
        # the one range rule (|grade| <= 2^53 - 1) with its own message
        return int(check_grades([grade_number(fields[3])], lambda _: f"{label}:{number}")[0])

    return careful_rows(data, label, True, grade)


def _careful_float_qrels(data: bytes, label: str) -> tuple[list[str], list[str], list[float], list[int]]:
    """:func:`_careful_qrels` for ``grades="float"``: column 4 is a decimal number
    (:data:`DECIMAL`); NaN, infinity and numbers beyond ±(2^53 - 1) are refused with the line."""
    def grade(number: int, line: bytes, fields: list[bytes]) -> float:
        _four_columns(label, number, line, fields)
        if not DECIMAL.fullmatch(fields[3]):
            raise ParseError(
                f"{label}:{number}: expected a real relevance grade in column 4, found "
                f"{fields[3].decode('utf-8', 'replace')!r} in {show_line(line)}. A grade is a decimal "
                "number such as 2, 0.5, -1 or 2.5e-1 (not 0x.., not 1_0, not 1,5)."
            )
        return float(check_float_grades([float(fields[3])], lambda _: f"{label}:{number}")[0])

    return careful_rows(data, label, True, grade)


# ----------------------------------------------------------------------------- readers


def _last_tag(tail: bytes, comments: bool) -> str:
    """The run tag (6th field) of the last content line, as trec_eval reports it."""
    for line in reversed(tail.splitlines()):
        fields = line_fields(line)
        if len(fields) >= 6 and not (comments and fields[0].startswith(b"#")):
            return fields[5].decode("utf-8", "replace")
    return ""


def count_skipped(data: bytes, rows: int) -> int:
    """Number of physical lines that are not data rows (blank lines and comments)."""
    return len(data.splitlines()) - rows


def read_trec_run(
    source: str | Path | bytes | IO[bytes] | Input,
    *,
    name: str | None = None,
    comments: bool = True,
    allow_no_lines: bool = False,
) -> Run:
    """Read a TREC run file ``qid Q0 docid rank score tag``.

    Args:
        source: a path (``.gz`` is decompressed), ``"-"`` for standard input, bytes, or a
            binary file object.
        name: display name; defaults to the file name without ``.gz``/``.txt``/``.run``.
        comments: skip ``#`` comment lines (trec_eval 10.0). ``False`` refuses them (9.0.8).
        allow_no_lines: a file of blank or comment lines only is a run that retrieved
            nothing, as trec_eval reads it (its ``-c`` scores every judged topic 0); an empty
            file is still refused, as trec_eval refuses it.

    Raises:
        ParseError: a malformed line (``path:line``, what was expected and found).
        EmptyInputError: the file has no data lines (with ``allow_no_lines``: no byte).
    """
    src = Source(source)
    fast = _fast_rows(src, run=True, comments=comments)
    if fast is not None:
        qids, docs, scores, skipped = fast
    else:
        q, d, s, _lines = _careful_run(src.data, src.label, comments)
        qids, docs, scores = pa.array(q, pa.string()), pa.array(d, pa.string()), np.array(s, dtype=np.float64)
        skipped = count_skipped(src.data, len(s))
    if len(scores) == 0 and not (allow_no_lines and len(src.data) > 0):
        raise EmptyInputError(
            f"{src.label}: the run has no data lines; expected lines '{RUN_COLUMNS}'."
        )
    scores = check_scores(scores, lambda row: f"{src.label}:{physical_line(src.data, row, comments)}")
    tag = _last_tag(src.tail(), comments)
    if name is None:
        name = tag if tag and unnamed_source(src.label) else run_name_of(src.label)
    run = Run(qids, docs, scores, name=name, tag=tag or name, source=src.label,
              skipped_lines=skipped, source_kind="trec")
    pa.default_memory_pool().release_unused()  # the parser's buffers, kept by Arrow's allocator
    return run


def read_trec_qrels(source: str | Path | bytes | IO[bytes] | Input, *, grades: GradeKind = "int") -> Qrels:
    """Read a TREC qrels file ``qid iter docid rel`` (the iter column is ignored).

    ``grades="float"`` takes fractional grades (a decimal number in column 4: ``0.5``,
    ``2.25``, ``1e-3``); NaN and infinity are refused with their line. The default refuses
    them, as it refuses anything that is not an integer.

    Raises:
        ParseError: a malformed line or a non-integer grade (``path:line``).
        DuplicateError: the same (query, document) is judged twice.
        EmptyInputError: the file has no data lines.
    """
    check_grade_kind(grades)
    src = Source(source)
    fast = _fast_rows(src, run=False, comments=True)
    if fast is None and grades == "float":  # a fraction: Arrow's reader with decimal spellings
        fast = _fractional_rows(src)
    if fast is not None:
        qids, docs, numbers, skipped = fast
        check = check_float_grades if grades == "float" else check_grades
        values = check(numbers, lambda row: f"{src.label}:{physical_line(src.data, row)}")
        lines = None
    else:
        if grades == "float":
            q, d, f, lines = _careful_float_qrels(src.data, src.label)
            values = np.array(f, dtype=np.float64)
        else:
            q, d, g, lines = _careful_qrels(src.data, src.label)
            values = np.array(g, dtype=np.int64)
        qids, docs = pa.array(q, pa.string()), pa.array(d, pa.string())
        skipped = count_skipped(src.data, len(values))
    if len(values) == 0:
        raise EmptyInputError(
            f"{src.label}: the qrels have no data lines; expected lines '{QRELS_COLUMNS}'."
        )
    qrels = Qrels(qids, docs, values, source=src.label, skipped_lines=skipped, grades=grades)
    first, second = qrels.find_duplicate()
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
    pa.default_memory_pool().release_unused()  # the parser's buffers, kept by Arrow's allocator
    return qrels


def _fractional_rows(source: Source) -> FastRows | None:
    """Qrels rows with fractional grades by Arrow's CSV reader (:func:`fast_table` with
    :func:`_decimals`), or None (the careful path reads the file or names the bad line)."""
    fast = fast_table(source, _QRELS_NAMES, {"query_id": pa.string(), "doc_id": pa.string(),
                                             "relevance": GRADE_SPELLINGS}, number="relevance", fractions=True)
    if fast is None:
        return None
    table, skipped = fast
    return table["query_id"], table["doc_id"], table["relevance"].to_numpy(), skipped


def run_name_of(label: str) -> str:
    """A run's display name from its file name: ``runs/bm25.run.gz`` -> ``bm25``."""
    name = Path(label).name
    for suffix in (".gz", ".txt", ".trec", ".run", ".tsv", ".csv", ".parquet", ".pq", ".jsonl", ".json"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name or label


# ----------------------------------------------------------------------------- writers


def _format_score(x: float) -> str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))


_SEPARATOR = r"[ \t\n\r\x0b\x0c]"  # what the readers split fields and lines at (ASCII whitespace)


def _refuse_unwritable(ids: pa.ChunkedArray | pa.Array, role: str, label: str, starts_line: bool) -> None:
    """Refuse an id that would not read back as written: empty, holding ASCII whitespace (a
    field separator or a line break), or, starting a line, ``#`` (a comment) or a byte order
    mark (removed). Ids from TREC files never are; ids from tables, dicts, DataFrames and
    search engines may be (a Quepid query text, ``solar panels``; an Elasticsearch ``_id``),
    and ``q1 Q0 my doc 1 12.3 t`` would read back as doc ``my`` with score 1. Vectorized."""
    if pa.types.is_run_end_encoded(ids.type):
        ids = pc.run_end_decode(ids)
    if not pa.types.is_string(ids.type):
        ids = ids.cast(pa.string())
    bad = pc.or_(pc.equal(ids, ""), pc.match_substring_regex(ids, _SEPARATOR))
    if starts_line:
        bad = pc.or_(bad, pc.or_(pc.starts_with(ids, "#"), pc.starts_with(ids, "\ufeff")))
    if not pc.any(bad).as_py():
        return
    i = pc.index(bad, True).as_py()
    value = ids[i].as_py()
    if not value:
        why = "it is empty"
    elif re.search(_SEPARATOR, value):
        why = "it holds whitespace, which separates the fields of a line"
    elif value.startswith("#"):
        why = "a line starting with '#' is a comment"
    else:
        why = "a byte order mark starting a line is removed"
    raise InputError(
        f"{label}: cannot write the {role} {value[:60]!r} (line {i + 1} of the output) as TREC text: {why}, "
        "so the file would not read back as written. Give ids without whitespace (map them to numbers, with "
        "a topics file for the texts), or write JSON lines or Parquet."
    )


def write_trec_run(run: Run, target: str | Path | IO[str], tag: str | None = None) -> None:
    """Write ``run`` as ``qid Q0 docid rank score tag``, ranked by trec_eval's order.

    The tag is ``tag``, else the run's tag, else its name (``run`` if all are empty), with
    each run of whitespace in it written as ``_`` (a run named ``BM25 baseline`` is tagged
    ``BM25_baseline``: the tag is one field).

    Raises:
        InputError: an id would not read back as written (empty, holding whitespace, a query
            id starting with ``#`` or a byte order mark).
    """
    from serpeval.core.order import rank_order

    order = rank_order(run)
    query_ids, doc_ids = run.query_ids.take(order), run.doc_ids.take(order)
    _refuse_unwritable(query_ids, "query id", run.source or run.name, starts_line=True)
    _refuse_unwritable(doc_ids, "doc id", run.source or run.name, starts_line=False)
    q, d = query_ids.to_pylist(), doc_ids.to_pylist()
    s = run.scores[order]
    tag = "_".join((tag or run.tag or run.name).split()) or "run"
    out = io.StringIO()
    rank = 0
    previous = None
    for qid, doc, score in zip(q, d, s.tolist(), strict=True):
        rank = rank + 1 if qid == previous else 1
        previous = qid
        out.write(f"{qid} Q0 {doc} {rank} {_format_score(score)} {tag}\n")
    _write_text(out.getvalue(), target)


def write_trec_qrels(qrels: Qrels, target: str | Path | IO[str]) -> None:
    """Write ``qrels`` as ``qid 0 docid rel``.

    Raises:
        InputError: an id would not read back as written (as :func:`write_trec_run`).
    """
    _refuse_unwritable(qrels.query_ids, "query id", qrels.source or "qrels", starts_line=True)
    _refuse_unwritable(qrels.doc_ids, "doc id", qrels.source or "qrels", starts_line=False)
    q, d = qrels.query_ids.to_pylist(), qrels.doc_ids.to_pylist()
    out = io.StringIO()
    for qid, doc, rel in zip(q, d, qrels.relevance.tolist(), strict=True):
        out.write(f"{qid} 0 {doc} {rel}\n")
    _write_text(out.getvalue(), target)


def write_qrels(qrels: Qrels, path: str | Path) -> None:
    """Write ``qrels`` in the format its file name asks for, atomically: ``.jsonl`` (also
    ``.jsonl.gz``) JSON lines ``{"query_id", "doc_id", "relevance"}``, ``.parquet`` Parquet
    with those columns, anything else TREC text (:func:`write_trec_qrels`). JSON lines and
    Parquet hold any id, such as a query text with spaces, which TREC text cannot; every
    qrels reader of serpeval reads all three back.
    """
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes[-1:] == [".parquet"]:
        import pyarrow.parquet as pq

        buffer = io.BytesIO()
        pq.write_table(qrels.to_arrow(), buffer)
        write_bytes(path, buffer.getvalue())
    elif suffixes[-1:] == [".jsonl"] or suffixes[-2:] == [".jsonl", ".gz"]:
        q, d = qrels.query_ids.to_pylist(), qrels.doc_ids.to_pylist()
        _write_text("".join(compact({"query_id": qid, "doc_id": doc, "relevance": rel}) + "\n"
                            for qid, doc, rel in zip(q, d, qrels.relevance.tolist(), strict=True)), path)
    else:
        write_trec_qrels(qrels, path)


def _write_text(text: str, target: Any) -> None:
    """Write to a file object, or to a path atomically (``.gz``: gzip-compressed)."""
    if hasattr(target, "write"):
        target.write(text)
        return
    data = text.encode("utf-8")
    write_bytes(target, gzip.compress(data) if Path(target).suffix == ".gz" else data)
