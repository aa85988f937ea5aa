"""A TREC run read piece by piece: bounded memory for runs larger than RAM.

:func:`run_chunks` reads a run file (plain, gzip, or a pipe) a block of bytes at a time,
cuts each block after its last line break, and parses every piece with
:func:`serpeval.io.trec.read_trec_run`, so the pieces follow exactly the rules of the
whole-file reader (fast and careful paths, comments, blank lines, byte order marks, NaN
scores). Errors name the file and the physical line in the whole file, as the whole-file
reader's do: each piece's line numbers are shifted by the lines before it.

As in the whole-file reader, a malformed line anywhere is reported before a NaN score: after
a NaN the pieces are still read (and nothing more yielded) to look for one, and the error names
the first NaN's line and counts the NaN scores of the whole file.
"""

from __future__ import annotations

import gzip
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from serpeval.core.data import Run
from serpeval.core.errors import EmptyInputError, InputError, ParseError, ReadError
from serpeval.core.identity import note_input, note_stat
from serpeval.io.inputs import (
    GZIP_ERRORS,
    GZIP_MAGIC,
    PARQUET_MAGIC,
    STDIN_LABEL,
    Input,
    corrupt_gzip,
    reading_error,
)
from serpeval.io.reading import is_table, line_fields, unnamed_source
from serpeval.io.trec import RUN_COLUMNS, read_trec_run, run_name_of

__all__ = ["DEFAULT_CHUNK_BYTES", "RunChunk", "StreamedRun", "line_of_row", "run_chunks"]

DEFAULT_CHUNK_BYTES = 1 << 26  # 64 MiB of text per piece (~1.8M lines of a typical run; peak ~6x this)


@dataclass(frozen=True)
class RunChunk:
    """One parsed piece of a run file.

    Attributes:
        run: its rows (a :class:`Run` named after the file).
        first_row: index of its first row among all data rows of the file.
        first_line: physical line number (1-based) of the piece's first line.
        lines: physical lines in the piece.
    """

    run: Run
    first_row: int
    first_line: int
    lines: int


@dataclass
class StreamedRun:
    """What is known about the whole file once every piece has been read."""

    label: str
    name: str = ""
    tag: str = ""
    rows: int = 0
    skipped_lines: int = 0

    @property
    def source(self) -> str:
        """The file's label (as :attr:`Run.source`)."""
        return self.label


def _open(source: str | Path) -> tuple[IO[bytes], IO[bytes], int, str]:
    """(reader of the decompressed bytes, raw file for progress, raw size or 0, label)."""
    label = str(source)
    if label == "-":
        note_input("-")  # no output may replace it (serpeval.core.identity)
        if sys.stdin is None:  # started with standard input closed (`<&-`), as open_input says
            raise ReadError(f"{STDIN_LABEL}: standard input is closed; give a file name instead of '-'.")
        stdin = sys.stdin.buffer
        return _sniffed(stdin, stdin.read(2)), stdin, 0, STDIN_LABEL
    try:
        raw = open(label, "rb")  # noqa: SIM115 - closed by run_chunks
        info = os.fstat(raw.fileno())
        head = raw.read(2)
    except OSError as exc:
        raise reading_error(exc, label) from None
    note_stat(info, label)
    if stat.S_ISREG(info.st_mode):
        raw.seek(0)
        stream = gzip.GzipFile(fileobj=raw, mode="rb") if head == GZIP_MAGIC else raw
        return stream, raw, info.st_size, label  # type: ignore[return-value]
    return _sniffed(raw, head), raw, 0, label  # a pipe: read once, never seeked


