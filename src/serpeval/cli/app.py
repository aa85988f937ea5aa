"""Argument parsing and dispatch for ``serpeval <command>``.

Each command lives in its own module ``serpeval.cli.cmd_<name>`` with ``register(subparsers)``
(which sets ``func`` on its parser); adding a command is one module plus one row in the
command table (:mod:`serpeval.cli.commands`). The parser is built lazily: ``serpeval --help``
lists the commands from the table and imports none of their modules; ``serpeval CMD ...``
imports only ``CMD``'s module (:func:`build_parser`).
Every failure (a :class:`~serpeval.core.errors.SerpevalError`, an unreadable input, an
unwritable output, Ctrl-C...) prints one line on stderr and exits with a status
(:mod:`serpeval.cli.failures`); ``--debug`` shows the traceback instead. Outputs are written
atomically and checked before any work (:mod:`serpeval.cli.common`).
No output may replace an input: every file a command reads, named on its command line or
opened, is noted by identity (:mod:`serpeval.core.identity`) and refused as an output.
A run in which no judged query has results exits 7, as trec_eval does.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Iterable, Sequence
from typing import NoReturn

from serpeval.cli.commands import COMMANDS as TABLE
from serpeval.cli.commands import command, names
from serpeval.cli.common import EXIT_USAGE, note_named_inputs, refuse_stdin_twice, spare_pandas_import
from serpeval.cli.failures import command_of, error_prefix, handle, prepare_std_streams
from serpeval.core.version import __version__

#: The command names, in the order ``serpeval --help`` lists them (the table's).
COMMANDS: tuple[str, ...] = names()


class OneLineParser(argparse.ArgumentParser):
    """argparse, except that a bad argument is one line on stderr (no usage block): ``serpeval
    CMD: error: argument --days: must be a positive integer, got -3``, exit status 2, like
    every other error (``serpeval CMD -h`` shows the usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser(only: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The top-level parser with one subparser per command (each a :class:`OneLineParser`).

    ``only``: the commands whose modules are imported to build their full subparsers (None:
    every command); every other command gets a bare subparser carrying its help line from the
    table, enough for ``serpeval --help`` and for argparse's ``invalid choice`` message.
    """
    wanted = None if only is None else set(only)
    parser = OneLineParser(
        prog="serpeval",
        description="Search-quality evaluation: trec_eval-exact measures, fast; significance "
                    "tests; interleaving and A/B analysis; reports.",
    )
    parser.add_argument("--version", action="version", version=f"serpeval {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for row in TABLE:
        if wanted is None or row.name in wanted:
            importlib.import_module(row.module).register(sub)
        else:
            sub.add_parser(row.name, help=row.help)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    Every failure, from the start-up imports to the last byte written, ends here as one line
    on stderr and a status (:mod:`serpeval.cli.failures`): 2 for errors, 130 for Ctrl-C, 141
    when the reader of standard output went away.
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    command, debug = command_of(args_list)
    try:
        prepare_std_streams()
        return _run(args_list)
    except SystemExit:
        raise
    except BaseException as exc:  # KeyboardInterrupt included: "interrupted", 130
        return handle(exc, error_prefix(command), debug)


def _run(args_list: list[str]) -> int:
    at = args_list.index("trec_eval") if "trec_eval" in args_list else -1
    if at >= 0 and all(word == "--debug" for word in args_list[:at]):
        # trec_eval's own flag syntax (-q -m P.5 -c ...) is parsed by that command itself
        # (after serpeval's own --debug, which main() has read: tracebacks on errors).
        from serpeval.cli.cmd_trec_eval import run_trec_eval

        return run_trec_eval(args_list[at + 1:])
    parser = build_parser(only=_named_command(args_list))
    args = parser.parse_args(args_list)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    if getattr(args, "backend", "local") == "local":  # Spark hands pandas data to pyarrow
        spare_pandas_import(args.command)
    from serpeval.core.identity import reading_scope

    refuse_stdin_twice(args)
    with reading_scope():  # no output may replace an input (serpeval.core.identity)
        note_named_inputs(args)
        status = args.func(args)
    sys.stdout.flush()  # a full disk or a closed pipe is reported here, not at exit
    return int(status or 0)


def _named_command(args_list: Sequence[str]) -> tuple[str, ...]:
    """The command the arguments name, if the table has it (its module is the only one to
    import), else none: ``serpeval --help``, ``serpeval`` alone and a misspelt command need
    only the table."""
    name, _ = command_of(args_list)
    return (name,) if name is not None and command(name) is not None else ()
