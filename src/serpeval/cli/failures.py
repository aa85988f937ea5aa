"""The command line's one error path: every failure becomes one line on stderr and an exit status.

=================================================  ======  ======================================
what happened                                      status  what is printed
=================================================  ======  ======================================
success                                            0       (gate: 1 when the candidate fails)
a :class:`~serpeval.core.errors.SerpevalError`          2       ``serpeval CMD: error: MESSAGE``
an OSError (the file named when it is known)       2       ``... error: PATH: cause``
out of memory (also while loading a library:       2       what was read, and what to try
``ulimit -v``; see serpeval.cli.memory)
a corrupt compressed input, text that is not       2       the cause
UTF-8, a number too large (safety net: readers
name the path and line themselves)
Ctrl-C (SIGINT), anywhere once serpeval's code     130     ``interrupted``
runs (its start-up imports included)
standard output closed by its reader (``| head``)  141     nothing (as a program killed by
                                                           SIGPIPE, the Unix convention)
anything else: a bug                               70      ``... internal error: ...``; rerun
                                                           with ``--debug`` and report it
=================================================  ======  ======================================

``--debug`` re-raises instead, so Python prints the traceback. ``serpeval trec_eval`` keeps
trec_eval's statuses and its ``trec_eval: ...`` lines
(:func:`serpeval.cli.cmd_trec_eval.run_trec_eval`).

Standard streams closed at start (``>&-``, ``<&-``) are taken care of by
:func:`prepare_std_streams`: their file descriptors are held by ``/dev/null`` (so that no
output file is opened as descriptor 1 and written to by mistake); ``sys.stdout`` then fails
with "standard output is closed" when used (a closed standard output is an error, status 2,
not a silent success) and ``sys.stdin`` stays None, which the readers report for ``-``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_NOTHING_EVALUATED",
    "EXIT_PIPE",
    "command_of",
    "describe",
    "error_prefix",
    "handle",
    "prepare_std_streams",
]

EXIT_ERROR = 2
EXIT_NOTHING_EVALUATED = 7  # no judged query has results in a run (trec_eval's exit 7)
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_PIPE = 141  # 128 + SIGPIPE
EXIT_INTERNAL = 70  # EX_SOFTWARE (sysexits.h)
STDOUT = "<stdout>"


class ClosedStream:
    """Stands for a standard stream that was closed when the program started."""

    def __init__(self, name: str, label: str) -> None:
        self.name = label
        self._what = f"standard {name} is closed"
        self.buffer = self
        self.encoding = "utf-8"
        self.errors = "strict"
        self.closed = False

    def _fail(self, *args: Any) -> Any:
        raise OSError(errno.EBADF, self._what, self.name)

    write = read = readline = fileno = _fail

    def flush(self) -> None:
        """Nothing to flush (Python flushes the standard streams at exit)."""

    def isatty(self) -> bool:
        return False


class LabelledStream:
    """Standard output whose failures name it: an OSError from ``write`` or ``flush`` (a full
    disk, ``> /dev/full``) gets the file name ``<stdout>``, so that the one error line says
    which output failed. A closed pipe (``| head``) stays a BrokenPipeError."""

    def __init__(self, stream: Any, label: str) -> None:
        self._stream = stream
        self._label = label
        self._buffer: LabelledStream | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    @property
    def buffer(self) -> LabelledStream:
        if self._buffer is None:
            self._buffer = LabelledStream(self._stream.buffer, self._label)
        return self._buffer

    def _call(self, method: Any, *args: Any) -> Any:
        try:
            return method(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            if exc.filename is not None:
                raise
            raise OSError(exc.errno, exc.strerror or str(exc), self._label) from None

    def write(self, data: Any) -> Any:
        return self._call(self._stream.write, data)

    def writelines(self, lines: Any) -> Any:
        return self._call(self._stream.writelines, lines)

    def flush(self) -> Any:
        return self._call(self._stream.flush)


def prepare_std_streams() -> None:
    """Hold closed standard file descriptors with ``/dev/null``; make the closed streams fail
    with a clear cause when used, and standard output's failures name it (see the module
    docstring). Only the process's own streams are touched (not a test's captured ones)."""
    if sys.stdout is not None and sys.stdout is sys.__stdout__:
        sys.stdout = LabelledStream(sys.stdout, STDOUT)
    for fd, name, label in ((0, "input", "<stdin>"), (1, "output", STDOUT), (2, "error", "<stderr>")):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        try:
            held = os.open(os.devnull, os.O_RDWR)
        except OSError:  # pragma: no cover - no /dev/null
            continue
        if held != fd:  # pragma: no cover - a lower descriptor was free
            os.dup2(held, fd)
            os.close(held)
        if fd == 1:
            sys.stdout = ClosedStream(name, label)
        # sys.stdin stays None (the readers say "standard input is closed"); sys.stderr stays
        # None (messages go nowhere)


def _stdout_broken() -> bool:
    """Whether standard output cannot take the text already given to it (the probe for an
    OSError that names no file)."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except (OSError, ValueError):
        return True
    return False


def silence_stdout() -> None:
    """Send what is left in standard output's buffer to /dev/null, so that Python's flush at
    exit does not report the same failure a second time."""
    try:
        fd = sys.stdout.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


def command_of(args: Sequence[str]) -> tuple[str | None, bool]:
    """The command word and whether ``--debug`` comes before it (known before parsing, so that
    a failure while parsing or importing is reported like any other)."""
    for i, word in enumerate(args):
        if not word.startswith("-"):
            return word, "--debug" in args[:i]
    return None, "--debug" in args


