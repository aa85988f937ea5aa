"""The ``serpeval`` command line: thin wrappers that parse arguments, call the API, render.

Layer: cli, the top. May import everything; nothing imports it but ``serpeval.__main__`` and
the console scripts.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

# The first serpeval import (sys and collections.abc are loaded before any program's code):
# importing it takes a program's Ctrl-C until main() below takes over.
from serpeval.cli import startup  # noqa: F401
from serpeval.cli.failures import command_of, error_prefix, handle, interrupted

__all__ = ["interrupted", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``serpeval`` (see :func:`serpeval.cli.app.main`).

    The command line's modules are imported only here, inside the guard (all but
    :mod:`serpeval.cli.failures`, the standard library only, imported with the package under
    :mod:`serpeval.cli.startup`'s guard), so that a Ctrl-C
    while they load is reported as ``interrupted`` (status 130) like one at any later moment;
    one while the package itself loads, before this guard, is taken by
    :mod:`serpeval.cli.startup`. (A Ctrl-C during the Python interpreter's own start-up,
    before any serpeval code runs, is Python's to report.) Without ``argv`` (run as a
    program) the process keeps the memory it frees for reuse and fits itself to an
    address-space limit (:mod:`serpeval.cli.memory`), unless no command is named
    (``serpeval --help``, ``--version``: nothing to compute, and that set-up loads NumPy) or
    the command's help is asked for (``serpeval CMD --help``: only the address-space check,
    which loads nothing); a failure there (out of memory loading numpy) is one line and a
    status, as any other.
    """
    try:
        if argv is None:  # run as a program (console script, python -m serpeval)
            from serpeval.cli.startup import take_over

            if names_a_command(sys.argv[1:]):  # serpeval --help / --version compute nothing
                from serpeval.cli.memory import fit_to_address_space, keep_freed_memory

                if asks_for_help(sys.argv[1:]):  # serpeval CMD --help: no malloc tuning, no NumPy
                    fit_to_address_space()
                else:
                    keep_freed_memory()  # also fits the process to an address-space limit (ulimit -v)
            take_over()  # Ctrl-C is a KeyboardInterrupt again, handled here (serpeval.cli.startup)
        from serpeval.cli.app import main as run

        status = run(argv)
    except KeyboardInterrupt:  # before (or while) app.main's own guard takes over
        return interrupted()
    except Exception as exc:  # start-up failed before app.main's guard (out of memory loading numpy)
        command, debug = command_of(sys.argv[1:] if argv is None else argv)
        status = handle(exc, error_prefix(command), debug)
    if argv is None:
        from serpeval.cli.startup import finish

        finish()  # the command has ended: a Ctrl-C now must not become a traceback at exit
    return status


def names_a_command(args: Sequence[str]) -> bool:
    """Whether the arguments name a command (a word before which only options come), that is,
    whether the program may compute something rather than print its help or version."""
    return any(not word.startswith("-") for word in args)


def asks_for_help(args: Sequence[str]) -> bool:
    """Whether ``-h`` or ``--help`` comes before any ``--`` (argparse then prints the help and
    exits before the command runs; ``serpeval trec_eval -h`` loads the measures to describe
    them, with the address-space check in place)."""
    words = list(args)
    words = words[:words.index("--")] if "--" in words else words
    return "-h" in words or "--help" in words
