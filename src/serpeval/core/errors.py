"""The one exception tree of serpeval.

Every error a user can cause derives from :class:`SerpevalError`. Messages say *where*
(``path:line`` with the physical 1-based line number, or the measure string), *what* was
expected, *what* was found and *how to fix it*. The command line prints the message on one
line and exits non-zero (``--debug`` shows the traceback).

::

    SerpevalError
    ├── InputError (ValueError)
    │   ├── ParseError             malformed line, wrong column count, bad number
    │   │   └── ReadError          an input cannot be read: missing, no permission, not a
    │   │                          file, corrupt compression, not Parquet
    │   ├── DuplicateError         duplicate document in a run, duplicate judgment
    │   ├── EmptyInputError        empty file / no rows
    │   ├── MissingQueriesError    missing="error" and judged queries are absent from a run
    │   └── NothingEvaluatedError  no judged query has results in a run (wrong qrels or run):
    │                              there is no number to report (trec_eval exits 7)
    ├── MeasureError (ValueError)
    │   ├── UnknownMeasureError    name not in the registry ("did you mean ...")
    │   └── InvalidParameterError  bad parameter value or cutoff
    ├── StatsError (ValueError)    statistics cannot be computed on the given data
    ├── OptionError (ValueError)   an option is not valid: unknown method or click-model name
    │                              ("did you mean"), a probability outside [0, 1], k < 1
    ├── OutputError                an output cannot be written: its folder is missing, the
    │                              disk is full, standard output is closed, it is an input
    ├── OutOfMemoryError (MemoryError)  the inputs do not fit in memory
    └── MissingExtraError (ImportError)  an optional dependency is not installed

Warnings derive from :class:`SerpevalWarning`.
"""

from __future__ import annotations

import errno
import importlib
import sys

__all__ = [
    "DuplicateError",
    "EmptyInputError",
    "InputError",
    "InvalidParameterError",
    "MeasureError",
    "MissingExtraError",
    "MissingQueriesError",
    "MissingQueriesWarning",
    "NothingEvaluatedError",
    "OptionError",
    "OutOfMemoryError",
    "OutputError",
    "ParseError",
    "ReadError",
    "SerpevalError",
    "SerpevalWarning",
    "SingleSubtopicWarning",
    "StatsError",
    "UnknownMeasureError",
]


class SerpevalError(Exception):
    """Base class of every error raised by serpeval on bad input or bad use."""


class InputError(SerpevalError, ValueError):
    """Input data (qrels, runs, logs) is malformed or inconsistent."""


class ParseError(InputError):
    """A line or value could not be parsed; the message names ``path:line``."""


class DuplicateError(InputError):
    """A document appears twice for one query (in a run or in the qrels).

    ``query`` and ``doc`` name the pair when the raiser knows it (a run's duplicate), so
    that callers can word the error for their own input without searching again.
    """

    def __init__(self, message: str, *, query: str | None = None, doc: str | None = None) -> None:
        super().__init__(message)
        self.query = query
        self.doc = doc


class EmptyInputError(InputError):
    """A file or table holds no data rows."""


class MissingQueriesError(InputError):
    """Judged queries are missing from a run and ``missing="error"`` was asked for."""


class NothingEvaluatedError(InputError):
    """No judged query has results in a run, so no measure has a value to report.

    Raised whatever the ``missing`` policy: counting every judged query as 0
    (``missing="zero"``) would report 0.0 for a run that was never evaluated, and skipping
    them would average over nothing. trec_eval stops the same way ("No queries with both
    results and relevance info", exit 7); the command line exits 7 too.
    """


class ReadError(ParseError):
    """An input cannot be read at all (the message names the path and the cause).

    A ParseError, as these failures were before it existed.
    """


class MeasureError(SerpevalError, ValueError):
    """A measure name or parameter is not valid."""


class UnknownMeasureError(MeasureError):
    """The measure name is not registered."""


class InvalidParameterError(MeasureError):
    """A measure parameter or cutoff has an invalid value."""


class StatsError(SerpevalError, ValueError):
    """A statistic cannot be computed on the data given."""


class OptionError(SerpevalError, ValueError):
    """An option is not valid: an unknown name, a probability outside [0, 1], a bad size."""


class OutputError(SerpevalError):
    """An output cannot be written (the message names the path and the cause)."""


class OutOfMemoryError(SerpevalError, MemoryError):
    """The inputs do not fit in memory; the message says what was being read and what to try."""


class MissingExtraError(SerpevalError, ImportError):
    """An optional dependency is needed; the message gives the ``pip install`` line."""


class SerpevalWarning(UserWarning):
    """Base class of serpeval's warnings."""


class MissingQueriesWarning(SerpevalWarning):
    """Judged queries are absent from a run and were skipped (``missing="skip"``)."""


class SingleSubtopicWarning(SerpevalWarning):
    """Diversity measures on subtopic qrels in which no query has two subtopics (also
    importable from :mod:`serpeval.core.subtopics`, whose data it describes; here so that the
    command line can filter it without loading NumPy)."""


#: The cause of an OSError in words, by errno (the C library's text when not listed).
_CAUSES = {
    "ENOENT": "no such file or directory",
    "EACCES": "permission denied",
    "EPERM": "operation not permitted",
    "ELOOP": "too many levels of symbolic links (a symlink loop?)",
    "ENOTDIR": "a component of the path is not a directory",
    "ENAMETOOLONG": "the file name is too long",
    "EISDIR": "is a directory, expected a file",
    "ENOSPC": "no space left on the device",
    "EDQUOT": "disk quota exceeded",
    "EFBIG": "file too large (a file size limit was reached)",
    "EROFS": "read-only file system",
    "EBADF": "closed (bad file descriptor)",
    "EIO": "input/output error",
    "ENXIO": "no such device",
    "ENODEV": "no such device",
    "EMFILE": "too many open files",
    "ENOMEM": "out of memory",
}


def os_error_cause(exc: OSError) -> str:
    """The cause of ``exc`` in a few words, without the path: ``permission denied``."""

    name = errno.errorcode.get(exc.errno or 0, "")
    if name in _CAUSES:
        return _CAUSES[name]
    text = exc.strerror or str(exc) or type(exc).__name__
    return text[:1].lower() + text[1:]


def install_command(extra: str) -> str:
    """The exact shell command that installs serpeval's ``extra`` into the running interpreter:
    ``/path/to/python -m pip install 'serpeval[spark]'`` (the interpreter's own pip, so it is
    right in a virtual environment that is not activated). The one place for install hints."""
    import shlex

    python = shlex.quote(sys.executable) if sys.executable else "python3"
    return f"{python} -m pip install 'serpeval[{extra}]'"


def require(module: str, extra: str) -> object:
    """Import ``module`` or raise :class:`MissingExtraError` naming the command to run."""

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError(
            f"{module} is needed for this feature but is not installed. "
            f"Install it with: {install_command(extra)}"
        ) from exc