def error_prefix(command: str | None) -> str:
    """What a failure line starts with: ``serpeval CMD: error:``, or trec_eval's own
    ``trec_eval:`` for ``serpeval trec_eval`` (as :func:`serpeval.cli.cmd_trec_eval.run_trec_eval`)."""
    if command == "trec_eval":
        return "trec_eval:"
    return f"serpeval {command}: error:" if command else "serpeval: error:"


#: What a shared library's loader says when the address space is full (``ulimit -v``).
_NO_ROOM = ("failed to map segment", "cannot allocate memory", "cannot map zero-fill pages")


def _out_of_memory_loading(exc: BaseException) -> bool:
    """Whether ``exc`` is an ImportError caused by a lack of memory (a MemoryError, or a
    library that could not be mapped), looking down its chain of causes."""
    if not isinstance(exc, ImportError):
        return False
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, MemoryError) or any(words in str(seen).lower() for words in _NO_ROOM):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _allocation_failed_under_a_limit(exc: BaseException) -> bool:
    """Whether ``exc`` is CPython's "error return without exception set" (a C extension that
    returned failure without raising: seen when an allocation fails under ``ulimit -v``, in
    place of a MemoryError) while an address-space limit is set."""
    if not isinstance(exc, SystemError) or "without exception set" not in str(exc):
        return False
    from serpeval.cli.memory import address_space_limit

    return address_space_limit() is not None


def _first_line(text: str) -> str:
    return " ".join(text.split()) if "\n" in text else text


def describe(exc: BaseException) -> tuple[str, int]:
    """The one line (without the ``serpeval CMD: error:`` prefix) and the status for ``exc``."""
    from serpeval.core.errors import NothingEvaluatedError, OutOfMemoryError, SerpevalError, os_error_cause

    if isinstance(exc, OutOfMemoryError):
        return f"{_first_line(str(exc))} {MEMORY_ADVICE}", EXIT_ERROR
    if isinstance(exc, NothingEvaluatedError):
        return _first_line(str(exc)), EXIT_NOTHING_EVALUATED
    if isinstance(exc, SerpevalError):
        return _first_line(str(exc)), EXIT_ERROR
    if isinstance(exc, MemoryError):
        return f"out of memory. {MEMORY_ADVICE}", EXIT_ERROR
    if type(exc).__name__ == "OutOfMemoryException":  # DuckDB's (the log readers), not a MemoryError
        return f"out of memory ({_first_line(str(exc)).split(' Possible solutions')[0]}). {MEMORY_ADVICE}", EXIT_ERROR
    if _allocation_failed_under_a_limit(exc):
        return f"out of memory (a library failed to allocate under the address-space limit). {MEMORY_ADVICE}", \
            EXIT_ERROR
    if _out_of_memory_loading(exc):
        what = getattr(exc, "name", None) or "a library"
        return f"out of memory while loading {what} (the address space is full). {MEMORY_ADVICE}", EXIT_ERROR
    if isinstance(exc, UnicodeDecodeError):
        return f"an input is not UTF-8 text ({exc}); save it as UTF-8.", EXIT_ERROR
    if isinstance(exc, OSError):
        cause = os_error_cause(exc)
        if exc.filename == STDOUT:
            return f"{STDOUT}: cannot write: {cause}.", EXIT_ERROR
        if exc.filename is not None:
            return f"{exc.filename}: {cause}.", EXIT_ERROR
        if _stdout_broken():
            return f"{STDOUT}: cannot write: {cause}.", EXIT_ERROR
        return f"{cause}.", EXIT_ERROR
    if isinstance(exc, OverflowError):
        return f"a number is too large ({exc}).", EXIT_ERROR
    if isinstance(exc, EOFError) or type(exc).__module__ == "zlib":
        return f"a compressed input is corrupt or truncated ({exc}).", EXIT_ERROR
    if _is_arrow(exc):
        return f"{type(exc).__name__}: {_first_line(str(exc))}.", EXIT_ERROR
    return (f"internal error: {type(exc).__name__}: {_first_line(str(exc))}. Rerun with --debug "
            "for the traceback and please report it."), EXIT_INTERNAL


MEMORY_ADVICE = ("Try fewer runs at once, a machine with more memory, or --backend spark "
                 "(evaluate) for inputs larger than memory.")


def _is_arrow(exc: BaseException) -> bool:
    pa = sys.modules.get("pyarrow")
    return pa is not None and isinstance(exc, pa.ArrowException)


def handle(exc: BaseException, prefix: str, debug: bool = False) -> int:
    """Print ``exc`` as one line after ``prefix`` (``serpeval evaluate: error:``) and return
    the exit status; re-raise with ``debug`` (interrupts and closed pipes excepted)."""
    if isinstance(exc, KeyboardInterrupt):
        return interrupted()
    if isinstance(exc, BrokenPipeError) or (isinstance(exc, OSError) and exc.errno == errno.EPIPE):
        silence_stdout()
        return EXIT_PIPE
    if debug:
        raise exc
    try:
        message, status = describe(exc)
    except MemoryError:  # the address space is full: not even room to load the words
        message, status = f"out of memory. {MEMORY_ADVICE}", EXIT_ERROR
    if _stdout_broken():
        silence_stdout()
    _say(f"{prefix} {message}")
    return status


def _say(line: str) -> None:
    with contextlib.suppress(OSError, ValueError, AttributeError):  # stderr closed: say nothing
        print(line, file=sys.stderr, flush=True)


def interrupted() -> int:
    """Say ``interrupted`` on stderr and return 130 (128 + SIGINT). As the program, further
    Ctrl-C is ignored while the process exits. Inside a caller's process (``serpeval.cli.main``
    called from Python, a test runner) SIGINT is left alone: an ignored SIGINT is inherited by
    every child process started afterwards, which then cannot be interrupted."""
    from serpeval.cli.teardown import running_as_program

    if running_as_program() and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.stderr is not None:
        print("interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED
