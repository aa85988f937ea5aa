"""What the qrels, run and subtopic-qrels readers share.

The choice between a table and TREC text (:func:`open_source`), a Parquet file read
(:func:`read_parquet`), Arrow's conversion errors as a :class:`ParseError` naming the file
(:func:`values_fit`), the pieces of the TREC text parsers (:data:`INTEGER`, :data:`DECIMAL`,
:data:`GRADE_SPELLINGS`, :func:`line_fields`, :func:`show_line`, :func:`unnamed_source`,
:func:`refuse_utf16`), of the table readers (:data:`ALIASES`, :class:`Rows`,
:func:`find_column`, :func:`no_nulls`), and decoded text and its lines (:func:`utf8_text`,
:func:`text_lines`, for the table, groups and topics readers). Its users are
:mod:`serpeval.io` (``read_qrels``, ``read_run``), :mod:`serpeval.io.trec`,
:mod:`serpeval.io.trec_stream`, :mod:`serpeval.io.tables`, :mod:`serpeval.io.groups`,
:mod:`serpeval.io.topics` and :mod:`serpeval.io.subtopics`; it imports none of them, so they
all import it at the top, and none borrows a private name of another.

Layer: io. Imports core and :mod:`serpeval.io.inputs` only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np
import pyarrow as pa

from serpeval.core.errors import InputError, OutOfMemoryError, ParseError, ReadError
from serpeval.io.inputs import Input, open_input

__all__ = [
    "ALIASES",
    "BOM",
    "DECIMAL",
    "GRADE_SPELLINGS",
    "INTEGER",
    "TABLE_SUFFIXES",
    "UTF16_MARKS",
    "Rows",
    "check_ids",
    "find_column",
    "is_table",
    "line_fields",
    "no_nulls",
    "open_source",
    "read_parquet",
    "refuse_utf16",
    "show_line",
    "text_lines",
    "unnamed_source",
    "utf8_text",
    "values_fit",
]

# ----------------------------------------------------------------------------- table or text

TABLE_SUFFIXES = (".parquet", ".pq", ".jsonl", ".json", ".csv", ".tsv")


def is_table(source: object) -> bool:
    """Whether ``source`` names a table file by its suffix (``.gz`` aside); ``-`` and bytes do not."""
    if not isinstance(source, (str, Path)) or str(source) == "-":
        return False
    return Path(source).name.lower().removesuffix(".gz").endswith(TABLE_SUFFIXES)


def open_source(source: str | Path | bytes | IO[bytes]) -> tuple[Input, bool]:
    """The opened input, and whether it is a table (by its name, or Parquet by its bytes)."""
    opened = open_input(source)
    return opened, is_table(source) or opened.parquet


def read_parquet(opened: Input) -> pa.Table:
    """A Parquet file by path (memory-mapped), or from the bytes of a pipe or a ``.gz``
    (the qrels, run and groups readers).

    Raises:
        ReadError: not a readable Parquet file (truncated, or another format).
        OutOfMemoryError: the file does not fit in memory.
    """
    import pyarrow.parquet as pq  # the Parquet module only where a Parquet file is read

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


def unnamed_source(label: str) -> bool:
    """Standard input or a pipe (``<(zcat run.gz)`` is ``/dev/fd/63``): its name says nothing,
    the run tag names the run (the whole-file and the streaming run readers)."""
    return label == "<stdin>" or re.fullmatch(r"/(dev|proc/(self|\d+))/fd/\d+", label) is not None


@contextmanager
def values_fit(label: str) -> Iterator[None]:
    """Arrow's refusal to convert a column (a uint64 beyond int64, ...) as a ParseError naming
    the file."""
    try:
        yield
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError) as exc:
        detail = " ".join(str(exc).split())
        raise ParseError(f"{label}: a column cannot be read as ids or numbers ({detail}).") from None


# ----------------------------------------------------------------------------- TREC text

INTEGER = re.compile(rb"[+-]?[0-9]+")  # a grade's spelling: decimal digits, an optional sign
# a fractional grade's spelling (grades="float"): a decimal number, or NaN/infinity, which
# the grade check then refuses with the line (so the message says NaN, not "not a number")
DECIMAL = re.compile(rb"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan)",
                     re.IGNORECASE)
GRADE_SPELLINGS = pa.dictionary(pa.int32(), pa.string())  # how the fast path reads grades


BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark, taken away at the start of any line


def line_fields(line: bytes) -> list[bytes]:
    """The whitespace-separated fields of one TREC line, a byte order mark at its start
    removed (the careful and the streaming TREC readers)."""
    return line.removeprefix(BOM).split()


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BOM_TEXT = BOM.decode("utf-8")


def text_lines(text: str) -> list[str]:
    """The lines of decoded text as the TREC readers see lines (the groups and topics readers):
    they end at LF, CRLF or a lone CR only, and a byte order mark (U+FEFF) starting a line is
    removed (``cat`` of files saved by Windows editors puts one at the start of later lines;
    kept, it would become part of that line's query id, which then matches no query).

    ``str.splitlines`` also ends a line at U+2028, U+2029, NEL (U+0085), vertical tab, form
    feed and the separators U+001C-U+001E, which a query text may hold (and JSON text may
    hold raw): it would cut that line in two."""
    lines = [line.removeprefix(_BOM_TEXT) for line in _LINE_BREAK.split(text)]
    if lines[-1] == "":
        lines.pop()  # the break that ends the last line (or an empty text)
    return lines


UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")  # UTF-16's byte order marks, little- and big-endian


def refuse_utf16(data: bytes, label: str, what: str = "file") -> None:
    """Refuse text that starts with a UTF-16 byte order mark, saying what it is and how to
    convert it: Windows PowerShell's ``>`` and ``Out-File`` and Notepad's "Unicode" write
    UTF-16, whose every other byte is NUL (read as bytes, each field would be garbled).

    Raises:
        ParseError: naming the file (line 1), the mark found and the fix.
    """
    if data[:2] in UTF16_MARKS:
        raise ParseError(
            f"{label}:1: the {what} is UTF-16 text (it starts with the UTF-16 byte order mark "
            f"{data[0]:02X} {data[1]:02X}, as Windows PowerShell's '>' and Notepad's \"Unicode\" write it); "
            "serpeval reads UTF-8. Convert it: iconv -f UTF-16 -t UTF-8 FILE > NEW (in PowerShell: "
            "Out-File -Encoding utf8)."
        )


def utf8_text(data: bytes, label: str, what: str = "file") -> str:
    """``data`` as text (a UTF-8 byte order mark at the start dropped), for the readers of
    text tables (CSV, JSON, JSON lines), groups and topics files.

    Raises:
        ParseError: not UTF-8, naming the line, the byte and its column, and the fix (UTF-16
            text is named as such: :func:`refuse_utf16`).
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        refuse_utf16(data, label, what)
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ParseError(
            f"{label}:{line}: the {what} is not UTF-8 text (byte 0x{data[exc.start]:02x} at column {column}); "
            "save it as UTF-8."
        ) from None


def show_line(line: bytes, limit: int = 120) -> str:
    """A line as quoted text for a message (undecodable bytes replaced, cut at ``limit``)."""
    text = line.decode("utf-8", "replace").rstrip("\r")
    return repr(text if len(text) <= limit else text[:limit] + "...")


# ----------------------------------------------------------------------------- tables

ALIASES: dict[str, tuple[str, ...]] = {
    "query_id": ("query_id", "qid", "q_id", "query", "topic", "topic_id"),
    "doc_id": ("doc_id", "docid", "docno", "doc", "document_id", "pid", "did"),
    "score": ("score", "sim", "similarity"),
    "relevance": ("relevance", "rel", "label", "grade", "judgment", "rating"),
}


@dataclass(frozen=True)
class Rows:
    """Names the rows of a table in messages: ``path:line`` for JSON lines, else ``label: row n``."""

    label: str
    lines: Sequence[int] | None = None

    def at(self, i: int) -> str:
        """The location of row ``i`` (0-based), with the label."""
        return f"{self.label}:{self.lines[i]}" if self.lines is not None else f"{self.label}: row {i + 1}"

    def short(self, i: int) -> str:
        """The location of row ``i`` without the label (``line 7``, ``row 3``)."""
        return f"line {self.lines[i]}" if self.lines is not None else f"row {i + 1}"


def find_column(table: pa.Table, role: str, label: str, given: str | None = None) -> pa.ChunkedArray:
    """The column for ``role`` (a key of :data:`ALIASES`): the one named ``given``, else the first
    alias present (case-insensitive); ids checked by :func:`check_ids`.

    Raises:
        InputError: no such column, or two columns whose names differ only in case.
    """
    names = {name.lower(): name for name in table.column_names}
    wanted = (given,) if given else ALIASES[role]
    for alias in wanted:
        if alias.lower() in names:
            same = [name for name in table.column_names if name.lower() == alias.lower()]
            if len(same) > 1:
                raise InputError(
                    f"{label}: {len(same)} columns are named {alias!r} ({', '.join(map(repr, same))}); "
                    f"serpeval cannot tell which one holds the {role.replace('_', ' ')}. Keep one."
                )
            column = table[names[alias.lower()]]
            if role in ("query_id", "doc_id"):
                check_ids(column, names[alias.lower()], role, label)
            return column
    hint = ""
    if len(table.column_names) == 1:
        separators = [sep for sep in (";", ",", "\t", "|") if sep in table.column_names[0]]
        if separators:  # Excel in many locales writes ';'-separated "CSV"
            hint = (f" The one column's name holds {separators[0]!r}: is the file separated by "
                    f"{separators[0]!r}? .csv files are read with ',' and .tsv files with tabs.")
    raise InputError(
        f"{label}: no {role} column; expected one of {', '.join(wanted)}, found columns "
        f"{', '.join(table.column_names) or '(none)'}. Rename the column or pass its name.{hint}"
    )


def check_ids(column: pa.ChunkedArray, name: str, role: str, label: str) -> None:
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
    if pa.types.is_nested(kind) or pa.types.is_boolean(kind):  # list, struct, map, union; true/false
        raise ParseError(f"{what} has type {column.type}; expected text or integers.")


def no_nulls(column: pa.ChunkedArray, role: str, rows: Rows) -> None:
    """Refuse a column with a null, naming the first row that has one and how many do."""
    if column.null_count:
        first = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError(
            f"{rows.at(first)}: the {role} is missing (null); "
            f"{column.null_count} row(s) have no {role}. Fill or drop them."
        )
