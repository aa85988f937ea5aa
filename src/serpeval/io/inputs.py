"""Open an input once: a path, ``-`` (standard input), a pipe, a FIFO, ``/dev/fd/N``, bytes.

This is the one reading function of every reader (TREC, JSON/JSONL, Parquet, topics, the
report's JSON inputs), so that they all accept what the C ``trec_eval`` accepts:

* a **regular file** is opened once to look at its first bytes; an uncompressed one is
  left for Arrow to read by path (no copy through Python), a gzip one is read and
  decompressed;
* anything else (standard input, ``<(zcat run.gz)``, a named FIFO, a character device) is
  read **once**, to the end, and never seeked or reopened (reopening a FIFO would wait
  for a second writer forever); gzip is recognised from the bytes already read;
* gzip is recognised by its magic bytes (``1f 8b``), never by the name: a plain file named
  ``run.gz`` is read as it is. Parquet is recognised by its magic (``PAR1`` at both ends),
  so ``<(cat run.parquet)`` works too;
* every failure is a :class:`~serpeval.core.errors.ReadError` naming the path and the cause
  (no such file, permission denied, a symlink loop, not a directory, a corrupt ``.gz``),
  and running out of memory is an :class:`~serpeval.core.errors.OutOfMemoryError` naming it.
"""

from __future__ import annotations

import errno as errnos
import gzip
import os
import stat
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from serpeval.core.errors import OutOfMemoryError, ReadError, os_error_cause
from serpeval.core.identity import note_input, note_stat

__all__ = ["GZIP_ERRORS", "GZIP_MAGIC", "PARQUET_MAGIC", "Input", "corrupt_gzip", "decompress", "open_input",
           "read_input", "reading_error"]

GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"
STDIN_LABEL = "<stdin>"

#: What to do about a cause, by errno name (appended to the message).
_HINTS = {
    "ENOENT": "Check the path.",
    "EACCES": "Check the file's permissions.",
    "ELOOP": "Check where the links point.",
    "ENAMETOOLONG": "Check the path.",
    "ENOTDIR": "Check the path.",
}


@dataclass(frozen=True)
class Input:
    """An opened input.

    Attributes:
        label: the path as given (``<stdin>``, ``<bytes>``, a file object's name), for messages.
        path: set for a regular, uncompressed file, which Arrow may read by path.
        data: otherwise the (decompressed) bytes, read once.
        parquet: the content is a Parquet file (its magic bytes at both ends).
    """

    label: str
    path: Path | None = None
    data: bytes | None = None
    parquet: bool = False

    def read(self) -> bytes:
        """The bytes (a regular file is read now; it can be read again, unlike a pipe)."""
        if self.data is not None:
            return self.data
        assert self.path is not None  # an internal invariant, not user input
        try:
            return self.path.read_bytes()
        except OSError as exc:
            raise reading_error(exc, self.label) from None
        except MemoryError:
            raise OutOfMemoryError(f"out of memory while reading {self.label}.") from None


def reading_error(exc: OSError, label: str, what: str | None = None) -> ReadError:
    """A ReadError for ``exc`` raised while opening or reading ``label``.

    ``what`` words a missing file (``topics file`` -> "topics file not found").
    """

    name = errnos.errorcode.get(exc.errno or 0, "")
    if name == "ENOENT":
        cause = f"{what} not found" if what else "no such file"
    elif name == "EISDIR":
        cause = "is a directory, expected a file"
    else:
        cause = os_error_cause(exc)
    hint = _HINTS.get(name)
    return ReadError(f"{label}: {cause}." + (f" {hint}" if hint else ""))


#: What Python's gzip raises on corrupt or truncated data (BadGzipFile is an OSError).
GZIP_ERRORS = (gzip.BadGzipFile, EOFError, zlib.error)


def corrupt_gzip(exc: BaseException, label: str, what: str | None = None) -> ReadError:
    """The ReadError for gzip data that cannot be decompressed (one of :data:`GZIP_ERRORS`):
    the whole-file readers (:func:`decompress`) and the streaming run reader say the same."""
    cause = str(exc) or type(exc).__name__
    if isinstance(exc, EOFError):
        cause = "the stream ends early: is the file truncated?"
    elif cause.startswith("CRC check failed"):
        cause = "CRC check failed"  # (the streaming reader's message adds both checksums)
    return ReadError(
        f"{label}: cannot read the {what or 'file'}: it starts like gzip but is corrupt ({cause}). "
        "Check it with `gzip -t`, or give the uncompressed file."
    )