class _Rejoined:
    """A pipe whose first bytes were read to recognise gzip: they come back first."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self._head = head
        self._rest = rest

    def read(self, size: int = -1) -> bytes:
        head, self._head = self._head, b""
        if size is None or size < 0:
            return head + self._rest.read()
        if head:
            self._head = head[size:]
            return head[:size]
        return self._rest.read(size)


def _sniffed(pipe: IO[bytes], head: bytes) -> IO[bytes]:
    """The text of a pipe that starts with ``head``: decompressed when ``head`` is gzip's magic
    (as :func:`~serpeval.io.inputs.open_input` recognises it: by the bytes, never the name)."""
    rejoined = _Rejoined(head, pipe)
    if head == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=rejoined, mode="rb")  # type: ignore[call-overload]
    return rejoined  # type: ignore[return-value]


def _blocks(stream: IO[bytes], size: int) -> Iterator[bytes]:
    """Consecutive pieces of ``stream``, each ending after a line feed (the last one may not):
    lines end at LF, CRLF or a lone CR, so a cut after a LF never splits a line."""
    rest = b""
    while True:
        block = stream.read(size)
        if not block:
            break
        block = rest + block if rest else block
        cut = block.rfind(b"\n") + 1
        if cut == 0:
            rest = block  # no line feed yet: read on
            continue
        rest = block[cut:]
        yield block[:cut]
    if rest:
        yield rest


_NAN = "the score is NaN"  # core.data.check_scores's words for a NaN score
_NAN_COUNT = re.compile(r"(\d+) score\(s\) are NaN")  # ... and for how many a piece holds


def _nan_count(exc: ParseError) -> int:
    """How many NaN scores the piece refused by ``exc`` holds (as check_scores counts them)."""
    found = _NAN_COUNT.search(str(exc))
    return int(found.group(1)) if found else 1


def _with_nan_count(exc: ParseError, count: int) -> ParseError:
    """The first piece's NaN error, counting the NaN scores of every piece (as the whole-file
    reader counts those of the file)."""
    return type(exc)(_NAN_COUNT.sub(f"{count} score(s) are NaN", str(exc), count=1))


def _count_lines(piece: bytes) -> int:
    """``len(piece.splitlines())`` without building the lines: line breaks (LF, CRLF, lone CR)
    plus a last line without one."""
    breaks = piece.count(b"\n") + piece.count(b"\r") - piece.count(b"\r\n")
    return breaks + (1 if piece and piece[-1:] not in (b"\n", b"\r") else 0)


def _shift(exc: ParseError, label: str, before: int) -> ParseError:
    """``exc`` with its ``label:line`` made a line of the whole file (``before`` lines precede)."""
    message = str(exc)
    prefix = f"{label}:"
    if message.startswith(prefix):
        rest = message[len(prefix):]
        digits = re.match(r"\d+", rest)
        if digits:
            message = f"{prefix}{int(digits.group()) + before}{rest[digits.end():]}"
    return type(exc)(message)


def _last_tag(piece: bytes, comments: bool) -> str:
    """The run tag (6th field) of the last content line of ``piece``, '' if none."""
    for line in reversed(piece[-(1 << 16):].splitlines()):
        fields = line_fields(line)
        if len(fields) >= 6 and not (comments and fields[0].startswith(b"#")):
            return fields[5].decode("utf-8", "replace")
    return ""


def _parquet(piece: bytes) -> bool:
    """Whether the first piece of a run that is not TREC text is Parquet: its magic, then a
    control byte (a page header starts 0x15), where a TREC line has whitespace or an id's
    next character (``PAR1 Q0 d1 1 1.0 t`` is a run of a query named PAR1)."""
    return piece.startswith(PARQUET_MAGIC) and len(piece) > 4 and piece[4] < 0x20 and piece[4] not in b"\t\n\x0b\x0c\r"


def _not_text(label: str, kind: str) -> InputError:
    """A run that is a table (by its name, or Parquet by its bytes), given to the streaming
    reader, which reads TREC text only (the whole-file reader reads it as a table)."""
    return InputError(
        f"{label}: the run is {kind}; streaming (--stream, stream=True) reads TREC run text only "
        f"('{RUN_COLUMNS}'). Evaluate it without --stream, or write it as TREC text."
    )


def run_chunks(
    source: str | Path,
    info: StreamedRun | None = None,
    *,
    comments: bool = True,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[RunChunk]:
    """Yield the run file ``source`` (a path, ``.gz`` or not, or ``"-"``) piece by piece.

    ``info`` (a :class:`StreamedRun`) is filled in as the pieces are read: rows, skipped
    lines, and, after the last piece, the run tag and display name as
    :func:`~serpeval.io.trec.read_trec_run` gives them. ``progress(done, total)`` is called
    after each piece with the bytes read of the file (compressed bytes for gzip) and its size
    (0 when unknown: standard input, a pipe).

    Raises:
        ParseError: a malformed line, named ``path:line`` in the whole file.
        EmptyInputError: the file has no data lines.
        InputError: a table (named ``.parquet``, ``.jsonl``, ``.json``, ``.csv`` or ``.tsv``, or
            Parquet by its bytes), which the whole-file reader reads as one.
    """
    if is_table(source):
        suffix = Path(source).name.lower().removesuffix(".gz").rsplit(".", 1)[-1]
        raise _not_text(str(source), f"a .{suffix} table")
    stream, raw, total, label = _open(source)
    info = info if info is not None else StreamedRun(label)
    info.label = label
    line = 1
    tag = ""
    nan: ParseError | None = None
    nans = 0  # NaN scores in every piece read
    try:
        for piece in _blocks(stream, chunk_bytes):
            lines = _count_lines(piece)
            try:
                run = read_trec_run(Input(label, data=piece), name=label, comments=comments)
            except EmptyInputError:
                info.skipped_lines += lines  # blank lines and comments only
                run = None
            except ParseError as exc:
                if line == 1 and _parquet(piece):
                    raise _not_text(label, "a Parquet file") from None
                if _NAN not in str(exc):
                    raise _shift(exc, label, line - 1) from None
                # as in memory, a malformed line anywhere is reported before a NaN score:
                # read on, yielding nothing more, and raise the first NaN at the end
                nan = nan or _shift(exc, label, line - 1)
                nans += _nan_count(exc)
                run = None
            if run is not None and nan is None:
                info.skipped_lines += run.skipped_lines
                tag = _last_tag(piece, comments) or tag
                yield RunChunk(run, info.rows, line, lines)
                info.rows += len(run)
            line += lines
            if progress is not None:
                try:
                    done = raw.tell()
                except (OSError, ValueError):
                    done = 0
                progress(done, total)
    except GZIP_ERRORS as exc:  # a corrupt or truncated .gz, found when its piece is read
        raise corrupt_gzip(exc, label) from None
    except OSError as exc:
        raise reading_error(exc, label) from None
    finally:
        if raw is not getattr(sys.stdin, "buffer", None):
            raw.close()
    if nan is not None:
        raise _with_nan_count(nan, nans)
    if info.rows == 0:
        raise EmptyInputError(f"{label}: the run has no data lines; expected lines '{RUN_COLUMNS}'.")
    info.tag = tag
    info.name = tag if tag and unnamed_source(label) else run_name_of(label)


def line_of_row(source: str | Path, row: int, *, comments: bool = True,
                chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> int:
    """Physical line number of data row ``row`` (0-based) of the file, read piece by piece
    (for error messages only)."""
    stream, raw, _total, _label = _open(source)
    line = 1
    seen = 0
    try:
        for piece in _blocks(stream, chunk_bytes):
            for number, text in enumerate(piece.splitlines(), start=line):
                fields = line_fields(text)
                if fields and not (comments and fields[0].startswith(b"#")):
                    if seen == row:
                        return number
                    seen += 1
            line += _count_lines(piece)
    finally:
        raw.close()
    return -1
