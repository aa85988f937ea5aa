"""Ctrl-C while a ``serpeval`` or ``trec_eval`` program starts: ``interrupted``, status 130.

A program's first serpeval code is the package's ``__init__`` (the console scripts import
``serpeval.cli``, ``python -m serpeval`` imports the package), tens of milliseconds of
imports before :func:`serpeval.cli.main` reaches the guard that turns a KeyboardInterrupt
into ``interrupted`` (:mod:`serpeval.cli.failures`). So this module is the first that
``serpeval/__init__`` imports (through ``serpeval.cli``, whose first import it is too), and
importing it runs :func:`guard_start`, before any other serpeval module loads: when the
process is one of serpeval's programs (never when a library user imports serpeval) and
SIGINT has Python's default handler, a Ctrl-C until :func:`take_over` says ``interrupted``
and ends the process with 130 at once (nothing has been written yet).

:func:`take_over`, called inside the program's guard once numpy has loaded
(:func:`serpeval.cli.memory.keep_freed_memory` loads it), gives SIGINT back to Python
(KeyboardInterrupt, handled there). Not before: numpy's C initialisation turns a
KeyboardInterrupt raised inside it into an ImportError ("PyCapsule_Import could not import
module datetime"), and the next import of numpy then fails with "cannot load module more
than once per process" (an internal error, exit 70, when Ctrl-C came ~20 ms into
``evaluate``). :func:`finish` ignores SIGINT once the command has ended, so that the exit
that follows is not turned into a traceback.

A Ctrl-C before serpeval's first line (Python's own start-up, ``site``) is Python's to report.
Only the standard library's ``os``, ``sys`` and ``_signal`` (all loaded at start-up) are used:
no import here opens a window of its own.
"""

from __future__ import annotations

import _signal
import os
import sys

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as serpeval.cli.failures.EXIT_INTERRUPTED

#: The console scripts' names (pyproject.toml's [project.scripts]).
PROGRAMS = ("serpeval", "trec_eval")


def started_as_program() -> bool:
    """Whether this process runs serpeval as a program: a console script (``sys.argv[0]`` is
    ``.../serpeval`` or ``.../trec_eval``) or ``python -m serpeval`` (while the package loads,
    ``sys.argv[0]`` is ``-m`` and the interpreter's arguments name the module)."""
    argv0 = sys.argv[0] if sys.argv else ""
    name = os.path.basename(argv0).removesuffix(".exe").removesuffix("-script.py")
    if name in PROGRAMS:
        return True
    if argv0 != "-m":
        return False
    words = list(getattr(sys, "orig_argv", ()))
    for i, word in enumerate(words[1:], start=1):
        if word == "-m":
            return words[i + 1: i + 2] == ["serpeval"]
        if word.startswith("-m"):
            return word == "-mserpeval"
    return False


def _interrupted_at_start(signum: int, frame: object) -> None:
    """SIGINT before the program's guard: say ``interrupted`` and exit 130 now."""
    try:  # noqa: SIM105 (contextlib is not loaded yet: no import here)
        os.write(2, b"interrupted\n")
    except OSError:  # stderr closed: say nothing
        pass
    os._exit(EXIT_INTERRUPTED)


def guard_start() -> None:
    """Take SIGINT until :func:`take_over`, in a program only and only from Python's default
    handler (a SIGINT ignored by the parent, as ``nohup`` does, stays ignored)."""
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler and started_as_program():
        _signal.signal(_signal.SIGINT, _interrupted_at_start)


def take_over() -> None:
    """Give SIGINT back to Python (KeyboardInterrupt) if :func:`guard_start` took it; call it
    inside the guard that handles KeyboardInterrupt."""
    if _signal.getsignal(_signal.SIGINT) is _interrupted_at_start:
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)


def finish() -> None:
    """The program's command has ended (its status is known): ignore further Ctrl-C while the
    process exits, rather than print a KeyboardInterrupt traceback from the interpreter's exit."""
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)


guard_start()  # on import: see the module's docstring