def decompress(data: bytes, label: str, what: str | None = None) -> bytes:
    """Decompress gzip ``data`` (several members are concatenated, as ``zcat`` does).

    Raises:
        ReadError: a corrupt or truncated stream (bad CRC, bad block, missing end).
        OutOfMemoryError: the decompressed data does not fit in memory.
    """
    try:
        return gzip.decompress(data)
    except GZIP_ERRORS as exc:
        raise corrupt_gzip(exc, label, what) from None
    except MemoryError:
        raise OutOfMemoryError(f"out of memory while decompressing {label}.") from None


def _is_parquet(head: bytes, tail: bytes) -> bool:
    return head[:4] == PARQUET_MAGIC and tail[-4:] == PARQUET_MAGIC and len(head) >= 4


def _finish(data: bytes, label: str, what: str | None) -> Input:
    if data[:2] == GZIP_MAGIC:
        data = decompress(data, label, what)
    return Input(label, data=data, parquet=_is_parquet(data[:4], data[-4:]) if len(data) >= 8 else False)


def _read_stream(stream: IO[bytes] | IO[str], label: str) -> bytes:
    try:
        raw = stream.read()
    except OSError as exc:
        raise reading_error(exc, label) from None
    except MemoryError:
        raise OutOfMemoryError(f"out of memory while reading {label}.") from None
    return raw.encode() if isinstance(raw, str) else raw


def _stdin() -> bytes:
    stdin = sys.stdin
    if stdin is None:  # started with standard input closed (`<&-`)
        raise ReadError(f"{STDIN_LABEL}: standard input is closed; give a file name instead of '-'.")
    return _read_stream(getattr(stdin, "buffer", stdin), STDIN_LABEL)


def open_input(source: str | Path | bytes | IO[bytes] | Input, *, what: str | None = None) -> Input:
    """Open ``source`` once (see the module docstring).

    Args:
        source: a path, ``"-"`` for standard input, bytes, or a binary (or text) file object.
        what: what the input is, for messages: ``topics file`` gives "topics file not found"
            (default: "no such file").

    Raises:
        ReadError: the input cannot be opened or read; the message names it and the cause.
        OutOfMemoryError: it does not fit in memory.
    """
    if isinstance(source, Input):
        return source
    if isinstance(source, bytes):
        return _finish(source, "<bytes>", what)
    if hasattr(source, "read"):
        label = str(getattr(source, "name", "<stream>"))
        return _finish(_read_stream(source, label), label, what)  # type: ignore[arg-type]
    if str(source) == "-":
        note_input("-")  # `< qrels.txt` is that file: no output may replace it (serpeval.core.identity)
        return _finish(_stdin(), STDIN_LABEL, what)
    label = str(source)
    try:
        fd = os.open(label, os.O_RDONLY)
    except OSError as exc:
        raise reading_error(exc, label, what) from None
    try:
        info = os.fstat(fd)
        note_stat(info, label)  # an input of this command: no output may replace it
        if stat.S_ISDIR(info.st_mode):
            raise ReadError(f"{label}: is a directory, expected a {what or 'file'}.")
        if not stat.S_ISREG(info.st_mode):  # a pipe, FIFO, device: read once, never reopen
            with os.fdopen(fd, "rb", closefd=False) as stream:
                data = _read_stream(stream, label)
            return _finish(data, label, what)
        head = os.read(fd, 4)
        if head[:2] == GZIP_MAGIC:
            os.lseek(fd, 0, os.SEEK_SET)
            with os.fdopen(fd, "rb", closefd=False) as stream:
                data = _read_stream(stream, label)
            return _finish(data, label, what)
        tail = head
        if head == PARQUET_MAGIC and info.st_size >= 8:
            os.lseek(fd, -4, os.SEEK_END)
            tail = os.read(fd, 4)
        return Input(label, path=Path(label), parquet=_is_parquet(head, tail))
    except OSError as exc:
        raise reading_error(exc, label, what) from None
    finally:
        os.close(fd)


def read_input(source: str | Path | bytes | IO[bytes] | Input, *, what: str | None = None
               ) -> tuple[bytes, str]:
    """The bytes of ``source`` (decompressed if gzip) and its label for messages."""
    opened = open_input(source, what=what)
    return opened.read(), opened.label
